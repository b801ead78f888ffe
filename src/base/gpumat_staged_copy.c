/*
  Copies between PETSc's pageable host arrays and the device: uploads (the CSR a build uploads, the values a refresh
  uploads) and downloads (the values of a sparse product, which the host master copy holds: gpumat_product.c).

  CUDA copies pageable memory through its own pinned buffers with one host thread: about 6 GB/s on the H200 machine
  (31 ms for 192 MB), where the DMA from pinned memory runs at 54 GB/s and one host thread copies at
  9 GB/s. Registering the array instead (cudaHostRegister) costs as much as it saves (14 ms to pin 192 MB). So large
  copies go through pinned staging buffers that several host threads fill or empty, each thread copying its own
  chunks: an upload's thread fills a buffer and queues its DMA on the caller's stream while it fills its next one; a
  download's thread queues the DMA of its next chunk into one buffer while it copies the last one out of the other
  (data: docs/performance.md, "Uploads through pinned buffers"). The staging buffers (two of STAGE_CHUNK bytes per
  thread, shared by both directions, one copy at a time) are allocated at the first such copy and kept until
  PetscFinalize().
*/
#if !defined(_GNU_SOURCE)
  #define _GNU_SOURCE /* sched_getaffinity() and CPU_COUNT() */
#endif
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>
#if defined(PETSC_HAVE_PTHREAD)
  #include <pthread.h>
#endif
#if defined(__linux__)
  #include <sched.h>
#endif
#include <unistd.h>

#define STAGE_CHUNK       ((size_t)2 << 20)  /* bytes per staging buffer: a chunk's DMA runs while the next is filled or the last emptied */
#define STAGE_MIN_BYTES   ((size_t)16 << 20) /* smaller uploads gained nothing measurable (8 MB: 0.85 ms either way) */
#define STAGE_AUTO_MAX    4                  /* the automatic count's cap: 16 MB pinned; 8 threads gained 2-3 ms more on a 297 MB build */
#define STAGE_MAX_THREADS 16

PetscInt      MatGPUMatUploadThreads = 0; /* -mat_gpumat_upload_threads: 0 automatic, 1 CUDA's own pageable copy */
PetscLogEvent MAT_GPUMatStagedUpload;      /* a staged upload, from its first chunk to the last one queued */
PetscLogEvent MAT_GPUMatStagedDownload;    /* a staged download, from its first chunk queued to the last one copied out */

#if defined(PETSC_HAVE_PTHREAD)
typedef struct {
  char       *stage[2];
  cudaEvent_t free[2]; /* recorded after the last DMA out of or into stage[i]: the buffer may be reused once it has passed */
} StageBuffers;

static StageBuffers stage_buffers[STAGE_MAX_THREADS];
static int          stage_nbuffers = 0, stage_device = -1;
static PetscBool    stage_finalize_registered = PETSC_FALSE;

typedef struct {
  char        *dst;
  const char  *src;
  size_t       bytes;
  int          thread, nthreads, device;
  cudaStream_t stream;
  StageBuffers buffers;
  cudaError_t  err;
} StageJob;

/* Upload: thread j copies chunks j, j + nthreads, ... into its two buffers in turn and queues their DMA */
static void *UploadChunks(void *arg)
{
  StageJob   *job = (StageJob *)arg;
  cudaError_t err = cudaSuccess;
  int         b   = 0;

  if (job->thread) err = cudaSetDevice(job->device); /* the device is per host thread */
  for (size_t off = (size_t)job->thread * STAGE_CHUNK; off < job->bytes && err == cudaSuccess; off += (size_t)job->nthreads * STAGE_CHUNK, b ^= 1) {
    size_t len = PetscMin(STAGE_CHUNK, job->bytes - off);

    err = cudaEventSynchronize(job->buffers.free[b]);
    if (err != cudaSuccess) break;
    memcpy(job->buffers.stage[b], job->src + off, len);
    err = cudaMemcpyAsync(job->dst + off, job->buffers.stage[b], len, cudaMemcpyHostToDevice, job->stream);
    if (err == cudaSuccess) err = cudaEventRecord(job->buffers.free[b], job->stream);
  }
  job->err = err;
  return NULL;
}

