#pragma once

/*
  The row-group engine's kernels: the build and products of a padded, column-major layout of row groups, written
  once for the formats built on it (ELLPACK-R and RgCSR). A group of Gg stored rows is padded to K slots a row (a multiple of T) and stored
  column-major with the T lanes of a row side by side, so that consecutive threads read consecutive addresses:

      slot(stored row t of group g, entry k) = gp[g] + ((k / T) * Gg + t) * T + k % T

  rl[p] is stored row p's length (no thread reads padding). A geometry says where a stored row's slots are and which
  matrix row it is:
    - MatRowGroupOne: one group of all m rows (ELLPACK-R: gp[0] = 0, Gg = m), 64-bit offsets;
    - MatRowGroupGrouped: groups of G rows at offsets gp[g] (RgCSR), 32-bit offsets inside a group (a group holds
      fewer than 2^31 slots: checked by the format's build), and perm[p], the matrix row of stored row p (NULL: none).
  The build and its inverse are one kernel each over MatRowGroupFillThread() and MatRowGroupGatherThread()
  (rowgroupimpl.h, C: the host emulations run them too). Each product is one kernel template over T and the
  geometry; the T lanes of a row combine with warp shuffles in a fixed order, so results are bitwise reproducible,
  and equal to the host emulations (tests/reference/).
*/
#include <petscgpumat/private/gpumatcuda.h>
#include <petscgpumat/private/rowgroupimpl.h>

#define MATROWGROUP_BLOCK 256 /* threads per block: 256/T rows */

/* Stored row p's slots, as the lane that starts at entry `lane` walks them: col[s], val[s] for s = first, first + step, ... */
template <typename Offset>
struct MatRowGroupRow {
  const int         *col;
  const PetscScalar *val;
  Offset             first, step;
};

struct MatRowGroupOne {
  int m;

  __device__ __forceinline__ MatRowGroupRow<long long> row(int p, int lane, int T, const int *col, const PetscScalar *val) const { return {col, val, (long long)p * T + lane, (long long)m * T}; }
  __device__ __forceinline__ int                       out(int p) const { return p; }
  /* minimum resident blocks for __launch_bounds__ (0: none) */
  static constexpr int min_blocks(int) { return 0; }
  static constexpr int min_blocks_transpose() { return 0; }
};

struct MatRowGroupGrouped {
  int               m, G;
  const PetscCount *gp;
  const int        *perm;

  __device__ __forceinline__ MatRowGroupRow<int> row(int p, int lane, int T, const int *col, const PetscScalar *val) const
  {
    const int g = p / G, t = p - g * G, step = min(G, m - g * G) * T;

    return {col + gp[g], val + gp[g], t * T + lane, step};
  }
  __device__ __forceinline__ int out(int p) const { return perm ? perm[p] : p; }
  /* with one block per group of 128 rows the kernel needed 44 registers and reached 57 % occupancy on the H100 (ncu),
     against 91 % for 256-thread blocks capped at 32 registers (40 for T > 1, where the shuffle reduction would spill) */
  static constexpr int min_blocks(int T) { return T == 1 ? 8 : 6; }
  static constexpr int min_blocks_transpose() { return 8; }
};

/*
  Stored row p's sum, T lanes a row: lane `lane` adds its entries lane, lane + T, ... below rl[p], then the lanes
  combine with warp shuffles in a fixed order; the sum ends in the row's lane 0. Every thread of the warp calls it
  (valid false past the last row), as __shfl_down_sync requires
*/
template <int T, class Geometry>
__device__ __forceinline__ PetscScalar MatRowGroupRowSum(bool valid, const Geometry &geo, int p, int lane, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x)
{
  PetscScalar sum = 0;

  if (valid) {
    const int                       len = rl[p];
    const auto                      r   = geo.row(p, lane, T, col, val);
    const PetscScalar *__restrict__ vg  = r.val;
    const int *__restrict__         cg  = r.col;
    auto                            s   = r.first;

    for (int k = lane; k < len; k += T, s += r.step) sum += vg[s] * __ldg(x + cg[s]);
  }
  if (T > 1) {
#pragma unroll
    for (int offset = T / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset, T);
  }
  return sum;
}

