/* MATSEQRGCSRCUDA: the row-grouped CSR format as a petscgpumat format (parameters, device copy, registration) */
#include <petscgpumat/private/rgcsrimpl.h>
#include <petscdevice_cuda.h>

static const MatGPUFormat MatGPUFormat_RgCSR;

static PetscErrorCode MatRgCSRGetData_Private(Mat A, Mat_SeqRGCSRCUDA **r)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_RgCSR, r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan: group size, threads per row and sort window, from the row statistics and the options */
static PetscErrorCode MatGPUFormatPlan_RgCSR(Mat A, const MatGPUMatRowStats *s)
{
  Mat_SeqRGCSRCUDA *r;
  MatRgCSRPlan     *p;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  p           = &r->plan;
  p->G        = r->G_option;
  p->W        = r->W_option;
  p->m        = s->rows;
  p->measured = PETSC_FALSE; /* measured again when asked, for this pattern */
  PetscCall(MatGPUMatPlanThreadsPerRow(s, r->T_option, &p->T, &p->T_auto));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The parameters in effect: the plan's (W >= m meaning one global window) */
static PetscErrorCode MatRgCSRParameters_Private(Mat A, PetscInt *G, PetscInt *T, PetscInt *W)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatGPUMatPlan(A));
  PetscCall(MatRgCSRGetData_Private(A, &r));
  *G = r->plan.G;
  *W = r->plan.W;
  *T = r->plan.T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The window the layout uses: reordering costs a permutation read and scattered writes of y, so it is applied
  only where it cuts the stored slots by at least -mat_rgcsr_sort_min_saving (on the H100 a global sort of the
  3-D Laplacian saved 0.3 % of the slots and cost 7 % of the product time).
