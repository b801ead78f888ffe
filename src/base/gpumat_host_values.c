/*
  Value operations on the host master copy, split over host threads: MatScale(), MatDiagonalScale() and the row
  merge and pattern checks of MatAXPY() (gpumat_axpy.c) on our seq types.

  A SeqAIJ subclass keeps its values on the host, so what aijcusparse does on the device in microseconds runs here over
  every entry, on one core: GAMG scales and adds its graph and its smoothed prolongators on every level (KSP ex45,
  GAMG on the 3-D Laplacian at 129^3, one H200: MatScale 127-147 ms and MatAXPY 113-130 ms of a 3-4.5 s set-up,
  against 0.3 and 4 ms with aijcusparse; 43-57 and 37-47 ms on 4 threads, 34-53 and 25-33 on 8, as many on 12;
  docs/clients.md). Each thread takes a
  range of rows holding about the same number of entries and does to each entry exactly what SeqAIJ's loop does, in
  the same order, so the results are SeqAIJ's bit for bit (the axpy of equal patterns: as far as the compiler and the
  BLAS contract the same products into fused multiply-adds). Matrices of fewer than MATGPUMAT_HOST_THREADS_MIN
  entries, builds without pthreads and -mat_gpumat_host_threads 1 take SeqAIJ's own single-threaded code. The automatic
  count (gpumat_staged_copy.c) is up to MATGPUMAT_HOST_THREADS_AUTO by the CPUs the process may run on, shared among
  the node's ranks (the staged copies stop at 4: their pinned buffers).
*/
#include <petscgpumat/private/gpumatimpl.h>
#if defined(PETSC_HAVE_PTHREAD)
  #include <pthread.h>
#endif

PetscInt MatGPUMatHostThreads = 0; /* -mat_gpumat_host_threads: 0 automatic, 1 SeqAIJ's own code */

/* -mat_gpumat_host_threads: checked before it is kept */
PetscErrorCode MatGPUMatSetHostThreads(PetscInt nthreads)
{
  PetscFunctionBegin;
  PetscCheck(nthreads >= 0 && nthreads <= MATGPUMAT_HOST_THREADS_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpumat_host_threads %" PetscInt_FMT " is out of range: 0 (automatic) to %d", nthreads, MATGPUMAT_HOST_THREADS_MAX);
  MatGPUMatHostThreads = nthreads;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Threads for a loop over `entries` entries (1: the caller alone) */
PetscInt MatGPUMatHostThreadCount(PetscCount entries)
{
  PetscInt n = MatGPUMatHostThreads > 0 ? MatGPUMatHostThreads : MatGPUMatThreadsAuto(MATGPUMAT_HOST_THREADS_AUTO);

#if !defined(PETSC_HAVE_PTHREAD)
  n = 1;
#endif
  return entries < MATGPUMAT_HOST_THREADS_MIN ? 1 : PetscMin(n, MATGPUMAT_HOST_THREADS_MAX);
}

/* MatView()'s line on how the value operations over the host master copy run */
PetscErrorCode MatGPUMatHostThreadsView(PetscViewer viewer)
{
  PetscInt n = MatGPUMatHostThreadCount(MATGPUMAT_HOST_THREADS_MIN);

  PetscFunctionBegin;
  if (n > 1 && MatGPUMatHostThreads > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "MatScale, MatDiagonalScale, MatAXPY on the host master copy of 2^20 entries or more: %" PetscInt_FMT " host threads (set; -mat_gpumat_host_threads)\n", n));
  else if (n > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "MatScale, MatDiagonalScale, MatAXPY on the host master copy of 2^20 entries or more: %" PetscInt_FMT " host threads (automatic: the CPUs this process may run on, at most %d; -mat_gpumat_host_threads)\n", n, MATGPUMAT_HOST_THREADS_AUTO));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "MatScale, MatDiagonalScale, MatAXPY on the host master copy: SeqAIJ's single-threaded loops (%s; -mat_gpumat_host_threads)\n", MatGPUMatHostThreads == 1 ? "set" : PetscDefined(HAVE_PTHREAD) ? "automatic: one CPU for this process" : "this PETSc has no pthreads"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  MatGPUMatRowsFn fn;
  void           *ctx;
  PetscInt        thread, begin, end;
} RowsJob;

static void *RunRows(void *arg)
{
  RowsJob *job = (RowsJob *)arg;

  job->fn(job->ctx, job->thread, job->begin, job->end);
  return NULL;
}

