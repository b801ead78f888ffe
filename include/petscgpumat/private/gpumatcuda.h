#pragma once

/* What every format's CUDA file needs: PETSc's CUDA macros and the check after each kernel launch */
#include <petscdevice_cuda.h>

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
  The end of a product with a dot product (the formats' multdot): partial[blockIdx.x] <- the block's sum of its threads'
  dot, in a fixed order (each warp's lanes by halving, then the warps in order). Every thread of the block calls it
*/
__device__ __forceinline__ void MatGPUMatBlockSumToPartial(PetscScalar dot, PetscScalar *partial)
{
  __shared__ PetscScalar warpsum[1024 / 32];

#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_down_sync(0xffffffffu, dot, offset);
  if (threadIdx.x % 32 == 0) warpsum[threadIdx.x / 32] = dot;
  __syncthreads();
  if (threadIdx.x == 0) {
    PetscScalar sum = 0;

    for (unsigned int w = 0; w < blockDim.x / 32; w++) sum += warpsum[w];
    partial[blockIdx.x] = sum;
  }
}

#include <type_traits>

/*
  Block kernels are templates on the block width NV (the accumulators live in registers): this calls
  launch(std::integral_constant<int, NV>{}) for the run-time width nv in 1..MATGPUMAT_MAX_BLOCK, then checks the launch.
*/
template <typename Launch>
static inline PetscErrorCode MatGPUMatLaunchBlockWidth(PetscInt nv, cudaStream_t stream, Launch &&launch)
{
  PetscFunctionBegin;
  switch (nv) {
  case 1: launch(std::integral_constant<int, 1>{}); break;
  case 2: launch(std::integral_constant<int, 2>{}); break;
  case 3: launch(std::integral_constant<int, 3>{}); break;
  case 4: launch(std::integral_constant<int, 4>{}); break;
  case 5: launch(std::integral_constant<int, 5>{}); break;
  case 6: launch(std::integral_constant<int, 6>{}); break;
  case 7: launch(std::integral_constant<int, 7>{}); break;
  case 8: launch(std::integral_constant<int, 8>{}); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported block of %" PetscInt_FMT " vectors", nv);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
