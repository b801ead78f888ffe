/* Row-grouped CSR on the host: the parameters' check, the rows' order and groups (what a layout of given parameters
   stores, before any build), the padding guard. The host oracle of the whole layout is the tests' (tests/reference/). */
#include <petscgpumat/private/rgcsrimpl.h>

PetscErrorCode MatRgCSRCheckParameters(PetscInt m, PetscInt n, PetscInt G, PetscInt T, PetscInt W)
{
  PetscFunctionBegin;
  /* the type asks for multiples of 32 (whole warps); the layout itself takes any group size, e.g. the paper's 4 */
  PetscCheck(G >= 1 && G <= 1024, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "RgCSR group size %" PetscInt_FMT " must be in 1..1024", G);
  PetscCheck(T == 1 || T == 2 || T == 4 || T == 8 || T == 16 || T == 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "RgCSR threads per row %" PetscInt_FMT " must be 1, 2, 4, 8, 16 or 32", T);
  PetscCheck(W >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "RgCSR sort window %" PetscInt_FMT " must be >= 0 (0: no reordering)", W);
  PetscCheck(m >= 0 && n >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Negative size %" PetscInt_FMT " x %" PetscInt_FMT, m, n);
  PetscCheck((PetscCount)m * T < PETSC_INT32_MAX && n < PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "RgCSR uses 32-bit row and column indices on the device: %" PetscInt_FMT " x %" PetscInt_FMT " is too large", m, n);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stored order: rows sorted by decreasing length inside windows of W rows (stable); identity for W = 0 */
static PetscErrorCode MatRgCSRPermutation(PetscInt m, const PetscInt ai[], PetscInt W, int **perm)
{
  PetscInt *len, *idx;

  PetscFunctionBegin;
  *perm = NULL;
  if (!W || m < 2) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscMalloc1(m, perm));
  PetscCall(PetscMalloc2(m, &len, m, &idx));
  for (PetscInt w0 = 0; w0 < m; w0 += W) {
    const PetscInt w1 = (W >= m - w0) ? m : w0 + W, nw = w1 - w0;

    /* sort by decreasing length: ascending on -length, the row index as a tie-break keeps it stable */
    for (PetscInt i = 0; i < nw; i++) {
      len[i] = -(ai[w0 + i + 1] - ai[w0 + i]);
      idx[i] = w0 + i;
    }
    PetscCall(PetscSortIntWithArray(nw, len, idx));
    for (PetscInt i = 0; i < nw;) { /* PetscSortInt is not stable: restore row order among equal lengths */
      PetscInt j = i;
      while (j < nw && len[j] == len[i]) j++;
      PetscCall(PetscSortInt(j - i, idx + i));
      i = j;
    }
    for (PetscInt i = 0; i < nw; i++) (*perm)[w0 + i] = (int)idx[i];
    if (W >= m - w0) break;
  }
  PetscCall(PetscFree2(len, idx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatRgCSRBuildGroups(MatRgCSRLayout *L)
{
  PetscFunctionBegin;
  L->ngroups = (L->m + L->G - 1) / L->G;
  PetscCall(PetscMalloc1(L->ngroups + 1, &L->gp));
  L->gp[0]  = 0;
  L->maxlen = 0;
  for (PetscInt g = 0; g < L->ngroups; g++) {
    const PetscInt p0 = g * L->G, p1 = PetscMin(p0 + L->G, L->m);
    PetscInt       K  = 0;

    for (PetscInt p = p0; p < p1; p++) K = PetscMax(K, L->rl[p]);
    L->maxlen     = PetscMax(L->maxlen, K);
    K             = ((K + L->T - 1) / L->T) * L->T;
    L->gp[g + 1] = L->gp[g] + (PetscCount)K * (p1 - p0);
  }
  L->stored = L->gp[L->ngroups];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The layout's rows and groups without its entries: the stored order (perm), row lengths (rl), group offsets (gp),
  longest row and stored slots. The library measures a layout with it (MatRgCSRLayoutMeasure()); the tests' host
  oracle (tests/reference/rgcsr_layout.c) adds the columns and values.
*/
PetscErrorCode MatRgCSRLayoutCreateGroups(PetscInt m, PetscInt n, const PetscInt ai[], PetscInt G, PetscInt T, PetscInt W, MatRgCSRLayout *L)
{
  PetscFunctionBegin;
  PetscCall(MatRgCSRCheckParameters(m, n, G, T, W));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  L->m = m, L->n = n, L->G = G, L->T = T, L->W = W;
  PetscCall(MatRgCSRPermutation(m, ai, W, &L->perm));
  PetscCall(PetscMalloc1(m, &L->rl));
  for (PetscInt p = 0; p < m; p++) {
    const PetscInt i = L->perm ? L->perm[p] : p;
    L->rl[p]         = (int)(ai[i + 1] - ai[i]);
  }
  PetscCall(MatRgCSRBuildGroups(L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Stored entries (padding included) of the layout for these parameters, without building it */
PetscErrorCode MatRgCSRLayoutMeasure(PetscInt m, PetscInt n, const PetscInt ai[], PetscInt G, PetscInt T, PetscInt W, PetscInt *maxlen, PetscCount *stored)
{
  MatRgCSRLayout L;

  PetscFunctionBegin;
  PetscCall(MatRgCSRLayoutCreateGroups(m, n, ai, G, T, W, &L));
  *maxlen = L.maxlen;
  *stored = L.stored;
  PetscCall(MatRgCSRLayoutDestroy(&L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The padding guard (the base's, shared with ELLPACK-R) */
PetscErrorCode MatRgCSRCheckFill(PetscInt m, PetscCount nnz, PetscInt maxlen, PetscCount stored, PetscReal maxfill)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatCheckPadding("RgCSR", "-mat_rgcsr_max_fill", "Try -mat_rgcsr_sort_window (reordering cuts padding), a smaller -mat_rgcsr_group_size, -mat_type cmrscuda (no padding)", m, nnz, maxlen, stored, maxfill));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRLayoutDestroy(MatRgCSRLayout *L)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(L->gp));
  PetscCall(PetscFree(L->rl));
  PetscCall(PetscFree(L->perm));
  PetscCall(PetscFree(L->col));
  PetscCall(PetscFree(L->val));
  PetscCall(PetscMemzero(L, sizeof(*L)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
