/* The cuSPARSE handle of the process, shared by what calls cuSPARSE (the CSR format, the device factor) */
#include <petscgpumat/private/gpumatcusparse.h>

static cusparseHandle_t MatGPUMatCUSPARSE = NULL;

static PetscErrorCode MatGPUMatDestroyCUSPARSEHandle_Private(void)
{
  PetscFunctionBegin;
  if (MatGPUMatCUSPARSE) PetscCallCUSPARSE(cusparseDestroy(MatGPUMatCUSPARSE));
  MatGPUMatCUSPARSE = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatGetCUSPARSEHandle(void *stream, cusparseHandle_t *handle)
{
  PetscFunctionBegin;
  if (!MatGPUMatCUSPARSE) {
    PetscCallCUSPARSE(cusparseCreate(&MatGPUMatCUSPARSE));
    PetscCall(PetscRegisterFinalize(MatGPUMatDestroyCUSPARSEHandle_Private));
  }
  PetscCallCUSPARSE(cusparseSetStream(MatGPUMatCUSPARSE, (cudaStream_t)stream));
  *handle = MatGPUMatCUSPARSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
