/*
  The rule by which MATSEQAUTOCUDA picks a format from the row statistics the base keeps (src/base/gpumat_rowstats.c):
  host arithmetic only, so that it is tested on the CPU. Refitted with tools/format_rule.py on the suite at its two
  sizes (H100, 2026-11-28, double: 95 matrices replicated to about 5 M nonzeros, 75 real ones to about 20 M, where the
  matrix no longer fits the 50 MB L2; docs/data/suite-2026-11-28-H100.csv and suite20m-2026-11-28-H100.csv): chosen /
  best candidate 1.014 and 1.025 (geometric means), against 1.013 and 1.036 for the rule fitted on 5 M alone
  (sigma/mu > 1, mu > 96, longest > 12 mu), which gave rows of sigma/mu 1-2 to CSR where CMRS is 10-30 % faster at
  20 M (docs/performance.md). The clause of the heavy rows' share (below, fitted the same way with the shares counted
  from ../shared/matrices) brings the 20 M set to 1.011 of the best (70 of 75 within 5 %, from 64), 5 M unchanged;
  the large matrices' mean-length clause, fitted on these two and an H200 run of the 20 M set
  (docs/data/suite20m-2026-11-28-H200.csv), leaves no matrix below 0.95x aijcusparse in the H100 runs (from 0 and 1)
  and on the H200 only 2dcyl1 (from 4), which the rule gives to ELLPACK-R, not timed in that run; the H100 sets'
  means and counts within 5 % unchanged.
*/
#include "chooseimpl.h"

/*
  Writes into *k the candidate the rule gives for rows of mean length mu, spread sigma, longest row `longest`,
  `empty` empty rows and the share of the entries in heavy rows, and into why[] the reason in words:
  - CMRS where lengths differ widely (as below) but the rows longer than 4 mu hold under 15 % of the entries of a
    large matrix (at least 1e7 of them; mu <= 48): beyond the L2, CMRS's strips are the fastest candidate on such rows
    (20 M suite: 6 matrices whose long rows hold 1-14 %, CMRS 1.04-1.29x aijcusparse on an H100 and an H200), not where the long rows hold
    much of the work (33-43 % on polblogs, email-Enron, soc-Slashdot0902, wiki-Vote; tools/format_rule.py);
  - cuSPARSE CSR where lengths differ widely (sigma / mu > 2: graphs, circuits), where one row is far longer than the
    mean (longest > 16 mu: a warp of CMRS, or a thread of ELLPACK-R with its padding, would process it alone while
    the others wait), where rows are long (mu > 48: cuSPARSE's kernels are near bandwidth there, and CMRS's warps meet
    rows of very different lengths on the graphs of that mean), or, in a matrix of at least 1e7 entries, where rows
    of more than 16 entries on average are not regular (sigma / mu > 0.1: cora_attr, dwt_992, polblogs at 20 M, CMRS
    0.86-0.94x aijcusparse on an H200 and 0.94-0.99x on an H100; regular ones, as a 27-point stencil, stay
    ELLPACK-R's);
  - ELLPACK-R where rows are regular (sigma / mu <= 0.1, no empty row, longest <= 4 mu: its padding guard passes and
    its padding is small), as stencils and FEM matrices of one element type;
  - CMRS otherwise (short rows of varied lengths, where the strips share a warp's work).
*/
PetscErrorCode MatAutoCUDARule(const MatGPUMatRowStats *stats, MatAutoCandidate *k, char why[], size_t len)
{
  const PetscReal rows = (PetscReal)stats->rows, nnz = (PetscReal)stats->nnz;
  const PetscReal mu = rows > 0 ? nnz / rows : 0.0, var = rows > 0 ? PetscMax(stats->sumsq / rows - mu * mu, 0.0) : 0.0;
  const PetscReal spread = mu > 0 ? PetscSqrtReal(var) / mu : 0.0;
  const PetscReal heavy  = nnz > 0 ? (PetscReal)stats->heavy / nnz : 0.0;
  const PetscInt  empty  = stats->rows - stats->nzrows;
  const PetscBool uneven = (PetscBool)(spread > MATAUTO_CSR_SPREAD || (PetscReal)stats->maxlen > MATAUTO_CSR_LONGEST * mu);
  const PetscBool large  = (PetscBool)(nnz >= MATAUTO_LARGE_NNZ);

  PetscFunctionBegin;
  if (!stats->nnz) {
    *k = MATAUTO_CMRS;
    PetscCall(PetscSNPrintf(why, len, "no entries"));
  } else if (uneven && mu <= MATAUTO_CSR_MEAN && large && heavy < MATAUTO_CMRS_HEAVY) {
    *k = MATAUTO_CMRS;
    PetscCall(PetscSNPrintf(why, len, "rows of very different lengths, but the long ones (over %d x mean %.1f) hold only %.1f %% < %g %% of the %.3g entries (sigma/mu %.2f, longest %" PetscInt_FMT ")", MATGPUMAT_HEAVY_ROW_MEANS, (double)mu, (double)(100 * heavy), (double)(100 * MATAUTO_CMRS_HEAVY), (double)nnz, (double)spread, stats->maxlen));
  } else if (uneven || mu > MATAUTO_CSR_MEAN || (large && mu > MATAUTO_CSR_LARGE_MEAN && spread > MATAUTO_ELLR_SPREAD)) {
    *k = MATAUTO_CSR;
    if (spread > MATAUTO_CSR_SPREAD) PetscCall(PetscSNPrintf(why, len, "rows of very different lengths (sigma/mu %.2f > %g; longest %" PetscInt_FMT ", mean %.1f)", (double)spread, (double)MATAUTO_CSR_SPREAD, stats->maxlen, (double)mu));
    else if (mu > MATAUTO_CSR_MEAN) PetscCall(PetscSNPrintf(why, len, "long rows (mean %.1f > %g)", (double)mu, (double)MATAUTO_CSR_MEAN));
    else if (uneven) PetscCall(PetscSNPrintf(why, len, "a row far longer than the others (longest %" PetscInt_FMT " > %g x mean %.1f)", stats->maxlen, (double)MATAUTO_CSR_LONGEST, (double)mu));
    else PetscCall(PetscSNPrintf(why, len, "rows of medium, varied lengths in a large matrix (mean %.1f > %g, sigma/mu %.2f > %g, %.3g entries)", (double)mu, (double)MATAUTO_CSR_LARGE_MEAN, (double)spread, (double)MATAUTO_ELLR_SPREAD, (double)nnz));
  } else if (spread <= MATAUTO_ELLR_SPREAD && !empty && (PetscReal)stats->maxlen <= MATAUTO_ELLR_LONGEST * mu) {
    *k = MATAUTO_ELLR;
    PetscCall(PetscSNPrintf(why, len, "regular rows (sigma/mu %.3f <= %g, longest %" PetscInt_FMT " <= %g x mean %.1f, no empty row)", (double)spread, (double)MATAUTO_ELLR_SPREAD, stats->maxlen, (double)MATAUTO_ELLR_LONGEST, (double)mu));
  } else {
    *k = MATAUTO_CMRS;
    PetscCall(PetscSNPrintf(why, len, "short rows of varied lengths (sigma/mu %.2f, mean %.1f, longest %" PetscInt_FMT ", %" PetscInt_FMT " empty rows)", (double)spread, (double)mu, stats->maxlen, empty));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
