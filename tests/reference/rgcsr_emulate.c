/* The host emulations of the row-grouped CSR kernels: the tests' bit-for-bit references (compiled with -ffp-contract=off, into the tests only) */
#include <petscgpumat/private/rgcsrimpl.h>
#include "emulate.h"

/* z = A x (+ y) the way the kernel computes it: the row-group engine's, groups of G rows, z written through perm */
PetscErrorCode MatRgCSRLayoutMult(const MatRgCSRLayout *L, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupEmulateMult(L->m, L->G, L->T, L->gp, L->perm, L->rl, L->col, L->val, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatRgCSRLayoutFillEmulate - Runs, on the host, the threads of the device build (or value refresh) of a row-grouped CSR layout

  Not Collective

  Input Parameters:
+ m         - rows
. G         - group size
. T         - threads per row
. structure - `PETSC_TRUE`: a build (`col` and `val`); `PETSC_FALSE`: a value refresh (`val` only, `aj` unused)
. ai        - CSR row offsets
. aj        - CSR column indices
. aa        - CSR values
. gp        - group offsets (`m`/`G` + 1 entries, as `MatRgCSRLayoutCreate()` makes them)
- perm      - matrix row of each stored row, or `NULL` for no reordering

  Output Parameters:
+ col - column of each slot (`gp[ngroups]` entries)
- val - value of each slot

  Level: developer

  Note:
  The kernel runs the same function (`MatRowGroupFillThread()`), so the tests compare its result with
  `MatRgCSRLayoutCreate()` bit for bit without a GPU.

.seealso: `MatRgCSRLayoutCreate()`, `MATSEQRGCSRCUDA`
@*/
PetscErrorCode MatRgCSRLayoutFillEmulate(PetscInt m, PetscInt G, PetscInt T, PetscBool structure, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], const PetscCount gp[], const int perm[], int col[], PetscScalar val[])
{
  PetscFunctionBegin;
  for (long long tid = 0; tid < (long long)m * T; tid++) MatRowGroupFillThread(tid, (int)m, (int)G, (int)T, 0, gp, perm, (int)structure, ai, aj, aa, NULL, col, val);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatRgCSRLayoutGatherEmulate - Runs, on the host, the threads of the device copy of a row-grouped CSR layout back to
  CSR order (the inverse of its build)

  Not Collective

  Input Parameters:
+ m    - rows
. G    - group size
. T    - threads per row
. ai   - CSR row offsets
. gp   - group offsets
. rl   - row lengths in stored order
. perm - matrix row of each stored row, or `NULL` for no reordering
. col  - column of each slot
- val  - value of each slot

  Output Parameters:
+ aj - CSR column indices (may be `NULL`)
- aa - CSR values (may be `NULL`)

  Level: developer

  Note:
  Every thread runs `MatRowGroupGatherThread()`, the function the device kernel runs.

.seealso: `MatRgCSRLayoutFillEmulate()`, `MatRgCSRLayoutCreate()`
@*/
PetscErrorCode MatRgCSRLayoutGatherEmulate(PetscInt m, PetscInt G, PetscInt T, const PetscInt ai[], const PetscCount gp[], const int rl[], const int perm[], const int col[], const PetscScalar val[], PetscInt aj[], PetscScalar aa[])
{
  PetscFunctionBegin;
  for (long long tid = 0; tid < (long long)m * T; tid++) MatRowGroupGatherThread(tid, (int)m, (int)G, (int)T, gp, perm, ai, rl, col, val, aj, aa);
  PetscFunctionReturn(PETSC_SUCCESS);
}