/*
  fn(ctx, t, begin, end) on `nthreads` ranges of the m rows of row offsets ai, each with about ai[m] / nthreads
  entries; range t on thread t (range 0 on the caller). A thread that cannot be started leaves its range to the caller.
*/
PetscErrorCode MatGPUMatHostForRows(PetscInt m, const PetscInt *ai, PetscInt nthreads, MatGPUMatRowsFn fn, void *ctx)
{
  RowsJob jobs[MATGPUMAT_HOST_THREADS_MAX];
#if defined(PETSC_HAVE_PTHREAD)
  pthread_t tid[MATGPUMAT_HOST_THREADS_MAX];
  PetscBool started[MATGPUMAT_HOST_THREADS_MAX] = {PETSC_FALSE};
#endif
  PetscInt begin = 0;

  PetscFunctionBegin;
  nthreads = PetscMax(1, PetscMin(nthreads, MATGPUMAT_HOST_THREADS_MAX));
  for (PetscInt t = 0; t < nthreads; t++) { /* the first row whose entries start at or past t/nthreads of them */
    jobs[t] = (RowsJob){fn, ctx, t, begin, t + 1 == nthreads ? m : MatGPUMatLowerBound(ai, begin, m, (PetscCount)ai[m] * (t + 1) / nthreads)};
    begin   = jobs[t].end;
  }
#if defined(PETSC_HAVE_PTHREAD)
  for (PetscInt t = 1; t < nthreads; t++) started[t] = (PetscBool)!pthread_create(&tid[t], NULL, RunRows, &jobs[t]);
#endif
  RunRows(&jobs[0]);
  for (PetscInt t = 1; t < nthreads; t++) {
#if defined(PETSC_HAVE_PTHREAD)
    if (started[t]) {
      PetscCheck(!pthread_join(tid[t], NULL), PETSC_COMM_SELF, PETSC_ERR_SYS, "pthread_join() failed");
      continue;
    }
#endif
    RunRows(&jobs[t]);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's host CSR for a threaded loop; *nthreads 1: SeqAIJ's own op is to run */
static PetscErrorCode MatGPUMatHostValuesBegin(Mat A, PetscInt *nthreads, const PetscInt **ai, const PetscInt **aj, PetscScalar **v)
{
  PetscMemType mtype;

  PetscFunctionBegin;
  *nthreads = 1;
  if (!A->assembled || A->structure_only) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, ai, aj, NULL, &mtype));
  if (!PetscMemTypeHost(mtype)) PetscFunctionReturn(PETSC_SUCCESS);
  *nthreads = MatGPUMatHostThreadCount(A->rmap->n ? (*ai)[A->rmap->n] : 0);
  if (*nthreads > 1) PetscCall(MatSeqAIJGetArray(A, v)); /* its restore marks the values changed: the device copy refreshes them */
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  const PetscInt    *ai, *aj;
  PetscScalar       *v;
  PetscScalar        alpha;
  const PetscScalar *l, *r;
} ScaleCtx;

static void ScaleRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  ScaleCtx *c = (ScaleCtx *)arg;

  (void)t;
  for (PetscInt k = c->ai[begin]; k < c->ai[end]; k++) c->v[k] *= c->alpha; /* BLAS scal's product */
}

PetscErrorCode MatScale_GPUMat(Mat A, PetscScalar alpha)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  ScaleCtx    c = {NULL, NULL, NULL, alpha, NULL, NULL};
  PetscInt    nthreads, m = A->rmap->n;

  PetscFunctionBegin;
  PetscCall(MatGPUMatHostValuesBegin(A, &nthreads, &c.ai, &c.aj, &c.v));
  if (nthreads < 2) {
    PetscCall((*g->hostops.scale)(A, alpha));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUMatHostForRows(m, c.ai, nthreads, ScaleRows, &c));
  PetscCall(PetscLogFlops((PetscLogDouble)c.ai[m]));
  PetscCall(MatSeqAIJRestoreArray(A, &c.v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SeqAIJ scales by the rows and then, in a second pass, by the columns: each entry gets the same two products here */
static void DiagonalScaleRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  ScaleCtx *c = (ScaleCtx *)arg;

  (void)t;
  for (PetscInt i = begin; i < end; i++) {
    for (PetscInt k = c->ai[i]; k < c->ai[i + 1]; k++) {
      if (c->l) c->v[k] *= c->l[i];
      if (c->r) c->v[k] *= c->r[c->aj[k]];
    }
  }
}

PetscErrorCode MatDiagonalScale_GPUMat(Mat A, Vec ll, Vec rr)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  ScaleCtx    c = {NULL, NULL, NULL, 1.0, NULL, NULL};
  PetscInt    nthreads, m = A->rmap->n, n;

  PetscFunctionBegin;
  if (ll) { /* the local size: MatDiagonalScale_MPIAIJ() passes its blocks a VECMPI */
    PetscCall(VecGetLocalSize(ll, &n));
    PetscCheck(n == m, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Left scaling vector wrong length");
  }
  if (rr) {
    PetscCall(VecGetLocalSize(rr, &n));
    PetscCheck(n == A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Right scaling vector wrong length");
  }
  nthreads = 1;
  if (ll || rr) PetscCall(MatGPUMatHostValuesBegin(A, &nthreads, &c.ai, &c.aj, &c.v));
  if (nthreads < 2) {
    PetscCall((*g->hostops.diagonalscale)(A, ll, rr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (ll) PetscCall(VecGetArrayRead(ll, &c.l));
  if (rr) PetscCall(VecGetArrayRead(rr, &c.r));
  PetscCall(MatGPUMatHostForRows(m, c.ai, nthreads, DiagonalScaleRows, &c));
  PetscCall(PetscLogFlops((PetscLogDouble)c.ai[m] * ((ll ? 1 : 0) + (rr ? 1 : 0))));
  if (rr) PetscCall(VecRestoreArrayRead(rr, &c.r));
  if (ll) PetscCall(VecRestoreArrayRead(ll, &c.l));
  PetscCall(MatSeqAIJRestoreArray(A, &c.v));
  PetscFunctionReturn(PETSC_SUCCESS);
}
