/*
  The plan of the scan kernel's split of long groups (cmrsimpl.h, MatCMRSSplit): which groups of S strips are split,
  their chunks, and the rows each chunk touches, from the host row offsets. Made on the host (one pass over the
  groups, a binary search per chunk end) and used by the kernel's launch and by its host emulation alike.
*/
#include <petscgpumat/private/cmrsimpl.h>

/* the row of entry k among rows r0 .. r1 - 1, given ai[r0] <= k (ai[r] <= k < ai[r + 1]: empty rows skipped) */
static PetscInt MatCMRSRowOfEntry(const PetscInt ai[], PetscInt r0, PetscInt r1, PetscCount k)
{
  return MatGPUMatLowerBound(ai, r0, r1, k + 1) - 1; /* the last r with ai[r] <= k */
}

/*
  The entries per chunk of a group of n > 2 C entries: C, or, where that gives more than CMRS_SPLIT_MAX_CHUNKS chunks,
  the least multiple of CMRS_SPLIT_ALIGN above n / CMRS_SPLIT_MAX_CHUNKS: the combine's warp then adds at most 16 partial
  sums a lane (2000 chunks of 1024 for a row of 2 M entries cost it 0.04 ms on an H100; 256 longer ones left the
  chunks' warps last)
*/
static PetscCount MatCMRSSplitGroupChunk(PetscCount n, PetscCount C)
{
  const PetscCount least = (n + CMRS_SPLIT_MAX_CHUNKS - 1) / CMRS_SPLIT_MAX_CHUNKS;

  return n / C > CMRS_SPLIT_MAX_CHUNKS ? (least + CMRS_SPLIT_ALIGN - 1) / CMRS_SPLIT_ALIGN * CMRS_SPLIT_ALIGN : C;
}

/*@C
  MatCMRSSplitCreate - The split of the CMRS scan kernel's long groups: groups of `S` strips of height `H` holding more
  than 2 `C` entries are cut into chunks of `C` entries (the last one takes the rest, fewer than 2 `C`), or of more where
  that would give more than `CMRS_SPLIT_MAX_CHUNKS` chunks

  Not Collective

  Input Parameters:
+ m  - rows
. H  - strip height
. ai - CSR row offsets (`m` + 1)
. S  - strips per warp of the scan kernel
- C  - entries per chunk, a multiple of `CMRS_SPLIT_ALIGN`; 0: no group is split

  Output Parameter:
. split - the plan; free it with `MatCMRSSplitDestroy()`

  Level: developer

.seealso: `MatCMRSSplitDestroy()`, `MatCMRSLayoutCreate()`, `MATSEQCMRSCUDA`
@*/
PetscErrorCode MatCMRSSplitCreate(PetscInt m, PetscInt H, const PetscInt ai[], PetscInt S, PetscCount C, MatCMRSSplit *split)
{
  const PetscInt strips = H > 0 ? (m + H - 1) / H : 0;
  PetscInt       l = 0, c = 0;

  PetscFunctionBegin;
  PetscCheck(H >= 1 && S >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS split: height %" PetscInt_FMT " and strips per warp %" PetscInt_FMT " must be positive", H, S);
  PetscCheck(C >= 0 && C % CMRS_SPLIT_ALIGN == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "CMRS split: %" PetscCount_FMT " entries per chunk must be a multiple of %d (or 0: no split)", C, CMRS_SPLIT_ALIGN);
  PetscCall(PetscMemzero(split, sizeof(*split)));
  split->S       = S;
  split->H       = H;
  split->C       = C;
  split->ngroups = (strips + S - 1) / S;
  PetscCall(PetscCalloc1(split->ngroups + 1, &split->islong));
  for (PetscInt w = 0; C && w < split->ngroups; w++) {
    const PetscInt   r0 = w * S * H, r1 = PetscMin((w + 1) * S * H, m);
    const PetscCount n  = (PetscCount)ai[r1] - ai[r0];

    if (n > 2 * C) {
      split->islong[w] = 1;
      split->nlong++;
      split->nchunks += (PetscInt)(n / MatCMRSSplitGroupChunk(n, C));
    }
  }
  PetscCall(PetscMalloc2(split->nlong + 1, &split->longgroup, split->nlong + 1, &split->lc));
  PetscCall(PetscMalloc3(split->nchunks + 1, &split->cgroup, split->nchunks + 1, &split->cqa, split->nchunks + 1, &split->cnq));
  PetscCall(PetscMalloc3(split->nchunks + 1, &split->cstart, split->nchunks + 1, &split->cend, split->nchunks + 1, &split->coff));
  split->lc[0] = 0;
  for (PetscInt w = 0; w < split->ngroups; w++) {
    const PetscInt   r0 = w * S * H, r1 = PetscMin((w + 1) * S * H, m);
    const PetscCount e0 = ai[r0], e1 = ai[r1];
    PetscCount       Cg, nch;

    if (!split->islong[w]) continue;
    Cg                    = MatCMRSSplitGroupChunk(e1 - e0, C);
    nch                   = (e1 - e0) / Cg;
    split->longgroup[l++] = (int)w;
    for (PetscCount k = 0; k < nch; k++, c++) {
      const PetscCount cs = e0 + k * Cg, ce = k + 1 < nch ? cs + Cg : e1;
      const PetscInt   qa = MatCMRSRowOfEntry(ai, r0, r1, cs) - r0, qb = MatCMRSRowOfEntry(ai, r0, r1, ce - 1) - r0;

      split->cgroup[c] = (int)w;
      split->cstart[c] = cs;
      split->cend[c]   = ce;
      split->cqa[c]    = (int)qa;
      split->cnq[c]    = (int)(qb - qa + 1);
      split->coff[c]   = split->nparts;
      split->nparts += qb - qa + 1;
    }
    split->lc[l] = c;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCMRSSplitDestroy - Frees a plan made by `MatCMRSSplitCreate()`

  Not Collective

  Input Parameter:
. split - the plan

  Level: developer

.seealso: `MatCMRSSplitCreate()`
@*/
PetscErrorCode MatCMRSSplitDestroy(MatCMRSSplit *split)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(split->islong));
  PetscCall(PetscFree2(split->longgroup, split->lc));
  PetscCall(PetscFree3(split->cgroup, split->cqa, split->cnq));
  PetscCall(PetscFree3(split->cstart, split->cend, split->coff));
  PetscCall(PetscMemzero(split, sizeof(*split)));
  PetscFunctionReturn(PETSC_SUCCESS);
}
