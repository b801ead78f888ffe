/*
  The CMRS "scan" kernel: an H100 kernel on the unsorted CMRS layout (strips, StripPtr, RowInStrip packed in the
  column indices, Val; the layout of Algorithm 1, unchanged). It differs from the papers' kernels in how a warp
  reduces its products, see docs/cmrs.md:

  - a warp takes S consecutive strips (S x height rows), whose entries are contiguous, in passes of 32 x E entries;
    lane l takes the E consecutive entries l E .. l E + E - 1 of a pass (-mat_cmrs_lane_entries, E = 1, 2, 4);
  - each lane loads its entries U passes ahead (column, value, then x), so a warp has U x E x 32 loads of each
    array in flight before it adds anything;
  - in an unsorted strip the entries come row after row, so the warp's local row q = strip-in-warp x height +
    RowInStrip never decreases along a pass: a segmented inclusive scan over the lanes (head flags by ballot,
    only as many shuffle steps as the longest row piece in the pass needs) leaves each row's sum in its last
    lane, which adds it to the row's partial sum in shared memory (one cell per row: S x height sums per warp,
    never the height x 32 buffer of Algorithm 1, and no reduction of that buffer at the end);
  - with E > 1 each lane first adds its E products in order: a row that begins and ends among them is complete and
    goes straight to its cell; only the lane's first row piece (head) and last (tail) meet the other lanes. The
    scan runs over the tails, keyed by the tail's row (a lane of one row passes its sum, plus what came from the
    left, through); a lane of several rows adds the scan's value from the lane before (if its head row goes on
    from there) to its head and writes the head row. So the per-pass work (shuffles, ballots, scan) is paid once
    per 32 E entries. E = 1 is the original kernel, instruction for instruction;
  - the warp writes its S x height results with coalesced stores.

  - a group of strips holding more than 2 C entries (a few long rows) is split into chunks of C entries summed by
    warps of their own (the launch's first warps), the same passes over the chunk's entries, into partial row sums
    that a combine kernel adds in a fixed order, a warp per row (cmrsimpl.h, MatCMRSSplit; -mat_cmrs_split_entries C).
  - or, where the rows longer than 4 means hold a fifth of the entries, the rows longer than T are summed by warps of
    their own (the launch's first warps, in chunks combined the same way) and each group's passes run over the stretches
    between them (cmrsimpl.h, MatCMRSHeavy; -mat_cmrs_heavy_rows, -mat_cmrs_heavy_length).

  No atomics in the sums (the heavy rows' tickets only pick the warp that adds a row's chunks); the order of every
  addition depends only on the layout, S, U, E, C and T, so results are bitwise
  reproducible, and MatCMRSLayoutMultScanSplit() and MatCMRSLayoutMultScanHeavy() (tests/reference/cmrs_emulate.c)
  reproduce them on the host bit for bit. Products are rounded before they are added (no FMA), as on the host. Sorted strips (rows interleaved)
  cannot be scanned: they use Algorithm 1.

  The kernels are templates over S, U, E, the layout's packing and what they do with long rows: 432 of them (324, 7.7 MB
  of SASS, before the heavy rows). CUDA loads a
  module (an object file's device code) whole at the first launch of one of its kernels, lazily, so they are compiled
  in nine objects, one per (U, E), from cmrs_scan_instances.cu: a program's first CMRS product loads one of ~0.9 MB.
  In one object they made the first build of every process 10-13 ms longer (lap3d7 64^3 on an H100: 15-18 ms against
  3-5 ms with CUDA_MODULE_LOADING=EAGER, whatever type was built before).
*/
#pragma once

#include <petscgpumat/private/cmrsimpl.h>
#include <petscgpumat/private/gpumatcuda.h>
#include <type_traits>

