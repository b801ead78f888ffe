/*
  A seq matrix's current device CSR for what reads it besides the products (the device ILU(0)/ICC(0) factor,
  gpumat_factor_device.c), copied device to device: from the format's layout where it holds the entries in CSR order
  (MatGPUFormat.copycsr: the format's build from the host CSR is then the only upload), else from the matrix's
  MATSEQAIJCUSPARSE shadow (gpumat_shadow.c: made and uploaded where the matrix has none yet; the format then builds
  from it, so that one upload serves both).
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>

/*
  From the layout of A (ours), built or refreshed now where it is not current, if it gives the CSR's entries back. A
  format that refuses A (a padding guard: PETSC_ERR_SUP) or does not fit leaves it to the shadow.
*/
static PetscErrorCode MatGPUMatCopyFormatCSR_Private(Mat A, void *stream, PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *done)
{
  Mat_GPUMat    *g = (Mat_GPUMat *)A->spptr;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (!g->format->copycsr || g->csr.mat) PetscFunctionReturn(PETSC_SUCCESS); /* with a shadow, the shadow's arrays are the device CSR */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatGPUMatSyncDevice(A);
  PetscCall(PetscPopErrorHandler());
  if (MatGPUMatBuildRefused(ierr)) {
    PetscCall(PetscInfo(A, "%s does not build its device copy (error %d): the device CSR comes from its aijcusparse copy\n", ((PetscObject)A)->type_name, (int)ierr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ierr);
  if (g->cai || !g->d_ai) PetscFunctionReturn(PETSC_SUCCESS); /* compressed rows: the layout holds only the nonempty ones */
  PetscCall(g->format->copycsr(A, stream, g->d_ai, d_aj, d_aa, done));
  if (*done) PetscCall(MatGPUMatCopyOnStream(d_ai, g->d_ai, (size_t)(A->rmap->n + 1) * sizeof(PetscInt), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Copies X's current device CSR into d_ai [m + 1], d_aj [nnz], d_aa [nnz] (NULL: not wanted) on `stream`; the
  caller sized them for X's entries. X is a seq petscgpumat matrix, a SeqAIJ or an aijcusparse matrix; `own` keeps
  the shadow of an X that is not ours (its device copy refreshed only where X changed).
*/
PetscErrorCode MatGPUMatCopyDeviceCSR(Mat X, MatGPUMatShadow *own, void *stream, PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa)
{
  PetscBool          cusparse, done = PETSC_FALSE;
  const PetscInt    *ai, *aj;
  const PetscScalar *aa;
  MatInfo            info;
  Mat                S;

  PetscFunctionBegin;
  PetscCheck(PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT, PETSC_COMM_SELF, PETSC_ERR_SUP, "The device CSR of aijcusparse has 32-bit indices: not PetscInt here");
  if (MatGPUMatIsOurs(X)) PetscCall(MatGPUMatCopyFormatCSR_Private(X, stream, d_ai, d_aj, d_aa, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJCUSPARSE, &cusparse));
  if (cusparse) S = X;
  else PetscCall(MatGPUMatShadowOf(X, own, &S));
  PetscCall(MatGetInfo(S, MAT_LOCAL, &info));
  PetscCall(PetscGPUMatSeqAIJCUSPARSEGetIJ(S, PETSC_FALSE, &ai, &aj)); /* all rows: uncompressed */
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(S, &aa));
  PetscCall(MatGPUMatCopyOnStream(d_ai, ai, (size_t)(X->rmap->n + 1) * sizeof(PetscInt), stream));
  PetscCall(MatGPUMatCopyOnStream(d_aj, aj, (size_t)info.nz_used * sizeof(PetscInt), stream));
  PetscCall(MatGPUMatCopyOnStream(d_aa, aa, (size_t)info.nz_used * sizeof(PetscScalar), stream));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(S, &aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Copies the device CSR that X (ours, all rows on the device) already holds: its format's layout in CSR order, or the
  shadow it has; *done PETSC_FALSE where it holds neither, and then no shadow is made (a caller that reads the CSR
  once, such as a transpose's forming, uploads the host entries instead of assembling a shadow over all the rows)
*/
PetscErrorCode MatGPUMatCopyHeldDeviceCSR(Mat X, void *stream, PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *done)
{
  MatGPUMatShadow none;

  PetscFunctionBegin;
  PetscCall(MatGPUMatCopyFormatCSR_Private(X, stream, d_ai, d_aj, d_aa, done));
  if (*done || !((Mat_GPUMat *)X->spptr)->csr.mat) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMemzero(&none, sizeof(none)));
  PetscCall(MatGPUMatCopyDeviceCSR(X, &none, stream, d_ai, d_aj, d_aa)); /* the shadow's arrays, brought up to date */
  PetscCall(MatGPUMatShadowReset(&none));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
