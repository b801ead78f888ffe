#pragma once

#include <petscksp.h>

/* SUBMANSEC = KSP */

/*J
   KSPCGFUSED - "cgfused": PETSc's preconditioned conjugate gradients (`KSPCG`) with the vector work of an
   iteration fused into a few GPU kernels and one host synchronisation, a `KSPType` of petscgpumat.

   Level: intermediate

.seealso: [](ch_ksp), `KSPCG`, `KSPCreate_CGFUSED()`, `PetscGPUMatInitializePackage()`
J*/
#define KSPCGFUSED "cgfused"

PETSC_EXTERN PetscErrorCode KSPCreate_CGFUSED(KSP);