namespace
{
constexpr int          kWarp = 32;
constexpr unsigned int kFull = 0xffffffffu;


/* What a launch does with long rows: nothing, the split of long groups (MatCMRSSplit), or the heavy rows (MatCMRSHeavy) */
constexpr int kLongNone  = 0;
constexpr int kLongSplit = 1;
constexpr int kLongHeavy = 2;

/* The split of long groups on the device (MatCMRSSplit, cmrsimpl.h), read only by the kLongSplit kernels */
struct SplitArgs {
  const char       *islong;
  const int        *cgroup, *cqa, *cnq;
  const PetscCount *cstart, *cend, *coff;
  PetscScalar      *part;
  int               nchunks;
};

/* The heavy rows on the device (MatCMRSHeavy, cmrsimpl.h), read only by the kLongHeavy kernels */
struct HeavyArgs {
  const int        *gptr, *hq, *crow, *cpart, *cmulti, *mptr;
  const PetscCount *hstart, *hend, *cstart, *cend;
  PetscScalar      *part;
  unsigned int     *ticket;
  int               nchunks;
};

/*
  The passes of a warp over its group's entries lo .. hi - 1 (from the group's first entry) into the partial sums acc of
  its S H rows: see the comment at the top
*/
template <int S, int U, int E, bool PACKED>
__device__ __forceinline__ void scan_passes(int lo, int hi, const int (&bnd)[S + 1], int H, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *acc)
{
  const int lane = threadIdx.x % kWarp, rows = S * H;

  for (int base = lo; base < hi; base += U * E * kWarp) {
    unsigned int c[U * E];
    int          r[U * E];
    PetscScalar  v[U * E], xv[U * E];

#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int j = 0; j < E; j++) {
        const int k = base + (u * kWarp + lane) * E + j; /* pass u: lane takes E consecutive entries */

        c[u * E + j] = k < hi ? col[k] : 0u;
        v[u * E + j] = k < hi ? val[k] : (PetscScalar)0;
        if (!PACKED) r[u * E + j] = k < hi ? (int)ris[k] : 0;
      }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int j = 0; j < E; j++) {
        const int k = base + (u * kWarp + lane) * E + j;

        xv[u * E + j] = k < hi ? __ldg(x + (PACKED ? (c[u * E + j] & CMRS_COL_MASK) : c[u * E + j])) : (PetscScalar)0;
        if (PACKED) r[u * E + j] = (int)(c[u * E + j] >> CMRS_COL_BITS);
      }
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (base + u * E * kWarp >= hi) break; /* warp-uniform */
      if constexpr (E == 1) {
        const int  k     = base + u * kWarp + lane;
        const bool valid = k < hi;
        int        g     = 0;

#pragma unroll
        for (int t = 1; t < S; t++) g += k >= bnd[t];
        const int          q     = valid ? g * H + r[u] : rows; /* lanes past the end form a segment of their own */
        const int          qup   = __shfl_up_sync(kFull, q, 1);
        const unsigned int heads = __ballot_sync(kFull, lane == 0 || q != qup);
        const int          first = 31 - __clz(heads & (kFull >> (31 - lane))); /* the lane where this lane's row piece starts */
        const int          reach = __reduce_max_sync(kFull, (unsigned int)(lane - first));
        PetscScalar        p     = v[u] * xv[u];

        for (int off = 1; off <= reach; off *= 2) {
          const PetscScalar t = __shfl_up_sync(kFull, p, off);

          if (lane - off >= first) p += t;
        }
        if (valid && (lane == kWarp - 1 || (heads >> (lane + 1) & 1u))) acc[q] += p; /* the last lane of a row piece */
      } else {
        /* the lane's E entries, in order: their rows never decrease (entries past the end get row `rows`) */
        int         q[E];
        PetscScalar h = 0, s = 0;
        bool        multi = false; /* the lane's entries span several rows */

#pragma unroll
        for (int j = 0; j < E; j++) {
          const int k = base + (u * kWarp + lane) * E + j;
          int       g = 0;

#pragma unroll
          for (int t = 1; t < S; t++) g += k >= bnd[t];
          q[j] = k < hi ? g * H + r[u * E + j] : rows;
        }
        /* sequential sums of the lane's row pieces: the first (head) and the last (tail) take part in the scan, the
           rows in between begin and end here, so no other lane adds to them in this pass */
        s = MatGPUMatMulRN(v[u * E], xv[u * E]);
#pragma unroll
        for (int j = 1; j < E; j++) {
          const PetscScalar pj = MatGPUMatMulRN(v[u * E + j], xv[u * E + j]);

          if (q[j] != q[j - 1]) {
            if (multi) acc[q[j - 1]] += s; /* a whole row inside the lane */
            else h = s;
            multi = true;
            s     = pj;
          } else s += pj;
        }
        /* segmented inclusive scan of the tails, keyed by the tail's row; a lane whose entries are all one row passes
           its sum (with what came from the left) through */
        const int          qh    = q[0], qt = q[E - 1];
        const int          qup   = __shfl_up_sync(kFull, qt, 1);
        const unsigned int heads = __ballot_sync(kFull, lane == 0 || qt != qup);
        const unsigned int conts = __ballot_sync(kFull, lane != 0 && qh == qup); /* the head row goes on from the lane before */
        const int          first = 31 - __clz(heads & (kFull >> (31 - lane)));
        const int          reach = __reduce_max_sync(kFull, qt < rows ? (unsigned int)(lane - first) : 0u); /* past-the-end segments need no scan */

        for (int off = 1; off <= reach; off *= 2) {
          const PetscScalar t = __shfl_up_sync(kFull, s, off);

          if (lane - off >= first) s += t;
        }
        const PetscScalar carry = __shfl_up_sync(kFull, s, 1); /* the sum of the head row's pieces in the lanes before */

        if (multi) acc[qh] += (conts >> lane & 1u) ? carry + h : h; /* the head row ends in this lane */
        if (qt < rows && (lane == kWarp - 1 || !(conts >> (lane + 1) & 1u))) acc[qt] += s; /* the tail row ends here */
      }
      __syncwarp(); /* the next pass may add to the same row from another lane */
    }
  }
}

