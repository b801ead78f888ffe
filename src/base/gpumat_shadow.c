/*
  The MATSEQAIJCUSPARSE shadow of a seq matrix (ours or plain SeqAIJ): a MATSEQAIJCUSPARSE over the matrix's own host
  CSR arrays (no host copy: it does not free them) whose device copy PETSc's own code makes and refreshes, for
  aijcusparse's products (gpumat_product.c) and cuSPARSE factorizations (gpumat_factor.c). Our types have one, kept
  by the base (Mat_GPUMat.csr) from the first of those on: all of them read it, and the format builds and refreshes
  from it too (gpumat_mult.c), so that one upload serves everything. Plain SeqAIJ operands get one of their own.
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
    PetscOptions   none;
    PetscErrorCode ierr;

    PetscCall(MatDestroy(&s->mat));
    /* SeqAIJ's assembly would look for inodes, which only its host kernels use (on a 3-D 7-point Laplacian of 23 M
       nonzeros: 36-44 ms with the search, 13-15 ms without): an options database holding only -mat_no_inode stands
       in for the program's meanwhile */
    PetscCall(PetscOptionsCreate(&none));
    PetscCall(PetscOptionsSetValue(none, "-mat_no_inode", NULL));
    PetscCall(PetscOptionsPush(none));
    ierr = MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, X->rmap->n, X->cmap->n, ai, aj, aa, &s->mat);
    PetscCall(PetscOptionsPop());
    PetscCall(PetscOptionsDestroy(&none));
    PetscCall(ierr);
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

/*
  What aijcusparse's products and factorizations are given for X: the base's device CSR where X is a seq petscgpumat
  matrix, else a shadow of X kept in `own`; current in both cases
*/
PetscErrorCode MatGPUMatShadowOf(Mat X, MatGPUMatShadow *own, Mat *S)
{
  PetscBool seq;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)X, MATSEQAIJ, &seq));
  if (seq && MatGPUMatIsOurs(X)) {
    Mat_GPUMat *g = (Mat_GPUMat *)X->spptr;

    PetscCall(MatGPUMatShadowReset(own));
    PetscCall(MatGPUMatShadowSync(X, &g->csr));
    *S = g->csr.mat;
  } else {
    PetscCall(MatGPUMatShadowSync(X, own));
    *S = own->mat;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
