/* How many threads share a row when the user does not choose: one rule for every format with T lanes per row */
#include <petscgpumat/private/gpumatimpl.h>

/*
  Threads per row when the user does not choose, from the H100 sweep of ELLR-T in docs/performance.md: regular
  rows up to 32 entries (stencils) run best with one thread per row; otherwise about four entries per lane,
  i.e. the largest power of two not above mean/4, at most 32.
*/
PetscErrorCode MatGPUMatChooseThreadsPerRow(PetscInt m, PetscCount nnz, PetscInt maxlen, PetscInt *T)
{
  const PetscReal mean = m ? (PetscReal)nnz / (PetscReal)m : 0.0;

  PetscFunctionBegin;
  *T = 1;
  if (mean <= 32 && (PetscReal)maxlen <= 1.25 * mean + 1) PetscFunctionReturn(PETSC_SUCCESS);
  while (*T < 32 && (PetscReal)(2 * *T) <= mean / 4) *T *= 2;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The threads per row a format's plan takes: the user's (option > 0), else the rule's on the row statistics; 0 before
   preallocation, when there is nothing to decide from yet */
PetscErrorCode MatGPUMatPlanThreadsPerRow(const MatGPUMatRowStats *s, PetscInt option, PetscInt *T, PetscBool *automatic)
{
  PetscFunctionBegin;
  *automatic = (PetscBool)!option;
  *T         = option;
  if (!option && s->preallocated) PetscCall(MatGPUMatChooseThreadsPerRow(s->rows, s->nnz, s->maxlen, T));
  PetscFunctionReturn(PETSC_SUCCESS);
}
