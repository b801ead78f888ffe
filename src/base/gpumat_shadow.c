/*
  The MATSEQAIJCUSPARSE shadow of a seq matrix (ours or plain SeqAIJ) through which PETSc's aijcusparse code works
  for us where it reads its operand's cuSPARSE structure (device products: gpumat_product.c; cuSPARSE
  factorizations: gpumat_factor.c). The shadow is made over the matrix's own host CSR arrays (no host copy: it
  does not free them), so only its device copy is a second one; the one-pipeline redesign (issue #19, a device
  CSR kept by the base) would remove that too.
*/
#include <petscgpumat/private/gpumatimpl.h>

/* X's host CSR arrays (an aijcusparse X is never shadowed: its MatSeqAIJGetCSRAndMemType() answers on the device) */
static PetscErrorCode MatGPUMatShadowHostCSR(Mat X, PetscInt **ai, PetscInt **aj, PetscScalar **aa)
{
  const PetscInt *i, *j;
  PetscScalar    *a;
  PetscMemType    mtype;

  PetscFunctionBegin;
  PetscCall(MatSeqAIJGetCSRAndMemType(X, &i, &j, &a, &mtype));
  PetscCheck(PetscMemTypeHost(mtype), PetscObjectComm((PetscObject)X), PETSC_ERR_PLIB, "A shadow is made of a matrix with host CSR arrays, not of a %s", ((PetscObject)X)->type_name);
  *ai = (PetscInt *)i;
  *aj = (PetscInt *)j;
  *aa = a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Makes s->mat a MATSEQAIJCUSPARSE over X's host arrays, or marks its device values stale when only X's values
  changed since the last call (they are the same host array); nothing when X did not change. The shadow is made
  again for another matrix (a factorization may be given one of the same pattern: mat tests ex28; its arrays are
  not the old ones, which may be gone) and for a new pattern or new arrays of X.
*/
PetscErrorCode MatGPUMatShadowSync(Mat X, MatGPUMatShadow *s)
{
  PetscObjectState now;
  PetscInt        *ai = NULL, *aj = NULL;
  PetscScalar     *aa = NULL;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)X, &now));
  PetscCall(MatGPUMatShadowHostCSR(X, &ai, &aj, &aa));
  if (s->mat && s->id == ((PetscObject)X)->id && s->nonzerostate == X->nonzerostate && s->ai == ai && s->aj == aj && s->aa == aa) {
    if (now != s->state) { /* the shadow's host values are X's: only its device copy is stale */
      PetscScalar *b;

      PetscCall(MatSeqAIJGetArrayWrite(s->mat, &b));
      PetscCall(MatSeqAIJRestoreArrayWrite(s->mat, &b));
    }
  } else {
    PetscCall(MatDestroy(&s->mat));
    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, X->rmap->n, X->cmap->n, ai, aj, aa, &s->mat));
    PetscCall(MatSetBlockSizesFromMats(s->mat, X, X));
    PetscCall(MatConvert(s->mat, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, &s->mat));
    s->id           = ((PetscObject)X)->id;
    s->nonzerostate = X->nonzerostate;
    s->ai           = ai;
    s->aj           = aj;
    s->aa           = aa;
  }
  s->state = now;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatShadowReset(MatGPUMatShadow *s)
{
  PetscFunctionBegin;
  PetscCall(MatDestroy(&s->mat));
  PetscCall(PetscMemzero(s, sizeof(*s)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
