/* Row-grouped CSR SpMV kernels: the layout is described in include/petscgpumat/private/rgcsrimpl.h */
#include <petscgpumat/private/rgcsrimpl.h>
#include <petscgpumat/private/gpumatcuda.h>

namespace
{
constexpr int kBlock = 256;

/*
  Stored row p's sum, T lanes per row: lane t reads the row's entries t, t+T, ... below rl[p] (no padding is read),
  then the lanes combine with warp shuffles in a fixed order (bitwise reproducible); the sum ends in lane 0. Every
  thread of the warp calls it (valid false past the last row), as __shfl_down_sync requires.
  The paper's kernel is T = 1 with one block per group. Here the group of a row is computed, so blocks have a
  fixed 256 threads whatever G and T: with one block per group of 128 rows the kernel needed 44 registers and
  reached 57 % occupancy on the H100 (ncu), against 91 % for 256-thread blocks capped at 32 registers (40
  for T > 1, where the shuffle reduction would otherwise spill).
*/
template <int T>
__device__ __forceinline__ PetscScalar rgcsr_row_sum(bool valid, int m, int G, int p, int lane, const PetscCount *__restrict__ gp, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x)
{
  PetscScalar sum = 0;

  if (valid) {
    /* 32-bit offsets inside the group (a group holds far fewer than 2^31 slots): fewer registers, no spills */
    const int                       g = p / G, t = p - g * G, step = min(G, m - g * G) * T, len = rl[p];
    const PetscScalar *__restrict__ vg = val + gp[g];
    const int *__restrict__         cg = col + gp[g];
    int                             s  = t * T + lane;

    for (int k = lane; k < len; k += T, s += step) sum += vg[s] * __ldg(x + cg[s]);
  }
  if (T > 1) {
#pragma unroll
    for (int offset = T / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset, T);
  }
  return sum;
}

/* z[i] = (y ? y[i] : 0) + the sum of stored row p, i = perm[p] where the rows were reordered */
template <int T>
__global__ void __launch_bounds__(kBlock, T == 1 ? 8 : 6) rgcsr_mult(int m, int G, const PetscCount *__restrict__ gp, const int *__restrict__ rl, const int *__restrict__ perm, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z)
{
  const long long   tid  = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int         p    = (int)(tid / T);
  const int         lane = (int)(tid % T);
  const PetscScalar sum  = rgcsr_row_sum<T>(p < m, m, G, p, lane, gp, rl, col, val, x);

  if (p < m && lane == 0) {
    const int i = perm ? perm[p] : p;
    z[i]        = y ? y[i] + sum : sum;
  }
}

/*
  z = A x as rgcsr_mult() computes it (the same row sums: the same bits), the blocks striding over the stored rows so
  that at most MATGPUMAT_MAX_DOT_PARTIALS run, and each block's sum of x[i] z[i] over its rows (in the order of its
  strides, then MatGPUMatBlockSumToPartial()'s) to partial[blockIdx.x]: the fused CG's p'Ap in the product's pass
*/
template <int T>
__global__ void __launch_bounds__(kBlock, T == 1 ? 8 : 6) rgcsr_mult_dot(int m, int G, const PetscCount *__restrict__ gp, const int *__restrict__ rl, const int *__restrict__ perm, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ z, PetscScalar *__restrict__ partial)
{
  const long long total = (long long)m * T;
  PetscScalar     dot   = 0;

  for (long long first = (long long)blockIdx.x * kBlock; first < total; first += (long long)gridDim.x * kBlock) { /* block-uniform */
    const long long   tid  = first + threadIdx.x;
    const int         p    = (int)(tid / T);
    const int         lane = (int)(tid % T);
    const PetscScalar sum  = rgcsr_row_sum<T>(tid < total, m, G, p, lane, gp, rl, col, val, x);

    if (tid < total && lane == 0) {
      const int i = perm ? perm[p] : p;

      z[i] = sum;
      dot += x[i] * sum;
    }
  }
  MatGPUMatBlockSumToPartial(dot, partial);
}

/* z += A^T x: lanes scatter their entries of stored row p, scaled by x[perm[p]], with atomics */
template <int T>
__global__ void __launch_bounds__(kBlock, 8) rgcsr_mult_transpose(int m, int G, const PetscCount *__restrict__ gp, const int *__restrict__ rl, const int *__restrict__ perm, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *z)
{
  const long long tid  = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int       p    = (int)(tid / T);
  const int       lane = (int)(tid % T);

  if (p >= m) return;
  const int                       g = p / G, t = p - g * G, step = min(G, m - g * G) * T, len = rl[p];
  const PetscScalar               xi = x[perm ? perm[p] : p];
  const PetscScalar *__restrict__ vg = val + gp[g];
  const int *__restrict__         cg = col + gp[g];
  int                             s  = t * T + lane;

  for (int k = lane; k < len; k += T, s += step) atomicAdd(z + cg[s], vg[s] * xi);
}

/*
  Z[:, k] = A X[:, k] for NV columns of dense column-major blocks (leading dimensions ldx, ldz), one thread per
  stored row (T = 1): each entry of A is read once for all NV vectors (KSPMatSolve, block Krylov methods).
*/
template <int NV>
__global__ void __launch_bounds__(kBlock) rgcsr_mult_block(int m, int G, const PetscCount *__restrict__ gp, const int *__restrict__ rl, const int *__restrict__ perm, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, int ldx, PetscScalar *__restrict__ z, int ldz)
{
  const int   p = (int)((long long)blockIdx.x * kBlock + threadIdx.x);
  PetscScalar acc[NV];

  if (p >= m) return;
#pragma unroll
  for (int k = 0; k < NV; k++) acc[k] = 0;
  const int                       g = p / G, step = min(G, m - g * G), len = rl[p];
  const PetscScalar *__restrict__ vg = val + gp[g];
  const int *__restrict__         cg = col + gp[g];
  int                             s  = p - g * G;

  for (int j = 0; j < len; j++, s += step) {
    const PetscScalar v = vg[s];
    const int         c = cg[s];
#pragma unroll
    for (int k = 0; k < NV; k++) acc[k] += v * __ldg(x + c + (long long)k * ldx);
  }
  const int i = perm ? perm[p] : p;
#pragma unroll
  for (int k = 0; k < NV; k++) z[i + (long long)k * ldz] = acc[k];
}

void launch_shape(const Mat_SeqRGCSRCUDA *r, unsigned int *blocks, unsigned int *threads)
{
  const long long total = (long long)r->m * r->T;

  *threads = kBlock;
  *blocks  = (unsigned int)((total + kBlock - 1) / kBlock);
}

} // namespace

