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

/* The kernels (-mat_cmrs_variant): Algorithm 1, the padded variant of section 6.7, the H100 segmented-scan kernel */
#define CMRS_VARIANT_BASIC  0
#define CMRS_VARIANT_PADDED 1
#define CMRS_VARIANT_SCAN   2
#define CMRS_VARIANT_AUTO   3 /* scan when the mean row length is at most 32, else basic (H100 sweep) */

/* The type's data */
typedef struct {
  PetscInt  height_option, block_option; /* -mat_cmrs_height (0: automatic), -mat_cmrs_block_size */
  PetscBool sort;                        /* -mat_cmrs_sort */
  PetscInt  variant;                     /* CMRS_VARIANT_BASIC, _PADDED or _SCAN */
  PetscInt  M_option;                    /* -mat_cmrs_buffer_columns: the padded variant's buffer width */
  PetscInt  warp_strips_option;          /* -mat_cmrs_warp_strips: strips per warp of the scan variant (0: automatic) */
  PetscInt  unroll;                      /* -mat_cmrs_unroll: passes loaded ahead by the scan kernel */
  PetscInt  lane_entries;                /* -mat_cmrs_lane_entries: consecutive entries per lane in a pass of the scan kernel (1, 2, 4) */
  PetscBool device_convert;              /* -mat_cmrs_device_convert: pack RowInStrip on the GPU */
  /* the device copy */
  PetscInt       height, block, m, strips, M; /* M > 0: the padded layout is on the device */
  PetscInt       warp_strips;                 /* > 0: the scan kernel runs, with this many strips per warp */
  PetscBool      packed, sorted;
  PetscBool      device_built; /* the layout was packed on the GPU (MatCMRSCUDALaunchPack) */
  PetscCount     nnz;
  PetscCount    *d_sp;
  unsigned int  *d_col;
  unsigned char *d_ris;
  PetscScalar   *d_val;
  size_t         bytes;
} Mat_SeqCMRSCUDA;

PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMult(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultScan(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchPack(PetscInt, PetscInt, PetscInt, const PetscInt *, unsigned int *, PetscCount *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchUnpackColumns(void *, PetscCount, const unsigned int *, PetscInt *);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultBlock(void *, const Mat_SeqCMRSCUDA *, PetscInt, const PetscScalar *, PetscInt, PetscScalar *, PetscInt);
PETSC_INTERN PetscErrorCode MatCMRSCUDALaunchMultTranspose(void *, const Mat_SeqCMRSCUDA *, const PetscScalar *, PetscScalar *);
