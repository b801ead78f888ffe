#pragma once

/* What the C files that call cuSPARSE share (the CSR format's products, the device factor): its scalar type and one handle */
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h> /* cuSPARSE, PetscCallCUSPARSE() */

#if defined(PETSC_USE_REAL_SINGLE)
  #define MATGPUMAT_CUDA_SCALAR CUDA_R_32F
#else
  #define MATGPUMAT_CUDA_SCALAR CUDA_R_64F
#endif

/* The process's cuSPARSE handle, its stream set to `stream` (destroyed at PetscFinalize()) */
PETSC_INTERN PetscErrorCode MatGPUMatGetCUSPARSEHandle(void *, cusparseHandle_t *);
