/*
  MATSEQAUTOCUDA: the type that picks, for each matrix (and each block of the MPI type), the format its rows suit
  among CMRS, ELLPACK-R, RgCSR and cuSPARSE CSR, at each build of the device copy: by the rule of choose_rule.c
  from the base's row statistics, or (-mat_auto_timed) by timing the candidates' products on the matrix itself.

  It is a format of the pipeline like the others, whose table forwards to the candidate chosen: it keeps every
  candidate's data (their parameters, options and setters stay live: -mat_cmrs_height applies if CMRS is chosen),
  and answers MatGPUMatGetData() for them through the table's `inner` slot, so that the candidates' own code runs
  unchanged on the matrix. It names the candidates only by their public type names, through the base's registry.
*/
#include "chooseimpl.h"
#include <petscdevice_cuda.h> /* CUDA events of the timed choice */

typedef struct {
  const MatGPUFormat *cand[MATAUTO_NCANDIDATES]; /* the candidates' tables (the base's registry) */
  void               *data[MATAUTO_NCANDIDATES]; /* their data: parameters and, for `active`, the device layout */
  MatAutoCandidate    rule;                      /* the plan: the rule's candidate for the current pattern */
  char                rule_why[256];             /* and why */
  PetscInt            chosen;                    /* the candidate of the last build (-1: none yet) */
  PetscInt            active;                    /* the candidate whose layout is on the device (-1: none) */
  PetscBool           timed;                     /* -mat_auto_timed: choose by timing the candidates' products */
  char                why[256];                  /* the reason for `chosen` */
  PetscReal           ms[MATAUTO_NCANDIDATES];   /* timed choice: median product time of each candidate (< 0: it refused the matrix) */
  PetscLogDouble      cost_ms;                   /* timed choice: the whole choice (builds, products), milliseconds */
} Mat_SeqAutoCUDA;

static const MatGPUFormat MatGPUFormat_Auto;
static PetscLogEvent      MAT_GPUMatChoose; /* the choice (the rule, or the timed candidates' builds and products), inside GPUMatBuild */

/* The candidates' seq types, in MatAutoCandidate's order, and their tables (found in the base's registry at registration) */
static const char *const   MatAutoCandidateTypes[] = {MATSEQCMRSCUDA, MATSEQELLRCUDA, MATSEQRGCSRCUDA, MATSEQCSRCUDA};
static const MatGPUFormat *MatAutoCandidates[MATAUTO_NCANDIDATES];

static PetscErrorCode MatAutoGetData_Private(Mat A, Mat_SeqAutoCUDA **a)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_Auto, a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The plan: every candidate's own (so that its getters answer, and any of them can be built by the timed choice), and
  the candidate the rule gives from the row statistics
