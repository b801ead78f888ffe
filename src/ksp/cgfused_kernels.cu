/*
  The fused CG's kernels (docs/design.md, "The fused CG"): the direction update, p'w, and one update of x, r and z that
  also sums the next norm and z'r. Reductions in a fixed order (cgfusedimpl.h), so a solve gives the same bits run to run.
*/
#include <petscgpumat/private/cgfusedimpl.h>
#include <petscgpumat/private/gpumatcuda.h>
#include <petscgpumat/private/gpumatimpl.h>

namespace
{
constexpr int kThreads = KSPCGFUSED_THREADS, kMaxBlocks = KSPCGFUSED_MAX_BLOCKS;

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

__global__ void __launch_bounds__(kThreads) cgf_direction(long long n, PetscScalar b, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ p)
{
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) p[i] = MatGPUMatAddRN(z[i], MatGPUMatMulRN(b, p[i]));
}

/* the direction with b = z'r / the z'r before, read on the device (the same division as the host's, so the same bits) */
__global__ void __launch_bounds__(kThreads) cgf_direction_device(long long n, const PetscScalar *scalars, const PetscScalar *__restrict__ z, PetscScalar *__restrict__ p)
{
  const PetscScalar b = scalars[2] / scalars[3];

  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) p[i] = MatGPUMatAddRN(z[i], MatGPUMatMulRN(b, p[i]));
}

__global__ void __launch_bounds__(kThreads) cgf_dot(long long n, const PetscScalar *__restrict__ p, const PetscScalar *__restrict__ w, PetscScalar *partial)
{
  PetscScalar s[1] = {0};

  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) s[0] += p[i] * w[i];
  block_sums<1>(s, partial);
}

__global__ void __launch_bounds__(kThreads) cgf_update(long long n, PetscScalar beta, PetscScalar dpiold, int checksign, int normsum, PetscScalar *__restrict__ x, const PetscScalar *__restrict__ p, PetscScalar *__restrict__ r, PetscScalar *__restrict__ zw, const PetscScalar *__restrict__ dinv, const PetscScalar *scalars, PetscScalar *partial)
{
  const PetscScalar dpi = scalars[0];
  const int         sgn = (dpi > 0) - (dpi < 0), sgnold = (dpiold > 0) - (dpiold < 0);
  PetscScalar       s[2] = {0, 0};

  if (isfinite(dpi) && dpi != 0 && !(checksign && sgn * sgnold < 0)) { /* the same on every thread: CG stops before the update */
    const PetscScalar a = beta / dpi;

    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
      const PetscScalar ri = r[i] - a * zw[i], zi = dinv ? dinv[i] * ri : ri;

      x[i] += a * p[i];
      r[i]  = ri;
      zw[i] = zi;
      if (normsum == KSPCGFUSED_SUM_ZZ) s[0] += zi * zi;
      else if (normsum == KSPCGFUSED_SUM_RR) s[0] += ri * ri;
      s[1] += zi * ri;
    }
  }
  block_sums<2>(s, partial);
}

/* scalars[first + k] <- the sum of partial[k * kMaxBlocks + 0 .. nb - 1], in a fixed tree (one block); with keep,
   scalars[3] <- scalars[2] first (the z'r before the one written) */
template <int NS>
__global__ void __launch_bounds__(kThreads) cgf_finish(int nb, const PetscScalar *partial, PetscScalar *scalars, int first, int keep)
{
  __shared__ PetscScalar sh[NS][kThreads];

#pragma unroll
  for (int k = 0; k < NS; k++) {
    PetscScalar t = 0;

    for (int j = threadIdx.x; j < nb; j += kThreads) t += partial[k * kMaxBlocks + j];
    sh[k][threadIdx.x] = t;
  }
  tree_sums<NS>(sh);
  if (threadIdx.x == 0) {
    if (keep) scalars[3] = scalars[2];
#pragma unroll
    for (int k = 0; k < NS; k++) scalars[first + k] = sh[k][0];
  }
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
  if (!w->host) PetscCallCUDA(cudaMallocHost((void **)&w->host, 4 * sizeof(PetscScalar)));
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
  if (w->host) PetscCallCUDA(cudaFreeHost(w->host));
  if (w->done) PetscCallCUDA(cudaEventDestroy((cudaEvent_t)w->done));
  w->partial = w->scalars = w->host = NULL;
  w->done                            = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchDirection(void *stream, PetscInt n, PetscScalar b, const PetscScalar *z, PetscScalar *p)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogGpuTimeBegin());
  cgf_direction<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>((long long)n, b, z, p);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchDirectionDevice(void *stream, PetscInt n, const PetscScalar *z, PetscScalar *p, KSPCGFusedWork *work)
{
  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogGpuTimeBegin());
  cgf_direction_device<<<blocks_for(n), kThreads, 0, (cudaStream_t)stream>>>((long long)n, work->scalars, z, p);
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
  cgf_dot<<<nb, kThreads, 0, (cudaStream_t)stream>>>((long long)n, p, w, work->partial);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  cgf_finish<1><<<1, kThreads, 0, (cudaStream_t)stream>>>(nb, work->partial, work->scalars, 0, 0);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(2.0 * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchFinishDot(void *stream, PetscInt n, KSPCGFusedWork *work)
{
  static_assert(MATGPUMAT_MAX_DOT_PARTIALS <= kMaxBlocks, "a product's partial sums must fit the first row of the work's partials");

  PetscFunctionBegin;
  PetscCheck(n > 0 && n <= MATGPUMAT_MAX_DOT_PARTIALS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%" PetscInt_FMT " partial sums of p'w", n);
  PetscCall(PetscLogGpuTimeBegin());
  cgf_finish<1><<<1, kThreads, 0, (cudaStream_t)stream>>>((int)n, work->partial, work->scalars, 0, 0);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedLaunchUpdate(void *stream, PetscInt n, PetscScalar beta, PetscScalar dpiold, PetscBool checksign, KSPCGFusedNormSum normsum, PetscScalar *x, const PetscScalar *p, PetscScalar *r, PetscScalar *zw, const PetscScalar *dinv, KSPCGFusedWork *work)
{
  const int nb = blocks_for(n);

  PetscFunctionBegin;
  PetscCall(PetscLogGpuTimeBegin());
  cgf_update<<<nb, kThreads, 0, (cudaStream_t)stream>>>((long long)n, beta, dpiold, (int)checksign, (int)normsum, x, p, r, zw, dinv, work->scalars, work->partial);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  cgf_finish<2><<<1, kThreads, 0, (cudaStream_t)stream>>>(nb, work->partial, work->scalars, 1, 1);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCallCUDA(cudaMemcpyAsync(work->host, work->scalars, 3 * sizeof(PetscScalar), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops((dinv ? 9.0 : 8.0) * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode KSPCGFusedCopyScalar(void *stream, KSPCGFusedWork *work, PetscBool tohost)
{
  PetscFunctionBegin;
  if (tohost) PetscCallCUDA(cudaMemcpyAsync(work->host, work->scalars, sizeof(PetscScalar), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
  else PetscCallCUDA(cudaMemcpyAsync(work->scalars, work->host, sizeof(PetscScalar), cudaMemcpyHostToDevice, (cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