namespace
{
/* z[i] = (y ? y[i] : 0) + the sum of the stored row of matrix row i. y may alias z: a row's y is read by the thread that writes z */
template <int T, class Geometry>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK, Geometry::min_blocks(T)) rowgroup_mult(Geometry geo, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z)
{
  const long long   tid  = (long long)blockIdx.x * MATROWGROUP_BLOCK + threadIdx.x;
  const int         p    = (int)(tid / T);
  const int         lane = (int)(tid % T);
  const PetscScalar sum  = MatRowGroupRowSum<T>(p < geo.m, geo, p, lane, rl, col, val, x);

  if (p < geo.m && lane == 0) {
    const int i = geo.out(p);

    z[i] = y ? y[i] + sum : sum;
  }
}

/*
  z = A x as rowgroup_mult() computes it (the same row sums: the same bits), the blocks striding over the stored rows so
  that at most MATGPUMAT_MAX_DOT_PARTIALS run, and each block's sum of x[i] z[i] over its rows (in the order of its
  strides, then MatGPUMatBlockSumToPartial()'s) to sums.partial[blockIdx.x], and their sum where sums asks: the fused
  CG's p'Ap in the product's pass
*/
template <int T, class Geometry>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK, Geometry::min_blocks(T)) rowgroup_mult_dot(Geometry geo, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ z, const MatGPUMatDotSums sums)
{
  const long long total = (long long)geo.m * T;
  PetscScalar     dot   = 0;

  for (long long first = (long long)blockIdx.x * MATROWGROUP_BLOCK; first < total; first += (long long)gridDim.x * MATROWGROUP_BLOCK) { /* block-uniform */
    const long long   tid  = first + threadIdx.x;
    const int         p    = (int)(tid / T);
    const int         lane = (int)(tid % T);
    const PetscScalar sum  = MatRowGroupRowSum<T>(tid < total, geo, p, lane, rl, col, val, x);

    if (tid < total && lane == 0) {
      const int i = geo.out(p);

      z[i] = sum;
      dot += x[i] * sum;
    }
  }
  MatGPUMatBlockSumToPartial(dot, sums);
}

/* z += A^T x: the lanes scatter their entries of stored row p, scaled by x at its matrix row, with atomics (order not reproducible) */
template <int T, class Geometry>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK, Geometry::min_blocks_transpose()) rowgroup_mult_transpose(Geometry geo, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *z)
{
  const long long tid  = (long long)blockIdx.x * MATROWGROUP_BLOCK + threadIdx.x;
  const int       p    = (int)(tid / T);
  const int       lane = (int)(tid % T);

  if (p >= geo.m) return;
  const int                       len = rl[p];
  const auto                      r   = geo.row(p, lane, T, col, val);
  const PetscScalar               xi  = x[geo.out(p)];
  const PetscScalar *__restrict__ vg  = r.val;
  const int *__restrict__         cg  = r.col;
  auto                            s   = r.first;

  for (int k = lane; k < len; k += T, s += r.step) atomicAdd(z + cg[s], vg[s] * xi);
}

/*
  Z[:, k] = A X[:, k] for NV columns of dense column-major blocks (leading dimensions ldx, ldz), one thread per stored
  row (T = 1): each entry of A is read once for all NV vectors (KSPMatSolve, block Krylov methods)
*/
template <int NV, class Geometry>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK) rowgroup_mult_block(Geometry geo, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, int ldx, PetscScalar *__restrict__ z, int ldz)
{
  const int   p = (int)((long long)blockIdx.x * MATROWGROUP_BLOCK + threadIdx.x);
  PetscScalar acc[NV];

  if (p >= geo.m) return;
#pragma unroll
  for (int k = 0; k < NV; k++) acc[k] = 0;
  const int                       len = rl[p];
  const auto                      r   = geo.row(p, 0, 1, col, val);
  const PetscScalar *__restrict__ vg  = r.val;
  const int *__restrict__         cg  = r.col;
  auto                            s   = r.first;

  for (int j = 0; j < len; j++, s += r.step) {
    const PetscScalar v = vg[s];
    const int         c = cg[s];
#pragma unroll
    for (int k = 0; k < NV; k++) acc[k] += v * __ldg(x + c + (long long)k * ldx);
  }
  const int i = geo.out(p);
#pragma unroll
  for (int k = 0; k < NV; k++) z[i + (long long)k * ldz] = acc[k];
}

