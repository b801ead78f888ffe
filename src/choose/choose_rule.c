/*
  The rule by which MATSEQAUTOCUDA picks a format from the row statistics the base keeps (src/base/gpumat_rowstats.c):
  host arithmetic only, so that it is tested on the CPU. Fitted with tools/format_rule.py on the suite of 86 real
  matrices replicated to about 5 M nonzeros of docs/data/suite-auto-2026-11-26-H100.csv (H100, double, csrcuda with
  its default CUSPARSE_SPMV_CSR_ALG1): within 1.015 of the per-matrix best of CMRS, ELLPACK-R and CSR (geometric
  mean), 1.09x aijcusparse, against 1.094 of the best for CMRS alone (docs/performance.md). The fit and the judgement
  use the same matrices: the thresholds are a first fit, to be checked on other matrices.
*/
#include "chooseimpl.h"

/*
  Writes into *k the candidate the rule gives for rows of mean length mu, spread sigma, longest row `longest` and
  `empty` empty rows, and into why[] the reason in words:
  - cuSPARSE CSR where lengths differ widely (sigma / mu > 1: graphs, circuits, a few long rows, which one warp of
    CMRS, or one thread of ELLPACK-R with its padding, would process alone) or rows are long (mu > 64: cuSPARSE's
    kernels are at bandwidth there);
  - ELLPACK-R where rows are regular (sigma / mu <= 0.1, no empty row, longest <= 4 mu: its padding guard passes and
    its padding is small), as stencils and FEM matrices of one element type;
  - CMRS otherwise (short rows of varied lengths, where the strips share a warp's work).
*/
PetscErrorCode MatAutoCUDARule(const MatGPUMatRowStats *stats, MatAutoCandidate *k, char why[], size_t len)
{
  const PetscReal rows = (PetscReal)stats->rows, nnz = (PetscReal)stats->nnz;
  const PetscReal mu = rows > 0 ? nnz / rows : 0.0, var = rows > 0 ? PetscMax(stats->sumsq / rows - mu * mu, 0.0) : 0.0;
  const PetscReal spread = mu > 0 ? PetscSqrtReal(var) / mu : 0.0;
  const PetscInt  empty  = stats->rows - stats->nzrows;

  PetscFunctionBegin;
  if (!stats->nnz) {
    *k = MATAUTO_CMRS;
    PetscCall(PetscSNPrintf(why, len, "no entries"));
  } else if (spread > MATAUTO_CSR_SPREAD || mu > MATAUTO_CSR_MEAN) {
    *k = MATAUTO_CSR;
    if (spread > MATAUTO_CSR_SPREAD) PetscCall(PetscSNPrintf(why, len, "rows of very different lengths (sigma/mu %.2f > %g; longest %" PetscInt_FMT ", mean %.1f)", (double)spread, (double)MATAUTO_CSR_SPREAD, stats->maxlen, (double)mu));
    else PetscCall(PetscSNPrintf(why, len, "long rows (mean %.1f > %g)", (double)mu, (double)MATAUTO_CSR_MEAN));
  } else if (spread <= MATAUTO_ELLR_SPREAD && !empty && (PetscReal)stats->maxlen <= MATAUTO_ELLR_LONGEST * mu) {
    *k = MATAUTO_ELLR;
    PetscCall(PetscSNPrintf(why, len, "regular rows (sigma/mu %.3f <= %g, longest %" PetscInt_FMT " <= %g x mean %.1f, no empty row)", (double)spread, (double)MATAUTO_ELLR_SPREAD, stats->maxlen, (double)MATAUTO_ELLR_LONGEST, (double)mu));
  } else {
    *k = MATAUTO_CMRS;
    PetscCall(PetscSNPrintf(why, len, "short rows of varied lengths (sigma/mu %.2f, mean %.1f, longest %" PetscInt_FMT ", %" PetscInt_FMT " empty rows)", (double)spread, (double)mu, stats->maxlen, empty));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
