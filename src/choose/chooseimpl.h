/* The choosing type's private declarations (src/choose/): its candidates, its rule's thresholds, its data */
#pragma once
#include <petscgpumat/private/gpumatimpl.h>

/* The candidates, in the order a timed choice tries them (and ties go to the first) */
typedef enum {
  MATAUTO_CMRS,
  MATAUTO_ELLR,
  MATAUTO_RGCSR,
  MATAUTO_CSR,
  MATAUTO_NCANDIDATES
} MatAutoCandidate;

/* The rule's thresholds (src/choose/choose_rule.c, fitted by tools/format_rule.py: keep the two in step) */
#define MATAUTO_CSR_SPREAD   2.0  /* sigma / mu above which CSR is chosen, */
#define MATAUTO_CSR_MEAN     48.0 /* or a mean row length above this, */
#define MATAUTO_CSR_LONGEST  16.0 /* or a longest row above this many times the mean */
#define MATAUTO_ELLR_SPREAD  0.1  /* sigma / mu up to which ELLPACK-R is chosen (with no empty row) ... */
#define MATAUTO_ELLR_LONGEST 4.0  /* ... and a longest row up to this many times the mean (its padding guard) */
#define MATAUTO_LARGE_NNZ      1e7  /* a large matrix (beyond the GPU's L2: the 20 M suite) has at least this many entries; in a large one */
#define MATAUTO_CMRS_HEAVY     0.15 /* CMRS is kept where the spread or the longest row would give CSR but the heavy rows hold less than this share, */
#define MATAUTO_CSR_LARGE_MEAN 16.0 /* and CSR chosen where the mean row length is above this and the rows are not regular (sigma / mu > MATAUTO_ELLR_SPREAD) */

/* The timed choice keeps the rule's candidate unless another's median product is faster by more than this fraction */
#define MATAUTO_TIMED_MARGIN 0.03

PETSC_INTERN PetscErrorCode MatAutoCUDARule(const MatGPUMatRowStats *, MatAutoCandidate *, char[], size_t);
