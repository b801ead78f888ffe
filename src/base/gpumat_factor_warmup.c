/*
  The dense LU's first use of cuSOLVER in a process, done early in a host thread of its own.

  A process's first cuSOLVER getrf costs 50-130 ms more than the next one (n = 4913 on the H200: 66-145 ms against
  17.4 ms; its first getrs 13-29 ms against 12.2 ms): cuSOLVER's and cuBLAS's own set-up in the process, not CUDA's
  lazy module loading (the first getrf took as long with CUDA_MODULE_LOADING=EAGER). In PCMG's set-up on a 3-D DMDA
  that lands in the coarse grid's dense LU, where it made our factorization as slow as the host's sparse one, after
  0.3-1 s of host work of the DM (DMCreateInterpolation, DMCreateMatrix) during which the GPU idles. A getrf, getrs
  and gemv of 256 x 256 in a host thread while the main thread works on the host leave the first getrf at its second's
  time (18.5 ms; docs/performance.md, "Dense LU on the device").

  So the first matrix of ours that a device is initialized for starts such a thread, where the dense LU can be taken
  (-mat_gpumat_dense_lu_max > 0; -mat_gpumat_dense_lu_warmup 0 turns it off). The dense LU's numeric phase and
  PetscFinalize() wait for it. The thread calls only CUDA and its libraries, with a stream and handles of its own and
  plain malloc(): PETSc is not thread-safe. Nothing depends on its result; a failure is reported by -info.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>
#include <petscgpumat/private/gpumatdenselu.h>
#include <time.h>
#if defined(PETSC_HAVE_PTHREAD)
  #include <pthread.h>
#endif

PetscBool MatGPUMatDenseLUWarmupOn = PETSC_TRUE; /* -mat_gpumat_dense_lu_warmup */

#define WARMUP_N 256 /* rows of the warm-up's matrix: getrs with as many right-hand sides, as the inverse's */

typedef enum {
  WARMUP_NOT_STARTED,
  WARMUP_RUNNING,
  WARMUP_FINISHED
} WarmupState;

static WarmupState warmup_state = WARMUP_NOT_STARTED;
static int         warmup_device;
static double      warmup_ms;          /* written by the thread, read after the join */
static const char *warmup_failed;      /* the first call that failed, or NULL */
static PetscBool   warmup_joined_info; /* -info has said how it went */

#if defined(PETSC_HAVE_PTHREAD)
static pthread_t warmup_thread;

