/*
  The MATSEQAIJCUSPARSE shadow of a seq matrix (ours or plain SeqAIJ): a copy through which PETSc's aijcusparse code
  works for us where it reads its operand's cuSPARSE structure (device products: gpumat_product.c; cuSPARSE
  factorizations: gpumat_factor.c). The one-pipeline redesign (issue #19, a device CSR kept by the base) removes it.
*/
#include <petscgpumat/private/gpumatimpl.h>

/*
  Makes *shadow a MATSEQAIJCUSPARSE copy of X, or copies only the values again when X's pattern is the one the shadow
  has (*nonzerostate) and X changed since (*state); nothing when X did not change.
*/
PetscErrorCode MatGPUMatShadowSync(Mat X, Mat *shadow, PetscObjectState *nonzerostate, PetscObjectState *state)
{
  PetscObjectState now;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)X, &now));
  if (*shadow && *nonzerostate == X->nonzerostate) {
    const PetscScalar *a;
    PetscScalar       *b;
    const PetscInt    *ai;

    if (now == *state) PetscFunctionReturn(PETSC_SUCCESS);
    PetscCall(MatSeqAIJGetCSRAndMemType(X, &ai, NULL, NULL, NULL));
    PetscCall(MatSeqAIJGetArrayRead(X, &a));
    PetscCall(MatSeqAIJGetArrayWrite(*shadow, &b)); /* marks the shadow's device values stale */
    PetscCall(PetscArraycpy(b, a, X->rmap->n ? ai[X->rmap->n] : 0));
    PetscCall(MatSeqAIJRestoreArrayWrite(*shadow, &b));
    PetscCall(MatSeqAIJRestoreArrayRead(X, &a));
  } else {
    PetscCall(MatDestroy(shadow));
    PetscCall(MatConvert(X, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, shadow));
    *nonzerostate = X->nonzerostate;
  }
  *state = now;
  PetscFunctionReturn(PETSC_SUCCESS);
}