/* A download's DMA of the chunk at `off` into buffer b, after whatever DMA last used that buffer (an upload's may still run) */
static cudaError_t DownloadQueue(StageJob *job, size_t off, int b)
{
  cudaError_t err = cudaStreamWaitEvent(job->stream, job->buffers.free[b], 0);

  if (err == cudaSuccess) err = cudaMemcpyAsync(job->buffers.stage[b], job->src + off, PetscMin(STAGE_CHUNK, job->bytes - off), cudaMemcpyDeviceToHost, job->stream);
  if (err == cudaSuccess) err = cudaEventRecord(job->buffers.free[b], job->stream);
  return err;
}

/* Download: thread j's chunks j, j + nthreads, ...: the next one's DMA runs into one buffer while the host copies the last out of the other */
static void *DownloadChunks(void *arg)
{
  StageJob    *job  = (StageJob *)arg;
  const size_t step = (size_t)job->nthreads * STAGE_CHUNK;
  size_t       off  = (size_t)job->thread * STAGE_CHUNK;
  cudaError_t  err  = cudaSuccess;
  int          b    = 0;

  if (job->thread) err = cudaSetDevice(job->device);
  if (err == cudaSuccess && off < job->bytes) err = DownloadQueue(job, off, b);
  for (; off < job->bytes && err == cudaSuccess; off += step, b ^= 1) {
    if (off + step < job->bytes) err = DownloadQueue(job, off + step, b ^ 1);
    if (err == cudaSuccess) err = cudaEventSynchronize(job->buffers.free[b]);
    if (err == cudaSuccess) memcpy(job->dst + off, job->buffers.stage[b], PetscMin(STAGE_CHUNK, job->bytes - off));
  }
  job->err = err;
  return NULL;
}

/* Waits for the DMAs still reading the buffers, then frees them */
static PetscErrorCode MatGPUMatStageFreeBuffers_Private(void)
{
  PetscFunctionBegin;
  for (int j = 0; j < stage_nbuffers; j++) {
    for (int b = 0; b < 2; b++) {
      PetscCallCUDA(cudaEventSynchronize(stage_buffers[j].free[b]));
      PetscCallCUDA(cudaEventDestroy(stage_buffers[j].free[b]));
      PetscCallCUDA(cudaFreeHost(stage_buffers[j].stage[b]));
    }
  }
  stage_nbuffers = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatStageFinalize_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatStageFreeBuffers_Private());
  stage_device              = -1;
  stage_finalize_registered = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Staging buffers for up to nthreads threads on this device (events belong to a device: another device's are freed and
  remade); *have: how many threads' buffers there are. Pinned memory that cannot be had leaves fewer (the copy then uses
  fewer threads, or CUDA's own copy), not an error.
*/
static PetscErrorCode MatGPUMatStageBuffers_Private(int nthreads, int device, int *have)
{
  PetscFunctionBegin;
  if (device != stage_device) PetscCall(MatGPUMatStageFreeBuffers_Private());
  if (!stage_finalize_registered) PetscCall(PetscRegisterFinalize(MatGPUMatStageFinalize_Private));
  stage_finalize_registered = PETSC_TRUE;
  stage_device              = device;
  for (; stage_nbuffers < nthreads; stage_nbuffers++) {
    StageBuffers *u   = &stage_buffers[stage_nbuffers];
    cudaError_t   err = cudaSuccess;

    PetscCall(PetscMemzero(u, sizeof(*u)));
    for (int b = 0; b < 2 && err == cudaSuccess; b++) {
      err = cudaMallocHost((void **)&u->stage[b], STAGE_CHUNK);
      if (err == cudaSuccess) err = cudaEventCreateWithFlags(&u->free[b], cudaEventDisableTiming);
    }
    if (err != cudaSuccess) {
      for (int b = 0; b < 2; b++) {
        if (u->free[b]) (void)cudaEventDestroy(u->free[b]);
        if (u->stage[b]) (void)cudaFreeHost(u->stage[b]);
      }
      (void)cudaGetLastError();
      PetscCall(PetscInfo(NULL, "No pinned staging buffers for staging thread %d (%s): %d thread(s)\n", stage_nbuffers, cudaGetErrorString(err), stage_nbuffers));
      break;
    }
  }
  *have = PetscMin(nthreads, stage_nbuffers);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/*
  The automatic thread count, of staged copies (at most STAGE_AUTO_MAX) and of the loops over the host master copy
  (gpumat_host_values.c, its own cap): the CPUs this process may run on (its affinity mask: an MPI rank bound to one
  core gets 1, that is CUDA's own copy and SeqAIJ's own loops), shared among the node's ranks where the MPI launcher
  says how many there are, at most `cap`. Decided without communication: a sequential matrix uploads on one rank only.
*/
static long auto_cpus = 0, auto_ranks = 1; /* what the automatic count was decided from */

PetscInt MatGPUMatThreadsAuto(PetscInt cap)
{
  static PetscInt share = 0; /* the CPUs per rank */
  long            ncpu  = 1;
  const char     *names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE"};
  long            local   = 1;

  if (share) return PetscMax(1, PetscMin(cap, share));
#if defined(__linux__) && defined(CPU_COUNT)
  {
    cpu_set_t set;

    CPU_ZERO(&set);
    if (!sched_getaffinity(0, sizeof(set), &set)) ncpu = CPU_COUNT(&set);
  }
#else
  ncpu = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(names); i++) {
    const char *v = getenv(names[i]);

    if (v && atol(v) > 0) {
      local = atol(v);
      break;
    }
  }
  auto_cpus  = ncpu;
  auto_ranks = local;
  share      = (PetscInt)PetscMax(1, ncpu / local);
  return PetscMax(1, PetscMin(cap, share));
}

