/* The host emulations of the ELLPACK-R kernels: the tests' bit-for-bit references (compiled with -ffp-contract=off, into the tests only) */
#include <petscgpumat/private/ellrimpl.h>
#include "emulate.h"

/* z = A x (+ y) the way the kernel computes it: the row-group engine's, one group of all rows */
PetscErrorCode MatELLRLayoutMult(const MatELLRLayout *L, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupEmulateMult(L->m, L->m, L->T, NULL, NULL, L->rl, L->col, L->val, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatELLRLayoutFillEmulate - Runs, on the host, the threads of the device build (or value refresh) of an ELLPACK-R layout

  Not Collective

  Input Parameters:
+ m         - rows
. T         - threads per row
. width     - slots per row (`MatELLRLayoutMeasure()`)
. structure - `PETSC_TRUE`: a build (`rl`, `col`, `val`); `PETSC_FALSE`: a value refresh (`val` only, `aj` unused)
. ai        - CSR row offsets
. aj        - CSR column indices
- aa        - CSR values

  Output Parameters:
+ rl  - row lengths (`m` entries)
. col - column of each slot (`m` * `width` entries; `NULL` when that is 0)
- val - value of each slot (same size; `NULL` when that is 0)

  Level: developer

  Note:
  Every thread runs `MatRowGroupFillThread()`, the function the device kernel runs, so the CPU tests check the device
  build's logic against `MatELLRLayoutCreate()`.

.seealso: `MatELLRLayoutCreate()`, `MATSEQELLRCUDA`
@*/
PetscErrorCode MatELLRLayoutFillEmulate(PetscInt m, PetscInt T, PetscInt width, PetscBool structure, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], int rl[], int col[], PetscScalar val[])
{
  PetscFunctionBegin;
  for (long long tid = 0; tid < (long long)m * T; tid++) MatRowGroupFillThread(tid, (int)m, (int)m, (int)T, (int)width, NULL, NULL, (int)structure, ai, aj, aa, rl, col, val);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatELLRLayoutGatherEmulate - Runs, on the host, the threads of the device copy of an ELLPACK-R layout back to CSR
  order (what the device ILU(0)/ICC(0) factor reads)

  Not Collective

  Input Parameters:
+ m   - rows
. T   - threads per row
. ai  - CSR row offsets
. rl  - row lengths
. col - column of each slot
- val - value of each slot

  Output Parameters:
+ aj - CSR column indices (`NULL`: not wanted)
- aa - CSR values (`NULL`: not wanted)

  Level: developer

  Note:
  Every thread runs `MatRowGroupGatherThread()`, the function the device kernel runs.

.seealso: `MatELLRLayoutFillEmulate()`, `MATSEQELLRCUDA`
@*/
PetscErrorCode MatELLRLayoutGatherEmulate(PetscInt m, PetscInt T, const PetscInt ai[], const int rl[], const int col[], const PetscScalar val[], PetscInt aj[], PetscScalar aa[])
{
  PetscFunctionBegin;
  for (long long tid = 0; tid < (long long)m * T; tid++) MatRowGroupGatherThread(tid, (int)m, (int)m, (int)T, NULL, NULL, ai, rl, col, val, aj, aa);
  PetscFunctionReturn(PETSC_SUCCESS);
}
