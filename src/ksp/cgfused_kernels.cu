/*
  The fused CG's kernels (docs/design.md, "The fused CG"): the direction update (with the last step of x), p'w, and
  one update of r and z that also sums the next norm and z'r. Reductions in a fixed order (cgfusedimpl.h), so a solve
  gives the same bits run to run.
*/
#include <petscgpumat/private/cgfusedimpl.h>
#include <petscgpumat/private/gpumatcuda.h>
#include <petscgpumat/private/gpumatimpl.h>

namespace
{
constexpr int kThreads = KSPCGFUSED_THREADS, kMaxBlocks = KSPCGFUSED_MAX_BLOCKS;
/* blocks an SM must hold at once (a full SM of 2048 threads): then all kMaxBlocks blocks of a vector kernel are resident
   together on a GPU of 128 SMs or more (H100, H200: 132), with no second wave; p'w's kernel took 40 registers without it */
constexpr int kMinBlocksPerSM = 2048 / kThreads;
static_assert(MATGPUMAT_MAX_DOT_PARTIALS <= kMaxBlocks, "a product's partial sums of p'w must fit the first row of the work's partials");

/* the NS sums of the block's threads in sh[k][0], by halving (a fixed tree) */
template <int NS>
__device__ void tree_sums(PetscScalar (*sh)[kThreads])
{
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half)
#pragma unroll
      for (int k = 0; k < NS; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + half];
    __syncthreads();
  }
}

/* the block's NS sums, in a fixed tree, to partial[k * kMaxBlocks + blockIdx.x] */
template <int NS>
__device__ void block_sums(PetscScalar (&s)[NS], PetscScalar *partial)
{
  __shared__ PetscScalar sh[NS][kThreads];

#pragma unroll
  for (int k = 0; k < NS; k++) sh[k][threadIdx.x] = s[k];
  tree_sums<NS>(sh);
  if (threadIdx.x == 0)
#pragma unroll
    for (int k = 0; k < NS; k++) partial[k * kMaxBlocks + blockIdx.x] = sh[k][0];
}

/*
  The step KSPSolve_CG() takes after the sum dpi = p'w (scalars[0]): a = beta / dpi, unless dpi is zero, not finite or
  (checksign) of the other sign than dpiold, where CG stops before it; the same test on every thread
*/
__device__ __forceinline__ bool cgf_step(const KSPCGFusedStep &st, const PetscScalar *scalars, PetscScalar &a)
{
  const PetscScalar dpi = scalars[0];
  const int         sgn = (dpi > 0) - (dpi < 0), sgnold = (st.dpiold > 0) - (st.dpiold < 0);

  if (!isfinite(dpi) || dpi == 0 || (st.checksign && sgn * sgnold < 0)) return false;
  a = st.beta / dpi;
  return true;
}

/* x + a p, one rounding: every kernel that applies the step to x forms it so, so x's bits do not depend on which */
__device__ __forceinline__ PetscScalar cgf_xstep(PetscScalar x, PetscScalar a, PetscScalar p)
{
  return fma(a, p, x);
}

/* scalars[first + k] <- the sum of partial[k * kMaxBlocks + 0 .. nb - 1] in a fixed tree (one block; read from L2, where
   other blocks of the same grid may have written them); with keep, scalars[3] <- scalars[2] first (the z'r before) */
template <int NS>
__device__ void sum_partials(int nb, const PetscScalar *partial, PetscScalar *scalars, int first, int keep)
{
  __shared__ PetscScalar sh[NS][kThreads];

#pragma unroll
  for (int k = 0; k < NS; k++) {
    PetscScalar t = 0;

    for (int j = threadIdx.x; j < nb; j += kThreads) t += __ldcg(partial + k * kMaxBlocks + j);
    sh[k][threadIdx.x] = t;
  }
  tree_sums<NS>(sh);
  if (threadIdx.x == 0) {
    if (keep) scalars[3] = scalars[2];
#pragma unroll
    for (int k = 0; k < NS; k++) scalars[first + k] = sh[k][0];
  }
}

/* block sums, then sum_partials() by the last block to finish (a ticket): the same order of additions whichever block
   is last, so the bits of a separate one-block kernel; with mirror (mapped host memory), scalars[0 .. 2] copied there */