#define RGCSR_ARGS (int)r->m, (int)r->G, r->d_gp, r->d_rl, r->d_perm, r->d_col, r->d_val

PetscErrorCode MatRgCSRCUDALaunchMult(void *s, const Mat_SeqRGCSRCUDA *r, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  cudaStream_t stream = (cudaStream_t)s;
  unsigned int nb, nt;

  PetscFunctionBegin;
  if (!r->m) PetscFunctionReturn(PETSC_SUCCESS);
  launch_shape(r, &nb, &nt);
  switch (r->T) {
  case 1: rgcsr_mult<1><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, y, z); break;
  case 2: rgcsr_mult<2><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, y, z); break;
  case 4: rgcsr_mult<4><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, y, z); break;
  case 8: rgcsr_mult<8><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, y, z); break;
  case 16: rgcsr_mult<16><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, y, z); break;
  case 32: rgcsr_mult<32><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, y, z); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported threads per row %" PetscInt_FMT, r->T);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchMultDot(void *s, const Mat_SeqRGCSRCUDA *r, const PetscScalar *x, PetscScalar *z, PetscScalar *partial, PetscInt *npartial)
{
  cudaStream_t stream = (cudaStream_t)s;
  unsigned int nb, nt;

  PetscFunctionBegin;
  *npartial = 0;
  if (!r->m) PetscFunctionReturn(PETSC_SUCCESS);
  launch_shape(r, &nb, &nt);
  nb        = PetscMin(nb, (unsigned int)MATGPUMAT_MAX_DOT_PARTIALS);
  *npartial = (PetscInt)nb;
  switch (r->T) {
  case 1: rgcsr_mult_dot<1><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z, partial); break;
  case 2: rgcsr_mult_dot<2><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z, partial); break;
  case 4: rgcsr_mult_dot<4><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z, partial); break;
  case 8: rgcsr_mult_dot<8><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z, partial); break;
  case 16: rgcsr_mult_dot<16><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z, partial); break;
  case 32: rgcsr_mult_dot<32><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z, partial); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported threads per row %" PetscInt_FMT, r->T);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchMultTranspose(void *s, const Mat_SeqRGCSRCUDA *r, const PetscScalar *x, PetscScalar *z)
{
  cudaStream_t stream = (cudaStream_t)s;
  unsigned int nb, nt;

  PetscFunctionBegin;
  if (!r->m) PetscFunctionReturn(PETSC_SUCCESS);
  launch_shape(r, &nb, &nt);
  switch (r->T) {
  case 1: rgcsr_mult_transpose<1><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z); break;
  case 2: rgcsr_mult_transpose<2><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z); break;
  case 4: rgcsr_mult_transpose<4><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z); break;
  case 8: rgcsr_mult_transpose<8><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z); break;
  case 16: rgcsr_mult_transpose<16><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z); break;
  case 32: rgcsr_mult_transpose<32><<<nb, nt, 0, stream>>>(RGCSR_ARGS, x, z); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported threads per row %" PetscInt_FMT, r->T);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchMultBlock(void *s, const Mat_SeqRGCSRCUDA *r, PetscInt nv, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int nb     = (unsigned int)((r->m + kBlock - 1) / kBlock);

  PetscFunctionBegin;
  PetscCheck(r->T == 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The block kernel needs one thread per row, not %" PetscInt_FMT, r->T);
  if (!r->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatLaunchBlockWidth(nv, stream, [&](auto w) {
    rgcsr_mult_block<decltype(w)::value><<<nb, kBlock, 0, stream>>>(RGCSR_ARGS, x, (int)ldx, z, (int)ldz);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}
