/* MATSEQELLRCUDA: the ELLPACK-R format as a petscgpumat format (parameters, device copy, registration) */
#include <petscgpumat/private/ellrimpl.h>
#include <petscdevice_cuda.h>

static const MatGPUFormat MatGPUFormat_ELLR;

static PetscErrorCode MatELLRGetData_Private(Mat A, Mat_SeqELLRCUDA **e)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_ELLR, e));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRCUDASetThreadsPerRow_ELLR(Mat A, PetscInt T)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCheck(T == 0 || T == 1 || T == 2 || T == 4 || T == 8 || T == 16 || T == 32, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "ELLPACK-R threads per row %" PetscInt_FMT " must be 1, 2, 4, 8, 16, 32 (or 0: automatic)", T);
  PetscCall(MatELLRGetData_Private(A, &e));
  if (e->T_option != T) PetscCall(MatGPUMatInvalidateStructure(A));
  e->T_option = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan: threads per row and the slots they make, from the row statistics alone */
static PetscErrorCode MatGPUFormatPlan_ELLR(Mat A, const MatGPUMatRowStats *s)
{
  Mat_SeqELLRCUDA *e;
  MatELLRPlan     *p;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  p = &e->plan;
  PetscCall(MatGPUMatPlanThreadsPerRow(s, e->T_option, &p->T, &p->T_auto));
  p->m      = s->rows;
  p->nnz    = s->nnz;
  p->maxlen = s->maxlen;
  p->width  = p->T ? ((s->maxlen + p->T - 1) / p->T) * p->T : 0;
  p->stored = (PetscCount)p->m * p->width;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRGetPlan_Private(Mat A, const MatELLRPlan **p)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatGPUMatPlan(A));
  PetscCall(MatELLRGetData_Private(A, &e));
  *p = &e->plan;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRCUDAGetThreadsPerRow_ELLR(Mat A, PetscInt *T)
{
  const MatELLRPlan *p = NULL;

  PetscFunctionBegin;
  PetscCall(MatELLRGetPlan_Private(A, &p));
  *T = p->T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRCUDASetMaxFill_ELLR(Mat A, PetscReal maxfill)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCheck(maxfill == 0 || maxfill >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "ELLPACK-R max fill %g must be >= 1 (or 0: no limit)", (double)maxfill);
  PetscCall(MatELLRGetData_Private(A, &e));
  e->maxfill = maxfill;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatELLRCUDAGetMaxFill_ELLR(Mat A, PetscReal *maxfill)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  *maxfill = e->maxfill;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatComposeELLR_Private(Mat A, PetscBool compose)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRCUDASetThreadsPerRow_C", compose ? MatELLRCUDASetThreadsPerRow_ELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRCUDAGetThreadsPerRow_C", compose ? MatELLRCUDAGetThreadsPerRow_ELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRCUDASetMaxFill_C", compose ? MatELLRCUDASetMaxFill_ELLR : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatELLRCUDAGetMaxFill_C", compose ? MatELLRCUDAGetMaxFill_ELLR : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCreate_ELLR(void **data)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(PetscNew(&e));
  e->T_option = 0;
  e->maxfill  = 4.0;
  *data = e;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyParameters_ELLR(Mat A, Mat B)
{
  Mat_SeqELLRCUDA *a, *b;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &a));
  PetscCall(MatELLRGetData_Private(B, &b));
  b->T_option = a->T_option;
  b->maxfill  = a->maxfill;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatSetFromOptions_ELLR(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_SeqELLRCUDA *e;
  PetscInt         T;
  PetscReal        maxfill;
  PetscBool        set;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(PetscOptionsInt("-mat_ellr_threads_per_row", "Threads per row T (ELLR-T): 1, 2, 4, 8, 16, 32; 0 chooses from the mean row length", "MatELLRCUDASetThreadsPerRow", e->T_option, &T, &set));
  if (set) PetscCall(MatELLRCUDASetThreadsPerRow(A, T));
  PetscCall(PetscOptionsReal("-mat_ellr_max_fill", "Largest ratio of stored entries (padding included) to nonzeros; 0: no limit", "MatELLRCUDASetMaxFill", e->maxfill, &maxfill, &set));
  if (set) PetscCall(MatELLRCUDASetMaxFill(A, maxfill));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatView_ELLR(Mat A, PetscViewer viewer)
{
  Mat_SeqELLRCUDA   *e;
  const MatELLRPlan *p = NULL;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatELLRGetPlan_Private(A, &p));
  PetscCall(PetscViewerASCIIPrintf(viewer, "threads per row T = %" PetscInt_FMT "%s, max fill %g%s\n", p->T, p->T_auto ? " (automatic: from the mean and longest row)" : "", (double)e->maxfill, e->maxfill == 0 ? " (no limit)" : ""));
  if (A->preallocated) PetscCall(PetscViewerASCIIPrintf(viewer, "rows %" PetscInt_FMT ", longest row %" PetscInt_FMT ", slots per row (width) %" PetscInt_FMT ", %g slots per entry, column-major with rl[] row lengths\n", p->m, p->maxlen, p->width, p->nnz ? (double)p->stored / (double)p->nnz : 0.0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatFreeDevice_ELLR(Mat A)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatGPUMatDeviceFree((void **)&e->d_rl));
  PetscCall(MatGPUMatDeviceFree((void **)&e->d_col));
  PetscCall(MatGPUMatDeviceFree((void **)&e->d_val));
  e->bytes = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static size_t MatELLRDeviceBytes(PetscInt m, PetscCount stored)
{
  return (size_t)m * sizeof(int) + (size_t)stored * (sizeof(int) + sizeof(PetscScalar));
}

/*
  The layout is built on the GPU from the base's device CSR by a kernel (one thread per row and lane), the host layout
  code (tests/reference/ellr_layout.c) being its oracle in the tests. Peak device memory: the CSR + the layout.
*/
static PetscErrorCode MatGPUFormatBuild_ELLR(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqELLRCUDA   *e;
  const MatELLRPlan *p = NULL;
  PetscInt           T, m = csr->m;
  PetscCount         stored;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  p      = &e->plan; /* made by the base for this pattern (MatGPUMatPlan()) */
  T      = p->T;
  stored = p->stored;
  PetscCheck(p->m == m && p->nnz == csr->nnz && T > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "ELLPACK-R plan for %" PetscInt_FMT " rows, %" PetscCount_FMT " entries, T = %" PetscInt_FMT ": not made for this CSR (%" PetscInt_FMT " rows, %" PetscCount_FMT " entries)", p->m, p->nnz, T, m, csr->nnz);
  PetscCheck((PetscCount)m * T < PETSC_INT32_MAX && A->cmap->n < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "ELLPACK-R uses 32-bit row and column indices on the device: %" PetscInt_FMT " x %" PetscInt_FMT " is too large", m, A->cmap->n);
  PetscCall(MatELLRCheckFill(m, csr->nnz, p->maxlen, stored, e->maxfill)); /* before allocating anything */
  PetscCall(MatGPUMatCheckDeviceMemory(A, MatELLRDeviceBytes(m, stored), "ELLPACK-R"));
  e->T      = T;
  e->m      = m;
  e->width  = p->width;
  e->maxlen = p->maxlen;
  e->stored = stored;
  e->bytes  = MatELLRDeviceBytes(m, stored);
  /* (a failure leaves the partial allocations to the base, which frees them with freedevice) */
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)m * sizeof(int), (void **)&e->d_rl));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)stored * sizeof(int), (void **)&e->d_col));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)stored * sizeof(PetscScalar), (void **)&e->d_val));
  PetscCall(MatELLRCUDALaunchFill(csr->stream, T, m, p->width, PETSC_TRUE, csr->d_ai, csr->d_aj, csr->d_aa, e->d_rl, e->d_col, e->d_val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Same pattern, new values: scattered from the device CSR into the layout */
static PetscErrorCode MatGPUFormatCopyValues_ELLR(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatELLRCUDALaunchFill(csr->stream, e->T, e->m, e->width, PETSC_FALSE, csr->d_ai, NULL, csr->d_aa, e->d_rl, e->d_col, e->d_val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatELLRCUDAGetDeviceLayout - Copies the device layout of a `MATSEQELLRCUDA` matrix to the host

  Not Collective

  Input Parameter:
. A - the matrix, whose device copy is brought up to date first

  Output Parameter:
. L - the layout as on the device; free it with `MatELLRLayoutDestroy()`

  Level: developer

  Note:
  The tests compare it, bit for bit, with `MatELLRLayoutCreate()` of the host CSR.

.seealso: `MATSEQELLRCUDA`, `MatELLRLayoutCreate()`
@*/
PetscErrorCode MatELLRCUDAGetDeviceLayout(Mat A, MatELLRLayout *L)
{
  Mat_SeqELLRCUDA *e;
  void            *stream;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatGPUMatSyncDevice(A));
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  L->m      = e->m;
  L->n      = A->cmap->n;
  L->T      = e->T;
  L->width  = e->width;
  L->maxlen = e->maxlen;
  L->stored = e->stored;
  PetscCall(PetscMalloc1(e->m, &L->rl));
  PetscCall(PetscMalloc1(e->stored, &L->col));
  PetscCall(PetscMalloc1(e->stored, &L->val));
  PetscCall(MatGPUMatCopyToHost(L->rl, e->d_rl, (size_t)e->m * sizeof(int), stream));
  PetscCall(MatGPUMatCopyToHost(L->col, e->d_col, (size_t)e->stored * sizeof(int), stream));
  PetscCall(MatGPUMatCopyToHost(L->val, e->d_val, (size_t)e->stored * sizeof(PetscScalar), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMult_ELLR(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatELLRCUDALaunchMult(args->stream, e->T, e->m, e->d_rl, e->d_col, e->d_val, args->x, args->y, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A x and the partial sums of x'z in one pass (the fused CG); every layout can (args NULL: only ask) */
static PetscErrorCode MatGPUFormatMultDot_ELLR(Mat A, const MatGPUMultArgs *args, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  *npartial = 1;
  if (!args) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatELLRCUDALaunchMultDot(args->stream, e->T, e->m, e->d_rl, e->d_col, e->d_val, args->x, args->z, sums, npartial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The slots back to CSR order (the inverse of the build: MatRowGroupGatherThread()) */
static PetscErrorCode MatGPUFormatCopyCSR_ELLR(Mat A, void *stream, const PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *can)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  *can = (PetscBool)(e->m == A->rmap->n && d_ai);
  if (*can) PetscCall(MatELLRCUDALaunchGather(stream, e->T, e->m, d_ai, e->d_rl, e->d_col, e->d_val, d_aj, d_aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal read from the built layout's rows (d NULL: only ask) */
static PetscErrorCode MatGPUFormatDiagonal_ELLR(Mat A, void *stream, PetscScalar *d, PetscBool *can)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  *can = (PetscBool)(e->m == A->rmap->n && e->d_rl);
  if (*can && d) PetscCall(MatELLRCUDALaunchDiagonal(stream, e->T, e->m, e->d_rl, e->d_col, e->d_val, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Z = A X for a block of nvec <= 8 vectors with one thread per row (T = 1); *can says whether this layout can (args NULL: only ask) */
static PetscErrorCode MatGPUFormatMultBlock_ELLR(Mat A, PetscInt nvec, const MatGPUMultArgs *args, PetscBool *can)
{
  Mat_SeqELLRCUDA *e;
  PetscInt         T = 0;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  if (args) T = e->T;
  else PetscCall(MatELLRCUDAGetThreadsPerRow_ELLR(A, &T)); /* the plan: what the next build uses */
  *can = (PetscBool)(T == 1 && nvec >= 1 && nvec <= MATGPUMAT_MAX_BLOCK);
  if (!args || !*can) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRCUDALaunchMultBlock(args->stream, e->m, nvec, e->d_rl, e->d_col, e->d_val, args->x, args->ldx, args->z, args->ldz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMultTranspose_ELLR(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  PetscCall(MatELLRCUDALaunchMultTranspose(args->stream, e->T, e->m, e->d_rl, e->d_col, e->d_val, args->x, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatGetInfo_ELLR(Mat A, MatGPUMatInfo *info)
{
  Mat_GPUMat      *g = (Mat_GPUMat *)A->spptr;
  Mat_SeqELLRCUDA *e;

  PetscFunctionBegin;
  PetscCall(MatELLRGetData_Private(A, &e));
  if (!g->built) { /* what a build would store, without building: the plan's */
    const MatELLRPlan *p = NULL;

    PetscCall(MatELLRGetPlan_Private(A, &p));
    info->stored       = p->stored;
    info->device_bytes = MatELLRDeviceBytes(p->m, p->stored);
  } else {
    info->stored       = e->stored;
    info->device_bytes = e->bytes;
  }
  info->index_count  = info->rows; /* rl[] */
  info->read_entries = info->nnz;  /* the rl[] loop skips the padding */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const MatGPUFormat MatGPUFormat_ELLR = {
  .name           = "ELLPACK-R",
  .seqtype        = MATSEQELLRCUDA,
  .title          = "ELLPACK-R (ELLR-T) GPU matrix options",
  .create         = MatGPUFormatCreate_ELLR,
  .copyparameters = MatGPUFormatCopyParameters_ELLR,
  .setfromoptions = MatGPUFormatSetFromOptions_ELLR,
  .view           = MatGPUFormatView_ELLR,
  .plan           = MatGPUFormatPlan_ELLR,
  .build          = MatGPUFormatBuild_ELLR,
  .copyvalues     = MatGPUFormatCopyValues_ELLR,
  .freedevice     = MatGPUFormatFreeDevice_ELLR,
  .mult           = MatGPUFormatMult_ELLR,
  .multtranspose  = MatGPUFormatMultTranspose_ELLR,
  .getinfo        = MatGPUFormatGetInfo_ELLR,
  .compose        = MatComposeELLR_Private,
  .multblock      = MatGPUFormatMultBlock_ELLR,
  .copycsr        = MatGPUFormatCopyCSR_ELLR,
  .multdot        = MatGPUFormatMultDot_ELLR,
  .diagonal       = MatGPUFormatDiagonal_ELLR,
};

/*MC
   MATSEQELLRCUDA - MATSEQELLRCUDA = "seqaijellrcuda" - A sequential sparse matrix whose products run on an
   NVIDIA GPU in the ELLPACK-R format of Vazquez, Fernandez and Garzon (2010), with the ELLR-T extension
   (T threads per row).

   The host `MATSEQAIJ` data stay the master copy: everything but the products runs there, and the device
   copy is rebuilt lazily at the first product after a change (values only when the nonzero pattern is
   unchanged). Rows are padded to the longest one, so matrices with a few long rows need much memory: the
   padding guard refuses them with a clear error (use `MATSEQCMRSCUDA` for those).

   Options Database Keys:
+  -mat_type ellrcuda - sets the type (seq or MPI from the communicator) in `MatSetFromOptions()`
.  -mat_ellr_threads_per_row <T> - threads per row, 1, 2, 4, 8, 16 or 32; 0 (default) chooses from the mean row length
-  -mat_ellr_max_fill <f> - largest ratio of stored entries, padding included, to nonzeros (default 4; 0: no limit)

   Level: beginner

   Notes:
   `MatMult()`, `MatMultAdd()`, `MatMultTranspose()` and `MatMultTransposeAdd()` run on the GPU with `VECCUDA`
   vectors (with host vectors they run on the host). The forward product uses no atomics and is bitwise
   reproducible; the transpose products scatter with atomics.

   References:
   F. Vazquez, J. J. Fernandez, E. M. Garzon, A new approach for sparse matrix vector product on NVIDIA GPUs,
   Concurrency and Computation: Practice and Experience 23 (2011) 815-826.

.seealso: `MatCreateSeqAIJELLRCUDA()`, `MatELLRCUDASetThreadsPerRow()`, `MatELLRCUDASetMaxFill()`, `MATSEQAIJCUSPARSE`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_SeqAIJELLRCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_GPUMat(B, &MatGPUFormat_ELLR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGPUMatRegisterELLR_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatRegisterFormat(&MatGPUFormat_ELLR, MatCreate_SeqAIJELLRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateSeqAIJELLRCUDA - Creates a sequential `MATSEQELLRCUDA` matrix with AIJ preallocation

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

.seealso: `MATSEQELLRCUDA`, `MatCreateSeqAIJ()`, `MatSeqAIJSetPreallocation()`
@*/
PetscErrorCode MatCreateSeqAIJELLRCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateSeq_GPUMat(comm, MATSEQELLRCUDA, m, n, nz, nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRCUDASetThreadsPerRow - Sets the number of threads T that compute one row (ELLR-T)

  Logically Collective

  Input Parameters:
+ A - a `MATSEQELLRCUDA` matrix
- T - 1, 2, 4, 8, 16 or 32; 0 chooses from the mean row length

  Options Database Key:
. -mat_ellr_threads_per_row <T> - the same

  Level: intermediate

  Note:
  The layout depends on T (the lanes of a row are stored side by side), so a change rebuilds the device copy.

.seealso: `MATSEQELLRCUDA`, `MatELLRCUDAGetThreadsPerRow()`
@*/
PetscErrorCode MatELLRCUDASetThreadsPerRow(Mat A, PetscInt T)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, T, 2);
  MatGPUMatTryMethodAll(A, "MatELLRCUDASetThreadsPerRow_C", PetscInt, T);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRCUDAGetThreadsPerRow - Gets the number of threads per row in use (the automatic choice if none was set)

  Not Collective

  Input Parameter:
. A - a `MATSEQELLRCUDA` matrix

  Output Parameter:
. T - threads per row

  Level: intermediate

.seealso: `MATSEQELLRCUDA`, `MatELLRCUDASetThreadsPerRow()`
@*/
PetscErrorCode MatELLRCUDAGetThreadsPerRow(Mat A, PetscInt *T)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(T, 2);
  MatGPUMatUseMethodSource(A, "MatELLRCUDAGetThreadsPerRow_C", PetscInt *, T);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRCUDASetMaxFill - Sets the padding guard: the largest ratio of stored entries (padding included) to nonzeros

  Logically Collective

  Input Parameters:
+ A       - a `MATSEQELLRCUDA` matrix
- maxfill - at least 1; 0 removes the limit (default 4)

  Options Database Key:
. -mat_ellr_max_fill <f> - the same

  Level: intermediate

  Note:
  A matrix whose padded layout exceeds the limit gets an error at its first GPU product, naming its fill
  ratio, instead of exhausting device memory.

.seealso: `MATSEQELLRCUDA`, `MatELLRCUDAGetMaxFill()`
@*/
PetscErrorCode MatELLRCUDASetMaxFill(Mat A, PetscReal maxfill)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveReal(A, maxfill, 2);
  MatGPUMatTryMethodAll(A, "MatELLRCUDASetMaxFill_C", PetscReal, maxfill);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatELLRCUDAGetMaxFill - Gets the padding guard set with `MatELLRCUDASetMaxFill()`

  Not Collective

  Input Parameter:
. A - a `MATSEQELLRCUDA` matrix

  Output Parameter:
. maxfill - the limit (0: none)

  Level: intermediate

.seealso: `MATSEQELLRCUDA`, `MatELLRCUDASetMaxFill()`
@*/
PetscErrorCode MatELLRCUDAGetMaxFill(Mat A, PetscReal *maxfill)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(maxfill, 2);
  MatGPUMatUseMethodSource(A, "MatELLRCUDAGetMaxFill_C", PetscReal *, maxfill);
  PetscFunctionReturn(PETSC_SUCCESS);
}
