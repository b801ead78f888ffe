/*
  Y += a X with X's pattern a subset of Y's (MatAXPY, MatAYPX with SUBSET_NONZERO_PATTERN): GAMG smooths every
  prolongator with one (agg.c: MatAYPX(A P0 D^-1, alpha, P0)), and SNES/TS programs add a mass matrix to a
  Jacobian. SeqAIJ answers it with MatAXPY_Basic(), a MatSetValues() per row and an assembly; here a merge of
  the two sorted rows adds X into Y's values in place. Y keeps its pattern, so its device copy gets a value
  refresh (on the GPU for every format), not a rebuild. Any other case (another structure flag, X not host AIJ,
  X's pattern not inside Y's after all) is SeqAIJ's.
*/
#include <petscgpumat/private/gpumatimpl.h>

/* whether every entry of X has a place in Y (both assembled: sorted columns in each row) */
static PetscBool MatGPUMatPatternInside(PetscInt m, const PetscInt *xi, const PetscInt *xj, const PetscInt *yi, const PetscInt *yj)
{
  for (PetscInt i = 0; i < m; i++) {
    PetscInt ky = yi[i];

    for (PetscInt kx = xi[i]; kx < xi[i + 1]; kx++, ky++) {
      while (ky < yi[i + 1] && yj[ky] < xj[kx]) ky++;
      if (ky == yi[i + 1] || yj[ky] != xj[kx]) return PETSC_FALSE;
    }
  }
  return PETSC_TRUE;
}

PetscErrorCode MatAXPY_GPUMat(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  Mat_GPUMat        *g = (Mat_GPUMat *)Y->spptr;
  const PetscInt    *xi, *xj, *yi, *yj;
  PetscScalar       *xa, *ya;
  PetscMemType       xmt = PETSC_MEMTYPE_DEVICE, ymt = PETSC_MEMTYPE_DEVICE;
  PetscBool          aij = PETSC_FALSE;
  PetscInt           m   = Y->rmap->n;

  PetscFunctionBegin;
  if (str == SUBSET_NONZERO_PATTERN && X != Y && X->assembled && Y->assembled && X->rmap->n == m && X->cmap->n == Y->cmap->n) {
    PetscErrorCode (*prealloc)(Mat, PetscInt, const PetscInt[]) = NULL;

    PetscCall(PetscObjectQueryFunction((PetscObject)X, "MatSeqAIJSetPreallocation_C", &prealloc)); /* SeqAIJ or a subclass */
    aij = (PetscBool)(prealloc != NULL);
  }
  if (aij) {
    PetscCall(MatSeqAIJGetCSRAndMemType(X, &xi, &xj, &xa, &xmt));
    PetscCall(MatSeqAIJGetCSRAndMemType(Y, &yi, &yj, &ya, &ymt));
  }
  PetscCheck(g->hostops.axpy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No host MatAXPY to fall back to");
  if (!aij || PetscMemTypeDevice(xmt) || PetscMemTypeDevice(ymt) || !MatGPUMatPatternInside(m, xi, xj, yi, yj)) {
    PetscCall((*g->hostops.axpy)(Y, a, X, str));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  {
    const PetscScalar *xv;

    PetscCall(MatSeqAIJGetArrayRead(X, &xv));
    PetscCall(MatSeqAIJGetArray(Y, &ya)); /* marks Y's values changed: its device copy refreshes them */
    for (PetscInt i = 0; i < m; i++) {
      PetscInt ky = yi[i];

      for (PetscInt kx = xi[i]; kx < xi[i + 1]; kx++, ky++) {
        while (yj[ky] < xj[kx]) ky++;
        ya[ky] += a * xv[kx];
      }
    }
    PetscCall(MatSeqAIJRestoreArray(Y, &ya));
    PetscCall(MatSeqAIJRestoreArrayRead(X, &xv));
  }
  PetscCall(PetscLogFlops(2.0 * (m ? xi[m] : 0)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
