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

/* RowInStrip into the 4 high bits of the CSR column indices already on the device (one thread per row), and StripPtr */
__global__ void cmrs_pack(int m, int H, int strips, const PetscInt *__restrict__ ai, unsigned int *col, PetscCount *sp)
{
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;

  if (i < m) {
    const unsigned int r = (unsigned int)(i % H) << CMRS_COL_BITS;

    for (PetscInt k = ai[i]; k < ai[i + 1]; k++) col[k] |= r;
  }
  if (i <= strips) sp[i] = ai[min(i * H, (long long)m)];
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

/* Whether the scan kernel can also sum x'z in its pass: it runs, and no group of strips is split (a split group's rows
   are finished by the combine kernel, after the pass) */
PetscBool MatCMRSCUDACanMultDot(const Mat_SeqCMRSCUDA *c)
{
  return (PetscBool)(c->warp_strips > 0 && c->strips > 0 && !(c->split.nlong > 0 && c->split.S == c->warp_strips && c->split.H == c->height));
}

PetscErrorCode MatCMRSCUDALaunchMultScanDot(void *s, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, PetscScalar *z, PetscScalar *partial, PetscInt *npartial)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  PetscCheck(MatCMRSCUDACanMultDot(c), PETSC_COMM_SELF, PETSC_ERR_PLIB, "This CMRS layout has no product with a dot product");
  PetscCall(with_scan_parameters(c, [&](auto u, auto e) { return MatCMRSScanLaunchMultDot_Private<decltype(u)::value, decltype(e)::value>(stream, c, x, z, partial, npartial); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSCUDALaunchPack(void *stream, PetscInt m, PetscInt H, PetscInt strips, const PetscInt *ai, unsigned int *col, PetscCount *sp)
{
  const unsigned int threads = 256, blocks = (unsigned int)((PetscMax(m, strips + 1) + threads - 1) / threads);

  PetscFunctionBegin;
  cmrs_pack<<<blocks, threads, 0, (cudaStream_t)stream>>>((int)m, (int)H, (int)strips, ai, col, sp); /* the build's stream (MatGPUMatCSR) */
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