/*
  A chunk of a heavy row (MatCMRSHeavy): lane l adds entries l, l + 32, l + 64, ... of the chunk in order, CMRS_HEAVY_LOADS
  passes loaded at a time, then the warp adds its lanes by halving; a chunk that is its whole row writes it, the others
  their partial sums, and the last of a row's chunks to finish (its ticket) adds them: lane j the row's partial sums j,
  j + 32, ... in that order, then the lanes by halving (MatCMRSLayoutMultScanHeavy())
*/
template <bool PACKED>
__device__ __forceinline__ void heavy_chunk_warp(long long c, const unsigned int *__restrict__ col, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z, const HeavyArgs &heavy)
{
  constexpr int    L    = CMRS_HEAVY_LOADS;
  const int        lane = threadIdx.x % kWarp;
  const PetscCount k0 = heavy.cstart[c], k1 = heavy.cend[c];
  PetscScalar      s = 0;

  for (PetscCount base = k0; base < k1; base += L * kWarp) {
    unsigned int cc[L];
    PetscScalar  v[L], xv[L];

#pragma unroll
    for (int j = 0; j < L; j++) {
      const PetscCount k = base + j * kWarp + lane;

      cc[j] = k < k1 ? col[k] : 0u;
      v[j]  = k < k1 ? val[k] : (PetscScalar)0;
    }
#pragma unroll
    for (int j = 0; j < L; j++) {
      const PetscCount k = base + j * kWarp + lane;

      xv[j] = k < k1 ? __ldg(x + (PACKED ? (cc[j] & CMRS_COL_MASK) : cc[j])) : (PetscScalar)0;
    }
#pragma unroll
    for (int j = 0; j < L; j++) s += MatGPUMatMulRN(v[j], xv[j]);
  }
#pragma unroll
  for (int off = kWarp / 2; off > 0; off /= 2) s += __shfl_down_sync(kFull, s, off);
  {
    const int p = heavy.cpart[c], row = heavy.crow[c];

    if (p < 0) { /* the whole row */
      if (lane == 0) z[row] = y ? y[row] + s : s;
    } else {
      const int mi = heavy.cmulti[c], p0 = heavy.mptr[mi], p1 = heavy.mptr[mi + 1];
      bool      last = false;

      if (lane == 0) {
        heavy.part[p] = s;
        __threadfence(); /* the partial sum before the ticket */
        last = atomicAdd(heavy.ticket + mi, 1u) == (unsigned int)(p1 - p0 - 1);
      }
      if (__shfl_sync(kFull, last, 0)) { /* warp-uniform: the row's other chunks are done */
        PetscScalar acc = 0;

        __threadfence();
        for (int q = p0 + lane; q < p1; q += kWarp) acc += __ldcg(heavy.part + q); /* from L2: written by other SMs */
#pragma unroll
        for (int off = kWarp / 2; off > 0; off /= 2) acc += __shfl_down_sync(kFull, acc, off);
        if (lane == 0) {
          z[row]        = y ? y[row] + acc : acc;
          heavy.ticket[mi] = 0; /* for the next product, which the stream orders after this one */
        }
      }
    }
  }
}