template <int NS>
__device__ void block_sums_last(PetscScalar (&s)[NS], PetscScalar *partial, unsigned int *ticket, PetscScalar *scalars, int first, int keep, PetscScalar *mirror)
{
  block_sums<NS>(s, partial);
  if (!MatGPUMatLastBlock(ticket)) return;
  sum_partials<NS>(gridDim.x, partial, scalars, first, keep);
  if (threadIdx.x == 0) {
    *ticket = 0; /* for the next kernel */
    if (mirror) {
      for (int k = 0; k < 3; k++) mirror[k] = scalars[k]; /* this thread wrote them: program order */
      __threadfence_system();
    }
  }
}

/*
  p <- z + b p (b from the host, or with bdevice scalars[2] / scalars[3]: this z'r over the one before, as the update
  kernels left them, the host's division), and with x the step of the last update, x <- x + a p with p before it changes
*/
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM) cgf_direction(long long n, PetscScalar bhost, int bdevice, KSPCGFusedStep st, const PetscScalar *scalars, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ p, PetscScalar *__restrict__ x)
{
  const PetscScalar b = bdevice ? scalars[2] / scalars[3] : bhost;
  PetscScalar       a = 0;
  const bool        step = x && cgf_step(st, scalars, a);

  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    const PetscScalar pi = p[i];

    if (step) x[i] = cgf_xstep(x[i], a, pi);
    p[i] = MatGPUMatAddRN(z[i], MatGPUMatMulRN(b, pi));
  }
}

/* out <- x + a p where the step is taken, else x (out may be x) */
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM) cgf_solution(long long n, KSPCGFusedStep st, const PetscScalar *scalars, const PetscScalar *x, const PetscScalar *__restrict__ p, PetscScalar *out)
{
  PetscScalar a    = 0;
  const bool  step = cgf_step(st, scalars, a);

  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) out[i] = step ? cgf_xstep(x[i], a, p[i]) : x[i];
}

__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM) cgf_dot(long long n, const PetscScalar *__restrict__ p, const PetscScalar *__restrict__ w, PetscScalar *partial, unsigned int *ticket, PetscScalar *scalars)
{
  PetscScalar s[1] = {0};

  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) s[0] += p[i] * w[i];
  block_sums_last<1>(s, partial, ticket, scalars, 0, 0, nullptr);
}

__global__ void __launch_bounds__(kThreads, kMinBlocksPerSM) cgf_update(long long n, KSPCGFusedStep st, int normsum, PetscScalar *__restrict__ r, PetscScalar *__restrict__ zw, const PetscScalar *__restrict__ dinv, PetscScalar *scalars, PetscScalar *partial, unsigned int *ticket, PetscScalar *mirror)
{
  PetscScalar s[2] = {0, 0}, a = 0;

  if (cgf_step(st, scalars, a)) { /* the same on every thread: CG stops before the update */
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
      const PetscScalar ri = r[i] - a * zw[i], zi = dinv ? dinv[i] * ri : ri;

      r[i]  = ri;
      zw[i] = zi;
      if (normsum == KSPCGFUSED_SUM_ZZ) s[0] += zi * zi;
      else if (normsum == KSPCGFUSED_SUM_RR) s[0] += ri * ri;
      s[1] += zi * ri;
    }
  }
  block_sums_last<2>(s, partial, ticket, scalars, 1, 1, mirror);
}

/* a fixed grid for a given n (the order of the sums depends on it and on nothing else) */
int blocks_for(PetscInt n)
{
  const long long b = ((long long)n + kThreads - 1) / kThreads;

  return (int)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}
} // namespace

