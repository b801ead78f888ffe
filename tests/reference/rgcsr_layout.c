/*
  The row-grouped CSR layout built on the host, entries included: the tests' oracle for the device build
  (rgcsr_build.cu), which must equal it bit for bit; the rows' order and groups are the library's
  (MatRgCSRLayoutCreateGroups()). Kept out of the library: nothing but the tests lays a layout out on the host.
*/
#include "emulate.h"

PetscErrorCode MatRgCSRLayoutFillValues(const MatRgCSRLayout *L, const PetscInt ai[], const PetscScalar aa[], PetscScalar val[])
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(val, L->stored));
  for (PetscInt p = 0; p < L->m; p++) {
    const PetscInt i = L->perm ? L->perm[p] : p;

    for (PetscInt k = 0; k < L->rl[p]; k++) val[MatRgCSRSlot(L, p, k)] = aa[ai[i] + k];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatRgCSRLayoutCreate - Builds the row-grouped CSR arrays of a CSR matrix on the host

  Not Collective

  Input Parameters:
+ m  - rows
. n  - columns
. ai - CSR row offsets, `m`+1 entries
. aj - CSR column indices
. aa - CSR values, or `NULL` for a layout without values
. G  - group size in 1..1024 (the type uses multiples of 32)
. T  - threads per row, a power of two up to 32
- W  - sort window: rows sorted by decreasing length inside windows of `W` rows; 0: no reordering

  Output Parameter:
. L - the layout; free it with `MatRgCSRLayoutDestroy()`

  Level: developer

.seealso: `MATSEQRGCSRCUDA`, `MatRgCSRLayoutMult()`
*/
PetscErrorCode MatRgCSRLayoutCreate(PetscInt m, PetscInt n, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], PetscInt G, PetscInt T, PetscInt W, MatRgCSRLayout *L)
{
  PetscFunctionBegin;
  PetscCall(MatRgCSRLayoutCreateGroups(m, n, ai, G, T, W, L));
  PetscCall(PetscMalloc1(L->stored, &L->col));
  for (PetscInt g = 0; g < L->ngroups; g++) {
    const PetscInt p0 = g * G, p1 = PetscMin(p0 + G, m), Gg = p1 - p0, K = (PetscInt)((L->gp[g + 1] - L->gp[g]) / Gg);

    for (PetscInt p = p0; p < p1; p++) {
      const PetscInt i   = L->perm ? L->perm[p] : p;
      const int      pad = L->rl[p] ? (int)aj[ai[i + 1] - 1] : 0; /* the row's last column: valid, already in cache */

      for (PetscInt k = 0; k < K; k++) L->col[MatRgCSRSlot(L, p, k)] = k < L->rl[p] ? (int)aj[ai[i] + k] : pad;
    }
  }
  if (aa) {
    PetscCall(PetscMalloc1(L->stored, &L->val));
    PetscCall(MatRgCSRLayoutFillValues(L, ai, aa, L->val));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
