/* ELLPACK-R on the host: the padding guard, and the destroy of a layout copied from the device
   (MatELLRCUDAGetDeviceLayout()). The host oracle of the layout is the tests' (tests/reference/). */
#include <petscgpumat/private/ellrimpl.h>

/* The padding guard (the base's, shared with RgCSR) */
PetscErrorCode MatELLRCheckFill(PetscInt m, PetscCount nnz, PetscInt maxlen, PetscCount stored, PetscReal maxfill)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatCheckPadding("ELLPACK-R", "-mat_ellr_max_fill", "Use -mat_type cmrscuda (no padding)", m, nnz, maxlen, stored, maxfill));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatELLRLayoutDestroy(MatELLRLayout *L)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(L->rl));
  PetscCall(PetscFree(L->col));
  PetscCall(PetscFree(L->val));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
