#pragma once

/* What every format's CUDA file needs: PETSc's CUDA macros and the check after each kernel launch */
#include <petscdevice_cuda.h>
#include <petscgpumat/private/gpumatimpl.h> /* MatGPUMatDotSums */

/* Launch errors are caught at once; asynchronous kernel faults at the next synchronization, or here in debug builds */
static inline PetscErrorCode MatGPUMatCheckLaunch(cudaStream_t stream)
{
  PetscFunctionBegin;
  PetscCallCUDA(cudaGetLastError());
  if (PetscDefined(USE_DEBUG)) PetscCallCUDA(cudaStreamSynchronize(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A product and a sum the compiler may not fuse into an FMA: where a host emulation, or PETSc's own two-step vector
   operation, rounds each one */
__device__ __forceinline__ PetscScalar MatGPUMatMulRN(PetscScalar a, PetscScalar b)
{
#if defined(PETSC_USE_REAL_SINGLE)
  return __fmul_rn(a, b);
#else
  return __dmul_rn(a, b);
#endif
}

__device__ __forceinline__ PetscScalar MatGPUMatAddRN(PetscScalar a, PetscScalar b)
{
#if defined(PETSC_USE_REAL_SINGLE)
  return __fadd_rn(a, b);
#else
  return __dadd_rn(a, b);
#endif
}

/*
  Whether this block is the last of its grid to get here, by a ticket (a device counter at 0; the last block sets it
  back to 0 when it is done with it): thread 0 has written the block's results before the call, and the last block then
  sees every block's (read them from L2, __ldcg: other blocks wrote them). Every thread of the block calls it
*/
__device__ __forceinline__ bool MatGPUMatLastBlock(unsigned int *ticket)
{
  __shared__ bool last;

  if (threadIdx.x == 0) {
    __threadfence(); /* this block's results before its ticket */
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}

/*
  The end of a product with a dot product (the formats' multdot): sums.partial[blockIdx.x] <- the block's sum of its
  threads' dot, in a fixed order (each warp's lanes by halving, then the warps in order); with sums.ticket, the grid's
  last block to finish then adds the partial sums into *sums.sum: lane l of its first warp those of blocks l, l + 32,
  ... in turn, then the lanes by halving (16, 8, 4, 2, 1), an order that does not depend on which block is last.
  Every thread of the block calls it
*/
__device__ __forceinline__ void MatGPUMatBlockSumToPartial(PetscScalar dot, const MatGPUMatDotSums &sums)
{
  __shared__ PetscScalar warpsum[1024 / 32];

#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_down_sync(0xffffffffu, dot, offset);
  if (threadIdx.x % 32 == 0) warpsum[threadIdx.x / 32] = dot;
  __syncthreads();
  if (threadIdx.x == 0) {
    PetscScalar sum = 0;

    for (unsigned int w = 0; w < blockDim.x / 32; w++) sum += warpsum[w];
    sums.partial[blockIdx.x] = sum;
  }
  if (!sums.ticket || !MatGPUMatLastBlock(sums.ticket) || threadIdx.x >= 32) return;
  {
    PetscScalar s = 0;

    for (unsigned int b = threadIdx.x; b < gridDim.x; b += 32) s += __ldcg(sums.partial + b); /* from L2: other blocks wrote them */
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
    if (threadIdx.x == 0) {
      *sums.sum    = s;
      *sums.ticket = 0; /* for the next product */
    }
  }
}

#include <type_traits>

/*
  Kernels are templates on small parameters (threads per row, block width, CMRS's unroll...): this calls
  f(std::integral_constant<int, V>{}) for the V among Vs that the run-time v is, or errors naming `what`.
  f returns a PetscErrorCode, or nothing (a launch).
*/
template <int V, class F>
static inline PetscErrorCode MatGPUMatCallWithConstant_Private(F &f)
{
  if constexpr (std::is_void_v<std::invoke_result_t<F &, std::integral_constant<int, V>>>) {
    f(std::integral_constant<int, V>{});
    return PETSC_SUCCESS;
  } else return f(std::integral_constant<int, V>{});
}

template <int... Vs, class F>
static inline PetscErrorCode MatGPUMatWithConstant(PetscInt v, const char *what, F &&f)
{
  PetscErrorCode ierr = PETSC_SUCCESS;
  bool           done = false;

  PetscFunctionBegin;
  ((!done && v == Vs ? (ierr = MatGPUMatCallWithConstant_Private<Vs>(f), done = true) : false), ...);
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported %s %" PetscInt_FMT, what, v);
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Block kernels are templates on the block width NV (their accumulators live in registers): launch for nv in
   1..MATGPUMAT_MAX_BLOCK, then check the launch */
template <typename Launch>
static inline PetscErrorCode MatGPUMatLaunchBlockWidth(PetscInt nv, cudaStream_t stream, Launch &&launch)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatWithConstant<1, 2, 3, 4, 5, 6, 7, 8>(nv, "block of vectors, width", launch));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