*/
static PetscErrorCode MatRgCSREffectiveWindow_Private(Mat A, PetscInt m, const PetscInt *ai, PetscInt G, PetscInt T, PetscInt W, PetscInt *Weff, PetscCount *stored, PetscInt *maxlen, PetscBool *skipped)
{
  Mat_SeqRGCSRCUDA *r;
  PetscCount        unsorted;
  PetscInt          n = A->cmap->n;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  *Weff    = W;
  *skipped = PETSC_FALSE;
  PetscCall(MatRgCSRLayoutMeasure(m, n, ai, G, T, W, maxlen, stored));
  if (W && r->minsaving > 0) {
    PetscCall(MatRgCSRLayoutMeasure(m, n, ai, G, T, 0, maxlen, &unsorted));
    if ((PetscReal)(unsorted - *stored) < r->minsaving * (PetscReal)unsorted) {
      *Weff    = 0;
      *stored  = unsorted;
      *skipped = PETSC_TRUE;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDASetGroupSize_RgCSR(Mat A, PetscInt G)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCheck(G >= 32 && G <= 1024 && G % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "RgCSR group size %" PetscInt_FMT " must be a multiple of 32 in 32..1024", G);
  PetscCall(MatRgCSRGetData_Private(A, &r));
  if (r->G_option != G) PetscCall(MatGPUMatInvalidateStructure(A));
  r->G_option = G;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDASetSortWindow_RgCSR(Mat A, PetscInt W)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCheck(W >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "RgCSR sort window %" PetscInt_FMT " must be >= 0 (0: no reordering; the number of rows or more: one global window)", W);
  PetscCall(MatRgCSRGetData_Private(A, &r));
  if (r->W_option != W) PetscCall(MatGPUMatInvalidateStructure(A));
  r->W_option = W;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDASetThreadsPerRow_RgCSR(Mat A, PetscInt T)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCheck(T == 0 || T == 1 || T == 2 || T == 4 || T == 8 || T == 16 || T == 32, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "RgCSR threads per row %" PetscInt_FMT " must be 1, 2, 4, 8, 16, 32 (or 0: automatic)", T);
  PetscCall(MatRgCSRGetData_Private(A, &r));
  if (r->T_option != T) PetscCall(MatGPUMatInvalidateStructure(A));
  r->T_option = T;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDASetMaxFill_RgCSR(Mat A, PetscReal maxfill)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCheck(maxfill == 0 || maxfill >= 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "RgCSR max fill %g must be >= 1 (or 0: no limit)", (double)maxfill);
  PetscCall(MatRgCSRGetData_Private(A, &r));
  r->maxfill = maxfill;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDAGetGroupSize_RgCSR(Mat A, PetscInt *G)
{
  PetscInt T, W;

  PetscFunctionBegin;
  PetscCall(MatRgCSRParameters_Private(A, G, &T, &W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDAGetSortWindow_RgCSR(Mat A, PetscInt *W)
{
  PetscInt G, T;

  PetscFunctionBegin;
  PetscCall(MatRgCSRParameters_Private(A, &G, &T, W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDAGetThreadsPerRow_RgCSR(Mat A, PetscInt *T)
{
  PetscInt G, W;

  PetscFunctionBegin;
  PetscCall(MatRgCSRParameters_Private(A, &G, T, &W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRGCSRCUDAGetMaxFill_RgCSR(Mat A, PetscReal *maxfill)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  *maxfill = r->maxfill;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatComposeRgCSR_Private(Mat A, PetscBool compose)
{
  PetscObject o = (PetscObject)A;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDASetGroupSize_C", compose ? MatRGCSRCUDASetGroupSize_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDAGetGroupSize_C", compose ? MatRGCSRCUDAGetGroupSize_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDASetSortWindow_C", compose ? MatRGCSRCUDASetSortWindow_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDAGetSortWindow_C", compose ? MatRGCSRCUDAGetSortWindow_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDASetThreadsPerRow_C", compose ? MatRGCSRCUDASetThreadsPerRow_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDAGetThreadsPerRow_C", compose ? MatRGCSRCUDAGetThreadsPerRow_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDASetMaxFill_C", compose ? MatRGCSRCUDASetMaxFill_RgCSR : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatRGCSRCUDAGetMaxFill_C", compose ? MatRGCSRCUDAGetMaxFill_RgCSR : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCreate_RgCSR(void **data)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(PetscNew(&r));
  r->G_option = 128; /* the paper's best; see docs/performance.md for the H100 sweep */
  r->T_option = 0;
  r->W_option = 0;
  r->maxfill   = 4.0;
  r->minsaving = 0.02;
  *data = r;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyParameters_RgCSR(Mat A, Mat B)
{
  Mat_SeqRGCSRCUDA *a, *b;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &a));
  PetscCall(MatRgCSRGetData_Private(B, &b));
  b->G_option = a->G_option;
  b->T_option = a->T_option;
  b->W_option = a->W_option;
  b->maxfill   = a->maxfill;
  b->minsaving = a->minsaving;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatSetFromOptions_RgCSR(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_SeqRGCSRCUDA *r;
  PetscInt          v;
  PetscReal         f;
  PetscBool         set;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(PetscOptionsInt("-mat_rgcsr_group_size", "Rows per group (= threads per block when T = 1): a multiple of 32 in 32..1024", "MatRGCSRCUDASetGroupSize", r->G_option, &v, &set));
  if (set) PetscCall(MatRGCSRCUDASetGroupSize(A, v));
  PetscCall(PetscOptionsInt("-mat_rgcsr_sort_window", "Sort rows by decreasing length inside windows of this many rows; 0: no reordering, >= rows: global", "MatRGCSRCUDASetSortWindow", r->W_option, &v, &set));
  if (set) PetscCall(MatRGCSRCUDASetSortWindow(A, v));
  PetscCall(PetscOptionsInt("-mat_rgcsr_threads_per_row", "Threads per row T: 1, 2, 4, 8, 16, 32; 0 chooses from the row lengths", "MatRGCSRCUDASetThreadsPerRow", r->T_option, &v, &set));
  if (set) PetscCall(MatRGCSRCUDASetThreadsPerRow(A, v));
  PetscCall(PetscOptionsReal("-mat_rgcsr_sort_min_saving", "Sort (with -mat_rgcsr_sort_window) only if it cuts at least this fraction of the stored slots; 0: always", "", r->minsaving, &f, &set));
  if (set) {
    PetscCheck(f >= 0 && f < 1, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_rgcsr_sort_min_saving %g must be in [0, 1)", (double)f);
    if (f != r->minsaving) PetscCall(MatGPUMatInvalidateStructure(A));
    r->minsaving = f;
  }
  PetscCall(PetscOptionsReal("-mat_rgcsr_max_fill", "Largest ratio of stored entries (artificial zeros included) to nonzeros; 0: no limit", "MatRGCSRCUDASetMaxFill", r->maxfill, &f, &set));
  if (set) PetscCall(MatRGCSRCUDASetMaxFill(A, f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatView_RgCSR(Mat A, PetscViewer viewer)
{
  Mat_SeqRGCSRCUDA *r;
  Mat_GPUMat       *g = (Mat_GPUMat *)A->spptr;
  PetscInt          G, T, W;

  PetscFunctionBegin;
  PetscCall(MatRgCSRParameters_Private(A, &G, &T, &W));
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(PetscViewerASCIIPrintf(viewer, "group size %" PetscInt_FMT ", threads per row T = %" PetscInt_FMT "%s, sort window %" PetscInt_FMT "%s, max fill %g%s\n", G, T, r->plan.T_auto ? " (automatic: from the mean and longest row)" : "", W, W == 0 ? " (no reordering)" : (W >= A->rmap->n ? " (global)" : ""), (double)r->maxfill,
                                   r->maxfill == 0 ? " (no limit)" : ""));
  if (g->built) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " groups, longest row %" PetscInt_FMT ", artificial zeros %.1f%% of nnz (the paper's filling)\n", r->ngroups, r->maxlen, g->nnz ? 100.0 * (double)(r->stored - g->nnz) / (double)g->nnz : 0.0));
    if (r->sort_skipped) PetscCall(PetscViewerASCIIPrintf(viewer, "rows not reordered: sorting would cut less than %g%% of the stored slots (-mat_rgcsr_sort_min_saving)\n", 100.0 * (double)r->minsaving));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatFreeDevice_RgCSR(Mat A)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(MatGPUMatDeviceFree((void **)&r->d_gp));
  PetscCall(MatGPUMatDeviceFree((void **)&r->d_rl));
  PetscCall(MatGPUMatDeviceFree((void **)&r->d_perm));
  PetscCall(MatGPUMatDeviceFree((void **)&r->d_col));
  PetscCall(MatGPUMatDeviceFree((void **)&r->d_val));
  r->bytes = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the device copy: group offsets, row lengths, the permutation if any, slots */
static size_t MatRgCSRDeviceBytes(PetscInt m, PetscInt ngroups, PetscBool perm, PetscCount stored)
{
  return (size_t)(ngroups + 1) * sizeof(PetscCount) + (size_t)m * sizeof(int) * (perm ? 2 : 1) + (size_t)stored * (sizeof(int) + sizeof(PetscScalar));
}

/*
  The build, on the GPU from the base's device CSR (rgcsr_build.cu): the groups step sizes the layout from the row
  offsets (with and without reordering when -mat_rgcsr_sort_min_saving asks for the comparison); the padding guard
  and the free memory are checked before the slots are allocated; then the fill step. Peak device memory: the CSR
  plus the format (and the groups step's work arrays, freed before the slots are allocated).
  (A failure leaves the partial allocations to the base, which frees them with freedevice.)
*/
static PetscErrorCode MatGPUFormatBuild_RgCSR(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqRGCSRCUDA *r;
  PetscInt          G, T, W, maxlen, m = csr->m;
  PetscCount        stored, nnz = csr->nnz;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  G = r->plan.G, T = r->plan.T, W = r->plan.W; /* made by the base for this pattern (MatGPUMatPlan()) */
  PetscCheck(r->plan.m == m && T > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "RgCSR plan for %" PetscInt_FMT " rows, T = %" PetscInt_FMT ": not made for this CSR (%" PetscInt_FMT " rows)", r->plan.m, T, m);
  PetscCall(MatRgCSRCheckParameters(m, A->cmap->n, G, T, W));
  r->sort_skipped = PETSC_FALSE;
  if (W && m > 1 && r->minsaving > 0) { /* sort only where it cuts the slots enough */
    int        *rl, *perm;
    PetscCount *gp, unsorted;
    PetscInt    maxlen0;

    PetscErrorCode ierr;

    PetscCall(MatRgCSRCUDABuildGroups(A, csr->stream, m, G, T, 0, csr->d_ai, &rl, &perm, &gp, &maxlen0, &unsorted));
    ierr = MatRgCSRCUDABuildGroups(A, csr->stream, m, G, T, W, csr->d_ai, &r->d_rl, &r->d_perm, &r->d_gp, &maxlen, &stored);
    if (ierr) { /* the unsorted groups are not the base's to free */
      PetscCall(MatGPUMatDeviceFree((void **)&rl));
      PetscCall(MatGPUMatDeviceFree((void **)&gp));
    }
    PetscCall(ierr);
    if ((PetscReal)(unsorted - stored) < r->minsaving * (PetscReal)unsorted) {
      PetscCall(MatGPUMatDeviceFree((void **)&r->d_rl));
      PetscCall(MatGPUMatDeviceFree((void **)&r->d_perm));
      PetscCall(MatGPUMatDeviceFree((void **)&r->d_gp));
      r->d_rl = rl, r->d_gp = gp, stored = unsorted, W = 0;
      r->sort_skipped = PETSC_TRUE;
    } else {
      PetscCall(MatGPUMatDeviceFree((void **)&rl));
      PetscCall(MatGPUMatDeviceFree((void **)&gp));
    }
  } else PetscCall(MatRgCSRCUDABuildGroups(A, csr->stream, m, G, T, W, csr->d_ai, &r->d_rl, &r->d_perm, &r->d_gp, &maxlen, &stored));
  if (m < 2) W = 0;
  PetscCall(MatRgCSRCheckFill(m, nnz, maxlen, stored, r->maxfill)); /* before the big allocations */
  /* the kernels address the slots inside a group with 32-bit offsets (rowgroupcuda.h): the longest row's group must fit */
  PetscCheck((PetscCount)PetscMin(G, m) * (((maxlen + T - 1) / T) * T) < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "RgCSR: a group of %" PetscInt_FMT " rows padded to the longest row (%" PetscInt_FMT " entries) would hold 2^31 slots or more, beyond the 32-bit offsets of the kernels inside a group. Use a smaller -mat_rgcsr_group_size, or -mat_type cmrscuda (no padding)", PetscMin(G, m), maxlen);
  PetscCall(MatGPUMatCheckDeviceMemory(A, (size_t)stored * (sizeof(int) + sizeof(PetscScalar)), "RgCSR"));
  r->G       = G;
  r->T       = T;
  r->W       = W;
  r->m       = m;
  r->ngroups = (m + G - 1) / G;
  r->maxlen  = maxlen;
  r->stored  = stored;
  r->bytes   = MatRgCSRDeviceBytes(m, r->ngroups, (PetscBool)(r->d_perm != NULL), stored);
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)stored * sizeof(int), (void **)&r->d_col));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)stored * sizeof(PetscScalar), (void **)&r->d_val));
  PetscCall(MatRgCSRCUDALaunchFill(csr->stream, r, PETSC_TRUE, csr->d_ai, csr->d_aj, csr->d_aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The structure is unchanged: the values are scattered from the device CSR into their slots */
static PetscErrorCode MatGPUFormatCopyValues_RgCSR(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(MatRgCSRCUDALaunchFill(csr->stream, r, PETSC_FALSE, csr->d_ai, NULL, csr->d_aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatRGCSRCUDAGetDeviceLayout - Copies the device layout of a `MATSEQRGCSRCUDA` matrix to the host

  Not Collective

  Input Parameter:
. A - the matrix, whose device copy is brought up to date first

  Output Parameter:
. L - the layout as on the device; free it with `MatRgCSRLayoutDestroy()`

  Level: developer

  Note:
  The tests compare it, bit for bit, with `MatRgCSRLayoutCreate()` of the host CSR.

.seealso: `MATSEQRGCSRCUDA`, `MatRgCSRLayoutCreate()`
@*/
PetscErrorCode MatRGCSRCUDAGetDeviceLayout(Mat A, MatRgCSRLayout *L)
{
  Mat_SeqRGCSRCUDA *r;
  void             *stream;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(MatGPUMatSyncDevice(A));
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  L->m       = r->m;
  L->n       = A->cmap->n;
  L->G       = r->G;
  L->T       = r->T;
  L->W       = r->W;
  L->ngroups = r->ngroups;
  L->maxlen  = r->maxlen;
  L->stored  = r->stored;
  PetscCall(PetscMalloc1(r->ngroups + 1, &L->gp));
  PetscCall(PetscMalloc1(r->m, &L->rl));
  if (r->d_perm) PetscCall(PetscMalloc1(r->m, &L->perm));
  PetscCall(PetscMalloc1(r->stored, &L->col));
  PetscCall(PetscMalloc1(r->stored, &L->val));
  PetscCall(MatGPUMatCopyToHost(L->gp, r->d_gp, (size_t)(r->ngroups + 1) * sizeof(PetscCount), stream));
  PetscCall(MatGPUMatCopyToHost(L->rl, r->d_rl, (size_t)r->m * sizeof(int), stream));
  if (r->d_perm) PetscCall(MatGPUMatCopyToHost(L->perm, r->d_perm, (size_t)r->m * sizeof(int), stream));
  PetscCall(MatGPUMatCopyToHost(L->col, r->d_col, (size_t)r->stored * sizeof(int), stream));
  PetscCall(MatGPUMatCopyToHost(L->val, r->d_val, (size_t)r->stored * sizeof(PetscScalar), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMult_RgCSR(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(MatRgCSRCUDALaunchMult(args->stream, r, args->x, args->y, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A x and the partial sums of x'z in one pass (the fused CG), where every row is stored (args NULL: only ask) */
static PetscErrorCode MatGPUFormatMultDot_RgCSR(Mat A, const MatGPUMultArgs *args, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  *npartial = r->m == A->rmap->n ? 1 : 0;
  if (!args || !*npartial) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatRgCSRCUDALaunchMultDot(args->stream, r, args->x, args->z, sums, npartial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The slots back to CSR order through the permutation (the inverse of the build: MatRowGroupGatherThread()) */
static PetscErrorCode MatGPUFormatCopyCSR_RgCSR(Mat A, void *stream, const PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *can)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  *can = (PetscBool)(r->m == A->rmap->n && d_ai);
  if (*can) PetscCall(MatRgCSRCUDALaunchGather(stream, r, d_ai, d_aj, d_aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The diagonal read from the built layout's rows (d NULL: only ask) */
static PetscErrorCode MatGPUFormatDiagonal_RgCSR(Mat A, void *stream, PetscScalar *d, PetscBool *can)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  *can = (PetscBool)(r->m == A->rmap->n && r->d_rl);
  if (*can && d) PetscCall(MatRgCSRCUDALaunchDiagonal(stream, r, d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Z = A X for a block of nvec <= 8 vectors with one thread per row (T = 1); *can says whether this layout can (args NULL: only ask) */
static PetscErrorCode MatGPUFormatMultBlock_RgCSR(Mat A, PetscInt nvec, const MatGPUMultArgs *args, PetscBool *can)
{
  Mat_SeqRGCSRCUDA *r;
  PetscInt          T = 0;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  if (args) T = r->T;
  else PetscCall(MatRGCSRCUDAGetThreadsPerRow_RgCSR(A, &T)); /* the plan: what the next build uses */
  *can = (PetscBool)(T == 1 && nvec >= 1 && nvec <= MATGPUMAT_MAX_BLOCK);
  if (!args || !*can) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatRgCSRCUDALaunchMultBlock(args->stream, r, nvec, args->x, args->ldx, args->z, args->ldz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMultTranspose_RgCSR(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqRGCSRCUDA *r;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(MatRgCSRCUDALaunchMultTranspose(args->stream, r, args->x, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatGetInfo_RgCSR(Mat A, MatGPUMatInfo *info)
{
  Mat_GPUMat       *g = (Mat_GPUMat *)A->spptr;
  Mat_SeqRGCSRCUDA *r;
  PetscInt          G, T, W, maxlen, ngroups;

  PetscFunctionBegin;
  PetscCall(MatRgCSRGetData_Private(A, &r));
  PetscCall(MatRgCSRParameters_Private(A, &G, &T, &W));
  ngroups = (info->rows + G - 1) / G;
  if (!g->built) { /* what a build would store: measured on the host rows once per pattern, kept in the plan */
    MatRgCSRPlan *p = &r->plan;

    if (!p->measured) {
      const PetscInt *ai;
      PetscBool       skipped;

      PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
      PetscCall(MatRgCSREffectiveWindow_Private(A, A->rmap->n, ai, G, T, W, &p->measured_W, &p->measured_stored, &maxlen, &skipped));
      p->measured = PETSC_TRUE;
    }
    W                  = p->measured_W;
    info->stored       = p->measured_stored;
    info->device_bytes = MatRgCSRDeviceBytes(info->rows, ngroups, (PetscBool)(W > 0 && info->rows > 1), info->stored);
  } else {
    W                  = r->W;
    info->stored       = r->stored;
    info->device_bytes = r->bytes;
  }
  /* rowLengths, the permutation if any, and the group pointers (counted as two 32-bit words each) */
  info->index_count  = info->rows * ((W > 0 && info->rows > 1) ? 2 : 1) + 2 * (ngroups + 1);
  info->read_entries = info->nnz; /* rowLengths bound each row's loop: artificial zeros are not read */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const MatGPUFormat MatGPUFormat_RgCSR = {
  .name           = "Row-grouped CSR",
  .seqtype        = MATSEQRGCSRCUDA,
  .title          = "Row-grouped CSR (RgCSR) GPU matrix options",
  .create         = MatGPUFormatCreate_RgCSR,
  .copyparameters = MatGPUFormatCopyParameters_RgCSR,
  .setfromoptions = MatGPUFormatSetFromOptions_RgCSR,
  .view           = MatGPUFormatView_RgCSR,
  .plan           = MatGPUFormatPlan_RgCSR,
  .build          = MatGPUFormatBuild_RgCSR,
  .copyvalues     = MatGPUFormatCopyValues_RgCSR,
  .freedevice     = MatGPUFormatFreeDevice_RgCSR,
  .mult           = MatGPUFormatMult_RgCSR,
  .multtranspose  = MatGPUFormatMultTranspose_RgCSR,
  .getinfo        = MatGPUFormatGetInfo_RgCSR,
  .compose        = MatComposeRgCSR_Private,
  .multblock      = MatGPUFormatMultBlock_RgCSR,
  .copycsr        = MatGPUFormatCopyCSR_RgCSR,
  .multdot        = MatGPUFormatMultDot_RgCSR,
  .diagonal       = MatGPUFormatDiagonal_RgCSR,
};

/*MC
   MATSEQRGCSRCUDA - MATSEQRGCSRCUDA = "seqaijrgcsrcuda" - A sequential sparse matrix whose products run on an
   NVIDIA GPU in the row-grouped CSR format of Oberhuber, Suzuki and Vacata (2010)

   Rows are cut into groups of `G` rows; inside a group the first entries of all rows are stored first, then the
   second ones, and so on, each group padded to its own longest row, with `rowLengths` so that no padding is
   read. Optionally the rows are first sorted by decreasing length inside windows of `W` rows (the paper's
   future work), which cuts padding; the kernel writes the result through the permutation, so the user sees
   no reordering. The host `MATSEQAIJ` data stay the master copy (see `MATSEQELLRCUDA` for the common behaviour).

   Options Database Keys:
+  -mat_type rgcsrcuda - sets the type
.  -mat_rgcsr_group_size <G> - rows per group, a multiple of 32 in 32..1024 (default 128)
.  -mat_rgcsr_sort_window <W> - sort rows by decreasing length inside windows of W rows; 0 (default) none, W >= rows global
.  -mat_rgcsr_sort_min_saving <f> - sort only if it cuts at least this fraction of the stored slots (default 0.02; 0: always)
.  -mat_rgcsr_threads_per_row <T> - threads per row; 0 (default) chooses from the row lengths
-  -mat_rgcsr_max_fill <f> - padding guard: largest stored entries / nnz (default 4; 0: no limit)

   Level: beginner

   References:
   T. Oberhuber, A. Suzuki, J. Vacata, New row-grouped CSR format for storing the sparse matrices on GPU with
   implementation in CUDA, Acta Technica 56 (2011) 447-466.

.seealso: `MatCreateSeqAIJRGCSRCUDA()`, `MatRGCSRCUDASetGroupSize()`, `MatRGCSRCUDASetSortWindow()`, `MATSEQELLRCUDA`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_SeqAIJRGCSRCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_GPUMat(B, &MatGPUFormat_RgCSR));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGPUMatRegisterRgCSR_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatRegisterFormat(&MatGPUFormat_RgCSR, MatCreate_SeqAIJRGCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateSeqAIJRGCSRCUDA - Creates a sequential `MATSEQRGCSRCUDA` matrix with AIJ preallocation

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

.seealso: `MATSEQRGCSRCUDA`, `MatCreateSeqAIJ()`
@*/
PetscErrorCode MatCreateSeqAIJRGCSRCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateSeq_GPUMat(comm, MATSEQRGCSRCUDA, m, n, nz, nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDASetGroupSize - Sets the number of rows per group of a `MATSEQRGCSRCUDA` matrix

  Logically Collective

  Input Parameters:
+ A - the matrix
- G - a multiple of 32 in 32..1024 (default 128)

  Options Database Key:
. -mat_rgcsr_group_size <G> - the same

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDAGetGroupSize()`
@*/
PetscErrorCode MatRGCSRCUDASetGroupSize(Mat A, PetscInt G)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, G, 2);
  MatGPUMatTryMethodAll(A, "MatRGCSRCUDASetGroupSize_C", PetscInt, G);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDAGetGroupSize - Gets the number of rows per group of a `MATSEQRGCSRCUDA` matrix

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. G - rows per group

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDASetGroupSize()`
@*/
PetscErrorCode MatRGCSRCUDAGetGroupSize(Mat A, PetscInt *G)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(G, 2);
  MatGPUMatUseMethodSource(A, "MatRGCSRCUDAGetGroupSize_C", PetscInt *, G);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDASetSortWindow - Sorts the rows of a `MATSEQRGCSRCUDA` matrix by decreasing length inside windows of W rows

  Logically Collective

  Input Parameters:
+ A - the matrix
- W - window size; 0 (default) keeps the row order, W >= the number of rows sorts globally

  Options Database Key:
. -mat_rgcsr_sort_window <W> - the same

  Level: intermediate

  Note:
  Sorting puts rows of similar length in the same group, which cuts the padding; the products write through
  the permutation, so results are in the matrix's own row order (equal up to rounding to unsorted ones).

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDAGetSortWindow()`
@*/
PetscErrorCode MatRGCSRCUDASetSortWindow(Mat A, PetscInt W)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, W, 2);
  MatGPUMatTryMethodAll(A, "MatRGCSRCUDASetSortWindow_C", PetscInt, W);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDAGetSortWindow - Gets the sort window of a `MATSEQRGCSRCUDA` matrix

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. W - the window (0: no reordering)

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDASetSortWindow()`
@*/
PetscErrorCode MatRGCSRCUDAGetSortWindow(Mat A, PetscInt *W)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(W, 2);
  MatGPUMatUseMethodSource(A, "MatRGCSRCUDAGetSortWindow_C", PetscInt *, W);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDASetThreadsPerRow - Sets the number of threads that compute one row of a `MATSEQRGCSRCUDA` matrix

  Logically Collective

  Input Parameters:
+ A - the matrix
- T - 1, 2, 4, 8, 16 or 32; 0 (default) chooses from the row lengths

  Options Database Key:
. -mat_rgcsr_threads_per_row <T> - the same

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDAGetThreadsPerRow()`
@*/
PetscErrorCode MatRGCSRCUDASetThreadsPerRow(Mat A, PetscInt T)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, T, 2);
  MatGPUMatTryMethodAll(A, "MatRGCSRCUDASetThreadsPerRow_C", PetscInt, T);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDAGetThreadsPerRow - Gets the threads per row in use (the automatic choice if none was set)

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. T - threads per row

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDASetThreadsPerRow()`
@*/
PetscErrorCode MatRGCSRCUDAGetThreadsPerRow(Mat A, PetscInt *T)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(T, 2);
  MatGPUMatUseMethodSource(A, "MatRGCSRCUDAGetThreadsPerRow_C", PetscInt *, T);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDASetMaxFill - Sets the padding guard of a `MATSEQRGCSRCUDA` matrix

  Logically Collective

  Input Parameters:
+ A       - the matrix
- maxfill - largest stored entries / nonzeros, at least 1; 0 removes the limit (default 4)

  Options Database Key:
. -mat_rgcsr_max_fill <f> - the same

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDAGetMaxFill()`
@*/
PetscErrorCode MatRGCSRCUDASetMaxFill(Mat A, PetscReal maxfill)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveReal(A, maxfill, 2);
  MatGPUMatTryMethodAll(A, "MatRGCSRCUDASetMaxFill_C", PetscReal, maxfill);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatRGCSRCUDAGetMaxFill - Gets the padding guard of a `MATSEQRGCSRCUDA` matrix

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. maxfill - the limit (0: none)

  Level: intermediate

.seealso: `MATSEQRGCSRCUDA`, `MatRGCSRCUDASetMaxFill()`
@*/
PetscErrorCode MatRGCSRCUDAGetMaxFill(Mat A, PetscReal *maxfill)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(maxfill, 2);
  MatGPUMatUseMethodSource(A, "MatRGCSRCUDAGetMaxFill_C", PetscReal *, maxfill);
  PetscFunctionReturn(PETSC_SUCCESS);
}
