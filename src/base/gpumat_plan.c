/*
  The plan: step ③'s decisions, made once. A format's `plan` turns the row statistics (gpumat_rowstats.c) and its
  options into its plan record (threads per row, height, strips per warp, the choosing type's candidate), kept in its
  data; the base calls it here once per nonzero pattern and parameter set, and the build, the products, the
  getters and MatView read the record: no getter scans the matrix, no product decides anything.
*/
#include <petscgpumat/private/gpumatimpl.h>

/*
  MatGPUMatPlan - makes A's plan record current: the format's plan for A's nonzero pattern as the device copy will
  hold it and for its parameters now, made at the first call after a change of either
*/
PetscErrorCode MatGPUMatPlan(Mat A)
{
  Mat_GPUMat              *g = (Mat_GPUMat *)A->spptr;
  const MatGPUMatRowStats *s;

  PetscFunctionBegin;
  PetscCall(MatGPUMatGetRowStats(A, &s)); /* kept: a pass over the rows only after a change of pattern */
  if (g->planned.valid && g->planned.nonzerostate == s->nonzerostate && g->planned.preallocated == s->preallocated && g->planned.compress == s->compress) PetscFunctionReturn(PETSC_SUCCESS);
  if (g->format->plan) PetscCall(g->format->plan(A, s));
  g->planned.valid        = PETSC_TRUE;
  g->planned.nonzerostate = s->nonzerostate;
  g->planned.preallocated = s->preallocated;
  g->planned.compress     = s->compress;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A parameter the plan reads changed (a setter, an option): plan again before the next build, product or query */
PetscErrorCode MatGPUMatInvalidatePlan(Mat A)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  g->planned.valid = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
