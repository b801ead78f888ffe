/*
  The plan of the scan kernel's heavy rows (cmrsimpl.h, MatCMRSHeavy): which rows are summed by warps of their own, the
  groups' lists of them, their chunks and where the chunks' partial sums go, from the host row offsets. Made on the host in
  two passes over the rows and used by the kernel's launch and by its host emulation alike.
*/
#include <petscgpumat/private/cmrsimpl.h>

/*@C
  MatCMRSHeavyCreate - The plan of the CMRS scan kernel's heavy rows: the rows longer than `T` entries, taken out of their
  groups of `S` strips of height `H` and cut into chunks of at most `C` entries (0: a chunk per row), one warp each

  Not Collective

  Input Parameters:
+ m  - rows
. H  - strip height
. ai - CSR row offsets (`m` + 1)
. S  - strips per warp of the scan kernel
. T  - rows longer than `T` entries are heavy (at least 1)
- C  - entries per chunk at most, a multiple of 32; 0: one chunk per row

  Output Parameter:
. heavy - the plan (no heavy row: `nheavy` = 0); free it with `MatCMRSHeavyDestroy()`

  Level: developer

.seealso: `MatCMRSHeavyDestroy()`, `MatCMRSSplitCreate()`, `MATSEQCMRSCUDA`
@*/
PetscErrorCode MatCMRSHeavyCreate(PetscInt m, PetscInt H, const PetscInt ai[], PetscInt S, PetscInt T, PetscCount C, MatCMRSHeavy *heavy)
{
  const PetscInt strips = H > 0 ? (m + H - 1) / H : 0;
  PetscInt       h = 0, c = 0, mu = 0, part = 0;

  PetscFunctionBegin;
  PetscCheck(H >= 1 && S >= 1 && T >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS heavy rows: height %" PetscInt_FMT ", strips per warp %" PetscInt_FMT " and threshold %" PetscInt_FMT " must be positive", H, S, T);
  PetscCheck(C >= 0 && C % 32 == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS heavy rows: %" PetscCount_FMT " entries per chunk must be a multiple of 32 (or 0: a chunk per row)", C);
  PetscCall(PetscMemzero(heavy, sizeof(*heavy)));
  heavy->S       = S;
  heavy->H       = H;
  heavy->T       = T;
  heavy->C       = C;
  heavy->ngroups = (strips + S - 1) / S;
  for (PetscInt i = 0; i < m; i++) {
    const PetscCount len = (PetscCount)ai[i + 1] - ai[i];

    if (len > T) {
      const PetscCount n = C ? (len + C - 1) / C : 1;

      PetscCheck(heavy->nchunks + n < PETSC_INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "CMRS heavy rows: more than %d chunks", PETSC_INT_MAX);
      heavy->nheavy++;
      heavy->entries += len;
      heavy->nchunks += (PetscInt)n;
      if (n > 1) heavy->nmulti++;
    }
  }
  PetscCall(PetscCalloc1(heavy->ngroups + 1, &heavy->gptr));
  PetscCall(PetscMalloc3(heavy->nheavy, &heavy->hq, heavy->nheavy, &heavy->hstart, heavy->nheavy, &heavy->hend));
  PetscCall(PetscMalloc5(heavy->nchunks, &heavy->crow, heavy->nchunks, &heavy->cstart, heavy->nchunks, &heavy->cend, heavy->nchunks, &heavy->cpart, heavy->nchunks, &heavy->cmulti));
  PetscCall(PetscMalloc2(heavy->nmulti, &heavy->mrow, heavy->nmulti + 1, &heavy->mptr));
  heavy->mptr[0] = 0;
  for (PetscInt i = 0; i < m; i++) {
    const PetscCount len = (PetscCount)ai[i + 1] - ai[i];
    const PetscInt   w   = i / (S * H);
    PetscCount       n;

    if (len <= T) continue;
    n = C ? (len + C - 1) / C : 1;
    heavy->gptr[w + 1]++;
    heavy->hq[h]     = i - w * S * H;
    heavy->hstart[h] = ai[i];
    heavy->hend[h]   = ai[i + 1];
    h++;
    for (PetscCount k = 0; k < n; k++, c++) {
      heavy->crow[c]   = i;
      heavy->cstart[c] = ai[i] + k * C;
      heavy->cend[c]   = k + 1 < n ? ai[i] + (k + 1) * C : ai[i + 1];
      heavy->cpart[c]  = n > 1 ? part++ : -1;
      heavy->cmulti[c] = n > 1 ? mu : -1;
    }
    if (n > 1) {
      heavy->mrow[mu]     = i;
      heavy->mptr[mu + 1] = part;
      mu++;
    }
  }
  for (PetscInt w = 0; w < heavy->ngroups; w++) heavy->gptr[w + 1] += heavy->gptr[w];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCMRSHeavyDestroy - Frees the plan of `MatCMRSHeavyCreate()`

  Not Collective

  Input Parameter:
. heavy - the plan

  Level: developer

.seealso: `MatCMRSHeavyCreate()`
@*/
PetscErrorCode MatCMRSHeavyDestroy(MatCMRSHeavy *heavy)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(heavy->gptr));
  PetscCall(PetscFree3(heavy->hq, heavy->hstart, heavy->hend));
  PetscCall(PetscFree5(heavy->crow, heavy->cstart, heavy->cend, heavy->cpart, heavy->cmulti));
  PetscCall(PetscFree2(heavy->mrow, heavy->mptr));
  PetscCall(PetscMemzero(heavy, sizeof(*heavy)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
