/*
  Host to device copies of PETSc's pageable arrays (the CSR a build uploads, the values a refresh uploads).

  CUDA copies pageable memory through its own pinned buffers with one host thread: about 6 GB/s on the H200 machine
  (31 ms for 192 MB), where the DMA from pinned memory runs at 54 GB/s and one host thread copies at
  9 GB/s. Registering the array instead (cudaHostRegister) costs as much as it saves (14 ms to pin 192 MB). So large
  copies go through pinned staging buffers that several host threads fill, each thread copying its own chunks and
  queueing their DMA on the caller's stream while it fills its next buffer: 15 ms for those 192 MB with 4 threads
  (data: docs/performance.md, "Uploads through pinned buffers"). The staging buffers (two of UPLOAD_CHUNK bytes per
  thread) are allocated at the first such copy and kept until PetscFinalize().
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

#define UPLOAD_CHUNK       ((size_t)2 << 20) /* bytes per staging buffer: a chunk's DMA is queued while the next is filled */
#define UPLOAD_MIN_BYTES   ((size_t)16 << 20) /* smaller copies gained nothing measurable (8 MB: 0.85 ms either way) */
#define UPLOAD_AUTO_MAX    4                 /* the automatic count's cap: 16 MB pinned; 8 threads gained 2-3 ms more on a 297 MB build */
#define UPLOAD_MAX_THREADS 16

PetscInt      MatGPUMatUploadThreads = 0; /* -mat_gpumat_upload_threads: 0 automatic, 1 CUDA's own pageable copy */
PetscLogEvent MAT_GPUMatStagedUpload;      /* a staged copy, from its first chunk to the last one queued */

#if defined(PETSC_HAVE_PTHREAD)
typedef struct {
  char       *stage[2];
  cudaEvent_t free[2]; /* recorded after the DMA out of stage[i]: the buffer may be refilled once it has passed */
} UploadBuffers;

static UploadBuffers upload_buffers[UPLOAD_MAX_THREADS];
static int           upload_nbuffers = 0, upload_device = -1;
static PetscBool     upload_finalize_registered = PETSC_FALSE;

typedef struct {
  char         *dst;
  const char   *src;
  size_t        bytes;
  int           thread, nthreads, device;
  cudaStream_t  stream;
  UploadBuffers buffers;
  cudaError_t   err;
} UploadJob;

/* Thread j copies chunks j, j + nthreads, ... alternating between its two buffers */
static void *UploadChunks(void *arg)
{
  UploadJob  *job = (UploadJob *)arg;
  cudaError_t err = cudaSuccess;
  int         b   = 0;

  if (job->thread) err = cudaSetDevice(job->device); /* the device is per host thread */
  for (size_t off = (size_t)job->thread * UPLOAD_CHUNK; off < job->bytes && err == cudaSuccess; off += (size_t)job->nthreads * UPLOAD_CHUNK, b ^= 1) {
    size_t len = PetscMin(UPLOAD_CHUNK, job->bytes - off);

    err = cudaEventSynchronize(job->buffers.free[b]);
    if (err != cudaSuccess) break;
    memcpy(job->buffers.stage[b], job->src + off, len);
    err = cudaMemcpyAsync(job->dst + off, job->buffers.stage[b], len, cudaMemcpyHostToDevice, job->stream);
    if (err == cudaSuccess) err = cudaEventRecord(job->buffers.free[b], job->stream);
  }
  job->err = err;
  return NULL;
}

/* Waits for the DMAs still reading the buffers, then frees them */
static PetscErrorCode MatGPUMatUploadFreeBuffers_Private(void)
{
  PetscFunctionBegin;
  for (int j = 0; j < upload_nbuffers; j++) {
    for (int b = 0; b < 2; b++) {
      PetscCallCUDA(cudaEventSynchronize(upload_buffers[j].free[b]));
      PetscCallCUDA(cudaEventDestroy(upload_buffers[j].free[b]));
      PetscCallCUDA(cudaFreeHost(upload_buffers[j].stage[b]));
    }
  }
  upload_nbuffers = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatUploadFinalize_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatUploadFreeBuffers_Private());
  upload_device              = -1;
  upload_finalize_registered = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Staging buffers for up to nthreads threads on this device (events belong to a device: another device's are freed and
  remade); *have: how many threads' buffers there are. Pinned memory that cannot be had leaves fewer (the copy then uses
  fewer threads, or CUDA's own copy), not an error.