/*
  Warps 0 .. nchunks - 1 sum the chunks of the split groups, each with the same passes as its whole group, into the
  partial sums of the rows it touches; they come first, so that they start with the first blocks instead of after the
  others. Warp nchunks + w sums the S strips of group w (a split group is left to its chunks). With kLongHeavy the first
  warps sum the heavy rows' chunks instead, and a group's warp runs its passes over the entries between its heavy rows and
  leaves those rows to them. kLongNone (no group split, no heavy row) compiles all of that away: the stencils' kernel lost
  3-5 % to the test alone on an H100.
*/
template <int S, int U, int E, bool PACKED, int LONG, bool DOT>
__device__ __forceinline__ void scan_warp(long long wid, int strips, int m, int H, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z, const SplitArgs &split, const HeavyArgs &heavy, PetscScalar *acc, PetscScalar &dot)
{
  constexpr bool  SPLIT = LONG == kLongSplit, HEAVY = LONG == kLongHeavy;
  const int       lane  = threadIdx.x % kWarp, rows = S * H;
  const bool      chunk = SPLIT && wid < split.nchunks; /* warp-uniform */
  const long long w     = chunk ? wid : wid - (SPLIT ? split.nchunks : HEAVY ? heavy.nchunks : 0); /* the chunk, or the group */
  long long       s0, e0;
  int             bnd[S + 1]; /* the warp's strip pointers, from its first entry (32-bit: a warp holds < 2^31 entries) */
  int             lo, hi;     /* the entries this warp sums, from its first entry */
  int             hb = 0, he = 0; /* the group's heavy rows */

  if constexpr (HEAVY) {
    if (wid < heavy.nchunks) { /* warp-uniform */
      heavy_chunk_warp<PACKED>(wid, col, val, x, y, z, heavy);
      return;
    }
  }
  if (chunk) s0 = (long long)split.cgroup[w] * S;
  else {
    s0 = w * S;
    if (s0 >= strips || (SPLIT && split.islong[w])) return;
  }
  {
    const long long mine = sp[min(s0 + (lane < S ? lane : 0), (long long)strips)];

    e0 = __shfl_sync(kFull, mine, 0);
#pragma unroll
    for (int t = 0; t < S; t++) bnd[t] = (int)(__shfl_sync(kFull, mine, t) - e0);
    bnd[S] = (int)(sp[min(s0 + S, (long long)strips)] - e0);
    col += e0, val += e0; /* 32-bit offsets from here on */
    if (!PACKED) ris += e0;
  }
  if (chunk) lo = (int)(split.cstart[w] - e0), hi = (int)(split.cend[w] - e0);
  else lo = 0, hi = bnd[S];
  for (int q = lane; q < rows; q += kWarp) acc[q] = 0;
  __syncwarp();
  if constexpr (HEAVY) { /* the passes run over the stretches between the heavy rows, each from its first entry */
    hb = heavy.gptr[w], he = heavy.gptr[w + 1];
    for (int t = hb; t < he; t++) {
      scan_passes<S, U, E, PACKED>(lo, (int)(heavy.hstart[t] - e0), bnd, H, col, ris, val, x, acc);
      lo = (int)(heavy.hend[t] - e0);
    }
  }
  scan_passes<S, U, E, PACKED>(lo, hi, bnd, H, col, ris, val, x, acc);
  if (chunk) {
    const int        qa = split.cqa[w], nq = split.cnq[w];
    const PetscCount off = split.coff[w];

    for (int q = lane; q < nq; q += kWarp) split.part[off + q] = acc[qa + q];
  } else {
    for (int q = lane; q < rows; q += kWarp) {
      const long long row   = s0 * H + q;
      bool            theirs = false; /* a heavy row: its chunks' warps write it */

      if constexpr (HEAVY)
        for (int t = hb; t < he; t++) theirs = theirs || heavy.hq[t] == q;
      if (row < m && !theirs) {
        z[row] = y ? y[row] + acc[q] : acc[q];
        if constexpr (DOT) dot += x[row] * acc[q];
      }
    }
  }
}

template <int S, int U, int E, bool PACKED, int LONG>
__global__ void __launch_bounds__(1024) cmrs_mult_scan(int strips, int m, int H, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z, SplitArgs split, HeavyArgs heavy)
{
  extern __shared__ unsigned char cmrs_smem[];
  PetscScalar *acc = reinterpret_cast<PetscScalar *>(cmrs_smem) + (threadIdx.x / kWarp) * (S * H);
  PetscScalar  unused;

  scan_warp<S, U, E, PACKED, LONG, false>((long long)blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp, strips, m, H, sp, col, ris, val, x, y, z, split, heavy, acc, unused);
}

