/* ELLPACK-R (ELLR-T) SpMV kernels: the layout is described in include/petscgpumat/private/ellrimpl.h */
#include <petscgpumat/private/ellrimpl.h>
#include <petscgpumat/private/gpumatcuda.h>

namespace
{
constexpr int kBlock = 256; /* threads per block: 256/T rows */

/*
  Row `row`'s sum, T lanes per row: lane `lane` adds val[slot(row,k)] * x[col[slot(row,k)]] for k = lane, lane + T, ...
  up to the row's length (the paper's rl[] loop: no padding is read), then the lanes combine with warp shuffles in a
  fixed order (bitwise reproducible run to run); the row's sum ends in its lane 0. Every thread of the warp calls it
  (valid false past the last row), as __shfl_down_sync requires
*/
template <int T>
__device__ __forceinline__ PetscScalar ellr_row_sum(bool valid, int m, int row, int lane, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x)
{
  PetscScalar sum = 0;

  if (valid) {
    const int       len    = rl[row];
    const long long stride = (long long)m * T;
    long long       s      = (long long)row * T + lane;

    for (int k = lane; k < len; k += T, s += stride) sum += val[s] * __ldg(x + col[s]);
  }
  if (T > 1) {
#pragma unroll
    for (int offset = T / 2; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset, T);
  }
  return sum;
}

/* z[i] = (y ? y[i] : 0) + row i's sum. y may alias z: each row's y is read by the thread that writes z */
template <int T>
__global__ void __launch_bounds__(kBlock) ellr_mult(int m, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z)
{
  const long long   tid  = (long long)blockIdx.x * kBlock + threadIdx.x;
  const int         row  = (int)(tid / T);
  const int         lane = (int)(tid % T);
  const PetscScalar sum  = ellr_row_sum<T>(row < m, m, row, lane, rl, col, val, x);

  if (row < m && lane == 0) z[row] = y ? y[row] + sum : sum;
}

/*
  z = A x as ellr_mult() computes it (the same row sums: the same bits), over the rows in block-sized strides so that
  at most MATGPUMAT_MAX_DOT_PARTIALS blocks run, and each block's sum of x[i] z[i] over its rows, in the order of its
  strides, then MatGPUMatBlockSumToPartial()'s, to partial[blockIdx.x]
*/
template <int T>
__global__ void __launch_bounds__(kBlock) ellr_mult_dot(int m, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ z, PetscScalar *__restrict__ partial)
{
  const long long total = (long long)m * T;
  PetscScalar     dot   = 0;

  for (long long first = (long long)blockIdx.x * kBlock; first < total; first += (long long)gridDim.x * kBlock) { /* block-uniform */
    const long long   tid  = first + threadIdx.x;
    const int         row  = (int)(tid / T);
    const int         lane = (int)(tid % T);
    const PetscScalar sum  = ellr_row_sum<T>(tid < total, m, row, lane, rl, col, val, x);

    if (tid < total && lane == 0) {
      z[row] = sum;
      dot += x[row] * sum;
    }
  }
  MatGPUMatBlockSumToPartial(dot, partial);
}

/* z += A^T x: each lane scatters its entries of row i, scaled by x[i], with atomics (order not reproducible) */
template <int T>
__global__ void __launch_bounds__(kBlock) ellr_mult_transpose(int m, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *z)
{
  const long long tid  = (long long)blockIdx.x * kBlock + threadIdx.x;
  const int       row  = (int)(tid / T);
  const int       lane = (int)(tid % T);

  if (row >= m) return;
  const int         len    = rl[row];
  const long long   stride = (long long)m * T;
  const PetscScalar xi     = x[row];
  long long         s      = (long long)row * T + lane;

  for (int k = lane; k < len; k += T, s += stride) atomicAdd(z + col[s], val[s] * xi);
}

/* The device build or value refresh of the layout: one thread per (row, lane), see MatELLRFillThread() */
__global__ void __launch_bounds__(kBlock) ellr_fill(int m, int T, int width, int structure, const PetscInt *__restrict__ ai, const PetscInt *__restrict__ aj, const PetscScalar *__restrict__ aa, int *rl, int *col, PetscScalar *val)
{
  const long long tid = (long long)blockIdx.x * kBlock + threadIdx.x;

  if (tid < (long long)m * T) MatELLRFillThread(tid, m, T, width, structure, ai, aj, aa, rl, col, val);
}

/* The layout back to CSR order: one thread per (row, lane), see MatELLRGatherThread() */
__global__ void __launch_bounds__(kBlock) ellr_gather(int m, int T, const PetscInt *__restrict__ ai, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, PetscInt *aj, PetscScalar *aa)
{
  const long long tid = (long long)blockIdx.x * kBlock + threadIdx.x;

  if (tid < (long long)m * T) MatELLRGatherThread(tid, m, T, ai, rl, col, val, aj, aa);
}

/*
  Z[:, k] = A X[:, k] for NV columns of dense column-major blocks (leading dimensions ldx, ldz), one thread per row
  (T = 1): each entry of A is read once for all NV vectors, the reason for a block product (KSPMatSolve).
*/
template <int NV>
__global__ void __launch_bounds__(kBlock) ellr_mult_block(int m, const int *__restrict__ rl, const int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, int ldx, PetscScalar *__restrict__ z, int ldz)
{
  const int   row = (int)((long long)blockIdx.x * kBlock + threadIdx.x);
  PetscScalar acc[NV];

  if (row >= m) return;
#pragma unroll
  for (int k = 0; k < NV; k++) acc[k] = 0;
  const int len = rl[row];
  long long s   = row;
  for (int j = 0; j < len; j++, s += m) {
    const PetscScalar v = val[s];
    const int         c = col[s];
#pragma unroll
    for (int k = 0; k < NV; k++) acc[k] += v * __ldg(x + c + (long long)k * ldx);
  }
#pragma unroll
  for (int k = 0; k < NV; k++) z[row + (long long)k * ldz] = acc[k];
}

unsigned int blocks_for(PetscInt m, PetscInt T)
{
  return (unsigned int)(((long long)m * T + kBlock - 1) / kBlock);
}

} // namespace