*/
static PetscErrorCode MatGPUMatUploadBuffers_Private(int nthreads, int device, int *have)
{
  PetscFunctionBegin;
  if (device != upload_device) PetscCall(MatGPUMatUploadFreeBuffers_Private());
  if (!upload_finalize_registered) PetscCall(PetscRegisterFinalize(MatGPUMatUploadFinalize_Private));
  upload_finalize_registered = PETSC_TRUE;
  upload_device              = device;
  for (; upload_nbuffers < nthreads; upload_nbuffers++) {
    UploadBuffers *u   = &upload_buffers[upload_nbuffers];
    cudaError_t    err = cudaSuccess;

    PetscCall(PetscMemzero(u, sizeof(*u)));
    for (int b = 0; b < 2 && err == cudaSuccess; b++) {
      err = cudaMallocHost((void **)&u->stage[b], UPLOAD_CHUNK);
      if (err == cudaSuccess) err = cudaEventCreateWithFlags(&u->free[b], cudaEventDisableTiming);
    }
    if (err != cudaSuccess) {
      for (int b = 0; b < 2; b++) {
        if (u->free[b]) (void)cudaEventDestroy(u->free[b]);
        if (u->stage[b]) (void)cudaFreeHost(u->stage[b]);
      }
      (void)cudaGetLastError();
      PetscCall(PetscInfo(NULL, "No pinned staging buffers for upload thread %d (%s): %d thread(s)\n", upload_nbuffers, cudaGetErrorString(err), upload_nbuffers));
      break;
    }
  }
  *have = PetscMin(nthreads, upload_nbuffers);
  PetscFunctionReturn(PETSC_SUCCESS);
}
#endif

/*
  The automatic thread count, of uploads and of the loops over the host master copy (gpumat_host_values.c): the CPUs
  this process may run on (its affinity mask: an MPI rank bound to one core gets 1, that is CUDA's own copy and
  SeqAIJ's own loops), shared among the node's ranks where the MPI launcher says how many there are, at most
  UPLOAD_AUTO_MAX. Decided without communication: a sequential matrix uploads on one rank only.
*/
static long upload_auto_cpus = 0, upload_auto_ranks = 1; /* what the automatic count was decided from */

PetscInt MatGPUMatThreadsAuto(void)
{
  static int  nthreads = 0;
  long        ncpu     = 1;
  const char *names[]  = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_SIZE"};
  long        local    = 1;

  if (nthreads) return nthreads;
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
  upload_auto_cpus  = ncpu;
  upload_auto_ranks = local;
  nthreads          = (int)PetscMax(1, PetscMin(UPLOAD_AUTO_MAX, ncpu / local));
  return nthreads;
}