/* The build or value refresh, one thread per (stored row, lane); ONE_GROUP compiles the groups away (ELLPACK-R) */
template <bool ONE_GROUP>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK) rowgroup_fill(int m, int G, int T, int width, const PetscCount *__restrict__ gp, const int *__restrict__ perm, int structure, const PetscInt *__restrict__ ai, const PetscInt *__restrict__ aj, const PetscScalar *__restrict__ aa, int *rl, int *col, PetscScalar *val)
{
  const long long tid = (long long)blockIdx.x * MATROWGROUP_BLOCK + threadIdx.x;

  if (tid < (long long)m * T) MatRowGroupFillThread(tid, m, G, T, width, ONE_GROUP ? nullptr : gp, ONE_GROUP ? nullptr : perm, structure, ai, aj, aa, rl, col, val);
}

/* The layout back to CSR order, one thread per (stored row, lane) */
template <bool ONE_GROUP>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK) rowgroup_gather(int m, int G, int T, const PetscCount *__restrict__ gp, const int *__restrict__ perm, const PetscInt *__restrict__ ai, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, PetscInt *aj, PetscScalar *aa)
{
  const long long tid = (long long)blockIdx.x * MATROWGROUP_BLOCK + threadIdx.x;

  if (tid < (long long)m * T) MatRowGroupGatherThread(tid, m, G, T, ONE_GROUP ? nullptr : gp, ONE_GROUP ? nullptr : perm, ai, rl, col, val, aj, aa);
}

/* The diagonal read from the layout, one thread per stored row */
template <bool ONE_GROUP>
__global__ void __launch_bounds__(MATROWGROUP_BLOCK) rowgroup_diagonal(int m, int G, int T, const PetscCount *__restrict__ gp, const int *__restrict__ perm, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, PetscScalar *d)
{
  const long long p = (long long)blockIdx.x * MATROWGROUP_BLOCK + threadIdx.x;

  if (p < m) MatRowGroupDiagonalThread((int)p, m, G, T, ONE_GROUP ? nullptr : gp, ONE_GROUP ? nullptr : perm, rl, col, val, d);
}

/* launch(std::integral_constant<int, T>{}) for threads per row T in 1, 2, 4, ..., 32 */
template <class Launch>
PetscErrorCode MatRowGroupWithT(PetscInt T, Launch &&launch)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatWithConstant<1, 2, 4, 8, 16, 32>(T, "threads per row", launch));
  PetscFunctionReturn(PETSC_SUCCESS);
}

inline unsigned int MatRowGroupBlocks(long long threads)
{
  return (unsigned int)((threads + MATROWGROUP_BLOCK - 1) / MATROWGROUP_BLOCK);
}
} // namespace

