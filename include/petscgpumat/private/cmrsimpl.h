#pragma once

/*
  Compressed Multi-Row Storage (Koza, Matyka, Szkoda, Miroslaw 2012/2014).

  Strips of `height` consecutive rows; StripPtr[j] = RowPtr[j*height] (StripPtr[strips] = nnz); Val and ColInd
  are the CSR arrays (optionally sorted by column inside each strip, the papers' fourth optimisation). The row
  of an entry inside its strip, RowInStrip (0..15), is packed into the 4 high bits of its 32-bit column index
  when the matrix has at most 2^28 columns and PetscInt is 32-bit ("packed"); otherwise a separate byte array
  holds it ("unpacked"). No padding: the device stores nnz values, nnz 32-bit words and strips+1 pointers, less
  than CSR's rows+1 offsets.
*/
#include <petscgpumat/private/gpumatimpl.h>

#define CMRS_BITS       4
#define CMRS_COL_BITS   28
#define CMRS_MAX_HEIGHT 16
#define CMRS_COL_MASK   ((1u << CMRS_COL_BITS) - 1u)
/* the padded variant's explicit zeros point at no column, so a NaN or Inf in x cannot leak into a sum */
#define CMRS_PAD_PACKED   CMRS_COL_MASK /* packed layouts of the padded variant need n < 2^28 */
#define CMRS_PAD_UNPACKED 0xFFFFFFFFu

typedef struct {
  PetscInt       m, n, height, strips;
  PetscBool      sorted, packed;
  PetscCount     nnz; /* entries stored (nonzeros, plus the padding of the padded variant) */
  PetscCount    *sp;  /* [strips+1] StripPtr */
  unsigned int  *col; /* [nnz] column, with RowInStrip in the 4 high bits when packed */
  unsigned char *ris; /* [nnz] RowInStrip when not packed, else NULL */
  PetscCount    *src; /* [nnz] CSR position of each entry (sort or arrangement), -1 for padding; NULL: identity */
  PetscInt       M;   /* padded variant: buffer columns; 0 for the basic layout */
  PetscScalar   *val; /* [nnz] */
} MatCMRSLayout;

static inline PetscInt MatCMRSRowInStrip(const MatCMRSLayout *L, PetscCount k)
{
  return L->packed ? (PetscInt)(L->col[k] >> CMRS_COL_BITS) : (PetscInt)L->ris[k];
}

static inline PetscInt MatCMRSColumn(const MatCMRSLayout *L, PetscCount k)
{
  return L->packed ? (PetscInt)(L->col[k] & CMRS_COL_MASK) : (PetscInt)L->col[k];
}

PETSC_EXTERN PetscErrorCode MatCMRSCanPack(PetscInt, PetscBool *);
PETSC_EXTERN PetscErrorCode MatCMRSLayoutCreate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, PetscBool, PetscBool, MatCMRSLayout *);
PETSC_EXTERN PetscErrorCode MatCMRSLayoutCreatePadded(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, PetscInt, PetscBool, MatCMRSLayout *);
PETSC_EXTERN PetscErrorCode MatCMRSLayoutFillValues(const MatCMRSLayout *, const PetscScalar[], PetscScalar[]);
PETSC_EXTERN PetscErrorCode MatCMRSLayoutDestroy(MatCMRSLayout *);