/* -mat_gpumat_upload_threads: checked before it is kept, so a bad value leaves the process's setting as it was */
PetscErrorCode MatGPUMatSetUploadThreads(PetscInt nthreads)
{
  PetscFunctionBegin;
  PetscCheck(nthreads >= 0 && nthreads <= UPLOAD_MAX_THREADS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-mat_gpumat_upload_threads %" PetscInt_FMT " is out of range: 0 (automatic) to %d", nthreads, UPLOAD_MAX_THREADS);
  MatGPUMatUploadThreads = nthreads;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How many host threads a copy of this many bytes uses (1: CUDA's own pageable copy) */
static PetscErrorCode MatGPUMatUploadThreadCount(size_t bytes, PetscInt *nthreads)
{
  PetscFunctionBegin;
  *nthreads = MatGPUMatUploadThreads > 0 ? PetscMin(MatGPUMatUploadThreads, UPLOAD_MAX_THREADS) : MatGPUMatThreadsAuto();
#if !defined(PETSC_HAVE_PTHREAD)
  *nthreads = 1;
#endif
  if (bytes < UPLOAD_MIN_BYTES) *nthreads = 1;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Host to device on `stream`. The host may free or change src on return: from pageable memory CUDA returns once src
  is staged, and so does the staged copy (its last DMAs may still run, from the staging buffers). The callers' sources
  are pageable (PETSc's arrays, host layouts); a source CUDA already knows (pinned or device memory) is copied as is.
*/
PetscErrorCode MatGPUMatCopyToDevice(void *dst, const void *src, size_t bytes, void *stream)
{
  PetscInt nthreads;

  PetscFunctionBegin;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatUploadThreadCount(bytes, &nthreads));
  if (nthreads > 1) {
    struct cudaPointerAttributes attr;

    PetscCallCUDA(cudaPointerGetAttributes(&attr, src));
    if (attr.type != cudaMemoryTypeUnregistered) nthreads = 1;
  }
#if defined(PETSC_HAVE_PTHREAD)
  if (nthreads > 1) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* one staged copy at a time: they share the buffers */
    UploadJob              jobs[UPLOAD_MAX_THREADS];
    pthread_t              threads[UPLOAD_MAX_THREADS];
    PetscBool              started[UPLOAD_MAX_THREADS] = {PETSC_FALSE};
    int                    device, have = 0;
    cudaError_t            err  = cudaSuccess;
    PetscErrorCode         ierr = PETSC_SUCCESS;

    PetscCallCUDA(cudaGetDevice(&device));
    PetscCheck(!pthread_mutex_lock(&lock), PETSC_COMM_SELF, PETSC_ERR_SYS, "pthread_mutex_lock() failed");
    ierr = MatGPUMatUploadBuffers_Private((int)nthreads, device, &have);
    if (!ierr && have > 1) ierr = PetscLogEventBegin(MAT_GPUMatStagedUpload, NULL, NULL, NULL, NULL);
    if (!ierr && have > 1) {
      for (int j = 0; j < have; j++) {
        jobs[j] = (UploadJob){(char *)dst, (const char *)src, bytes, j, have, device, (cudaStream_t)stream, upload_buffers[j], cudaSuccess};
        /* a thread that cannot start leaves its chunks to the caller, below */
        if (j) started[j] = (PetscBool)!pthread_create(&threads[j], NULL, UploadChunks, &jobs[j]);
      }
      (void)UploadChunks(&jobs[0]);
      for (int j = 1; j < have; j++) {
        if (started[j]) (void)pthread_join(threads[j], NULL);
        else (void)UploadChunks(&jobs[j]);
      }
      for (int j = 0; j < have && err == cudaSuccess; j++) err = jobs[j].err;
      ierr = PetscLogEventEnd(MAT_GPUMatStagedUpload, NULL, NULL, NULL, NULL);
    }
    (void)pthread_mutex_unlock(&lock);
    PetscCall(ierr);
    PetscCallCUDA(err);
    if (have < 2) nthreads = 1;
  }
#endif
  if (nthreads == 1) PetscCallCUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, (cudaStream_t)stream));
  PetscCall(PetscLogCpuToGpu((PetscLogDouble)bytes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatView()'s line on how this process uploads, and why */
PetscErrorCode MatGPUMatUploadView(PetscViewer viewer)
{
  PetscInt nthreads;

  PetscFunctionBegin;
  PetscCall(MatGPUMatUploadThreadCount(UPLOAD_MIN_BYTES, &nthreads));
#if !defined(PETSC_HAVE_PTHREAD)
  PetscCall(PetscViewerASCIIPrintf(viewer, "uploads: CUDA's pageable copy (this PETSc has no pthreads for staged copies)\n"));
#else
  if (MatGPUMatUploadThreads > 0) PetscCall(PetscViewerASCIIPrintf(viewer, "uploads of %zu MB or more: %s (-mat_gpumat_upload_threads %" PetscInt_FMT ")\n", UPLOAD_MIN_BYTES >> 20, nthreads > 1 ? "staged through pinned buffers by host threads" : "CUDA's pageable copy", MatGPUMatUploadThreads));
  else if (nthreads > 1) PetscCall(PetscViewerASCIIPrintf(viewer, "uploads of %zu MB or more: staged through pinned buffers by %" PetscInt_FMT " host threads (automatic: %ld CPU(s) this process may run on, %ld MPI rank(s) on the node; -mat_gpumat_upload_threads)\n", UPLOAD_MIN_BYTES >> 20, nthreads, upload_auto_cpus, upload_auto_ranks));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "uploads: CUDA's pageable copy (automatic: %ld CPU(s) this process may run on for %ld MPI rank(s) on the node; ranks given several cores each, e.g. mpiexec --bind-to none, stage large uploads with host threads)\n", upload_auto_cpus, upload_auto_ranks));
  if (upload_nbuffers && upload_nbuffers < nthreads) PetscCall(PetscViewerASCIIPrintf(viewer, "  pinned staging buffers for only %d thread(s): pinned host memory ran short\n", upload_nbuffers));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}
