/*
  The rule by which MATSEQAUTOCUDA picks a format from the row statistics the base keeps (src/base/gpumat_rowstats.c):
  host arithmetic only, so that it is tested on the CPU. Fitted with tools/format_rule.py on two runs of the suite of
  86 real matrices replicated to about 5 M nonzeros (H100 and H200, 2026-11-26, double, docs/data/suite-auto-*.csv),
  first for no matrix below 0.95x aijcusparse, then for the geometric mean of chosen / best candidate: 1.011 (H100) and
  1.016 (H200), against 1.094 and 1.113 for CMRS alone (docs/performance.md). Fitted and judged on the same matrices:
  the thresholds are a first fit, to be checked on others.
*/
#include "chooseimpl.h"

/*
  Writes into *k the candidate the rule gives for rows of mean length mu, spread sigma, longest row `longest` and
  `empty` empty rows, and into why[] the reason in words:
  - cuSPARSE CSR where lengths differ widely (sigma / mu > 1: graphs, circuits), where one row is far longer than the
    mean (longest > 12 mu: a warp of CMRS, or a thread of ELLPACK-R with its padding, would process it alone while
    the others wait), or where rows are long (mu > 96: cuSPARSE's kernels are at bandwidth there);
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
  } else if (spread > MATAUTO_CSR_SPREAD || mu > MATAUTO_CSR_MEAN || (PetscReal)stats->maxlen > MATAUTO_CSR_LONGEST * mu) {
    *k = MATAUTO_CSR;
    if (spread > MATAUTO_CSR_SPREAD) PetscCall(PetscSNPrintf(why, len, "rows of very different lengths (sigma/mu %.2f > %g; longest %" PetscInt_FMT ", mean %.1f)", (double)spread, (double)MATAUTO_CSR_SPREAD, stats->maxlen, (double)mu));
    else if (mu > MATAUTO_CSR_MEAN) PetscCall(PetscSNPrintf(why, len, "long rows (mean %.1f > %g)", (double)mu, (double)MATAUTO_CSR_MEAN));
    else PetscCall(PetscSNPrintf(why, len, "a row far longer than the others (longest %" PetscInt_FMT " > %g x mean %.1f)", stats->maxlen, (double)MATAUTO_CSR_LONGEST, (double)mu));
  } else if (spread <= MATAUTO_ELLR_SPREAD && !empty && (PetscReal)stats->maxlen <= MATAUTO_ELLR_LONGEST * mu) {
    *k = MATAUTO_ELLR;
    PetscCall(PetscSNPrintf(why, len, "regular rows (sigma/mu %.3f <= %g, longest %" PetscInt_FMT " <= %g x mean %.1f, no empty row)", (double)spread, (double)MATAUTO_ELLR_SPREAD, stats->maxlen, (double)MATAUTO_ELLR_LONGEST, (double)mu));
  } else {
    *k = MATAUTO_CMRS;
    PetscCall(PetscSNPrintf(why, len, "short rows of varied lengths (sigma/mu %.2f, mean %.1f, longest %" PetscInt_FMT ", %" PetscInt_FMT " empty rows)", (double)spread, (double)mu, stats->maxlen, empty));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
