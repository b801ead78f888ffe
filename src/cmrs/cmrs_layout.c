/* CMRS layout on the host: built from CSR, copied as is to the device, and emulated for the tests. */
#include <petscgpumat/private/cmrsimpl.h>
#include <stdlib.h>

/*@C
  MatCMRSCanPack - Whether RowInStrip fits in the 4 high bits of 32-bit column indices for a matrix of `n` columns

  Not Collective

  Input Parameter:
. n - columns

  Output Parameter:
. packed - `PETSC_TRUE` if n <= 2^28 and `PetscInt` is 32-bit (a 64-bit-index PETSc always gets the unpacked layout)

  Level: developer

.seealso: `MATSEQCMRSCUDA`, `MatCMRSLayoutCreate()`
@*/
PetscErrorCode MatCMRSCanPack(PetscInt n, PetscBool *packed)
{
  PetscFunctionBegin;
  *packed = (PetscBool)(sizeof(PetscInt) == 4 && (PetscInt64)n <= ((PetscInt64)1 << CMRS_COL_BITS));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscInt   col, row;
  PetscCount src;
} MatCMRSSortItem;

static int MatCMRSSortCompare(const void *a, const void *b)
{
  const MatCMRSSortItem *p = (const MatCMRSSortItem *)a, *q = (const MatCMRSSortItem *)b;

  if (p->col != q->col) return p->col < q->col ? -1 : 1;
  return p->row < q->row ? -1 : (p->row > q->row);
}

