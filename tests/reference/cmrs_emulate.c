/* The host emulations of the CMRS kernels: the tests' bit-for-bit references (compiled with -ffp-contract=off, into the tests only) */
#include <petscgpumat/private/cmrsimpl.h>
#include "emulate.h"

/* A warp's 32 lane sums added pairwise by halving (lane j + 16 into lane j, then + 8, ..., + 1), as the kernels' shuffles do */
static PetscScalar MatCMRSHalve(PetscScalar lane[32])
{
  for (PetscInt off = 16; off > 0; off /= 2)
    for (PetscInt j = 0; j < off; j++) lane[j] += lane[j + off];
  return lane[0];
}

/*
  z = A x (+ y) the way Algorithm 1 computes it: 32 lanes take the strip's entries cyclically (entry j to lane
  j mod 32 from the strip start), each lane keeps one partial sum per row of the strip, then each row's 32
  partial sums are added pairwise (the butterfly of __shfl_xor_sync: offsets 16, 8, 4, 2, 1).
*/
PetscErrorCode MatCMRSLayoutMult(const MatCMRSLayout *L, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  PetscScalar buf[CMRS_MAX_HEIGHT][32];

  PetscFunctionBegin;
  for (PetscInt s = 0; s < L->strips; s++) {
    const PetscCount start = L->sp[s], end = L->sp[s + 1];

    for (PetscInt r = 0; r < L->height; r++)
      for (PetscInt lane = 0; lane < 32; lane++) buf[r][lane] = 0;
    for (PetscCount k = start; k < end; k++)
      if (!L->src || L->src[k] >= 0) buf[MatCMRSRowInStrip(L, k)][(k - start) % 32] += L->val[k] * x[MatCMRSColumn(L, k)];
    for (PetscInt r = 0; r < L->height; r++) {
      const PetscInt    row = s * L->height + r;
      const PetscScalar sum = MatCMRSHalve(buf[r]);

      if (row < L->m) z[row] = y ? y[row] + sum : sum;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = A x (+ y) the way the scan kernel (cmrs_scan.cu) computes it with S strips per warp and E entries per lane, bit
  for bit: a warp takes S strips, in passes of 32 E entries, lane l taking entries l E .. l E + E - 1 of a pass. Each
  lane adds its products in order; a row that begins and ends among them is added to its row's partial sum at once
  (E > 1). The lanes' last row pieces (tails) are joined by the Hillis-Steele segmented scan keyed by their rows
  (offsets 1, 2, 4, ... while a piece is longer); a lane whose entries span rows adds the value the scan left in the
  lane before to its first piece (head) when that row goes on from there, and adds the head to the row's partial sum;
  the last lane of each tail row adds the scanned sum. Pieces of a row in later passes add in pass order. Needs an
  unsorted, unpadded layout. The number of scan steps (reach) does not change any sum; it is computed as the kernel
  does anyway (E = 1: over all lanes; E > 1: over the lanes whose tail lies before the end of the warp's entries).
*/
/* The passes of one warp over the entries lo .. hi - 1 of the group of strips s0 .. s1 - 1 into acc (its S H rows) */
static void MatCMRSScanEntries(const MatCMRSLayout *L, PetscInt S, PetscInt E, PetscInt s0, PetscInt s1, PetscCount lo, PetscCount hi, const PetscScalar x[], PetscScalar acc[])
{
  const PetscInt H = L->height, rows = S * H;

  for (PetscCount base = lo; base < hi; base += 32 * E) {
    PetscScalar s[32], h[32], t[32];
    PetscInt    qh[32], qt[32], first[32], reach = 0;
    PetscBool   multi[32], cont[33];

    for (PetscInt lane = 0; lane < 32; lane++) {
      PetscInt q[4];

      multi[lane] = PETSC_FALSE;
      h[lane]     = 0;
      for (PetscInt j = 0; j < E; j++) {
        const PetscCount  k = base + lane * E + j;
        const PetscScalar p = k < hi ? L->val[k] * x[MatCMRSColumn(L, k)] : 0;
        PetscInt          g = 0;

        for (PetscInt u = s0 + 1; u < s1; u++) g += k >= L->sp[u];
        q[j] = k < hi ? g * H + MatCMRSRowInStrip(L, k) : rows;
        if (!j) s[lane] = p;
        else if (q[j] == q[j - 1]) s[lane] += p;
        else { /* a row piece ends at entry j - 1: the head, or a whole row inside the lane */
          if (multi[lane]) acc[q[j - 1]] += s[lane];
          else h[lane] = s[lane];
          multi[lane] = PETSC_TRUE;
          s[lane]     = p;
        }
      }
      qh[lane]    = q[0];
      qt[lane]    = q[E - 1];
      first[lane] = lane && qt[lane] == qt[lane - 1] ? first[lane - 1] : lane;
      cont[lane]  = (PetscBool)(lane && qh[lane] == qt[lane - 1]);
      if (E == 1 || qt[lane] < rows) reach = PetscMax(reach, lane - first[lane]);
    }
    cont[32] = PETSC_FALSE;
    for (PetscInt off = 1; off <= reach; off *= 2) {
      for (PetscInt lane = 0; lane < 32; lane++) t[lane] = lane >= off ? s[lane - off] : s[lane];
      for (PetscInt lane = 0; lane < 32; lane++)
        if (lane - off >= first[lane]) s[lane] += t[lane];
    }
    for (PetscInt lane = 0; lane < 32; lane++) {
      if (multi[lane]) acc[qh[lane]] += cont[lane] ? s[lane - 1] + h[lane] : h[lane];
      if (qt[lane] < rows && !cont[lane + 1]) acc[qt[lane]] += s[lane];
    }
  }
}

/*
  The combine step of a split group's row q, as cmrs_split_combine() does it with a warp: lane j adds the row's partial
  sums from chunks j, j + 32, ... of the group in order, then lane j + off is added to lane j for off = 16, 8, 4, 2, 1
*/
static PetscScalar MatCMRSSplitCombineRow(const MatCMRSSplit *split, PetscInt l, PetscInt q, const PetscScalar part[])
{
  PetscScalar lane[32] = {0};

  for (PetscInt c = split->lc[l]; c < split->lc[l + 1]; c++)
    if (q >= split->cqa[c] && q < split->cqa[c] + split->cnq[c]) lane[(c - split->lc[l]) % 32] += part[split->coff[c] + q - split->cqa[c]];
  return MatCMRSHalve(lane);
}

/*
  The same with the split of long groups (MatCMRSSplit, cmrsimpl.h; NULL: none): a split group's chunks are summed
  each from zero into its rows' partial sums, which MatCMRSSplitCombineRow() then adds, z = y + combined
*/
PetscErrorCode MatCMRSLayoutMultScanSplit(const MatCMRSLayout *L, PetscInt S, PetscInt E, const MatCMRSSplit *split, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  const PetscInt H = L->height, rows = S * H;
  PetscScalar   *acc, *part = NULL;
  PetscInt       l = 0; /* the split group being combined */

  PetscFunctionBegin;
  PetscCheck(!L->sorted && !L->M, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The scan kernel needs an unsorted, unpadded layout");
  PetscCheck(S >= 1 && S <= 32, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Strips per warp %" PetscInt_FMT " must be in 1..32", S);
  PetscCheck(E == 1 || E == 2 || E == 4, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "Lane entries %" PetscInt_FMT " must be 1, 2 or 4", E);
  PetscCheck(!split || (split->S == S && split->H == H), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The split was planned for %" PetscInt_FMT " strips of height %" PetscInt_FMT " per warp", split ? split->S : 0, split ? split->H : 0);
  PetscCall(PetscMalloc1(rows, &acc));
  if (split && split->nparts) PetscCall(PetscMalloc1(split->nparts, &part));
  /* the chunks of the split groups, each into its partial sums */
  for (PetscInt c = 0; split && c < split->nchunks; c++) {
    const PetscInt s0 = split->cgroup[c] * S, s1 = PetscMin(s0 + S, L->strips);

    for (PetscInt q = 0; q < rows; q++) acc[q] = 0;
    MatCMRSScanEntries(L, S, E, s0, s1, split->cstart[c], split->cend[c], x, acc);
    for (PetscInt q = 0; q < split->cnq[c]; q++) part[split->coff[c] + q] = acc[split->cqa[c] + q];
  }
  for (PetscInt s0 = 0; s0 < L->strips; s0 += S) {
    const PetscInt s1 = PetscMin(s0 + S, L->strips);

    for (PetscInt q = 0; q < rows; q++) acc[q] = 0;
    if (split && split->islong[s0 / S]) { /* the combine step */
      while (split->longgroup[l] != s0 / S) l++; /* the split groups come in order */
      for (PetscInt q = 0; q < rows; q++) acc[q] = MatCMRSSplitCombineRow(split, l, q, part);
    } else MatCMRSScanEntries(L, S, E, s0, s1, L->sp[s0], L->sp[s1], x, acc);
    for (PetscInt q = 0; q < rows; q++) {
      const PetscInt row = s0 * H + q;

      if (row < L->m) z[row] = y ? y[row] + acc[q] : acc[q];
    }
  }
  PetscCall(PetscFree(acc));
  PetscCall(PetscFree(part));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSLayoutMultScan(const MatCMRSLayout *L, PetscInt S, PetscInt E, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  PetscFunctionBegin;
  PetscCall(MatCMRSLayoutMultScanSplit(L, S, E, NULL, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = A x (+ y) as the scan kernel computes it with heavy rows (MatCMRSHeavy, cmrsimpl.h), bit for bit: each group's
  passes run over the stretches of entries between its heavy rows (each stretch's passes from its first entry) and
  leave those rows alone; each chunk of a heavy row is summed by lanes (lane l: entries l, l + 32, ... in order, CMRS_HEAVY_LOADS
  passes at a time, past the chunk's end adding zeros) and the lanes by halving; a row of several chunks adds its
  chunks' sums as the last of its chunks' warps does (lane j: chunks j, j + 32, ... in order, then halving)
*/
PetscErrorCode MatCMRSLayoutMultScanHeavy(const MatCMRSLayout *L, PetscInt S, PetscInt E, const MatCMRSHeavy *heavy, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  const PetscInt H = L->height, rows = S * H;
  PetscScalar   *acc, *part = NULL;

  PetscFunctionBegin;
  PetscCheck(!L->sorted && !L->M, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The scan kernel needs an unsorted, unpadded layout");
  PetscCheck(heavy->S == S && heavy->H == H, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "The heavy rows were planned for %" PetscInt_FMT " strips of height %" PetscInt_FMT " per warp", heavy->S, heavy->H);
  PetscCall(PetscMalloc1(rows, &acc));
  if (heavy->nmulti) PetscCall(PetscMalloc1(heavy->mptr[heavy->nmulti], &part));
  for (PetscInt s0 = 0, w = 0; s0 < L->strips; s0 += S, w++) {
    const PetscInt s1 = PetscMin(s0 + S, L->strips);
    PetscCount     lo = L->sp[s0];

    for (PetscInt q = 0; q < rows; q++) acc[q] = 0;
    for (PetscInt t = heavy->gptr[w]; t < heavy->gptr[w + 1]; t++) { /* the stretches between the heavy rows */
      MatCMRSScanEntries(L, S, E, s0, s1, lo, heavy->hstart[t], x, acc);
      lo = heavy->hend[t];
    }
    MatCMRSScanEntries(L, S, E, s0, s1, lo, L->sp[s1], x, acc);
    for (PetscInt q = 0, t = heavy->gptr[w]; q < rows; q++) {
      const PetscInt row = s0 * H + q;

      if (t < heavy->gptr[w + 1] && heavy->hq[t] == q) { /* a heavy row: below */
        t++;
        continue;
      }
      if (row < L->m) z[row] = y ? y[row] + acc[q] : acc[q];
    }
  }
  for (PetscInt c = 0; c < heavy->nchunks; c++) {
    const PetscCount k0 = heavy->cstart[c], k1 = heavy->cend[c];
    PetscScalar      lane[32] = {0}, s;

    for (PetscCount base = k0; base < k1; base += CMRS_HEAVY_LOADS * 32)
      for (PetscInt j = 0; j < CMRS_HEAVY_LOADS; j++)
        for (PetscInt l = 0; l < 32; l++) {
          const PetscCount k = base + j * 32 + l;

          lane[l] += k < k1 ? L->val[k] * x[MatCMRSColumn(L, k)] : (PetscScalar)0;
        }
    s = MatCMRSHalve(lane);
    if (heavy->cpart[c] >= 0) part[heavy->cpart[c]] = s;
    else z[heavy->crow[c]] = y ? y[heavy->crow[c]] + s : s;
  }
  for (PetscInt i = 0; i < heavy->nmulti; i++) {
    PetscScalar lane[32] = {0}, s;

    for (PetscInt p = heavy->mptr[i]; p < heavy->mptr[i + 1]; p++) lane[(p - heavy->mptr[i]) % 32] += part[p];
    s = MatCMRSHalve(lane);
    z[heavy->mrow[i]] = y ? y[heavy->mrow[i]] + s : s;
  }
  PetscCall(PetscFree(acc));
  PetscCall(PetscFree(part));
  PetscFunctionReturn(PETSC_SUCCESS);
}