/*
  z = A x as cmrs_mult_scan() computes it (no group split: the same warps' passes, the same bits), the warps striding
  over the groups so that at most MATGPUMAT_MAX_DOT_PARTIALS blocks run, and each block's sum of x[i] z[i] over its
  rows to sums.partial[blockIdx.x] (and their sum where sums asks): each lane's rows in the order it writes them, then the warp's lanes by halving, then the
  warps in order (the fused CG's p'Ap without reading p and Ap again)
*/
template <int S, int U, int E, bool PACKED>
__global__ void __launch_bounds__(1024) cmrs_mult_scan_dot(int strips, int m, int H, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *__restrict__ z, const MatGPUMatDotSums sums)
{
  extern __shared__ unsigned char cmrs_smem[];
  const int       warps = blockDim.x / kWarp, warp = threadIdx.x / kWarp;
  const long long groups = (strips + S - 1) / S;
  PetscScalar    *acc    = reinterpret_cast<PetscScalar *>(cmrs_smem) + warp * (S * H);
  const SplitArgs none   = {};
  const HeavyArgs nobin  = {};
  PetscScalar     dot    = 0;

  for (long long w = (long long)blockIdx.x * warps + warp; w < groups; w += (long long)gridDim.x * warps) scan_warp<S, U, E, PACKED, kLongNone, true>(w, strips, m, H, sp, col, ris, val, x, nullptr, z, none, nobin, acc, dot);
  MatGPUMatBlockSumToPartial(dot, sums);
}

/*
  The rows of the split groups, one warp per row: lane j adds the row's partial sums from chunks j, j + 32, j + 64, ...
  of its group, in that order, then the warp adds its 32 lane sums pairwise by halving (lane j + 16 into lane j, then
  j + 8, ..., j + 1). A fixed order, which MatCMRSLayoutMultScanSplit() follows on the host; a row as long as the
  matrix costs its chunks / 32 steps instead of its chunks
*/
__global__ void cmrs_split_combine(int nlong, int rows, int m, const int *__restrict__ longgroup, const int *__restrict__ lc, const int *__restrict__ cqa, const int *__restrict__ cnq, const PetscCount *__restrict__ coff, const PetscScalar *__restrict__ part, const PetscScalar *y, PetscScalar *z)
{
  const long long t    = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / kWarp;
  const int       lane = threadIdx.x % kWarp;

  if (t < (long long)nlong * rows) { /* warp-uniform, as is the row test below */
    const int       l = (int)(t / rows), q = (int)(t % rows);
    const long long row = (long long)longgroup[l] * rows + q;
    PetscScalar     acc = 0;

    if (row >= m) return;
    for (int c = lc[l] + lane; c < lc[l + 1]; c += kWarp) {
      const int qa = cqa[c];

      if (q >= qa && q < qa + cnq[c]) acc += part[coff[c] + q - qa];
    }
#pragma unroll
    for (int off = kWarp / 2; off > 0; off /= 2) acc += __shfl_down_sync(kFull, acc, off);
    if (lane == 0) z[row] = y ? y[row] + acc : acc;
  }
}