*/
static PetscErrorCode MatGPUFormatPlan_Auto(Mat A, const MatGPUMatRowStats *stats)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++)
    if (a->cand[k]->plan) PetscCall(a->cand[k]->plan(A, stats));
  PetscCall(MatAutoCUDARule(stats, &a->rule, a->rule_why, sizeof(a->rule_why)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The candidate the rule gives for A's current nonzero pattern (the plan's) */
static PetscErrorCode MatAutoRuleOf_Private(Mat A, MatAutoCandidate *k, char why[], size_t len)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatGPUMatPlan(A));
  PetscCall(MatAutoGetData_Private(A, &a));
  *k = a->rule;
  PetscCall(PetscStrncpy(why, a->rule_why, len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The candidate A's products use, or would use: the one chosen at the last build, else the rule's */
static PetscErrorCode MatAutoCurrent_Private(Mat A, Mat_SeqAutoCUDA *a, MatAutoCandidate *k)
{
  char why[256];

  PetscFunctionBegin;
  if (a->chosen >= 0) *k = (MatAutoCandidate)a->chosen;
  else PetscCall(MatAutoRuleOf_Private(A, k, why, sizeof(why)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAutoCUDAGetChoice_Auto(Mat A, MatType *type)
{
  Mat_SeqAutoCUDA *a;
  MatAutoCandidate k;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  PetscCall(MatAutoCurrent_Private(A, a, &k));
  *type = MatAutoCandidateTypes[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAutoCUDASetTimed_Auto(Mat A, PetscBool timed)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  if (a->timed != timed) PetscCall(MatGPUMatInvalidateStructure(A)); /* choose again at the next product */
  a->timed = timed;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAutoCUDAGetTimed_Auto(Mat A, PetscBool *timed)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  *timed = a->timed;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Its own methods and every candidate's (their setters and getters act on the candidates' parameters) */
static PetscErrorCode MatComposeAuto_Private(Mat A, PetscBool compose)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) PetscCall(MatAutoCandidates[k]->compose(A, compose));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAutoCUDAGetChoice_C", compose ? MatAutoCUDAGetChoice_Auto : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAutoCUDASetTimed_C", compose ? MatAutoCUDASetTimed_Auto : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAutoCUDAGetTimed_C", compose ? MatAutoCUDAGetTimed_Auto : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCreate_Auto(void **data)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(PetscNew(&a));
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) {
    a->cand[k] = MatAutoCandidates[k];
    PetscCall(a->cand[k]->create(&a->data[k]));
  }
  a->chosen = -1;
  a->active = -1;
  *data     = a;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatDestroy_Auto(void *data)
{
  Mat_SeqAutoCUDA *a = (Mat_SeqAutoCUDA *)data;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) {
    if (a->cand[k] && a->cand[k]->destroy) PetscCall(a->cand[k]->destroy(a->data[k]));
    PetscCall(PetscFree(a->data[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatGPUMatGetData() of a candidate on A: its data */
static PetscErrorCode MatGPUFormatInner_Auto(Mat A, const MatGPUFormat *format, void **data)
{
  Mat_SeqAutoCUDA *a = (Mat_SeqAutoCUDA *)((Mat_GPUMat *)A->spptr)->data;

  PetscFunctionBegin;
  *data = NULL;
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++)
    if (a->cand[k] == format) *data = a->data[k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyParameters_Auto(Mat A, Mat B)
{
  Mat_SeqAutoCUDA *a, *b;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  PetscCall(MatAutoGetData_Private(B, &b));
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) PetscCall(a->cand[k]->copyparameters(A, B));
  b->timed = a->timed;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatSetFromOptions_Auto(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_SeqAutoCUDA *a;
  PetscBool        timed, set;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  PetscCall(PetscOptionsBool("-mat_auto_timed", "Choose the format by timing each candidate's product on the matrix at its first build, instead of by the rule on its row statistics", "MatAutoCUDASetTimed", a->timed, &timed, &set));
  if (set) PetscCall(MatAutoCUDASetTimed(A, timed));
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) PetscCall(a->cand[k]->setfromoptions(A, PetscOptionsObject)); /* the candidates' parameters */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatView_Auto(Mat A, PetscViewer viewer)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  if (a->chosen < 0) {
    MatAutoCandidate k;
    char             why[256];

    PetscCall(MatAutoRuleOf_Private(A, &k, why, sizeof(why)));
    PetscCall(PetscViewerASCIIPrintf(viewer, "format chosen at the first product%s; the rule gives %s for the current pattern: %s\n", a->timed ? " by timing the candidates" : "", a->cand[k]->name, why));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "chose %s: %s\n", a->cand[a->chosen]->name, a->why));
  if (a->timed) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "candidates' products (median, ms):"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) {
      if (a->ms[k] < 0) PetscCall(PetscViewerASCIIPrintf(viewer, " %s refused", a->cand[k]->name));
      else PetscCall(PetscViewerASCIIPrintf(viewer, " %s %.4g", a->cand[k]->name, (double)a->ms[k]));
    }
    PetscCall(PetscViewerASCIIPrintf(viewer, "; the choice took %.1f ms\n", (double)a->cost_ms));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  }
  PetscCall(a->cand[a->chosen]->view(A, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Builds candidate k from csr; a refusal (its padding guard: PETSC_ERR_SUP) or a lack of device memory is returned in *ierr, not raised */
static PetscErrorCode MatAutoTryBuild_Private(Mat A, Mat_SeqAutoCUDA *a, PetscInt k, MatGPUMatCSR *csr, PetscErrorCode *ierr)
{
  PetscFunctionBegin;
  a->active = k;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *ierr = a->cand[k]->build(A, csr);
  PetscCall(PetscPopErrorHandler());
  if (*ierr) {
    PetscCheck(MatGPUMatBuildRefused(*ierr), PetscObjectComm((PetscObject)A), *ierr, "Building %s for %s failed", a->cand[k]->name, ((PetscObject)A)->type_name);
    PetscCall(a->cand[k]->freedevice(A));
    a->active = -1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int MatAutoCompareFloat_Private(const void *x, const void *y)
{
  const float a = *(const float *)x, b = *(const float *)y;

  return (a > b) - (a < b);
}

/* Candidate k (built) multiplies args' vector 2 + 9 times on the build's stream: the median time of one product */
static PetscErrorCode MatAutoTimeOne_Private(Mat A, Mat_SeqAutoCUDA *a, PetscInt k, const MatGPUMultArgs *args, cudaEvent_t ev[], PetscReal *median)
{
  const int warm = 2, reps = 9;
  float     ms[9];

  PetscFunctionBegin;
  for (int r = 0; r < warm; r++) PetscCall(a->cand[k]->mult(A, args));
  PetscCallCUDA(cudaEventRecord(ev[0], (cudaStream_t)args->stream));
  for (int r = 0; r < reps; r++) {
    PetscCall(a->cand[k]->mult(A, args));
    PetscCallCUDA(cudaEventRecord(ev[r + 1], (cudaStream_t)args->stream));
  }
  PetscCallCUDA(cudaEventSynchronize(ev[reps]));
  for (int r = 0; r < reps; r++) PetscCallCUDA(cudaEventElapsedTime(&ms[r], ev[r], ev[r + 1]));
  qsort(ms, reps, sizeof(float), MatAutoCompareFloat_Private);
  *median = ms[reps / 2];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The timed choice: each candidate is built from csr (copying its entries: none may keep them, the next one reads
  them), multiplies a vector 2 + 9 times on the device, and is freed; *best is the fastest median. Its cost is
  reported. The vectors, events and a candidate's layout are freed on every path, errors included.
*/
static PetscErrorCode MatAutoTime_Private(Mat A, Mat_SeqAutoCUDA *a, MatGPUMatCSR *csr, MatAutoCandidate *best)
{
  const size_t   nx = (size_t)PetscMax(A->cmap->n, 1), nz = (size_t)PetscMax(csr->m, 1);
  PetscScalar   *x = NULL, *z = NULL;
  cudaEvent_t    ev[10];
  int            nev = 0;
  PetscLogDouble t0, t1;
  PetscErrorCode ierr;
  cudaError_t    cerr = cudaSuccess;

  PetscFunctionBegin;
  PetscCall(PetscTime(&t0));
  *best = MATAUTO_CMRS;
  ierr  = MatGPUMatDeviceMalloc(A, nx * sizeof(PetscScalar), (void **)&x);
  if (!ierr) ierr = MatGPUMatDeviceMalloc(A, nz * sizeof(PetscScalar), (void **)&z);
  if (!ierr) cerr = cudaMemsetAsync(x, 0, nx * sizeof(PetscScalar), (cudaStream_t)csr->stream);
  while (!ierr && cerr == cudaSuccess && nev < 10) {
    cerr = cudaEventCreate(&ev[nev]);
    if (cerr == cudaSuccess) nev++;
  }
  for (PetscInt k = 0; !ierr && cerr == cudaSuccess && k < MATAUTO_NCANDIDATES; k++) {
    MatGPUMatCSR   copy = *csr;
    MatGPUMultArgs args = {csr->stream, x, NULL, z, 0, 0};
    PetscErrorCode refused;

    copy.own_aj = NULL;
    copy.own_aa = NULL;
    a->ms[k]    = -1;
    ierr        = MatAutoTryBuild_Private(A, a, k, &copy, &refused);
    if (ierr || refused) continue;
    ierr = MatAutoTimeOne_Private(A, a, k, &args, ev, &a->ms[k]);
    if (!ierr && (a->ms[*best] < 0 || a->ms[k] < a->ms[*best])) *best = (MatAutoCandidate)k;
    if (!ierr) ierr = a->cand[k]->freedevice(A);
    else (void)a->cand[k]->freedevice(A);
    a->active = -1;
  }
  while (nev > 0) (void)cudaEventDestroy(ev[--nev]);
  PetscCall(MatGPUMatDeviceFree((void **)&x));
  PetscCall(MatGPUMatDeviceFree((void **)&z));
  PetscCall(ierr);
  PetscCallCUDA(cerr);
  PetscCall(PetscTime(&t1));
  a->cost_ms = 1000.0 * (t1 - t0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Chooses (the rule, or the timed choice) and builds the chosen candidate from the base's CSR. A candidate that refuses
  the matrix (the padding guard of ELLPACK-R or RgCSR) gives way to CMRS, which takes every matrix.
*/
static PetscErrorCode MatGPUFormatBuild_Auto(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqAutoCUDA *a;
  MatAutoCandidate k;
  PetscErrorCode   ierr;
  const void      *had_aj, *had_aa;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  a->chosen = -1;
  PetscCall(PetscLogEventBegin(MAT_GPUMatChoose, A, 0, 0, 0));
  PetscCall(MatAutoRuleOf_Private(A, &k, a->why, sizeof(a->why)));
  if (a->timed) {
    MatAutoCandidate fastest;

    PetscCall(MatAutoTime_Private(A, a, csr, &fastest));
    /* the rule's candidate stays unless another is faster by more than the timing's noise (products of a few
       microseconds differ by several per cent from run to run) */
    if (a->ms[k] < 0 || a->ms[fastest] < (1.0 - MATAUTO_TIMED_MARGIN) * a->ms[k]) {
      k = fastest;
      PetscCall(PetscSNPrintf(a->why, sizeof(a->why), "the fastest product of the candidates on this matrix"));
    } else PetscCall(PetscSNPrintf(a->why, sizeof(a->why), "the rule's candidate, within %g %% of the fastest product on this matrix", (double)(100 * MATAUTO_TIMED_MARGIN)));
  }
  PetscCall(PetscLogEventEnd(MAT_GPUMatChoose, A, 0, 0, 0));
  had_aj = csr->own_aj;
  had_aa = csr->own_aa;
  PetscCall(MatAutoTryBuild_Private(A, a, k, csr, &ierr));
  /* CMRS takes over unless the refused candidate had kept the base's entries (and freed them with its layout) */
  if (ierr && k != MATAUTO_CMRS && csr->own_aj == had_aj && csr->own_aa == had_aa) {
    size_t n;

    PetscCall(PetscStrlen(a->why, &n));
    PetscCall(PetscSNPrintf(a->why + n, sizeof(a->why) - n, "; %s refused it (error %d): CMRS", a->cand[k]->name, (int)ierr));
    k = MATAUTO_CMRS;
    PetscCall(MatAutoTryBuild_Private(A, a, k, csr, &ierr));
  }
  PetscCheck(!ierr, PetscObjectComm((PetscObject)A), ierr, "%s could not be built for this matrix (error %d)", a->cand[k]->name, (int)ierr);
  a->chosen = k;
  PetscCall(PetscInfo(A, "%s chose %s: %s\n", ((PetscObject)A)->type_name, a->cand[k]->name, a->why));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The candidate whose layout is on the device: what value refreshes and products forward to */
static PetscErrorCode MatAutoActive_Private(Mat A, const MatGPUFormat **f)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  PetscCheck(a->active >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s has no format built on the device", ((PetscObject)A)->type_name);
  *f = a->cand[a->active];
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyValues_Auto(Mat A, MatGPUMatCSR *csr)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  PetscCall(f->copyvalues(A, csr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatFreeDevice_Auto(Mat A)
{
  Mat_SeqAutoCUDA *a;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  if (a->active >= 0) PetscCall(a->cand[a->active]->freedevice(A));
  a->active = -1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMult_Auto(Mat A, const MatGPUMultArgs *args)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  PetscCall(f->mult(A, args));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMultTranspose_Auto(Mat A, const MatGPUMultArgs *args)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  PetscCall(f->multtranspose(A, args));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The built candidate's layout, where it holds the CSR's entries in CSR order */
static PetscErrorCode MatGPUFormatCopyCSR_Auto(Mat A, void *stream, const PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *can)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  *can = PETSC_FALSE;
  if (f->copycsr) PetscCall(f->copycsr(A, stream, d_ai, d_aj, d_aa, can));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The built candidate's value array, where its layout holds the values in CSR order */
static PetscErrorCode MatGPUFormatValueArray_Auto(Mat A, PetscScalar **val, PetscCount *n)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  *val = NULL;
  *n   = 0;
  if (f->valuearray) PetscCall(f->valuearray(A, val, n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The built candidate's diagonal read from its layout's rows, where it can */
static PetscErrorCode MatGPUFormatDiagonal_Auto(Mat A, void *stream, PetscScalar *d, PetscBool *can)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  *can = PETSC_FALSE;
  if (f->diagonal) PetscCall(f->diagonal(A, stream, d, can));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The built candidate's product with x'z in its pass, where it has one (MatGPUMatMultDot(): asked after the build) */
static PetscErrorCode MatGPUFormatMultDot_Auto(Mat A, const MatGPUMultArgs *args, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  const MatGPUFormat *f = NULL;

  PetscFunctionBegin;
  PetscCall(MatAutoActive_Private(A, &f));
  *npartial = 0;
  if (f->multdot) PetscCall(f->multdot(A, args, sums, npartial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The built candidate's block kernel, where it has one (asked before the first build: the rule's candidate's) */
static PetscErrorCode MatGPUFormatMultBlock_Auto(Mat A, PetscInt n, const MatGPUMultArgs *args, PetscBool *can)
{
  Mat_SeqAutoCUDA    *a;
  const MatGPUFormat *f = NULL;
  MatAutoCandidate    k;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  if (args) PetscCall(MatAutoActive_Private(A, &f));
  else {
    PetscCall(MatAutoCurrent_Private(A, a, &k));
    f = a->cand[k];
  }
  *can = PETSC_FALSE;
  if (f->multblock) PetscCall(f->multblock(A, n, args, can));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatGetInfo_Auto(Mat A, MatGPUMatInfo *info)
{
  Mat_SeqAutoCUDA *a;
  MatAutoCandidate k;

  PetscFunctionBegin;
  PetscCall(MatAutoGetData_Private(A, &a));
  PetscCall(MatAutoCurrent_Private(A, a, &k));
  PetscCall(a->cand[k]->getinfo(A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const MatGPUFormat MatGPUFormat_Auto = {
  .name           = "Chosen per matrix",
  .seqtype        = MATSEQAUTOCUDA,
  .title          = "GPU matrix with its format chosen per matrix: options",
  .create         = MatGPUFormatCreate_Auto,
  .copyparameters = MatGPUFormatCopyParameters_Auto,
  .setfromoptions = MatGPUFormatSetFromOptions_Auto,
  .view           = MatGPUFormatView_Auto,
  .plan           = MatGPUFormatPlan_Auto,
  .build          = MatGPUFormatBuild_Auto,
  .copyvalues     = MatGPUFormatCopyValues_Auto,
  .freedevice     = MatGPUFormatFreeDevice_Auto,
  .mult           = MatGPUFormatMult_Auto,
  .multtranspose  = MatGPUFormatMultTranspose_Auto,
  .getinfo        = MatGPUFormatGetInfo_Auto,
  .compose        = MatComposeAuto_Private,
  .multblock      = MatGPUFormatMultBlock_Auto,
  .inner          = MatGPUFormatInner_Auto,
  .destroy        = MatGPUFormatDestroy_Auto,
  .copycsr        = MatGPUFormatCopyCSR_Auto,
  .multdot        = MatGPUFormatMultDot_Auto,
  .valuearray     = MatGPUFormatValueArray_Auto,
  .diagonal       = MatGPUFormatDiagonal_Auto,
};

/*MC
   MATSEQAUTOCUDA - MATSEQAUTOCUDA = "seqaijautocuda" - A sequential sparse matrix whose products run on an NVIDIA GPU in
   the format its rows suit, chosen for each matrix among `MATSEQCMRSCUDA`, `MATSEQELLRCUDA`, `MATSEQRGCSRCUDA` and
   `MATSEQCSRCUDA` (cuSPARSE)

   The choice is made at each build of the device copy (the first product, and the first after a change of the
   nonzero pattern), by a rule on the row statistics: cuSPARSE CSR where row lengths differ widely (sigma/mu > 2:
   graphs, circuits, a few dense rows), one row is far longer than the mean (longest > 16 x mean) or rows are long
   (mean > 48), unless the matrix has at least 1e7 entries of which the rows longer than 4 x mean hold under 15 % (CMRS
   then: beyond the GPU's L2 its strips outrun CSR on such rows); in a matrix of at least 1e7 entries also where rows of
   more than 16 entries on average are not regular (sigma/mu > 0.1); ELLPACK-R where they are regular (sigma/mu <= 0.1,
   no empty row, longest <= 4 x mean: stencils, FEM); CMRS otherwise. The rule was fitted on the suite of real and generated matrices at about 5 M and 20 M nonzeros on an H100, its large-matrix clauses also on an H200 (`docs/performance.md`). With `-mat_auto_timed` the candidates are instead built and timed on
   the matrix itself (each built once and multiplied 11 times); the fastest is built again unless the rule's candidate
   is within 3 % of it (timing noise on small matrices).
   `MatView()` (`-mat_view ::ascii_info`) says what was chosen and why; `-log_view` counts the choices and their time
   in the event `GPUMatChoose` (inside `GPUMatBuild`).

   Everything else is that of the chosen format: the products, value refreshes, MPI halo exchange, factorizations
   and sparse products of petscgpumat. The candidates' options and setters apply to their parameters, used if they are
   chosen (for example `-mat_cmrs_height`, `MatELLRCUDASetMaxFill()`).

   Options Database Keys:
+  -mat_type autocuda - sets the type (seq or MPI from the communicator) in `MatSetFromOptions()`
-  -mat_auto_timed - choose by timing the candidates' products on the matrix at its first build

   Level: beginner

.seealso: `MatAutoCUDAGetChoice()`, `MatAutoCUDASetTimed()`, `MATMPIAUTOCUDA`, `MATSEQCMRSCUDA`, `MATSEQELLRCUDA`, `MATSEQRGCSRCUDA`, `MATSEQCSRCUDA`
M*/
PetscErrorCode MatCreate_SeqAIJAutoCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_GPUMat(B, &MatGPUFormat_Auto));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After the candidates (its data holds theirs, found in the registry by type name) */
PETSC_INTERN PetscErrorCode MatGPUMatRegisterAuto_Private(void)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < MATAUTO_NCANDIDATES; k++) PetscCall(MatGPUMatFindFormat(MatAutoCandidateTypes[k], &MatAutoCandidates[k]));
  PetscCall(PetscLogEventRegister("GPUMatChoose", MAT_CLASSID, &MAT_GPUMatChoose));
  PetscCall(MatGPUMatRegisterFormat(&MatGPUFormat_Auto, MatCreate_SeqAIJAutoCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateSeqAIJAutoCUDA - Creates a sequential `MATSEQAUTOCUDA` matrix with AIJ preallocation

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

.seealso: `MATSEQAUTOCUDA`, `MatCreateSeqAIJ()`, `MatSeqAIJSetPreallocation()`
@*/
PetscErrorCode MatCreateSeqAIJAutoCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateSeq_GPUMat(comm, MATSEQAUTOCUDA, m, n, nz, nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatAutoCUDAGetChoice - Gets the format a `MATSEQAUTOCUDA` or `MATMPIAUTOCUDA` matrix chose

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. type - the seq type of the format chosen at the last build of the device copy (`MATSEQCMRSCUDA`, `MATSEQELLRCUDA`,
         `MATSEQRGCSRCUDA` or `MATSEQCSRCUDA`), or, before the first, the one the rule gives for the current nonzero
         pattern; of the diagonal block for `MATMPIAUTOCUDA`

  Level: intermediate

  Note:
  Before the first product the answer needs no GPU: the rule reads only the host row offsets.

.seealso: `MATSEQAUTOCUDA`, `MatAutoCUDASetTimed()`
@*/
PetscErrorCode MatAutoCUDAGetChoice(Mat A, MatType *type)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(type, 2);
  MatGPUMatUseMethodSource(A, "MatAutoCUDAGetChoice_C", MatType *, type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatAutoCUDASetTimed - Sets whether a `MATSEQAUTOCUDA` or `MATMPIAUTOCUDA` matrix chooses its format by timing the
  candidates' products on the matrix instead of by its rule

  Logically Collective

  Input Parameters:
+ A     - the matrix
- timed - `PETSC_TRUE`: at each build, every candidate is built and its product timed (median of 9 after 2), and the
          fastest is kept unless the rule's candidate is within 3 % of it; `PETSC_FALSE` (default): the rule on the row
          statistics

  Options Database Key:
. -mat_auto_timed - the same

  Level: intermediate

  Note:
  The timed choice costs the builds of all candidates and 44 products at each build of the device copy; `MatView()`
  reports it with the candidates' times.

.seealso: `MATSEQAUTOCUDA`, `MatAutoCUDAGetTimed()`, `MatAutoCUDAGetChoice()`
@*/
PetscErrorCode MatAutoCUDASetTimed(Mat A, PetscBool timed)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveBool(A, timed, 2);
  MatGPUMatTryMethodAll(A, "MatAutoCUDASetTimed_C", PetscBool, timed);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatAutoCUDAGetTimed - Gets whether a `MATSEQAUTOCUDA` or `MATMPIAUTOCUDA` matrix chooses its format by timing

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. timed - set with `MatAutoCUDASetTimed()`

  Level: intermediate

.seealso: `MATSEQAUTOCUDA`, `MatAutoCUDASetTimed()`
@*/
PetscErrorCode MatAutoCUDAGetTimed(Mat A, PetscBool *timed)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(timed, 2);
  MatGPUMatUseMethodSource(A, "MatAutoCUDAGetTimed_C", PetscBool *, timed);
  PetscFunctionReturn(PETSC_SUCCESS);
}
