/*
  The ELLPACK-R (ELLR-T) layout built on the host from CSR: the tests' oracle for the device build (the row-group
  engine's fill, ellr_kernels.cu), which must equal it bit for bit. Kept out of the library, which plans from the row
  statistics (src/ellr/ellr.c) and lays out only on the device.
*/
#include "emulate.h"

/*
  Longest row, slots per row and stored entries of an m-row CSR matrix with n columns, checking that the
  device's 32-bit indices can address it.
*/
PetscErrorCode MatELLRLayoutMeasure(PetscInt m, PetscInt n, const PetscInt ai[], PetscInt T, PetscInt *maxlen, PetscInt *width, PetscCount *stored)
{
  PetscInt longest = 0;

  PetscFunctionBegin;
  PetscCheck(T == 1 || T == 2 || T == 4 || T == 8 || T == 16 || T == 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "ELLPACK-R threads per row %" PetscInt_FMT " must be 1, 2, 4, 8, 16 or 32", T);
  PetscCheck(m >= 0 && n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Negative size %" PetscInt_FMT " x %" PetscInt_FMT, m, n);
  PetscCheck((PetscCount)m * T < PETSC_INT32_MAX && n < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "ELLPACK-R uses 32-bit row and column indices on the device: %" PetscInt_FMT " x %" PetscInt_FMT " is too large", m, n);
  for (PetscInt i = 0; i < m; i++) longest = PetscMax(longest, ai[i + 1] - ai[i]);
  *maxlen = longest;
  *width  = ((longest + T - 1) / T) * T;
  *stored = (PetscCount)m * (*width);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values of the layout's slots from the CSR values (same pattern as when the layout was created). */
PetscErrorCode MatELLRLayoutFillValues(const MatELLRLayout *L, const PetscInt ai[], const PetscScalar aa[], PetscScalar val[])
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(val, L->stored));
  for (PetscInt i = 0; i < L->m; i++)
    for (PetscInt k = 0; k < ai[i + 1] - ai[i]; k++) val[MatELLRSlot(L->m, L->T, i, k)] = aa[ai[i] + k];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatELLRLayoutCreate - Builds the ELLPACK-R (ELLR-T) arrays of a CSR matrix on the host

  Not Collective

  Input Parameters:
+ m  - rows
. n  - columns
. ai - CSR row offsets, `m`+1 entries
. aj - CSR column indices
. aa - CSR values, or `NULL` for a layout without values
- T  - threads per row, a power of two up to 32

  Output Parameter:
. L - the layout; free it with `MatELLRLayoutDestroy()`

  Level: developer

.seealso: `MATSEQELLRCUDA`, `MatELLRLayoutMult()`, `MatELLRLayoutDestroy()`
*/
PetscErrorCode MatELLRLayoutCreate(PetscInt m, PetscInt n, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], PetscInt T, MatELLRLayout *L)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(L, sizeof(*L)));
  PetscCall(MatELLRLayoutMeasure(m, n, ai, T, &L->maxlen, &L->width, &L->stored));
  L->m = m;
  L->n = n;
  L->T = T;
  PetscCall(PetscMalloc1(m, &L->rl));
  PetscCall(PetscMalloc1(L->stored, &L->col));
  for (PetscInt i = 0; i < m; i++) {
    const PetscInt len = ai[i + 1] - ai[i];
    /* padding repeats the row's last column (a valid index, already in cache), or column 0 */
    const int pad = len ? (int)aj[ai[i + 1] - 1] : 0;

    L->rl[i] = (int)len;
    for (PetscInt k = 0; k < L->width; k++) L->col[MatELLRSlot(m, T, i, k)] = k < len ? (int)aj[ai[i] + k] : pad;
  }
  if (aa) {
    PetscCall(PetscMalloc1(L->stored, &L->val));
    PetscCall(MatELLRLayoutFillValues(L, ai, aa, L->val));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
