/*
  Registration of the petscgpumat types, events and the dynamic-library entry point. It sits above the base
  (src/base/) and the formats (src/<format>/), as PETSc's dlregismat.c above its matrix types: the formats register
  their tables with the base, and the base names no format.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscgpuksp.h>

PETSC_INTERN PetscErrorCode MatGPUMatResetFormats_Private(void);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterELLR_Private(void);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterRgCSR_Private(void);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterCMRS_Private(void);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterCSR_Private(void);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterAuto_Private(void);
PETSC_INTERN PetscErrorCode MatGPUMatAliasDMMatType_Private(void);

static PetscBool PetscGPUMatPackageInitialized = PETSC_FALSE;

/*@C
  PetscGPUMatFinalizePackage - Called by `PetscFinalize()` to reset what `PetscGPUMatInitializePackage()` did

  Level: developer

.seealso: `PetscGPUMatInitializePackage()`
@*/
PetscErrorCode PetscGPUMatFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatResetFormats_Private());
  PetscGPUMatPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscGPUMatInitializePackage - Registers the petscgpumat matrix types (`MATSEQCMRSCUDA`, `MATSEQELLRCUDA`, `MATSEQRGCSRCUDA`, `MATSEQCSRCUDA`, `MATSEQAUTOCUDA`) and `KSPCGFUSED` with PETSc

  Not Collective

  Level: beginner

  Notes:
  Programs that link libpetscgpumat call this once after `PetscInitialize()`; calling it again does nothing.
  Unmodified PETSc programs get the same through `-dll_append <prefix>/lib/libpetscgpumat.so`, which makes
  PETSc call `PetscDLLibraryRegister_petscgpumat()`.

  `-dm_mat_type` given as one of the root names (`cmrscuda`, `ellrcuda`, `rgcsrcuda`, `csrcuda`, `autocuda`) is read
  as the same type's `aij` name (`aijcmrscuda`, ...): DMDA gives its interpolation matrices the DM's type only under
  a name that begins with `aij`, so multigrid's transfers stay on the GPU either way (`-info` says so).

  The types do not need a GPU to be created, converted or bound to the CPU; the first device product does.

.seealso: `PetscGPUMatFinalizePackage()`, `MATSEQELLRCUDA`, `PetscGPUMatDeviceAvailable()`
@*/
PetscErrorCode PetscGPUMatInitializePackage(void)
{
  PetscFunctionBegin;
  if (PetscGPUMatPackageInitialized) PetscFunctionReturn(PETSC_SUCCESS);
  PetscGPUMatPackageInitialized = PETSC_TRUE;
  PetscCall(MatInitializePackage());
  PetscCall(PetscLogEventRegister("GPUMatBuild", MAT_CLASSID, &MAT_GPUMatBuild));
  PetscCall(PetscLogEventRegister("GPUMatCopyValues", MAT_CLASSID, &MAT_GPUMatCopyValues));
  PetscCall(PetscLogEventRegister("GPUMatHostFallback", MAT_CLASSID, &MAT_GPUMatHostFallback));
  PetscCall(PetscLogEventRegister("GPUMatHaloSetUp", MAT_CLASSID, &MAT_GPUMatHaloSetUp));
  PetscCall(PetscLogEventRegister("GPUMatTranspose", MAT_CLASSID, &MAT_GPUMatTranspose));
  PetscCall(PetscLogEventRegister("GPUMatStagedUpload", MAT_CLASSID, &MAT_GPUMatStagedUpload));
  PetscCall(PetscLogEventRegister("GPUMatStagedDownload", MAT_CLASSID, &MAT_GPUMatStagedDownload));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_host_fallback_error", &MatGPUMatHostFallbackIsError, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_check_products", &MatGPUMatCheckProductsOn, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_block_kernel", &MatGPUMatBlockKernelOn, NULL));
  {
    PetscInt  nthreads = MatGPUMatUploadThreads;
    PetscBool set;

    PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_gpumat_upload_threads", &nthreads, &set)); /* also for matrices no MatSetFromOptions() reaches (a DM's) */
    if (set) PetscCall(MatGPUMatSetUploadThreads(nthreads));
  }
  {
    PetscInt  nthreads = MatGPUMatHostThreads;
    PetscBool set;

    PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_gpumat_host_threads", &nthreads, &set));
    if (set) PetscCall(MatGPUMatSetHostThreads(nthreads));
  }
  PetscCall(PetscOptionsGetEnum(NULL, NULL, "-mat_gpumat_trisolve", MatGPUMatTriSolveModes, (PetscEnum *)&MatGPUMatTriSolve, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-mat_gpumat_trisolve_level_us", &MatGPUMatTriSolveLevelUs, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_gpumat_dense_lu_min", &MatGPUMatDenseLUMin, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_gpumat_dense_lu_max", &MatGPUMatDenseLUMax, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_dense_lu_warmup", &MatGPUMatDenseLUWarmupOn, NULL)); /* before the first matrix starts it */
  PetscCall(MatGPUMatRegisterELLR_Private());
  PetscCall(MatGPUMatRegisterRgCSR_Private());
  PetscCall(MatGPUMatRegisterCMRS_Private());
  PetscCall(MatGPUMatRegisterCSR_Private());
  PetscCall(MatGPUMatRegisterAuto_Private()); /* the choosing type, after its candidates */
  PetscCall(MatGPUMatAliasDMMatType_Private()); /* -dm_mat_type cmrscuda as aijcmrscuda, for DMDA's interpolations */
  /* the MPI types, which the root names pick on more than one process */
  PetscCall(MatRegister(MATMPIELLRCUDA, MatCreate_MPIAIJELLRCUDA));
  PetscCall(MatRegister(MATMPIRGCSRCUDA, MatCreate_MPIAIJRGCSRCUDA));
  PetscCall(MatRegister(MATMPICMRSCUDA, MatCreate_MPIAIJCMRSCUDA));
  PetscCall(MatRegister(MATMPICSRCUDA, MatCreate_MPIAIJCSRCUDA));
  PetscCall(MatRegister(MATMPIAUTOCUDA, MatCreate_MPIAIJAutoCUDA));
  /* the KSP type */
  PetscCall(KSPInitializePackage());
  PetscCall(KSPRegister(KSPCGFUSED, KSPCreate_CGFUSED));
  PetscCall(PetscRegisterFinalize(PetscGPUMatFinalizePackage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Called by PETSc when libpetscgpumat.so is loaded with -dll_append or -dll_prepend */
PETSC_EXTERN PetscErrorCode PetscDLLibraryRegister_petscgpumat(void)
{
  PetscFunctionBegin;
  PetscCall(PetscGPUMatInitializePackage());
  PetscFunctionReturn(PETSC_SUCCESS);
}