/* The launches, on the product's stream; nothing for m = 0 */
template <class Geometry>
static inline PetscErrorCode MatRowGroupLaunchMult(cudaStream_t stream, PetscInt T, const Geometry &geo, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  const unsigned int nb = MatRowGroupBlocks((long long)geo.m * T);

  PetscFunctionBegin;
  if (!geo.m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatRowGroupWithT(T, [&](auto t) { rowgroup_mult<decltype(t)::value><<<nb, MATROWGROUP_BLOCK, 0, stream>>>(geo, rl, col, val, x, y, z); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Geometry>
static inline PetscErrorCode MatRowGroupLaunchMultDot(cudaStream_t stream, PetscInt T, const Geometry &geo, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  const unsigned int nb = PetscMin(MatRowGroupBlocks((long long)geo.m * T), (unsigned int)MATGPUMAT_MAX_DOT_PARTIALS);

  PetscFunctionBegin;
  *npartial = geo.m ? (PetscInt)nb : 0;
  if (!geo.m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatRowGroupWithT(T, [&](auto t) { rowgroup_mult_dot<decltype(t)::value><<<nb, MATROWGROUP_BLOCK, 0, stream>>>(geo, rl, col, val, x, z, *sums); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Geometry>
static inline PetscErrorCode MatRowGroupLaunchMultTranspose(cudaStream_t stream, PetscInt T, const Geometry &geo, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z)
{
  const unsigned int nb = MatRowGroupBlocks((long long)geo.m * T);

  PetscFunctionBegin;
  if (!geo.m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatRowGroupWithT(T, [&](auto t) { rowgroup_mult_transpose<decltype(t)::value><<<nb, MATROWGROUP_BLOCK, 0, stream>>>(geo, rl, col, val, x, z); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <class Geometry>
static inline PetscErrorCode MatRowGroupLaunchMultBlock(cudaStream_t stream, PetscInt T, const Geometry &geo, const int *rl, const int *col, const PetscScalar *val, PetscInt nv, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  const unsigned int nb = MatRowGroupBlocks(geo.m);

  PetscFunctionBegin;
  PetscCheck(T == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The block kernel needs one thread per row, not %" PetscInt_FMT, T);
  if (!geo.m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatLaunchBlockWidth(nv, stream, [&](auto w) { rowgroup_mult_block<decltype(w)::value><<<nb, MATROWGROUP_BLOCK, 0, stream>>>(geo, rl, col, val, x, (int)ldx, z, (int)ldz); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The build (structure) or value refresh from the device CSR, and the gather back to it; gp NULL: one group of all m rows padded to width */
static inline PetscErrorCode MatRowGroupLaunchFill(cudaStream_t stream, PetscInt m, PetscInt G, PetscInt T, PetscInt width, const PetscCount *gp, const int *perm, PetscBool structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, int *rl, int *col, PetscScalar *val)
{
  const unsigned int nb = MatRowGroupBlocks((long long)m * T);

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  if (gp) rowgroup_fill<false><<<nb, MATROWGROUP_BLOCK, 0, stream>>>((int)m, (int)G, (int)T, (int)width, gp, perm, (int)structure, ai, aj, aa, rl, col, val);
  else rowgroup_fill<true><<<nb, MATROWGROUP_BLOCK, 0, stream>>>((int)m, (int)G, (int)T, (int)width, gp, perm, (int)structure, ai, aj, aa, rl, col, val);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal of the layout into d (0 where a row has none); gp NULL: one group of all m rows */
static inline PetscErrorCode MatRowGroupLaunchDiagonal(cudaStream_t stream, PetscInt m, PetscInt G, PetscInt T, const PetscCount *gp, const int *perm, const int *rl, const int *col, const PetscScalar *val, PetscScalar *d)
{
  const unsigned int nb = MatRowGroupBlocks(m);

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  if (gp) rowgroup_diagonal<false><<<nb, MATROWGROUP_BLOCK, 0, stream>>>((int)m, (int)G, (int)T, gp, perm, rl, col, val, d);
  else rowgroup_diagonal<true><<<nb, MATROWGROUP_BLOCK, 0, stream>>>((int)m, (int)G, (int)T, gp, perm, rl, col, val, d);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode MatRowGroupLaunchGather(cudaStream_t stream, PetscInt m, PetscInt G, PetscInt T, const PetscCount *gp, const int *perm, const PetscInt *ai, const int *rl, const int *col, const PetscScalar *val, PetscInt *aj, PetscScalar *aa)
{
  const unsigned int nb = MatRowGroupBlocks((long long)m * T);

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  if (gp) rowgroup_gather<false><<<nb, MATROWGROUP_BLOCK, 0, stream>>>((int)m, (int)G, (int)T, gp, perm, ai, rl, col, val, aj, aa);
  else rowgroup_gather<true><<<nb, MATROWGROUP_BLOCK, 0, stream>>>((int)m, (int)G, (int)T, gp, perm, ai, rl, col, val, aj, aa);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
