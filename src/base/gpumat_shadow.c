/*
  The MATSEQAIJCUSPARSE shadow of a seq matrix (ours or plain SeqAIJ): a MATSEQAIJCUSPARSE over the matrix's own host
  CSR arrays (no host copy: it does not free them) whose device copy PETSc's own code makes and refreshes, for
  aijcusparse's products (gpumat_product.c) and cuSPARSE factorizations (gpumat_factor.c). Our types have one, kept
  by the base (Mat_GPUMat.csr) from the first of those on: all of them read it, and the format builds and refreshes
  from it too (gpumat_mult.c), so that one upload serves everything. Plain SeqAIJ operands get one of their own.
  A sparse product of ours is made over the arrays of cuSPARSE's result, which becomes its shadow with nothing to
  upload (MatGPUMatShadowAdopt()).
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
  A SeqAIJ matrix over the given CSR arrays, which it does not free. SeqAIJ's assembly would look for inodes, which
  only its host kernels use (on a 3-D 7-point Laplacian of 23 M nonzeros: 36-44 ms with the search, 13-15 ms
  without): an options database holding only -mat_no_inode stands in for the program's meanwhile.
*/
PetscErrorCode MatGPUMatCreateOverArrays(PetscInt m, PetscInt n, PetscInt *ai, PetscInt *aj, PetscScalar *aa, Mat *M)
{
  PetscOptions   none;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscOptionsCreate(&none));
  PetscCall(PetscOptionsSetValue(none, "-mat_no_inode", NULL));
  PetscCall(PetscOptionsPush(none));
  ierr = MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, m, n, ai, aj, aa, M);
  PetscCall(PetscOptionsPop());
  PetscCall(PetscOptionsDestroy(&none));
  PetscCall(ierr);
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
    if (now != s->state && !(s->bump && now == s->state + 1)) { /* the shadow's host values are X's: only its device copy is stale */
      PetscScalar *b;

      PetscCall(PetscInfo(X, "New values: its cuSPARSE shadow's go up (state %" PetscInt64_FMT ", synced at %" PetscInt64_FMT ")\n", (PetscInt64)now, (PetscInt64)s->state));
      PetscCall(MatSeqAIJGetArrayWrite(s->mat, &b));
      PetscCall(MatSeqAIJRestoreArrayWrite(s->mat, &b));
    }
  } else {
    PetscCall(PetscInfo(X, "Its cuSPARSE shadow made (%s)\n", !s->mat ? "none yet" : s->id != ((PetscObject)X)->id ? "another matrix" : s->nonzerostate != X->nonzerostate ? "a new nonzero pattern" : "new arrays"));
    PetscCall(MatDestroy(&s->mat));
    PetscCall(MatGPUMatCreateOverArrays(X->rmap->n, X->cmap->n, ai, aj, aa, &s->mat));
    PetscCall(MatSetBlockSizesFromMats(s->mat, X, X));
    PetscCall(MatConvert(s->mat, MATSEQAIJCUSPARSE, MAT_INPLACE_MATRIX, &s->mat));
    s->id           = ((PetscObject)X)->id;
    s->nonzerostate = X->nonzerostate;
    s->ai           = ai;
    s->aj           = aj;
    s->aa           = aa;
  }
  s->state = now;
  s->bump  = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Makes S, a MATSEQAIJCUSPARSE whose host CSR arrays are X's own and whose device copy holds X's current values (a
  product cuSPARSE computed, whose arrays X's are: gpumat_product.c), X's shadow, current: what a shadow of X would
  upload is on the device already. Called again each time X's values and S's device values changed together; `bump`:
  X's state is yet to be increased once by the caller's caller (MatProductNumeric() after a numeric phase), which
  does not make the device values stale. (A numeric phase called straight from PETSc's code, for the local products
  inside MPI products, leaves the state as it is: a host write of exactly one increase to such an intermediate
  product, before its next numeric phase, would then go unseen; PETSc makes none.)
*/
PetscErrorCode MatGPUMatShadowAdopt(Mat X, MatGPUMatShadow *s, Mat S, PetscBool bump)
{
  const PetscInt *si, *sj;
  PetscInt       *ai, *aj, n;
  PetscScalar    *aa;
  PetscBool       done;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowHostCSR(X, &ai, &aj, &aa));
  PetscCall(MatGetRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &n, &si, &sj, &done));
  PetscCheck(done && si == ai && sj == aj, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A shadow is adopted only over the matrix's own host arrays");
  PetscCall(MatRestoreRowIJ(S, 0, PETSC_FALSE, PETSC_FALSE, &n, &si, &sj, &done));
  if (s->mat != S) {
    PetscCall(PetscObjectReference((PetscObject)S));
    PetscCall(MatGPUMatShadowReset(s));
    s->mat = S;
  }
  s->id           = ((PetscObject)X)->id;
  s->nonzerostate = X->nonzerostate;
  s->ai           = ai;
  s->aj           = aj;
  s->aa           = aa;
  PetscCall(PetscObjectStateGet((PetscObject)X, &s->state));
  s->bump = bump;
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