/* not PetscTime(): that is MPI_Wtime(), which an MPI library initialized for one thread may not be called from another */
static double WarmupSeconds(void)
{
  struct timespec t;

  (void)clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The calls after the first failure are skipped; what was made is released whatever happened */
  #define WARMUP_TRY(call) \
    do { \
      if (!warmup_failed && (int)(call) != 0) warmup_failed = #call; \
    } while (0)

static void *WarmupRun(void *arg)
{
  const int          n   = WARMUP_N;
  const PetscReal    one = 1, zero = 0;
  const double       t0  = WarmupSeconds();
  cudaStream_t       stream = NULL;
  cusolverDnHandle_t solver = NULL;
  cublasHandle_t     blas   = NULL;
  PetscReal         *h = NULL, *a = NULL, *b = NULL, *work = NULL;
  int               *ipiv = NULL, lwork = 0;

  (void)arg;
  WARMUP_TRY(cudaSetDevice(warmup_device)); /* the device is per host thread */
  WARMUP_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  if (!warmup_failed && !(h = (PetscReal *)calloc((size_t)n * n, sizeof(PetscReal)))) warmup_failed = "calloc";
  WARMUP_TRY(cudaMalloc((void **)&a, sizeof(PetscReal) * n * n));
  WARMUP_TRY(cudaMalloc((void **)&b, sizeof(PetscReal) * n * n));
  WARMUP_TRY(cudaMalloc((void **)&ipiv, sizeof(int) * (n + 1)));
  if (!warmup_failed) { /* a = tridiag(-1, 4, -1), b = I */
    for (int i = 0; i < n; i++) {
      h[(size_t)i * n + i] = 4;
      if (i) h[(size_t)i * n + i - 1] = h[(size_t)(i - 1) * n + i] = -1;
    }
  }
  WARMUP_TRY(cudaMemcpy(a, h, sizeof(PetscReal) * n * n, cudaMemcpyHostToDevice));
  if (!warmup_failed) {
    for (int i = 0; i < n; i++) {
      h[(size_t)i * n + i] = 1;
      if (i) h[(size_t)i * n + i - 1] = h[(size_t)(i - 1) * n + i] = 0;
    }
  }
  WARMUP_TRY(cudaMemcpy(b, h, sizeof(PetscReal) * n * n, cudaMemcpyHostToDevice));
  WARMUP_TRY(cusolverDnCreate(&solver));
  WARMUP_TRY(cusolverDnSetStream(solver, stream));
  WARMUP_TRY(GPUMAT_GETRF_BUFFERSIZE(solver, n, n, a, n, &lwork));
  WARMUP_TRY(cudaMalloc((void **)&work, sizeof(PetscReal) * (size_t)PetscMax(lwork, 1)));
  WARMUP_TRY(GPUMAT_GETRF(solver, n, n, a, n, work, ipiv, ipiv + n));
  WARMUP_TRY(GPUMAT_GETRS(solver, CUBLAS_OP_N, n, n, a, n, ipiv, b, n, ipiv + n)); /* the inverse, as the dense LU makes it */
  WARMUP_TRY(cublasCreate(&blas));
  WARMUP_TRY(cublasSetStream(blas, stream));
  WARMUP_TRY(GPUMAT_GEMV(blas, CUBLAS_OP_N, n, n, &one, b, n, a, 1, &zero, a + n, 1)); /* a solve */
  WARMUP_TRY(cudaStreamSynchronize(stream));
  if (blas) (void)cublasDestroy(blas);
  if (solver) (void)cusolverDnDestroy(solver);
  if (work) (void)cudaFree(work);
  if (ipiv) (void)cudaFree(ipiv);
  if (b) (void)cudaFree(b);
  if (a) (void)cudaFree(a);
  if (stream) (void)cudaStreamDestroy(stream);
  free(h);
  (void)cudaGetLastError(); /* this thread's */
  warmup_ms = 1e3 * (WarmupSeconds() - t0);
  return NULL;
}
#endif

static PetscErrorCode MatGPUMatDenseLUWarmupFinalize_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUWarmupWait(NULL, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Starts the warm-up once per process, on the current device (called where a matrix of ours initializes the device:
  MatGPUMatSetVecType())
*/
PetscErrorCode MatGPUMatDenseLUWarmupStart(void)
{
  PetscFunctionBegin;
#if defined(PETSC_HAVE_PTHREAD)
  if (warmup_state != WARMUP_NOT_STARTED || !MatGPUMatDenseLUWarmupOn || MatGPUMatDenseLUMax <= 0 || PetscDefined(USE_COMPLEX)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallCUDA(cudaGetDevice(&warmup_device));
  if (pthread_create(&warmup_thread, NULL, WarmupRun, NULL)) {
    warmup_state = WARMUP_FINISHED;
    PetscCall(PetscInfo(NULL, "No host thread for the dense LU's warm-up: its first factorization sets cuSOLVER up\n"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  warmup_state = WARMUP_RUNNING;
  PetscCall(PetscRegisterFinalize(MatGPUMatDenseLUWarmupFinalize_Private));
  PetscCall(PetscInfo(NULL, "cuSOLVER set up for the dense LU in a host thread on device %d (-mat_gpumat_dense_lu_warmup)\n", warmup_device));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatGPUMatDenseLUWarmupWait - Waits for the host thread that sets cuSOLVER up for the dense LU on the device, if one runs

  Not Collective

  Output Parameters:
+ ran - whether a warm-up ran in this process (optional)
- ms  - how long it took, in milliseconds (optional; 0 where none ran)

  Level: developer

  Notes:
  The first matrix of a petscgpumat type that initializes a device starts the warm-up (`-mat_gpumat_dense_lu_warmup`,
  default true, where `-mat_gpumat_dense_lu_max` is positive): a process's first cuSOLVER factorization otherwise
  costs 50-130 ms more than later ones. The dense LU's numeric factorization and `PetscFinalize()` wait for it;
  programs that measure free device memory call this first. A failure of the warm-up is reported by `-info` and
  changes nothing else.

.seealso: `MATSOLVERCUDA`, `MatGetFactor()`
@*/
PetscErrorCode MatGPUMatDenseLUWarmupWait(PetscBool *ran, PetscReal *ms)
{
  PetscFunctionBegin;
#if defined(PETSC_HAVE_PTHREAD)
  if (warmup_state == WARMUP_RUNNING) {
    PetscCheck(!pthread_join(warmup_thread, NULL), PETSC_COMM_SELF, PETSC_ERR_SYS, "Cannot join the dense LU's warm-up thread");
    warmup_state = WARMUP_FINISHED;
  }
  if (warmup_state == WARMUP_FINISHED && !warmup_joined_info) {
    warmup_joined_info = PETSC_TRUE;
    if (warmup_failed) PetscCall(PetscInfo(NULL, "The dense LU's warm-up stopped at %s after %.1f ms (nothing depends on it)\n", warmup_failed, warmup_ms));
    else PetscCall(PetscInfo(NULL, "The dense LU's warm-up (getrf, getrs and gemv of %d x %d) took %.1f ms in its host thread\n", WARMUP_N, WARMUP_N, warmup_ms));
  }
#endif
  if (ran) *ran = (PetscBool)(warmup_state == WARMUP_FINISHED && !warmup_failed && warmup_ms > 0);
  if (ms) *ms = warmup_state == WARMUP_FINISHED ? (PetscReal)warmup_ms : 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}
