/*
  The row statistics every format plans from, computed once per nonzero pattern in one pass over the row offsets
  (the host's, or the device's at the build of a large matrix: gpumat_rowstats_device.cu; on the host a second pass
  where some row is heavy, longer than MATGPUMAT_HEAVY_ROW_MEANS x the mean the first gives) and kept by the base
  (Mat_GPUMat.rowstats): the formats' automatic parameters (threads per row, CMRS height), the choosing type's rule
  (src/choose/) and the base's compressed rows read them instead of scanning the rows at every query. They describe
  the rows the device copy holds: only the nonempty ones where rows are compressed (MPI off-diagonal blocks), whose
  empty rows would otherwise pull the mean row length down.
*/
#include <petscgpumat/private/gpumatimpl.h>

static PetscBool MatGPUMatRowStatsCurrent(Mat A)
{
  Mat_GPUMat        *g = (Mat_GPUMat *)A->spptr;
  MatGPUMatRowStats *s = &g->rowstats;

  return (PetscBool)(s->valid && s->nonzerostate == A->nonzerostate && s->preallocated == A->preallocated && s->compress == g->compress_rows);
}

/* the longest row that is not heavy, for `rows` rows holding `nnz` entries: a row of integer length len is longer than
   MATGPUMAT_HEAVY_ROW_MEANS x nnz / rows exactly when len > floor(MATGPUMAT_HEAVY_ROW_MEANS x nnz / rows) */
static PetscInt MatGPUMatHeavyRowFrom(PetscInt rows, PetscCount nnz)
{
  return rows > 0 ? (PetscInt)PetscMin((PetscCount)MATGPUMAT_HEAVY_ROW_MEANS * nnz / rows, (PetscCount)PETSC_INT_MAX) : 0;
}

/* the statistics kept, from the counts of one pass over the rows (host or device; counted: there were rows to pass over) */
static void MatGPUMatRowStatsSet(Mat A, PetscBool counted, PetscInt nzrows, PetscInt maxlen, PetscReal sumsq, PetscCount nnz, PetscCount heavy)
{
  Mat_GPUMat        *g = (Mat_GPUMat *)A->spptr;
  MatGPUMatRowStats *s = &g->rowstats;
  const PetscInt     m = A->rmap->n;

  s->nzrows       = nzrows;
  s->maxlen       = maxlen;
  s->sumsq        = sumsq;
  s->nnz          = nnz;
  s->heavy        = heavy;
  s->compressed   = (PetscBool)(g->compress_rows && counted && nzrows < m);
  s->rows         = s->compressed ? nzrows : m;
  s->nonzerostate = A->nonzerostate;
  s->preallocated = A->preallocated;
  s->compress     = g->compress_rows;
  s->valid        = PETSC_TRUE;
}

/*
  MatGPUMatGetRowStats - the statistics of A's rows as the device copy will hold them; NULL-free: a matrix not yet
  preallocated has rows = m and no entries
*/
PetscErrorCode MatGPUMatGetRowStats(Mat A, const MatGPUMatRowStats **stats)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  if (!MatGPUMatRowStatsCurrent(A)) {
    const PetscInt *ai = NULL;
    PetscInt        m  = A->rmap->n, nzrows = 0, maxlen = 0, light;
    PetscReal       sumsq = 0.0;
    PetscCount      heavy = 0;

    if (A->preallocated && m) PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
    for (PetscInt i = 0; ai && i < m; i++) {
      const PetscInt len = ai[i + 1] - ai[i];

      nzrows += (len > 0);
      maxlen = PetscMax(maxlen, len);
      sumsq += (PetscReal)len * (PetscReal)len;
    }
    /* a second pass for the heavy rows: the mean is over the rows the device holds, known after the first */
    light = MatGPUMatHeavyRowFrom(g->compress_rows && ai && nzrows < m ? nzrows : m, ai ? ai[m] : 0);
    for (PetscInt i = 0; ai && maxlen > light && i < m; i++) {
      const PetscInt len = ai[i + 1] - ai[i];

      if (len > light) heavy += len;
    }
    MatGPUMatRowStatsSet(A, (PetscBool)!!ai, nzrows, maxlen, sumsq, ai ? ai[m] : 0, heavy);
  }
  *stats = &g->rowstats;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatGPUMatGetRowStatsForBuild - the same, at a build of A's device copy (the device is in use): reduced on the GPU
  from A's device row offsets where A has at least GPUMAT_ROWSTATS_DEVICE_ROWS rows and holds all of them on the
  device. The offsets are its shadow's where it has one, else the base's upload of them (g->d_ai), which the build
  then reads instead of uploading them again. Smaller matrices (a reduction costs some 50 us) and compressed rows
  (whose offsets are made from the host's pass) keep the host pass.
*/
#define GPUMAT_ROWSTATS_DEVICE_ROWS 65536

PetscErrorCode MatGPUMatGetRowStatsForBuild(Mat A, const MatGPUMatRowStats **stats)
{
  Mat_GPUMat     *g = (Mat_GPUMat *)A->spptr;
  const PetscInt *ai, *d_ai = NULL, *d_aj = NULL;
  const PetscInt  m = A->rmap->n;
  PetscInt        nzrows, maxlen;
  PetscReal       sumsq;
  PetscCount      heavy;
  void           *stream;

  PetscFunctionBegin;
  if (MatGPUMatRowStatsCurrent(A) || g->compress_rows || !A->preallocated || m < GPUMAT_ROWSTATS_DEVICE_ROWS) {
    PetscCall(MatGPUMatGetRowStats(A, stats));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
  if (g->csr.mat && PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT) {
    PetscCall(MatGPUMatShadowSync(A, &g->csr));
    PetscCall(PetscGPUMatSeqAIJCUSPARSEGetIJ(g->csr.mat, PETSC_FALSE, &d_ai, &d_aj));
  } else {
    PetscCall(MatGPUMatUploadRowOffsets(A, ai, stream));
    d_ai = g->d_ai;
  }
  PetscCall(MatGPUMatRowStatsOnDevice(m, d_ai, MatGPUMatHeavyRowFrom(m, ai[m]), stream, &nzrows, &maxlen, &sumsq, &heavy));
  MatGPUMatRowStatsSet(A, PETSC_TRUE, nzrows, maxlen, sumsq, ai[m], heavy);
  *stats = &g->rowstats;
  PetscFunctionReturn(PETSC_SUCCESS);
}