/*
  Long rows in the scan kernel: a warp takes S consecutive strips (a "group") and sums all their entries, so a group
  holding a very long row keeps one warp busy while the others have finished (a crew-scheduling matrix whose longest
  row has 17 663 entries ran 0.24x cuSPARSE). A group of more than 2 C entries (-mat_cmrs_split_entries C) is split
  into chunks of C entries (the last one longer, up to 2 C; longer chunks where C would give more than
  CMRS_SPLIT_MAX_CHUNKS), each summed by its own warp with the same passes as the
  whole group, into partial row sums of the rows the chunk touches; a combine step then adds, for each row of the
  split groups, its partial sums in a fixed order (a warp per row: lane j adds those of chunks j, j + 32, ... in turn,
  then the lanes are added pairwise by halving). No atomics: the results depend only on
  the layout and the parameters, and MatCMRSLayoutMultScanSplit() reproduces them on the host bit for bit. C is a
  multiple of 512 (32 lanes x E x U for every E, U), so that a chunk's passes are the whole group's passes. Row
  splitting as in merge-based SpMV (Merrill and Garland, SC'16), kept deterministic by fixed chunk boundaries.
*/
typedef struct {
  PetscInt    S, H;      /* strips per warp, strip height: what the plan was made for */
  PetscCount  C;         /* entries per chunk */
  PetscInt    ngroups;   /* groups of S strips */
  PetscInt    nlong;     /* groups split into chunks */
  PetscInt    nchunks;   /* chunks of all the split groups */
  PetscCount  nparts;    /* partial sums: the rows each chunk touches, added up */
  char       *islong;    /* [ngroups] 1: the group is split */
  int        *longgroup; /* [nlong] the split groups, in order */
  int        *lc;        /* [nlong + 1] the chunks of split group l: lc[l] .. lc[l + 1] - 1 */
  int        *cgroup;    /* [nchunks] the group of each chunk */
  PetscCount *cstart;    /* [nchunks] its first entry */
  PetscCount *cend;      /* [nchunks] one past its last entry */
  int        *cqa;       /* [nchunks] the first row it touches, within its group (0 .. S H - 1) */
  int        *cnq;       /* [nchunks] the rows it touches */
  PetscCount *coff;      /* [nchunks] where its partial sums begin */
} MatCMRSSplit;

#define CMRS_SPLIT_ALIGN      512
#define CMRS_SPLIT_MAX_CHUNKS 512 /* chunks of one group, beyond which they get longer (H100: arrow matrix best at ~500) */

PETSC_EXTERN PetscErrorCode MatCMRSSplitCreate(PetscInt, PetscInt, const PetscInt[], PetscInt, PetscCount, MatCMRSSplit *);
PETSC_EXTERN PetscErrorCode MatCMRSSplitDestroy(MatCMRSSplit *);

/*
  Heavy rows in the scan kernel: the rows longer than T entries (-mat_cmrs_heavy_length; automatic: 256), summed each
  by warps of their own instead of by the warps of their strips. On power-law graphs such rows are a few percent of
  the rows and hold 20-60 % of the entries, scattered over every group of strips: a group that holds one is several
  times longer than its neighbours (its warp works on while theirs have finished) and pays the scan's per-pass cost on
  entries that need no scan. Here the groups' warps skip the heavy rows' entries (their passes run over each stretch
  of entries between them, from its first entry) and do not write those rows; a heavy row is cut into chunks of at
  most C entries (-mat_cmrs_split_entries), one warp each, the launch's first warps: lane l adds the chunk's entries
  l, l + 32, l + 64, ... in order (4 loads in flight), then the warp adds its lanes by halving (lane j + 16 into lane
  j, then + 8, ..., + 1). A row of one chunk is written by its warp; the chunks of a longer row leave partial sums,
  and the last of its chunks' warps to finish (a ticket per row, the only atomic) adds them as the split's combine
  does (lane j adds chunks j, j + 32, ... in order, then halving): whichever warp it is, the order is the same, and no
  second launch is needed (at ~5 M nonzeros one cost soc-Slashdot0902 8 %). So the bits are the same run to run, and
  MatCMRSLayoutMultScanHeavy() (tests/reference/) reproduces them on the host. Where this plan is made no group is
  split (MatCMRSSplit): what made groups long is taken out of them. The layout is unchanged (CMRS's arrays): the plan
  adds a few integers per heavy row and chunk. Row binning as in the adaptive CSR kernels (CSR-Adaptive, Greathouse
  and Daga, SC'14; merge-based SpMV's row splitting, Merrill and Garland, SC'16), kept deterministic by chunk
  boundaries fixed at the build.
*/
typedef struct {
  PetscInt    S, H;    /* strips per warp, strip height: what the plan was made for */
  PetscInt    T;       /* rows longer than T entries are heavy */
  PetscCount  C;       /* entries per chunk, at most */
  PetscInt    ngroups; /* groups of S strips */
  PetscInt    nheavy;  /* heavy rows */
  PetscCount  entries; /* their entries */
  PetscInt    nchunks; /* their chunks */
  PetscInt    nmulti;  /* heavy rows of more than one chunk */
  int        *gptr;    /* [ngroups + 1] the heavy rows of group w: gptr[w] .. gptr[w + 1] - 1, in row order */
  int        *hq;      /* [nheavy] the row within its group (0 .. S H - 1) */
  PetscCount *hstart;  /* [nheavy] its first entry */
  PetscCount *hend;    /* [nheavy] one past its last entry */
  int        *crow;    /* [nchunks] the row of each chunk */
  PetscCount *cstart;  /* [nchunks] its first entry */
  PetscCount *cend;    /* [nchunks] one past its last entry */
  int        *cpart;   /* [nchunks] where its partial sum goes; -1: the chunk is its whole row, written by its warp */
  int        *cmulti;  /* [nchunks] the row's place among the rows of several chunks (mrow), -1 for a row of one chunk */
  int        *mrow;    /* [nmulti] the rows of several chunks */
  int        *mptr;    /* [nmulti + 1] their partial sums: mptr[i] .. mptr[i + 1] - 1 */
} MatCMRSHeavy;

