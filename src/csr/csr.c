/*
  MATSEQCSRCUDA: cuSPARSE's CSR SpMV as a petscgpumat format (parameters, device copy, products, registration).

  The layout is the base's device CSR itself: the format keeps the entries the base uploaded for it (or copies them,
  device to device, where they are a shadow's) and its own row offsets, and multiplies with cusparseSpMV. It is what
  `aijcusparse` multiplies with, inside our pipeline: a candidate beside the papers' formats wherever they do not pay
  (a few very long rows), with our products, halo exchange, factorizations and MatView. This folder is the whole
  format; outside it only the registration (src/petscgpumatregis.c), the public names (include/petscgpumat.h) and
  -lcusparse (makefile) name it.
*/
#include <petscgpumat/private/gpumatcusparse.h>

#define MATCSR_INDEX (sizeof(PetscInt) == 8 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I)

typedef struct {
  PetscInt              alg;    /* 1: CUSPARSE_SPMV_CSR_ALG1 (aijcusparse's), 2: CUSPARSE_SPMV_CSR_ALG2 (bitwise reproducible) */
  PetscInt              m;      /* device rows (the nonempty ones of a compressed block) */
  PetscCount            nnz;
  PetscInt             *d_ai, *d_aj; /* [m + 1], [nnz] */
  PetscScalar          *d_aa;        /* [nnz] */
  cusparseSpMatDescr_t  descr;
  /* per direction (forward, transposed), made at the first such product and kept: the vector descriptors (their
     arrays set at each product) and the SpMV work space, sized and preprocessed for the algorithm last used (the
     analysis holds for new values of the same pattern, which a value refresh writes in place) */
  cusparseDnVecDescr_t  vx[2], vz[2];
  void                 *buffer[2];
  size_t                bufsize[2];
  int                   sized_alg[2]; /* the algorithm the work space was sized for (0: none yet) */
  size_t                bytes;
} Mat_SeqCSRCUDA;

static const MatGPUFormat MatGPUFormat_CSR;

static PetscErrorCode MatCSRGetData_Private(Mat A, Mat_SeqCSRCUDA **c)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_CSR, c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCSRCUDASetSpMVAlgorithm_CSR(Mat A, PetscInt alg)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCheck(alg == 1 || alg == 2, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "The cuSPARSE CSR SpMV algorithm is 1 (CUSPARSE_SPMV_CSR_ALG1) or 2 (CUSPARSE_SPMV_CSR_ALG2), not %" PetscInt_FMT, alg);
  PetscCall(MatCSRGetData_Private(A, &c));
  c->alg = alg; /* read at each product: nothing to rebuild */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCSRCUDAGetSpMVAlgorithm_CSR(Mat A, PetscInt *alg)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  *alg = c->alg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatComposeCSR_Private(Mat A, PetscBool compose)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatCSRCUDASetSpMVAlgorithm_C", compose ? MatCSRCUDASetSpMVAlgorithm_CSR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatCSRCUDAGetSpMVAlgorithm_C", compose ? MatCSRCUDAGetSpMVAlgorithm_CSR : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCreate_CSR(void **data)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(PetscNew(&c));
  c->alg = 1; /* aijcusparse's: on the suite of 86 real matrices (H100) ALG2 took 1.24x its time (geometric mean) */
  *data  = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyParameters_CSR(Mat A, Mat B)
{
  Mat_SeqCSRCUDA *a, *b;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &a));
  PetscCall(MatCSRGetData_Private(B, &b));
  b->alg = a->alg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatSetFromOptions_CSR(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_SeqCSRCUDA *c;
  PetscInt        alg;
  PetscBool       set;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  PetscCall(PetscOptionsInt("-mat_csr_spmv_alg", "cuSPARSE's CSR SpMV algorithm: 1 (CUSPARSE_SPMV_CSR_ALG1, aijcusparse's) or 2 (CUSPARSE_SPMV_CSR_ALG2: bitwise reproducible, slower)", "MatCSRCUDASetSpMVAlgorithm", c->alg, &alg, &set));
  if (set) PetscCall(MatCSRCUDASetSpMVAlgorithm(A, alg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatView_CSR(Mat A, PetscViewer viewer)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  PetscCall(PetscViewerASCIIPrintf(viewer, "cusparseSpMV with CUSPARSE_SPMV_CSR_ALG%" PetscInt_FMT "%s; a square matrix's transposed products with CUSPARSE_SPMV_CSR_ALG1\n", c->alg, c->alg == 2 ? " (bitwise reproducible forward products)" : " (aijcusparse's)"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatFreeDevice_CSR(Mat A)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  if (c->descr) PetscCallCUSPARSE(cusparseDestroySpMat(c->descr));
  c->descr = NULL;
  for (int k = 0; k < 2; k++) {
    if (c->vx[k]) PetscCallCUSPARSE(cusparseDestroyDnVec(c->vx[k]));
    if (c->vz[k]) PetscCallCUSPARSE(cusparseDestroyDnVec(c->vz[k]));
    c->vx[k] = c->vz[k] = NULL;
    c->sized_alg[k]     = 0;
  }
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_ai));
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_aj));
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_aa));
  for (int k = 0; k < 2; k++) {
    PetscCall(MatGPUMatDeviceFree(&c->buffer[k]));
    c->bufsize[k] = 0;
  }
  c->bytes = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static size_t MatCSRDeviceBytes(PetscInt m, PetscCount nnz)
{
  return (size_t)(m + 1) * sizeof(PetscInt) + (size_t)nnz * (sizeof(PetscInt) + sizeof(PetscScalar));
}