template <int S, int U, int E, bool PACKED, int LONG>
void launch_scan_kernel(const Mat_SeqCMRSCUDA *c, cudaStream_t stream, long long nwarps, const SplitArgs &split, const HeavyArgs &heavy, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  const int          warps  = (int)c->plan.block / kWarp;
  const unsigned int blocks = (unsigned int)((nwarps + warps - 1) / warps);
  const size_t       shmem  = (size_t)warps * S * c->height * sizeof(PetscScalar);

  if (!nwarps) return;
  if (shmem > 48 * 1024) (void)cudaFuncSetAttribute(cmrs_mult_scan<S, U, E, PACKED, LONG>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
  cmrs_mult_scan<S, U, E, PACKED, LONG><<<blocks, (unsigned int)c->plan.block, shmem, stream>>>((int)c->strips, (int)c->m, (int)c->height, c->d_sp, c->d_col, c->d_ris, c->d_val, x, y, z, split, heavy);
}

/*
  The chunks of the split groups (or of the heavy rows) and the other groups in one launch, then, where some are split,
  the combine step
*/
template <int S, int U, int E>
void launch_scan(const Mat_SeqCMRSCUDA *c, cudaStream_t stream, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  const long long  groups = (c->strips + S - 1) / S;
  const PetscBool  split  = (PetscBool)(c->split.nlong > 0 && c->split.S == S && c->split.H == c->height);
  const PetscBool  heavy  = (PetscBool)(c->heavy.nheavy > 0 && c->heavy.S == S && c->heavy.H == c->height);
  const SplitArgs  args   = {split ? c->d_split.islong : nullptr, c->d_split.cgroup, c->d_split.cqa, c->d_split.cnq, c->d_split.cstart, c->d_split.cend, c->d_split.coff, c->d_split.part, split ? (int)c->split.nchunks : 0};
  const HeavyArgs  hargs  = {c->d_heavy.gptr, c->d_heavy.hq, c->d_heavy.crow, c->d_heavy.cpart, c->d_heavy.cmulti, c->d_heavy.mptr, c->d_heavy.hstart, c->d_heavy.hend, c->d_heavy.cstart, c->d_heavy.cend, c->d_heavy.part, c->d_heavy.ticket, heavy ? (int)c->heavy.nchunks : 0};

  if (heavy) {
    if (c->packed) launch_scan_kernel<S, U, E, true, kLongHeavy>(c, stream, hargs.nchunks + groups, args, hargs, x, y, z);
    else launch_scan_kernel<S, U, E, false, kLongHeavy>(c, stream, hargs.nchunks + groups, args, hargs, x, y, z);
    return; /* the rows of several chunks were finished by their last chunk's warp */
  }
  if (!split) {
    if (c->packed) launch_scan_kernel<S, U, E, true, kLongNone>(c, stream, groups, args, hargs, x, y, z);
    else launch_scan_kernel<S, U, E, false, kLongNone>(c, stream, groups, args, hargs, x, y, z);
    return;
  }
  if (c->packed) launch_scan_kernel<S, U, E, true, kLongSplit>(c, stream, args.nchunks + groups, args, hargs, x, y, z);
  else launch_scan_kernel<S, U, E, false, kLongSplit>(c, stream, args.nchunks + groups, args, hargs, x, y, z);
  {
    const long long n = (long long)c->split.nlong * S * c->height * kWarp; /* a warp per row */

    cmrs_split_combine<<<(unsigned int)((n + 255) / 256), 256, 0, stream>>>((int)c->split.nlong, S * (int)c->height, (int)c->m, c->d_split.longgroup, c->d_split.lc, c->d_split.cqa, c->d_split.cnq, c->d_split.coff, c->d_split.part, y, z);
  }
}

template <int S, int U, int E, bool PACKED>
void launch_scan_dot_kernel(const Mat_SeqCMRSCUDA *c, cudaStream_t stream, const PetscScalar *x, PetscScalar *z, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  const int          warps  = (int)c->plan.block / kWarp;
  const long long    groups = (c->strips + S - 1) / S;
  const unsigned int blocks = (unsigned int)PetscMin((groups + warps - 1) / warps, (long long)MATGPUMAT_MAX_DOT_PARTIALS);
  const size_t       shmem  = (size_t)warps * S * c->height * sizeof(PetscScalar);

  if (shmem > 48 * 1024) (void)cudaFuncSetAttribute(cmrs_mult_scan_dot<S, U, E, PACKED>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
  cmrs_mult_scan_dot<S, U, E, PACKED><<<blocks, (unsigned int)c->plan.block, shmem, stream>>>((int)c->strips, (int)c->m, (int)c->height, c->d_sp, c->d_col, c->d_ris, c->d_val, x, z, *sums);
  *npartial = (PetscInt)blocks;
}

} // namespace

/* The scan product (and with x'z) for one (U, E): defined for each in its own object, cmrs_scan_instances.cu */
template <int U, int E>
PetscErrorCode MatCMRSScanLaunchMult_Private(cudaStream_t, const Mat_SeqCMRSCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
template <int U, int E>
PetscErrorCode MatCMRSScanLaunchMultDot_Private(cudaStream_t, const Mat_SeqCMRSCUDA *, const PetscScalar *, PetscScalar *, const MatGPUMatDotSums *, PetscInt *);
