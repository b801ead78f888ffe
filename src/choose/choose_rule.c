/*
  The rule by which MATSEQAUTOCUDA picks a format from the row statistics the base keeps (src/base/gpumat_rowstats.c):
  host arithmetic only, so that it is tested on the CPU. Refitted with tools/format_rule.py on the suite at its two
  sizes (H100, 2026-11-28, double: 95 matrices replicated to about 5 M nonzeros, 75 real ones to about 20 M, where the
  matrix no longer fits the 50 MB L2; docs/data/suite-2026-11-28-H100.csv and suite20m-2026-11-28-H100.csv): chosen /
  best candidate 1.014 and 1.025 (geometric means), against 1.013 and 1.036 for the rule fitted on 5 M alone
  (sigma/mu > 1, mu > 96, longest > 12 mu), which gave rows of sigma/mu 1-2 to CSR where CMRS is 10-30 % faster at
  20 M (docs/performance.md).
*/
#include "chooseimpl.h"

/*
  Writes into *k the candidate the rule gives for rows of mean length mu, spread sigma, longest row `longest` and
  `empty` empty rows, and into why[] the reason in words:
  - cuSPARSE CSR where lengths differ widely (sigma / mu > 2: graphs, circuits), where one row is far longer than the
    mean (longest > 16 mu: a warp of CMRS, or a thread of ELLPACK-R with its padding, would process it alone while
    the others wait), or where rows are long (mu > 48: cuSPARSE's kernels are near bandwidth there, and CMRS's
    warps meet rows of very different lengths on the graphs of that mean);
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
