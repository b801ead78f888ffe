/*
  The MATSEQAIJCUSPARSE shadow of a seq matrix (ours or plain SeqAIJ): a copy through which PETSc's aijcusparse code
  works for us where it reads its operand's cuSPARSE structure (device products: gpumat_product.c; cuSPARSE
  factorizations: gpumat_factor.c). The one-pipeline redesign (issue #19, a device CSR kept by the base) removes it.
*/
#include <petscgpumat/private/gpumatimpl.h>

/* whether X has the pattern of `shadow` (host CSR of both: an aijcusparse matrix keeps its structure on the host) */
static PetscErrorCode MatGPUMatSamePattern(Mat X, Mat shadow, PetscBool *same)
{
  const PetscInt *xi, *xj, *si, *sj;
  PetscInt        nx, ns;
  PetscBool       dx, ds;

  PetscFunctionBegin;
  *same = PETSC_FALSE;
  if (X->rmap->n != shadow->rmap->n || X->cmap->n != shadow->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGetRowIJ(X, 0, PETSC_FALSE, PETSC_FALSE, &nx, &xi, &xj, &dx));
  PetscCall(MatGetRowIJ(shadow, 0, PETSC_FALSE, PETSC_FALSE, &ns, &si, &sj, &ds));
  if (dx && ds && nx == ns) {
    PetscCall(PetscArraycmp(xi, si, nx + 1, same));
    if (*same) PetscCall(PetscArraycmp(xj, sj, xi[nx], same));
  }
  PetscCall(MatRestoreRowIJ(X, 0, PETSC_FALSE, PETSC_FALSE, &nx, &xi, &xj, &dx));
  PetscCall(MatRestoreRowIJ(shadow, 0, PETSC_FALSE, PETSC_FALSE, &ns, &si, &sj, &ds));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Makes *shadow a MATSEQAIJCUSPARSE copy of X, or copies only the values again when the shadow already has X's
  pattern and X changed since (*state); nothing when X did not change. *id, *nonzerostate and *state record the
  matrix the shadow copies: a factorization may be given another matrix than the one it was set up with (same
  pattern, e.g. mat tests ex28), whose states can carry the same numbers, so the matrix's id is compared too and
  the pattern checked when it differs.
*/
PetscErrorCode MatGPUMatShadowSync(Mat X, Mat *shadow, PetscObjectId *id, PetscObjectState *nonzerostate, PetscObjectState *state)
{
  PetscObjectState now;
  PetscBool        same = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)X, &now));
  if (*shadow && *id == ((PetscObject)X)->id) {
    if (*nonzerostate == X->nonzerostate && now == *state) PetscFunctionReturn(PETSC_SUCCESS);
    same = (PetscBool)(*nonzerostate == X->nonzerostate);
  } else if (*shadow) PetscCall(MatGPUMatSamePattern(X, *shadow, &same));
  if (same) {
    const PetscScalar *a;
    PetscScalar       *b;
    const PetscInt    *ai;

    PetscCall(MatSeqAIJGetCSRAndMemType(X, &ai, NULL, NULL, NULL));
    PetscCall(MatSeqAIJGetArrayRead(X, &a));
    PetscCall(MatSeqAIJGetArrayWrite(*shadow, &b)); /* marks the shadow's device values stale */
    PetscCall(PetscArraycpy(b, a, X->rmap->n ? ai[X->rmap->n] : 0));
    PetscCall(MatSeqAIJRestoreArrayWrite(*shadow, &b));
    PetscCall(MatSeqAIJRestoreArrayRead(X, &a));
  } else {
    PetscCall(MatDestroy(shadow));
    PetscCall(MatConvert(X, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, shadow));
  }
  *id           = ((PetscObject)X)->id;
  *nonzerostate = X->nonzerostate;
  *state        = now;
  PetscFunctionReturn(PETSC_SUCCESS);
}