/* The automatic T: 256 entries. On the H200 (docs/cmrs.md, "Heavy rows") T = 4 means (29-58 entries on the power-law graphs)
   cut the groups' passes into short stretches and lost 4-24 %; T = 128-256 gained 2-14 % there; on rows of 72-78 entries
   on average (MIT8, JohnsHopkins) 256 ran 6-12 % faster than 128 or 512 */
#define CMRS_HEAVY_T         256
#define CMRS_HEAVY_ROW_MEANS 4
#define CMRS_HEAVY_LOADS     4    /* loads in flight per lane in a heavy chunk's warp */
#define CMRS_HEAVY_LONG_MEAN 64   /* the automatic choice: wherever some row is longer than T if the mean row is longer than this, */
#define CMRS_HEAVY_AUTO      0.20 /* else where the rows longer than 4 means also hold this share of the entries */

PETSC_EXTERN PetscErrorCode MatCMRSHeavyCreate(PetscInt, PetscInt, const PetscInt[], PetscInt, PetscInt, PetscCount, MatCMRSHeavy *);
PETSC_EXTERN PetscErrorCode MatCMRSHeavyDestroy(MatCMRSHeavy *);

/* The kernels (-mat_cmrs_variant): Algorithm 1, the padded variant of section 6.7, the H100 segmented-scan kernel */
#define CMRS_VARIANT_BASIC  0
#define CMRS_VARIANT_PADDED 1
#define CMRS_VARIANT_SCAN   2
#define CMRS_VARIANT_AUTO   3 /* scan, with heavy rows where rows are long (docs/cmrs.md); basic above 64 entries a row until 2026-11-29 */

/* -mat_cmrs_heavy_rows */
#define CMRS_HEAVY_ROWS_AUTO 0 /* where some row is longer than T, and the mean row is longer than CMRS_HEAVY_LONG_MEAN or the rows
                                  longer than 4 means hold CMRS_HEAVY_AUTO of the entries */
#define CMRS_HEAVY_ROWS_OFF  1
#define CMRS_HEAVY_ROWS_ON   2

/* The plan record (MatGPUMatPlan()): the kernel, the strip height and the scan kernel's parameters, decided from the
   row statistics and the options; the build lays out with it and the products launch with it */
typedef struct {
  PetscInt   variant;     /* the kernel: CMRS_VARIANT_BASIC, _PADDED or _SCAN (auto resolved by the mean row length) */
  PetscInt   height;      /* rows per strip */
  PetscBool  height_auto; /* not set by the user */
  PetscInt   warp_strips; /* the scan kernel (unsorted, unpadded layout): strips per warp; 0: another kernel */
  PetscInt   unroll;      /* the scan kernel: passes loaded ahead */
  PetscInt   block;       /* threads per block */
  PetscInt   heavy_length; /* the scan kernel: rows longer than this are summed by warps of their own (MatCMRSHeavy); 0: none */
  PetscInt   m;           /* rows of the device copy */
  PetscCount nnz;         /* entries */
  /* the padded variant: the entries a build would store, padding included, measured on the host rows at the first
     query before a build (MatGPUMatGetInfo()) and kept with the plan */
  PetscBool  measured;
  PetscCount measured_stored;
} MatCMRSPlan;

