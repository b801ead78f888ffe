/* ELLPACK-R's kernels: the layout is described in include/petscgpumat/private/ellrimpl.h; its products are the
   row-group engine's (rowgroupcuda.h) with one group of all rows */
#include <petscgpumat/private/ellrimpl.h>
#include <petscgpumat/private/rowgroupcuda.h>

namespace
{
constexpr int kBlock = MATROWGROUP_BLOCK;

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

} // namespace

PetscErrorCode MatELLRCUDALaunchMult(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMult((cudaStream_t)s, T, MatRowGroupOne{(int)m}, rl, col, val, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultDot(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z, PetscScalar *partial, PetscInt *npartial)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultDot((cudaStream_t)s, T, MatRowGroupOne{(int)m}, rl, col, val, x, z, partial, npartial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultTranspose(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultTranspose((cudaStream_t)s, T, MatRowGroupOne{(int)m}, rl, col, val, x, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchFill(void *s, PetscInt T, PetscInt m, PetscInt width, PetscBool structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, int *rl, int *col, PetscScalar *val)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  ellr_fill<<<MatRowGroupBlocks((long long)m * T), kBlock, 0, stream>>>((int)m, (int)T, (int)width, (int)structure, ai, aj, aa, rl, col, val);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchGather(void *s, PetscInt T, PetscInt m, const PetscInt *ai, const int *rl, const int *col, const PetscScalar *val, PetscInt *aj, PetscScalar *aa)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!m) PetscFunctionReturn(PETSC_SUCCESS);
  ellr_gather<<<MatRowGroupBlocks((long long)m * T), kBlock, 0, stream>>>((int)m, (int)T, ai, rl, col, val, aj, aa);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultBlock(void *s, PetscInt m, PetscInt nv, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultBlock((cudaStream_t)s, 1, MatRowGroupOne{(int)m}, rl, col, val, nv, x, ldx, z, ldz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
