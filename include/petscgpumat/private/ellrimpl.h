#pragma once

/*
  ELLPACK-R (Vazquez, Fernandez, Garzon 2010) with the ELLR-T extension.

  Rows are padded to `width` slots, stored column-major so that consecutive threads read consecutive
  addresses; rl[i] is row i's length, so no thread reads padding. With T threads per row, entry k of row i
  goes to lane k % T and the lanes of a row sit side by side:

      slot(i, k) = ((k / T) * m + i) * T + k % T,   width = (longest row) rounded up to a multiple of T

  T = 1 is the paper's layout (slot = k * m + i). Padding holds value 0 and a valid column.
*/
#include <petscgpumat/private/rowgroupimpl.h>

typedef struct {
  PetscInt     m, n;   /* rows, columns */
  PetscInt     T;      /* threads (lanes) per row */
  PetscInt     width;  /* slots per row */
  PetscInt     maxlen; /* longest row */
  PetscCount   stored; /* m * width */
  int         *rl;     /* [m] row lengths */
  int         *col;    /* [stored] column of each slot */
  PetscScalar *val;    /* [stored] value of each slot */
} MatELLRLayout;

static inline PetscCount MatELLRSlot(PetscInt m, PetscInt T, PetscInt i, PetscInt k)
{
  return ((PetscCount)(k / T) * m + i) * T + k % T;
}

/* The build and gather threads: the row-group engine's (rowgroupimpl.h) */

PETSC_EXTERN PetscErrorCode MatELLRLayoutDestroy(MatELLRLayout *);
PETSC_EXTERN PetscErrorCode MatELLRCheckFill(PetscInt, PetscCount, PetscInt, PetscCount, PetscReal);

/* The plan record (MatGPUMatPlan()): what the next build lays out, decided from the row statistics and the options */
typedef struct {
  PetscInt   T;      /* threads per row (0: automatic and not yet decided, before preallocation) */
  PetscBool  T_auto; /* chosen from the mean row length (MatGPUMatChooseThreadsPerRow()), not set by the user */
  PetscInt   m;      /* rows of the device copy */
  PetscInt   maxlen; /* the longest row */
  PetscInt   width;  /* slots per row: maxlen rounded up to a multiple of T */
  PetscCount nnz;    /* entries */
  PetscCount stored; /* slots: m x width */
} MatELLRPlan;

/* The type's data (A->spptr's format data) */
typedef struct {
  PetscInt    T_option; /* -mat_ellr_threads_per_row; 0: chosen from the mean row length */
  PetscReal   maxfill;  /* -mat_ellr_max_fill: largest stored/nnz accepted; 0: no limit */
  MatELLRPlan plan;
  /* the device copy, as built from the plan */
  PetscInt     T, width, m, maxlen;
  PetscCount   stored;
  int         *d_rl, *d_col;
  PetscScalar *d_val;
  size_t       bytes;
} Mat_SeqELLRCUDA;

PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMult(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchGather(void *, PetscInt, PetscInt, const PetscInt *, const int *, const int *, const PetscScalar *, PetscInt *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchDiagonal(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchFill(void *, PetscInt, PetscInt, PetscInt, PetscBool, const PetscInt *, const PetscInt *, const PetscScalar *, int *, int *, PetscScalar *);
PETSC_EXTERN PetscErrorCode MatELLRCUDAGetDeviceLayout(Mat, MatELLRLayout *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMultBlock(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, PetscInt, PetscScalar *, PetscInt);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMultDot(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, PetscScalar *, const MatGPUMatDotSums *, PetscInt *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMultTranspose(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, PetscScalar *);
