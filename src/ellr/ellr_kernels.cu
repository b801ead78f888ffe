/* ELLPACK-R's kernels: the layout is described in include/petscgpumat/private/ellrimpl.h; they are the row-group
   engine's (rowgroupcuda.h) with one group of all rows */
#include <petscgpumat/private/ellrimpl.h>
#include <petscgpumat/private/rowgroupcuda.h>

PetscErrorCode MatELLRCUDALaunchMult(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMult((cudaStream_t)s, T, MatRowGroupOne{(int)m}, rl, col, val, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultDot(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscScalar *z, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultDot((cudaStream_t)s, T, MatRowGroupOne{(int)m}, rl, col, val, x, z, sums, npartial));
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
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchFill((cudaStream_t)s, m, m, T, width, NULL, NULL, structure, ai, aj, aa, rl, col, val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchGather(void *s, PetscInt T, PetscInt m, const PetscInt *ai, const int *rl, const int *col, const PetscScalar *val, PetscInt *aj, PetscScalar *aa)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchGather((cudaStream_t)s, m, m, T, NULL, NULL, ai, rl, col, val, aj, aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchDiagonal(void *s, PetscInt T, PetscInt m, const int *rl, const int *col, const PetscScalar *val, PetscScalar *d)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchDiagonal((cudaStream_t)s, m, m, T, NULL, NULL, rl, col, val, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRCUDALaunchMultBlock(void *s, PetscInt m, PetscInt nv, const int *rl, const int *col, const PetscScalar *val, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultBlock((cudaStream_t)s, 1, MatRowGroupOne{(int)m}, rl, col, val, nv, x, ldx, z, ldz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