PetscErrorCode KSPCGFusedWorkCreate(KSPCGFusedWork *w)
{
  PetscFunctionBegin;
  if (!w->partial) PetscCallCUDA(cudaMalloc((void **)&w->partial, 3 * (size_t)kMaxBlocks * sizeof(PetscScalar)));
  if (!w->scalars) PetscCallCUDA(cudaMalloc((void **)&w->scalars, 4 * sizeof(PetscScalar)));
  if (!w->ticket) {
    PetscCallCUDA(cudaMalloc((void **)&w->ticket, 2 * sizeof(unsigned int)));
    PetscCallCUDA(cudaMemset(w->ticket, 0, 2 * sizeof(unsigned int))); /* each kernel that takes a ticket leaves it 0 */
  }
  if (!w->host) {
    int device, canmap = 0;

    PetscCallCUDA(cudaGetDevice(&device));
    PetscCallCUDA(cudaDeviceGetAttribute(&canmap, cudaDevAttrCanMapHostMemory, device));
    PetscCallCUDA(cudaHostAlloc((void **)&w->host, 4 * sizeof(PetscScalar), canmap ? cudaHostAllocMapped : cudaHostAllocDefault));
    if (canmap) PetscCallCUDA(cudaHostGetDevicePointer((void **)&w->hostdev, w->host, 0));
  }
  if (!w->done) {
    cudaEvent_t ev;

    PetscCallCUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    w->done = (void *)ev;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedWorkDestroy(KSPCGFusedWork *w)
{
  PetscFunctionBegin;
  if (w->partial) PetscCallCUDA(cudaFree(w->partial));
  if (w->scalars) PetscCallCUDA(cudaFree(w->scalars));
  if (w->ticket) PetscCallCUDA(cudaFree(w->ticket));
  if (w->host) PetscCallCUDA(cudaFreeHost(w->host));
  if (w->done) PetscCallCUDA(cudaEventDestroy((cudaEvent_t)w->done));
  w->partial = w->scalars = w->host = w->hostdev = NULL;
  w->ticket                          = NULL;
  w->done                            = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchDirection(void *stream, PetscInt n, PetscScalar b, PetscBool bdevice, const KSPCGFusedStep *step, const PetscScalar *z, PetscScalar *p, PetscScalar *x, KSPCGFusedWork *work)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogGpuTimeBegin());
  cgf_direction<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>((long long)n, b, (int)bdevice, *step, work->scalars, z, p, x);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((x ? 4.0 : 2.0) * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchSolution(void *stream, PetscInt n, const KSPCGFusedStep *step, const PetscScalar *x, const PetscScalar *p, PetscScalar *out, KSPCGFusedWork *work)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogGpuTimeBegin());
  cgf_solution<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>((long long)n, *step, work->scalars, x, p, out);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedSetZR(void *stream, KSPCGFusedWork *work, PetscScalar zr)
{
  PetscFunctionBegin;
  work->host[3] = zr; /* pinned: read by the copy when the stream reaches it; nothing writes it again in this solve */
  PetscCallCUDA(cudaMemcpyAsync(work->scalars + 2, work->host + 3, sizeof(PetscScalar), cudaMemcpyHostToDevice, (cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedRecordDone(void *stream, KSPCGFusedWork *work)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaEventRecord((cudaEvent_t)work->done, (cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedWaitDone(KSPCGFusedWork *work)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaEventSynchronize((cudaEvent_t)work->done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchDot(void *stream, PetscInt n, const PetscScalar *p, const PetscScalar *w, KSPCGFusedWork *work)
{
  const int nb = blocks_for(n);

  PetscFunctionBegin;
  PetscCall(PetscLogGpuTimeBegin());
  cgf_dot<<<nb, kThreads, 0, (cudaStream_t)stream>>>((long long)n, p, w, work->partial, work->ticket, work->scalars);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchUpdate(void *stream, PetscInt n, const KSPCGFusedStep *step, KSPCGFusedNormSum normsum, PetscScalar *r, PetscScalar *zw, const PetscScalar *dinv, KSPCGFusedWork *work)
{
  const int nb = blocks_for(n);

  PetscFunctionBegin;
  PetscCall(PetscLogGpuTimeBegin());
  cgf_update<<<nb, kThreads, 0, (cudaStream_t)stream>>>((long long)n, *step, (int)normsum, r, zw, dinv, work->scalars, work->partial, work->ticket, work->hostdev);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  if (!work->hostdev) PetscCallCUDA(cudaMemcpyAsync(work->host, work->scalars, 3 * sizeof(PetscScalar), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((dinv ? 7.0 : 6.0) * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedCopyScalar(void *stream, KSPCGFusedWork *work, PetscBool tohost)
{
  PetscFunctionBegin;
  if (tohost) PetscCallCUDA(cudaMemcpyAsync(work->host, work->scalars, sizeof(PetscScalar), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
  else PetscCallCUDA(cudaMemcpyAsync(work->scalars, work->host, sizeof(PetscScalar), cudaMemcpyHostToDevice, (cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