PetscErrorCode MatELLRCUDALaunchMult(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int nb     = blocks_for(m, T);

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  switch (T) {
  case 1: ellr_mult<1><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, y, z); break;
  case 2: ellr_mult<2><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, y, z); break;
  case 4: ellr_mult<4><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, y, z); break;
  case 8: ellr_mult<8><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, y, z); break;
  case 16: ellr_mult<16><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, y, z); break;
  case 32: ellr_mult<32><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, y, z); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported threads per row %" PetscInt_FMT, T);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultDot(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z, PetscScalar *partial, PetscInt *npartial)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int nb     = PetscMin(blocks_for(m, T), (unsigned int)MATGPUMAT_MAX_DOT_PARTIALS);

  PetscFunctionBegin;
  *npartial = m ? (PetscInt)nb : 0;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  switch (T) {
  case 1: ellr_mult_dot<1><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z, partial); break;
  case 2: ellr_mult_dot<2><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z, partial); break;
  case 4: ellr_mult_dot<4><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z, partial); break;
  case 8: ellr_mult_dot<8><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z, partial); break;
  case 16: ellr_mult_dot<16><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z, partial); break;
  case 32: ellr_mult_dot<32><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z, partial); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported threads per row %" PetscInt_FMT, T);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultTranspose(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int nb     = blocks_for(m, T);

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  switch (T) {
  case 1: ellr_mult_transpose<1><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z); break;
  case 2: ellr_mult_transpose<2><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z); break;
  case 4: ellr_mult_transpose<4><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z); break;
  case 8: ellr_mult_transpose<8><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z); break;
  case 16: ellr_mult_transpose<16><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z); break;
  case 32: ellr_mult_transpose<32><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, z); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported threads per row %" PetscInt_FMT, T);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchFill(void *s, PetscInt T, PetscInt m, PetscInt width, PetscBool structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, int *rl, int *col, PetscScalar *val)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  ellr_fill<<<blocks_for(m, T), kBlock, 0, stream>>>((int)m, (int)T, (int)width, (int)structure, ai, aj, aa, rl, col, val);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchGather(void *s, PetscInt T, PetscInt m, const PetscInt *ai, const int *rl, const int *col, const PetscScalar *val, PetscInt *aj, PetscScalar *aa)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  ellr_gather<<<blocks_for(m, T), kBlock, 0, stream>>>((int)m, (int)T, ai, rl, col, val, aj, aa);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultBlock(void *s, PetscInt m, PetscInt nv, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int nb     = blocks_for(m, 1);

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatLaunchBlockWidth(nv, stream, [&](auto w) {
    ellr_mult_block<decltype(w)::value><<<nb, kBlock, 0, stream>>>((int)m, rl, col, val, x, (int)ldx, z, (int)ldz);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}
