/* Row-grouped CSR's products: the layout is described in include/petscgpumat/private/rgcsrimpl.h; the kernels are the
   row-group engine's (rowgroupcuda.h) with groups of G rows and, where rows were reordered, their permutation. The
   paper's kernel is T = 1 with one block per group; here a row's group is computed, so blocks have a fixed 256 threads
   whatever G and T (the engine's MatRowGroupGrouped says why). */
#include <petscgpumat/private/rgcsrimpl.h>
#include <petscgpumat/private/rowgroupcuda.h>

static MatRowGroupGrouped MatRgCSRGeometry(const Mat_SeqRGCSRCUDA *r)
{
  return MatRowGroupGrouped{(int)r->m, (int)r->G, r->d_gp, r->d_perm};
}

PetscErrorCode MatRgCSRCUDALaunchMult(void *s, const Mat_SeqRGCSRCUDA *r, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMult((cudaStream_t)s, r->T, MatRgCSRGeometry(r), r->d_rl, r->d_col, r->d_val, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchMultDot(void *s, const Mat_SeqRGCSRCUDA *r, const PetscScalar *x, PetscScalar *z, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultDot((cudaStream_t)s, r->T, MatRgCSRGeometry(r), r->d_rl, r->d_col, r->d_val, x, z, sums, npartial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchMultTranspose(void *s, const Mat_SeqRGCSRCUDA *r, const PetscScalar *x, PetscScalar *z)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultTranspose((cudaStream_t)s, r->T, MatRgCSRGeometry(r), r->d_rl, r->d_col, r->d_val, x, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchDiagonal(void *s, const Mat_SeqRGCSRCUDA *r, PetscScalar *d)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchDiagonal((cudaStream_t)s, r->m, r->G, r->T, r->d_gp, r->d_perm, r->d_rl, r->d_col, r->d_val, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchMultBlock(void *s, const Mat_SeqRGCSRCUDA *r, PetscInt nv, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchMultBlock((cudaStream_t)s, r->T, MatRgCSRGeometry(r), r->d_rl, r->d_col, r->d_val, nv, x, ldx, z, ldz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