/* The type's data */
typedef struct {
  MatCMRSPlan plan;
  PetscInt  height_option, block_option; /* -mat_cmrs_height (0: automatic), -mat_cmrs_block_size */
  PetscBool sort;                        /* -mat_cmrs_sort */
  PetscInt  variant;                     /* CMRS_VARIANT_BASIC, _PADDED or _SCAN */
  PetscInt  M_option;                    /* -mat_cmrs_buffer_columns: the padded variant's buffer width */
  PetscInt  warp_strips_option;          /* -mat_cmrs_warp_strips: strips per warp of the scan variant (0: automatic) */
  PetscInt  unroll_option;               /* -mat_cmrs_unroll: passes loaded ahead by the scan kernel (0: automatic) */
  PetscInt  lane_entries;                /* -mat_cmrs_lane_entries: consecutive entries per lane in a pass of the scan kernel (1, 2, 4) */
  PetscBool device_convert;              /* -mat_cmrs_device_convert: pack RowInStrip on the GPU */
  PetscInt  split_entries;               /* -mat_cmrs_split_entries: C, entries per chunk of a split group or a heavy row (0: no split) */
  PetscInt  heavy_rows;                  /* -mat_cmrs_heavy_rows: CMRS_HEAVY_ROWS_AUTO, _OFF or _ON */
  PetscInt  heavy_length_option;         /* -mat_cmrs_heavy_length: T (0: automatic) */
  /* the device copy */
  PetscInt       height, m, strips, M; /* M > 0: the padded layout is on the device */
  PetscInt       warp_strips;          /* > 0: the scan kernel runs, with this many strips per warp (the plan's at the build) */
  PetscBool      packed, sorted;
  PetscBool      device_built; /* the layout was packed on the GPU (MatCMRSCUDALaunchPack) */
  PetscCount     nnz;
  PetscCount    *d_sp;
  unsigned int  *d_col;
  unsigned char *d_ris;
  PetscScalar   *d_val;
  size_t         bytes;
  /* the scan kernel's split of long groups, made at the build with its parameters (nlong = 0: none) */
  MatCMRSSplit split;
  /* the scan kernel's heavy rows, made at the build with its parameters (nheavy = 0: none) */
  MatCMRSHeavy heavy;
  struct {
    void        *buffer; /* one allocation, one upload: the arrays below point into it */
    int          *gptr, *hq, *crow, *cpart, *cmulti, *mptr;
    unsigned int *ticket; /* [nmulti] the chunks of each row of several that have finished, back at 0 after its last */
    PetscCount  *hstart, *hend, *cstart, *cend;
    PetscScalar *part;
  } d_heavy;
  struct {
    void        *buffer; /* one allocation, one upload: the arrays below point into it */
    char        *islong;
    int         *longgroup, *lc, *cgroup, *cqa, *cnq;
    PetscCount  *cstart, *cend, *coff;
    PetscScalar *part;
  } d_split;
} Mat_SeqCMRSCUDA;

PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMult(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultScan(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscBool      MatCMRSCUDACanMultDot(const Mat_SeqCMRSCUDA *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultScanDot(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, PetscScalar *, const MatGPUMatDotSums *, PetscInt *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchPack(void *, PetscInt, PetscInt, PetscInt, PetscCount, const PetscInt *, unsigned int *, PetscCount *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchUnpackColumns(void *, PetscCount, const unsigned int *, PetscInt *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultBlock(void *, const Mat_SeqCMRSCUDA *, PetscInt, const PetscScalar *, PetscInt, PetscScalar *, PetscInt);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultTranspose(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, PetscScalar *);