/*@C
  MatCMRSLayoutCreate - Builds the CMRS arrays of a CSR matrix on the host

  Not Collective

  Input Parameters:
+ m      - rows
. n      - columns
. ai     - CSR row offsets
. aj     - CSR column indices
. aa     - CSR values, or `NULL`
. height - rows per strip, 1..16
. sort   - sort the entries of each strip by column (rows in order among equal columns)
- pack   - pack RowInStrip into the column indices (`MatCMRSCanPack()` must allow it)

  Output Parameter:
. L - the layout

  Level: developer

.seealso: `MATSEQCMRSCUDA`, `MatCMRSLayoutMult()`, `MatCMRSLayoutDestroy()`
@*/
PetscErrorCode MatCMRSLayoutCreate(PetscInt m, PetscInt n, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], PetscInt height, PetscBool sort, PetscBool pack, MatCMRSLayout *L)
{
  PetscBool canpack;

  PetscFunctionBegin;
  PetscCheck(height >= 1 && height <= CMRS_MAX_HEIGHT, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS height %" PetscInt_FMT " must be in 1..%d", height, CMRS_MAX_HEIGHT);
  PetscCheck(n < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "CMRS stores 32-bit column indices on the device: %" PetscInt_FMT " columns is too many", n);
  PetscCall(MatCMRSCanPack(n, &canpack));
  PetscCheck(!pack || canpack, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Cannot pack RowInStrip into 28-bit column indices: %" PetscInt_FMT " columns (at most 2^28 with 32-bit PetscInt)", n);
  PetscCall(PetscMemzero(L, sizeof(*L)));
  L->m = m, L->n = n, L->height = height, L->sorted = sort, L->packed = pack;
  L->strips = (m + height - 1) / height;
  L->nnz    = m ? ai[m] : 0;
  PetscCall(PetscMalloc1(L->strips + 1, &L->sp));
  for (PetscInt s = 0; s < L->strips; s++) L->sp[s] = ai[s * height];
  L->sp[L->strips] = L->nnz;
  PetscCall(PetscMalloc1(L->nnz, &L->col));
  if (!pack) PetscCall(PetscMalloc1(L->nnz, &L->ris));
  if (sort) PetscCall(PetscMalloc1(L->nnz, &L->src));
  for (PetscInt s = 0; s < L->strips; s++) {
    const PetscInt r0 = s * height, r1 = PetscMin(m, r0 + height), base = ai[r0], len = ai[r1] - base;

    if (sort) {
      /* by column, then by row (the papers' fourth optimisation; equal columns keep the row order) */
      MatCMRSSortItem *items;

      PetscCall(PetscMalloc1(len, &items));
      for (PetscInt r = r0; r < r1; r++)
        for (PetscInt k = ai[r]; k < ai[r + 1]; k++) {
          items[k - base].col = aj[k];
          items[k - base].row = r - r0;
          items[k - base].src = k;
        }
      qsort(items, (size_t)len, sizeof(*items), MatCMRSSortCompare);
      for (PetscInt t = 0; t < len; t++) L->src[base + t] = items[t].src;
      PetscCall(PetscFree(items));
    }
    for (PetscInt t = 0; t < len; t++) {
      const PetscCount k = sort ? L->src[base + t] : base + t;
      PetscInt         r = r0;

      while (ai[r + 1] <= k) r++; /* the row of CSR entry k (rows of a strip are few) */
      L->col[base + t] = pack ? ((unsigned int)(r - r0) << CMRS_COL_BITS) | (unsigned int)aj[k] : (unsigned int)aj[k];
      if (!pack) L->ris[base + t] = (unsigned char)(r - r0);
    }
  }
  if (aa) {
    PetscCall(PetscMalloc1(L->nnz, &L->val));
    PetscCall(MatCMRSLayoutFillValues(L, aa, L->val));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values in layout order: the CSR values themselves, or through src (0 for padding) */
PetscErrorCode MatCMRSLayoutFillValues(const MatCMRSLayout *L, const PetscScalar aa[], PetscScalar val[])
{
  PetscFunctionBegin;
  if (L->src)
    for (PetscCount k = 0; k < L->nnz; k++) val[k] = L->src[k] < 0 ? 0 : aa[L->src[k]];
  else PetscCall(PetscArraycpy(val, aa, L->nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCMRSLayoutCreatePadded - Builds the CMRS arrays of the padded variant (section 6.7 of Koza et al. 2014)

  Not Collective

  Input Parameters:
+ m, n, ai, aj, aa - the CSR matrix (`aa` may be `NULL`)
. height           - rows per strip, 1..16
. M                - buffer columns, 1..32: in each pass of a warp over 32 consecutive items, no two lanes l, l' with
                     l mod M = l' mod M hold items of the same row, so lane l can add into buffer cell (l mod M, row)
- pack             - pack RowInStrip into the column indices

  Output Parameter:
. L - the layout: each strip's items are arranged in passes of 32 (a row gives each pass one contiguous chunk of at
      most M items, rows taken in turn), and padded with explicit zeros to a multiple of 32, so every load is a full
      aligned segment

  Level: developer

.seealso: `MatCMRSLayoutCreate()`, `MATSEQCMRSCUDA`
@*/
PetscErrorCode MatCMRSLayoutCreatePadded(PetscInt m, PetscInt n, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], PetscInt height, PetscInt M, PetscBool pack, MatCMRSLayout *L)
{
  PetscBool   canpack;
  PetscCount  total = 0, *next, cap;
  PetscInt    strips = (m + height - 1) / height;
  unsigned int cell_used[CMRS_MAX_HEIGHT]; /* per row of the strip: the buffer columns used in the current pass */

  PetscFunctionBegin;
  PetscCheck(height >= 1 && height <= CMRS_MAX_HEIGHT, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS height %" PetscInt_FMT " must be in 1..%d", height, CMRS_MAX_HEIGHT);
  PetscCheck(M >= 1 && M <= 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS buffer columns %" PetscInt_FMT " must be in 1..32", M);
  PetscCheck(height * M >= 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "The padded CMRS variant needs height x buffer columns >= 32 (a pass of 32 lanes needs 32 distinct buffer cells): %" PetscInt_FMT " x %" PetscInt_FMT, height, M);
  PetscCheck(n < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "CMRS stores 32-bit column indices on the device: %" PetscInt_FMT " columns is too many", n);
  PetscCall(MatCMRSCanPack(n + 1, &canpack)); /* column 2^28 - 1 marks padding */
  PetscCheck(!pack || canpack, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Cannot pack RowInStrip into 28-bit column indices for the padded variant: %" PetscInt_FMT " columns (at most 2^28 - 1)", n);
  PetscCall(PetscMemzero(L, sizeof(*L)));
  L->m = m, L->n = n, L->height = height, L->packed = pack, L->M = M, L->strips = strips;
  PetscCall(PetscMalloc1(strips + 1, &L->sp));
  /* an upper bound of the padded size: each pass of 32 holds at least min(32, M) real items while rows remain */
  cap = 0;
  for (PetscInt s = 0; s < strips; s++) {
    const PetscCount len = ai[PetscMin(m, (s + 1) * height)] - ai[s * height];
    cap += 32 * ((len + PetscMin(32, M) - 1) / PetscMin(32, M) + 1);
  }
  PetscCall(PetscMalloc1(cap, &L->src));
  PetscCall(PetscMalloc1(cap, &L->col));
  if (!pack) PetscCall(PetscMalloc1(cap, &L->ris));
  PetscCall(PetscMalloc1(height, &next));
  for (PetscInt s = 0; s < strips; s++) {
    const PetscInt r0 = s * height, h = PetscMin(height, m - r0);
    PetscInt       turn = 0, left = 0;

    L->sp[s] = total;
    for (PetscInt r = 0; r < h; r++) {
      next[r] = ai[r0 + r];
      left += (PetscInt)(ai[r0 + r + 1] - ai[r0 + r]);
    }
    while (left > 0) { /* one pass of 32 slots */
      PetscInt slot = 0;

      for (PetscInt r = 0; r < height; r++) cell_used[r] = 0;
      for (PetscInt visited = 0; visited < h && slot < 32; visited++, turn = (turn + 1) % h) {
        const PetscInt r = turn, take = (PetscInt)PetscMin(PetscMin((PetscCount)M, ai[r0 + r + 1] - next[r]), (PetscCount)(32 - slot));

        for (PetscInt t = 0; t < take; t++, slot++) {
          const PetscCount k = next[r]++;

          L->src[total + slot] = k;
          L->col[total + slot] = pack ? ((unsigned int)r << CMRS_COL_BITS) | (unsigned int)aj[k] : (unsigned int)aj[k];
          if (!pack) L->ris[total + slot] = (unsigned char)r;
          cell_used[r] |= 1u << (slot % M);
        }
        left -= take;
      }
      /* padding: value 0 at the padding column (skipped by the kernels), in a row whose buffer cell (slot mod M) is still free in this pass; rows past
         the matrix's end (last strip) serve too, as their sums are never written; height x M >= 32 cells suffice */
      for (; slot < 32; slot++) {
        PetscInt r = 0;

        while (r < height && (cell_used[r] >> (slot % M) & 1u)) r++;
        PetscCheck(r < height, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No free buffer cell for padding");
        cell_used[r] |= 1u << (slot % M);
        L->src[total + slot] = -1;
        L->col[total + slot] = pack ? ((unsigned int)r << CMRS_COL_BITS) | CMRS_PAD_PACKED : CMRS_PAD_UNPACKED;
        if (!pack) L->ris[total + slot] = (unsigned char)r;
      }
      total += 32;
    }
  }
  L->sp[strips] = total;
  L->nnz        = total;
  PetscCall(PetscFree(next));
  if (aa) {
    PetscCall(PetscMalloc1(L->nnz, &L->val));
    PetscCall(MatCMRSLayoutFillValues(L, aa, L->val));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSLayoutDestroy(MatCMRSLayout *L)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(L->sp));
  PetscCall(PetscFree(L->col));
  PetscCall(PetscFree(L->ris));
  PetscCall(PetscFree(L->src));
  PetscCall(PetscFree(L->val));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

