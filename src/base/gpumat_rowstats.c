/*
  The row statistics every format plans from, computed once per nonzero pattern in one pass over the host row
  offsets and kept by the base (Mat_GPUMat.rowstats): the formats' automatic parameters (threads per row, CMRS
  height), the choosing type's rule (src/choose/) and the base's compressed rows read them instead of scanning the
  rows at every query. They describe the
  rows the device copy holds: only the nonempty ones where rows are compressed (MPI off-diagonal blocks), whose
  empty rows would otherwise pull the mean row length down.
*/
#include <petscgpumat/private/gpumatimpl.h>

/*
  MatGPUMatGetRowStats - the statistics of A's rows as the device copy will hold them; NULL-free: a matrix not yet
  preallocated has rows = m and no entries
*/
PetscErrorCode MatGPUMatGetRowStats(Mat A, const MatGPUMatRowStats **stats)
{
  Mat_GPUMat        *g = (Mat_GPUMat *)A->spptr;
  MatGPUMatRowStats *s = &g->rowstats;

  PetscFunctionBegin;
  if (!s->valid || s->nonzerostate != A->nonzerostate || s->preallocated != A->preallocated || s->compress != g->compress_rows) {
    const PetscInt *ai = NULL;
    PetscInt        m  = A->rmap->n;

    PetscCall(PetscMemzero(s, sizeof(*s)));
    if (A->preallocated && m) PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
    for (PetscInt i = 0; ai && i < m; i++) {
      const PetscInt len = ai[i + 1] - ai[i];

      s->nzrows += (len > 0);
      s->maxlen = PetscMax(s->maxlen, len);
      s->sumsq += (PetscReal)len * (PetscReal)len;
    }
    s->nnz          = ai ? ai[m] : 0;
    s->compressed   = (PetscBool)(g->compress_rows && ai && s->nzrows < m);
    s->rows         = s->compressed ? s->nzrows : m;
    s->nonzerostate = A->nonzerostate;
    s->preallocated = A->preallocated;
    s->compress     = g->compress_rows;
    s->valid        = PETSC_TRUE;
  }
  *stats = s;
  PetscFunctionReturn(PETSC_SUCCESS);
}