/*
  The base's device CSR becomes the format's: its entries are taken where they are the base's temporaries (no copy),
  copied on the device where they are a shadow's; the row offsets are copied (the base frees its own). Peak device
  memory: the CSR (twice where a shadow serves, as for every format).
*/
static PetscErrorCode MatGPUFormatBuild_CSR(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqCSRCUDA *c;
  const size_t    bytes = MatCSRDeviceBytes(csr->m, csr->nnz);

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  PetscCall(MatGPUMatCheckDeviceMemory(A, bytes - (csr->own_aj ? (size_t)csr->nnz * sizeof(PetscInt) : 0) - (csr->own_aa ? (size_t)csr->nnz * sizeof(PetscScalar) : 0), "cuSPARSE CSR"));
  c->m     = csr->m;
  c->nnz   = csr->nnz;
  c->bytes = bytes;
  /* (a failure leaves the partial allocations to the base, which frees them with freedevice) */
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)(csr->m + 1) * sizeof(PetscInt), (void **)&c->d_ai));
  if (csr->d_ai) PetscCall(MatGPUMatCopyOnStream(c->d_ai, csr->d_ai, (size_t)(csr->m + 1) * sizeof(PetscInt), csr->stream));
  else PetscCallCUDA(cudaMemsetAsync(c->d_ai, 0, (size_t)(csr->m + 1) * sizeof(PetscInt), (cudaStream_t)csr->stream)); /* no rows, or no entries */
  if (csr->own_aj) {
    c->d_aj     = csr->own_aj;
    csr->own_aj = NULL;
  } else {
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)csr->nnz * sizeof(PetscInt), (void **)&c->d_aj));
    PetscCall(MatGPUMatCopyOnStream(c->d_aj, csr->d_aj, (size_t)csr->nnz * sizeof(PetscInt), csr->stream));
  }
  if (csr->own_aa) {
    c->d_aa     = csr->own_aa;
    csr->own_aa = NULL;
  } else {
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)csr->nnz * sizeof(PetscScalar), (void **)&c->d_aa));
    PetscCall(MatGPUMatCopyOnStream(c->d_aa, csr->d_aa, (size_t)csr->nnz * sizeof(PetscScalar), csr->stream));
  }
  if (c->m && c->nnz) PetscCallCUSPARSE(cusparseCreateCsr(&c->descr, c->m, A->cmap->n, c->nnz, c->d_ai, c->d_aj, c->d_aa, MATCSR_INDEX, MATCSR_INDEX, CUSPARSE_INDEX_BASE_ZERO, MATGPUMAT_CUDA_SCALAR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The layout is the CSR (of all rows: the base asks only where they are not compressed) */
static PetscErrorCode MatGPUFormatCopyCSR_CSR(Mat A, void *stream, const PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *can)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  (void)d_ai; /* the layout is the CSR */
  PetscCall(MatCSRGetData_Private(A, &c));
  *can = PETSC_TRUE;
  PetscCall(MatGPUMatCopyOnStream(d_aj, c->d_aj, (size_t)c->nnz * sizeof(PetscInt), stream));
  PetscCall(MatGPUMatCopyOnStream(d_aa, c->d_aa, (size_t)c->nnz * sizeof(PetscScalar), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The value array is the CSR's own: a value refresh uploads into it (MatGPUMatSyncDevice()) */
static PetscErrorCode MatGPUFormatValueArray_CSR(Mat A, PetscScalar **val, PetscCount *n)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  *val = c->d_aa;
  *n   = c->nnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Same pattern, new values: copied on the device from the base's CSR */
static PetscErrorCode MatGPUFormatCopyValues_CSR(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  PetscCall(MatGPUMatCopyOnStream(c->d_aa, csr->d_aa, (size_t)c->nnz * sizeof(PetscScalar), csr->stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = op(A) x + beta z with cusparseSpMV (x and z of the lengths op(A) takes and gives). The descriptors, the work
  space and cuSPARSE's analysis of each direction are made once, as aijcusparse does: a product only points the
  descriptors at x and z.
*/
static PetscErrorCode MatCSRSpMV_Private(Mat A, Mat_SeqCSRCUDA *c, PetscBool trans, void *stream, const PetscScalar *x, PetscScalar beta, PetscScalar *z)
{
  const cusparseOperation_t op  = trans ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusparseSpMVAlg_t   alg = !trans && c->alg == 2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_CSR_ALG1;
  const PetscInt            nx = trans ? c->m : A->cmap->n, nz = trans ? A->cmap->n : c->m;
  const PetscScalar         one = 1.0;
  const int                 k = trans ? 1 : 0;
  cusparseHandle_t          handle = NULL;

  PetscFunctionBegin;
  PetscCall(MatGPUMatGetCUSPARSEHandle(stream, &handle));
  if (!c->vx[k]) PetscCallCUSPARSE(cusparseCreateDnVec(&c->vx[k], nx, (void *)x, MATGPUMAT_CUDA_SCALAR));
  else PetscCallCUSPARSE(cusparseDnVecSetValues(c->vx[k], (void *)x));
  if (!c->vz[k]) PetscCallCUSPARSE(cusparseCreateDnVec(&c->vz[k], nz, (void *)z, MATGPUMAT_CUDA_SCALAR));
  else PetscCallCUSPARSE(cusparseDnVecSetValues(c->vz[k], (void *)z));
  if (c->sized_alg[k] != (int)alg) { /* size and analysis depend on the matrix and the algorithm, not on the vectors or beta */
    size_t need = 0;

    PetscCallCUSPARSE(cusparseSpMV_bufferSize(handle, op, &one, c->descr, c->vx[k], &beta, c->vz[k], MATGPUMAT_CUDA_SCALAR, alg, &need));
    if (need > c->bufsize[k]) {
      PetscCall(MatGPUMatDeviceFree(&c->buffer[k]));
      c->bytes -= c->bufsize[k];
      c->bufsize[k] = 0;
      PetscCall(MatGPUMatDeviceMalloc(A, need, &c->buffer[k]));
      c->bufsize[k] = need;
      c->bytes += need;
    }
#if CUDART_VERSION >= 12040 /* cuSPARSE 12.4's analysis of the matrix for the products to come */
    PetscCallCUSPARSE(cusparseSpMV_preprocess(handle, op, &one, c->descr, c->vx[k], &beta, c->vz[k], MATGPUMAT_CUDA_SCALAR, alg, c->buffer[k]));
#endif
    c->sized_alg[k] = (int)alg;
  }
  PetscCallCUSPARSE(cusparseSpMV(handle, op, &one, c->descr, c->vx[k], &beta, c->vz[k], MATGPUMAT_CUDA_SCALAR, alg, c->buffer[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMult_CSR(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  if (args->y && args->y != args->z) PetscCallCUDA(cudaMemcpyAsync(args->z, args->y, (size_t)c->m * sizeof(PetscScalar), cudaMemcpyDeviceToDevice, (cudaStream_t)args->stream));
  if (!c->nnz) { /* cuSPARSE is not called on a matrix without entries */
    if (!args->y && c->m) PetscCallCUDA(cudaMemsetAsync(args->z, 0, (size_t)c->m * sizeof(PetscScalar), (cudaStream_t)args->stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatCSRSpMV_Private(A, c, PETSC_FALSE, args->stream, args->x, args->y ? 1.0 : 0.0, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMultTranspose_CSR(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  if (c->nnz) PetscCall(MatCSRSpMV_Private(A, c, PETSC_TRUE, args->stream, args->x, 1.0, args->z)); /* z += A^T x: the base initialized z */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatGetInfo_CSR(Mat A, MatGPUMatInfo *info)
{
  Mat_GPUMat     *g = (Mat_GPUMat *)A->spptr;
  Mat_SeqCSRCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCSRGetData_Private(A, &c));
  info->stored       = info->nnz;
  info->index_count  = info->rows + 1; /* row offsets */
  info->read_entries = info->nnz;
  info->device_bytes = g->built ? c->bytes : MatCSRDeviceBytes(info->rows, info->nnz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const MatGPUFormat MatGPUFormat_CSR = {
  .name           = "cuSPARSE CSR",
  .seqtype        = MATSEQCSRCUDA,
  .title          = "cuSPARSE CSR GPU matrix options",
  .create         = MatGPUFormatCreate_CSR,
  .copyparameters = MatGPUFormatCopyParameters_CSR,
  .setfromoptions = MatGPUFormatSetFromOptions_CSR,
  .view           = MatGPUFormatView_CSR,
  .build          = MatGPUFormatBuild_CSR,
  .copyvalues     = MatGPUFormatCopyValues_CSR,
  .freedevice     = MatGPUFormatFreeDevice_CSR,
  .mult           = MatGPUFormatMult_CSR,
  .multtranspose  = MatGPUFormatMultTranspose_CSR,
  .getinfo        = MatGPUFormatGetInfo_CSR,
  .compose        = MatComposeCSR_Private,
  .copycsr        = MatGPUFormatCopyCSR_CSR,
  .valuearray     = MatGPUFormatValueArray_CSR,
};

/*MC
   MATSEQCSRCUDA - MATSEQCSRCUDA = "seqaijcsrcuda" - A sequential sparse matrix whose products run on an NVIDIA GPU
   in cuSPARSE's CSR format (`cusparseSpMV`), inside petscgpumat's pipeline

   It multiplies as `MATSEQAIJCUSPARSE` does, with the rest of petscgpumat around it: the host `MATSEQAIJ` data stay
   the master copy, the device copy is rebuilt lazily at the first product after a change (values only when the
   nonzero pattern is unchanged), and the products, MPI halo exchange, factorizations and `MatView()` are those of the
   other petscgpumat types. It is the format for matrices the papers' formats do not suit (a few very long rows), and
   the baseline they are measured against within one pipeline.

   Options Database Keys:
+  -mat_type csrcuda - sets the type (seq or MPI from the communicator) in `MatSetFromOptions()`
-  -mat_csr_spmv_alg <alg> - 1 (default): `CUSPARSE_SPMV_CSR_ALG1`, which `MATSEQAIJCUSPARSE` uses; 2:
   `CUSPARSE_SPMV_CSR_ALG2`, whose forward products cuSPARSE documents as bitwise reproducible (about 1.24x slower
   on an H100 over 86 real matrices)

   Level: beginner

   Notes:
   `MatMult()`, `MatMultAdd()`, `MatMultTranspose()` and `MatMultTransposeAdd()` run on the GPU with `VECCUDA`
   vectors (with host vectors they run on the host). Transposed products use `CUSPARSE_SPMV_CSR_ALG1` (cuSPARSE
   documents ALG2 as identical to it there). cuSPARSE promises bitwise reproducible results of ALG2's forward
   products only; ALG1 comes without that promise.

.seealso: `MatCreateSeqAIJCSRCUDA()`, `MatCSRCUDASetSpMVAlgorithm()`, `MATSEQAIJCUSPARSE`, `MATSEQCMRSCUDA`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_SeqAIJCSRCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_GPUMat(B, &MatGPUFormat_CSR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGPUMatRegisterCSR_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatRegisterFormat(&MatGPUFormat_CSR, MatCreate_SeqAIJCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateSeqAIJCSRCUDA - Creates a sequential `MATSEQCSRCUDA` matrix with AIJ preallocation

  Collective

  Input Parameters:
+ comm - `PETSC_COMM_SELF`
. m    - rows
. n    - columns
. nz   - nonzeros per row (same for all rows), ignored if `nnz` is given
- nnz  - nonzeros per row, or `NULL`

  Output Parameter:
. A - the matrix

  Level: beginner

.seealso: `MATSEQCSRCUDA`, `MatCreateSeqAIJ()`, `MatSeqAIJSetPreallocation()`
@*/
PetscErrorCode MatCreateSeqAIJCSRCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateSeq_GPUMat(comm, MATSEQCSRCUDA, m, n, nz, nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRCUDASetSpMVAlgorithm - Sets cuSPARSE's SpMV algorithm of a `MATSEQCSRCUDA` or `MATMPICSRCUDA` matrix

  Logically Collective

  Input Parameters:
+ A   - the matrix
- alg - 1 (`CUSPARSE_SPMV_CSR_ALG1`, the default, which `MATSEQAIJCUSPARSE` uses) or 2 (`CUSPARSE_SPMV_CSR_ALG2`: forward products cuSPARSE documents as bitwise reproducible, slower)

  Options Database Key:
. -mat_csr_spmv_alg <alg> - the same

  Level: intermediate

.seealso: `MATSEQCSRCUDA`, `MatCSRCUDAGetSpMVAlgorithm()`
@*/
PetscErrorCode MatCSRCUDASetSpMVAlgorithm(Mat A, PetscInt alg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, alg, 2);
  MatGPUMatTryMethodAll(A, "MatCSRCUDASetSpMVAlgorithm_C", PetscInt, alg);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCSRCUDAGetSpMVAlgorithm - Gets cuSPARSE's SpMV algorithm of a `MATSEQCSRCUDA` or `MATMPICSRCUDA` matrix

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. alg - 1 or 2

  Level: intermediate

.seealso: `MATSEQCSRCUDA`, `MatCSRCUDASetSpMVAlgorithm()`
@*/
PetscErrorCode MatCSRCUDAGetSpMVAlgorithm(Mat A, PetscInt *alg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(alg, 2);
  MatGPUMatUseMethodSource(A, "MatCSRCUDAGetSpMVAlgorithm_C", PetscInt *, alg);
  PetscFunctionReturn(PETSC_SUCCESS);
}
