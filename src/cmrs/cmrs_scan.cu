/*
  CMRS's scan product (the kernels: cmrs_scan.h, compiled per (U, E) in cmrs_scan_instances.cu), dispatched on the
  layout's U and E, and the device build's pack of RowInStrip into the column indices
*/
#include "cmrs_scan.h"

namespace
{
/* f(U, E) with the layout's passes loaded ahead and entries per lane as compile-time constants */
template <class F>
PetscErrorCode with_scan_parameters(const Mat_SeqCMRSCUDA *c, F &&f)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatWithConstant<1, 2, 4>(c->lane_entries, "CMRS lane entries", [&](auto e) { return MatGPUMatWithConstant<1, 2, 4>(c->plan.unroll, "CMRS unroll", [&](auto u) { return f(u, e); }); }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The row of entry k: the last i in [lo, hi] with ai[i] <= k (ai[lo] <= k < ai[hi + 1]) */
__device__ inline PetscInt cmrs_row_of(const PetscInt *__restrict__ ai, long long k, PetscInt lo, PetscInt hi)
{
  while (lo < hi) {
    const PetscInt mid = lo + (hi - lo + 1) / 2;

    if (ai[mid] <= k) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* RowInStrip into the 4 high bits of the CSR column indices already on the device, and StripPtr. One thread per entry,
   not per row: a thread per row took one thread's loop over the longest row (an arrow matrix's 2 M entries: 50 ms).
   Each block finds the rows of its first and last entries over all rows, its threads then search only between them. */
__global__ void cmrs_pack(int m, int H, int strips, long long nnz, const PetscInt *__restrict__ ai, unsigned int *col, PetscCount *sp)
{
  __shared__ PetscInt  range[2];
  const long long      first = (long long)blockIdx.x * blockDim.x, k = first + threadIdx.x;
  const long long      last  = min(first + (long long)blockDim.x, nnz) - 1;

  if (threadIdx.x < 2 && first <= last) range[threadIdx.x] = cmrs_row_of(ai, threadIdx.x ? last : first, 0, m - 1);
  __syncthreads();
  if (k <= last) col[k] |= (unsigned int)(cmrs_row_of(ai, k, range[0], range[1]) % H) << CMRS_COL_BITS;
  for (long long i = k; i <= strips; i += (long long)gridDim.x * blockDim.x) sp[i] = ai[min(i * H, (long long)m)];
}

/* The CSR column indices of a packed layout: RowInStrip masked off */
__global__ void cmrs_unpack(long long nnz, const unsigned int *__restrict__ col, PetscInt *__restrict__ out)
{
  for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < nnz; k += (long long)gridDim.x * blockDim.x) out[k] = (PetscInt)(col[k] & CMRS_COL_MASK);
}
} // namespace

PetscErrorCode MatCMRSCUDALaunchMultScan(void *s, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!c->strips) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(with_scan_parameters(c, [&](auto u, auto e) { return MatCMRSScanLaunchMult_Private<decltype(u)::value, decltype(e)::value>(stream, c, x, y, z); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether the scan kernel can also sum x'z in its pass: it runs, no group of strips is split and no row is heavy (a split
   group's rows are finished by the combine kernel, after the pass; heavy rows by warps of their own) */
PetscBool MatCMRSCUDACanMultDot(const Mat_SeqCMRSCUDA *c)
{
  return (PetscBool)(c->warp_strips > 0 && c->strips > 0 && !(c->split.nlong > 0 && c->split.S == c->warp_strips && c->split.H == c->height) && !(c->heavy.nheavy > 0 && c->heavy.S == c->warp_strips && c->heavy.H == c->height));
}

PetscErrorCode MatCMRSCUDALaunchMultScanDot(void *s, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, PetscScalar *z, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  PetscCheck(MatCMRSCUDACanMultDot(c), PETSC_COMM_SELF, PETSC_ERR_PLIB, "This CMRS layout has no product with a dot product");
  PetscCall(with_scan_parameters(c, [&](auto u, auto e) { return MatCMRSScanLaunchMultDot_Private<decltype(u)::value, decltype(e)::value>(stream, c, x, z, sums, npartial); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSCUDALaunchPack(void *stream, PetscInt m, PetscInt H, PetscInt strips, PetscCount nnz, const PetscInt *ai, unsigned int *col, PetscCount *sp)
{
  const unsigned int threads = 256, blocks = (unsigned int)PetscMax((nnz + threads - 1) / threads, 1);

  PetscFunctionBegin;
  PetscCheck((nnz + threads - 1) / threads < (PetscCount)INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "CMRS device build of %" PetscCount_FMT " entries: too many for one grid", nnz);
  cmrs_pack<<<blocks, threads, 0, (cudaStream_t)stream>>>((int)m, (int)H, (int)strips, (long long)nnz, ai, col, sp); /* the build's stream (MatGPUMatCSR) */
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSCUDALaunchUnpackColumns(void *stream, PetscCount nnz, const unsigned int *col, PetscInt *out)
{
  const unsigned int threads = 256, blocks = (unsigned int)PetscMin((nnz + threads - 1) / threads, (PetscCount)65535 * 8);

  PetscFunctionBegin;
  if (!nnz) PetscFunctionReturn(PETSC_SUCCESS);
  cmrs_unpack<<<blocks, threads, 0, (cudaStream_t)stream>>>((long long)nnz, col, out);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