/* -mat_gpumat_upload_threads: checked before it is kept, so a bad value leaves the process's setting as it was */
PetscErrorCode MatGPUMatSetUploadThreads(PetscInt nthreads)
{
  PetscFunctionBegin;
  PetscCheck(nthreads >= 0 && nthreads <= STAGE_MAX_THREADS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpumat_upload_threads %" PetscInt_FMT " is out of range: 0 (automatic) to %d", nthreads, STAGE_MAX_THREADS);
  MatGPUMatUploadThreads = nthreads;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How many host threads a copy of this many bytes uses (1: CUDA's own pageable copy) */
static PetscErrorCode MatGPUMatStageThreadCount(size_t bytes, PetscInt *nthreads)
{
  PetscFunctionBegin;
  *nthreads = MatGPUMatUploadThreads > 0 ? PetscMin(MatGPUMatUploadThreads, STAGE_MAX_THREADS) : MatGPUMatThreadsAuto(STAGE_AUTO_MAX);
#if !defined(PETSC_HAVE_PTHREAD)
  *nthreads = 1;
#endif
  if (bytes < STAGE_MIN_BYTES) *nthreads = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  How many host threads copy `bytes` from or to the pageable host array `host` (1: CUDA's own copy): a host array CUDA
  already knows (pinned or device memory) is copied as is
*/
static PetscErrorCode MatGPUMatStageThreads(const void *host, size_t bytes, PetscInt *nthreads)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatStageThreadCount(bytes, nthreads));
  if (*nthreads > 1) {
    struct cudaPointerAttributes attr;

    PetscCallCUDA(cudaPointerGetAttributes(&attr, host));
    if (attr.type != cudaMemoryTypeUnregistered) *nthreads = 1;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A copy through the staging buffers by *nthreads host threads, the caller's the first; *nthreads is set to 1 where
  fewer than two threads' buffers could be had (the caller then makes CUDA's copy)
*/
static PetscErrorCode MatGPUMatStagedCopy_Private(void *dst, const void *src, size_t bytes, void *stream, PetscBool download, PetscInt *nthreads)
{
#if defined(PETSC_HAVE_PTHREAD)
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* one staged copy at a time: they share the buffers */
  StageJob               jobs[STAGE_MAX_THREADS];
  pthread_t              threads[STAGE_MAX_THREADS];
  PetscBool              started[STAGE_MAX_THREADS] = {PETSC_FALSE};
  void *(*chunks)(void *)                           = download ? DownloadChunks : UploadChunks;
  PetscLogEvent          event                      = download ? MAT_GPUMatStagedDownload : MAT_GPUMatStagedUpload;
  int                    device, have = 0;
  cudaError_t            err  = cudaSuccess;
  PetscErrorCode         ierr = PETSC_SUCCESS;
#endif

  PetscFunctionBegin;
#if defined(PETSC_HAVE_PTHREAD)
  PetscCallCUDA(cudaGetDevice(&device));
  PetscCheck(!pthread_mutex_lock(&lock), PETSC_COMM_SELF, PETSC_ERR_SYS, "pthread_mutex_lock() failed");
  ierr = MatGPUMatStageBuffers_Private((int)*nthreads, device, &have);
  if (!ierr && have > 1) ierr = PetscLogEventBegin(event, NULL, NULL, NULL, NULL);
  if (!ierr && have > 1) {
    for (int j = 0; j < have; j++) {
      jobs[j] = (StageJob){(char *)dst, (const char *)src, bytes, j, have, device, (cudaStream_t)stream, stage_buffers[j], cudaSuccess};
      /* a thread that cannot start leaves its chunks to the caller, below */
      if (j) started[j] = (PetscBool)!pthread_create(&threads[j], NULL, chunks, &jobs[j]);
    }
    (void)chunks(&jobs[0]);
    for (int j = 1; j < have; j++) {
      if (started[j]) (void)pthread_join(threads[j], NULL);
      else (void)chunks(&jobs[j]);
    }
    for (int j = 0; j < have && err == cudaSuccess; j++) err = jobs[j].err;
    ierr = PetscLogEventEnd(event, NULL, NULL, NULL, NULL);
  }
  (void)pthread_mutex_unlock(&lock);
  PetscCall(ierr);
  PetscCallCUDA(err);
  if (have < 2) *nthreads = 1;
#else
  *nthreads = 1;
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Host to device on `stream`. The host may free or change src on return: from pageable memory CUDA returns once src
  is staged, and so does the staged copy (its last DMAs may still run, from the staging buffers). The callers' sources
  are pageable (PETSc's arrays, host layouts).
*/
PetscErrorCode MatGPUMatCopyToDevice(void *dst, const void *src, size_t bytes, void *stream)
{
  PetscInt nthreads;

  PetscFunctionBegin;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatStageThreads(src, bytes, &nthreads));
  if (nthreads > 1) PetscCall(MatGPUMatStagedCopy_Private(dst, src, bytes, stream, PETSC_FALSE, &nthreads));
  if (nthreads == 1) PetscCallCUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Device to host on `stream`, after the work queued on it; dst holds the values on return. A staged download waits
  for each of its chunks; CUDA's copy, for the stream (that stream only, not the device).
*/
PetscErrorCode MatGPUMatCopyToHost(void *dst, const void *src, size_t bytes, void *stream)
{
  PetscInt nthreads;

  PetscFunctionBegin;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatStageThreads(dst, bytes, &nthreads));
  if (nthreads > 1) PetscCall(MatGPUMatStagedCopy_Private(dst, src, bytes, stream, PETSC_TRUE, &nthreads));
  if (nthreads == 1) {
    PetscCallCUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    PetscCallCUDA(cudaStreamSynchronize((cudaStream_t)stream));
  }
  PetscCall(PetscLogGpuToCpu((PetscLogDouble)bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatView()'s line on how this process copies large arrays between the host and the device, and why */
PetscErrorCode MatGPUMatUploadView(PetscViewer viewer)
{
  PetscInt nthreads;

  PetscFunctionBegin;
  PetscCall(MatGPUMatStageThreadCount(STAGE_MIN_BYTES, &nthreads));
#if !defined(PETSC_HAVE_PTHREAD)
  PetscCall(PetscViewerASCIIPrintf(viewer, "uploads and downloads: CUDA's pageable copy (this PETSc has no pthreads for staged copies)\n"));
#else
  if (MatGPUMatUploadThreads > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "uploads and downloads of %zu MB or more: %s (-mat_gpumat_upload_threads %" PetscInt_FMT ")\n", STAGE_MIN_BYTES >> 20, nthreads > 1 ? "staged through pinned buffers by host threads" : "CUDA's pageable copy", MatGPUMatUploadThreads));
  else if (nthreads > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "uploads and downloads of %zu MB or more: staged through pinned buffers by %" PetscInt_FMT " host threads (automatic: %ld CPU(s) this process may run on, %ld MPI rank(s) on the node; -mat_gpumat_upload_threads)\n", STAGE_MIN_BYTES >> 20, nthreads, auto_cpus, auto_ranks));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "uploads and downloads: CUDA's pageable copy (automatic: %ld CPU(s) this process may run on for %ld MPI rank(s) on the node; ranks given several cores each, e.g. mpiexec --bind-to none, stage large copies with host threads)\n", auto_cpus, auto_ranks));
  if (stage_nbuffers && stage_nbuffers < nthreads) PetscCall(PetscViewerASCIIPrintf(viewer, "  pinned staging buffers for only %d thread(s): pinned host memory ran short\n", stage_nbuffers));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
