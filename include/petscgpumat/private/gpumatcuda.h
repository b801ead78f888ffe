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
