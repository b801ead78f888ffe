#pragma once

/*
  ELLPACK-R (Vazquez, Fernandez, Garzon 2010) with the ELLR-T extension.

  Rows are padded to `width` slots, stored column-major so that consecutive threads read consecutive
  addresses; rl[i] is row i's length, so no thread reads padding. With T threads per row, entry k of row i
  goes to lane k % T and the lanes of a row sit side by side:

      slot(i, k) = ((k / T) * m + i) * T + k % T,   width = (longest row) rounded up to a multiple of T

  T = 1 is the paper's layout (slot = k * m + i). Padding holds value 0 and a valid column.
*/
#include <petscgpumat/private/gpumatimpl.h>

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

#if defined(__CUDACC__)
  #define MATELLR_HOST_DEVICE __host__ __device__
#else
  #define MATELLR_HOST_DEVICE
#endif

/*
  The device build, thread by thread: thread tid = (row, lane) of an m-row CSR writes slots lane, lane + T, ... of
  its row (consecutive threads, consecutive addresses), the slots MatELLRLayoutCreate() makes on the host.
  structure: a build (rl, col and val; padding repeats the row's last column, value 0), else a value refresh (val
  only, aj unused). col and val are NULL where nothing is stored (width 0: cudaMalloc of 0 bytes). The kernel
  (ellr_fill) and the host emulation (MatELLRLayoutFillEmulate(), for the CPU tests) both run this function.
*/
static inline MATELLR_HOST_DEVICE void MatELLRFillThread(long long tid, int m, int T, int width, int structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, int *rl, int *col, PetscScalar *val)
{
  const int       row = (int)(tid / T), lane = (int)(tid % T);
  const PetscInt  start  = ai[row];
  const int       len    = (int)(ai[row + 1] - start);
  const int       pad    = structure && len ? (int)aj[start + len - 1] : 0;
  const long long stride = (long long)m * T;
  long long       s      = tid;

  if (structure && lane == 0) rl[row] = len;
  for (int k = lane; k < width; k += T, s += stride) {
    if (structure) col[s] = k < len ? (int)aj[start + k] : pad;
    val[s] = k < len ? aa[start + k] : (PetscScalar)0;
  }
}

/*
  The inverse of the build, thread by thread: thread tid = (row, lane) copies its slots back to the row's CSR places
  (columns and values; either output may be NULL), for what reads the device CSR besides the products (the device
  ILU(0)/ICC(0) factor). The kernel (ellr_gather) and the host emulation (MatELLRLayoutGatherEmulate()) run this.
*/
static inline MATELLR_HOST_DEVICE void MatELLRGatherThread(long long tid, int m, int T, const PetscInt *ai, const int *rl, const int *col, const PetscScalar *val, PetscInt *aj, PetscScalar *aa)
{
  const int       row = (int)(tid / T), lane = (int)(tid % T), len = rl[row];
  const PetscInt  start  = ai[row];
  const long long stride = (long long)m * T;
  long long       s      = tid;

  for (int k = lane; k < len; k += T, s += stride) {
    if (aj) aj[start + k] = (PetscInt)col[s];
    if (aa) aa[start + k] = val[s];
  }
}

PETSC_EXTERN PetscErrorCode MatELLRLayoutMeasure(PetscInt, PetscInt, const PetscInt[], PetscInt, PetscInt *, PetscInt *, PetscCount *);
PETSC_EXTERN PetscErrorCode MatELLRLayoutCreate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, MatELLRLayout *);
PETSC_EXTERN PetscErrorCode MatELLRLayoutFillValues(const MatELLRLayout *, const PetscInt[], const PetscScalar[], PetscScalar[]);
PETSC_EXTERN PetscErrorCode MatELLRLayoutDestroy(MatELLRLayout *);
PETSC_EXTERN PetscErrorCode MatELLRCheckFill(PetscInt, PetscCount, PetscInt, PetscCount, PetscReal);

/* The type's data (A->spptr's format data) */
typedef struct {
  PetscInt  T_option; /* -mat_ellr_threads_per_row; 0: chosen from the mean row length */
  PetscReal maxfill;  /* -mat_ellr_max_fill: largest stored/nnz accepted; 0: no limit */
  /* the device copy */
  PetscInt     T, width, m, maxlen;
  PetscCount   stored;
  int         *d_rl, *d_col;
  PetscScalar *d_val;
  size_t       bytes;
} Mat_SeqELLRCUDA;

PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMult(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchGather(void *, PetscInt, PetscInt, const PetscInt *, const int *, const int *, const PetscScalar *, PetscInt *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchFill(void *, PetscInt, PetscInt, PetscInt, PetscBool, const PetscInt *, const PetscInt *, const PetscScalar *, int *, int *, PetscScalar *);
PETSC_EXTERN PetscErrorCode MatELLRCUDAGetDeviceLayout(Mat, MatELLRLayout *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMultBlock(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, PetscInt, PetscScalar *, PetscInt);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMultDot(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, PetscScalar *, PetscScalar *, PetscInt *);
PETSC_INTERN PetscErrorCode MatELLRCUDALaunchMultTranspose(void *, PetscInt, PetscInt, const int *, const int *, const PetscScalar *, const PetscScalar *, PetscScalar *);
