#pragma once

/*
  Row-grouped CSR (Oberhuber, Suzuki, Vacata 2010), with two extensions: the rows may be reordered by
  decreasing length inside windows of W rows (the paper's future work), and T threads may share a row.

  Rows are taken in stored order p = 0..m-1 (perm[p] is the matrix row stored at p; identity when W = 0) and
  cut into groups of G rows (the last may be shorter). Inside group g, of Gg rows, padded to K_g slots per row
  (the group's longest row rounded up to a multiple of T), entry k of the group's row t sits at

      gp[g] + ((k / T) * Gg + t) * T + k % T,     gp[g + 1] = gp[g] + K_g * Gg

  so the first entries of all the group's rows come first, then the second ones, ... (column-major inside the
  group, the lanes of a row side by side when T > 1). rl[p] is the stored row's length: no padding is read.
  Padding holds value 0 and a valid column.
*/
#include <petscgpumat/private/rowgroupimpl.h>

typedef struct {
  PetscInt     m, n;    /* rows, columns */
  PetscInt     G, T, W; /* group size, threads per row, sort window (0: no reordering) */
  PetscInt     ngroups;
  PetscInt     maxlen;  /* longest row */
  PetscCount   stored;  /* gp[ngroups] */
  PetscCount  *gp;      /* [ngroups+1] group offsets */
  int         *rl;      /* [m] row lengths, stored order */
  int         *perm;    /* [m] matrix row of each stored row; NULL when W = 0 */
  int         *col;     /* [stored] */
  PetscScalar *val;     /* [stored] */
} MatRgCSRLayout;

static inline PetscCount MatRgCSRSlot(const MatRgCSRLayout *L, PetscInt p, PetscInt k)
{
  const PetscInt g = p / L->G, t = p % L->G, Gg = PetscMin(L->G, L->m - g * L->G);

  return L->gp[g] + ((PetscCount)(k / L->T) * Gg + t) * L->T + k % L->T;
}

/* The build and gather threads: the row-group engine's (rowgroupimpl.h) */

PETSC_EXTERN PetscErrorCode MatRgCSRLayoutCreateGroups(PetscInt, PetscInt, const PetscInt[], PetscInt, PetscInt, PetscInt, MatRgCSRLayout *);
PETSC_EXTERN PetscErrorCode MatRgCSRLayoutMeasure(PetscInt, PetscInt, const PetscInt[], PetscInt, PetscInt, PetscInt, PetscInt *, PetscCount *);
PETSC_EXTERN PetscErrorCode MatRgCSRLayoutDestroy(MatRgCSRLayout *);
PETSC_EXTERN PetscErrorCode MatRgCSRCheckParameters(PetscInt, PetscInt, PetscInt, PetscInt, PetscInt);
PETSC_EXTERN PetscErrorCode MatRgCSRCheckFill(PetscInt, PetscCount, PetscInt, PetscCount, PetscReal);

/* The plan record (MatGPUMatPlan()): the parameters the next build lays out with, from the row statistics and the
   options; whether reordering pays (-mat_rgcsr_sort_min_saving) is measured by the build on the row lengths */
typedef struct {
  PetscInt  G;      /* rows per group */
  PetscInt  T;      /* threads per row (0: automatic and not yet decided, before preallocation) */
  PetscBool T_auto; /* chosen from the mean row length (MatGPUMatChooseThreadsPerRow()) */
  PetscInt  W;      /* sort window asked for (0: no reordering; >= rows: one global window) */
  PetscInt  m;      /* rows of the device copy */
  /* what a build would store, measured on the host rows at the first query before a build (MatGPUMatGetInfo()) and
     kept with the plan: the window reordering keeps (0: none) and the slots */
  PetscBool  measured;
  PetscInt   measured_W;
  PetscCount measured_stored;
} MatRgCSRPlan;

/* The type's data */
typedef struct {
  MatRgCSRPlan plan;
  PetscInt  G_option, T_option, W_option; /* -mat_rgcsr_group_size, _threads_per_row (0: automatic), _sort_window */
  PetscReal maxfill;                      /* -mat_rgcsr_max_fill (0: no limit) */
  PetscReal minsaving;                    /* -mat_rgcsr_sort_min_saving: sort only if it cuts this fraction of the slots */
  PetscBool sort_skipped;                 /* the last build did not sort: it would have saved too little */
  /* the device copy */
  PetscInt     G, T, W, m, ngroups, maxlen;
  PetscCount   stored;
  PetscCount  *d_gp;
  int         *d_rl, *d_perm, *d_col;
  PetscScalar *d_val;
  size_t       bytes;
} Mat_SeqRGCSRCUDA;

PETSC_EXTERN PetscErrorCode MatRGCSRCUDAGetDeviceLayout(Mat, MatRgCSRLayout *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDABuildGroups(Mat, void *, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt *, int **, int **, PetscCount **, PetscInt *, PetscCount *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchFill(void *, const Mat_SeqRGCSRCUDA *, PetscBool, const PetscInt *, const PetscInt *, const PetscScalar *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchGather(void *, const Mat_SeqRGCSRCUDA *, const PetscInt *, PetscInt *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchDiagonal(void *, const Mat_SeqRGCSRCUDA *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchMult(void *, const Mat_SeqRGCSRCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchMultDot(void *, const Mat_SeqRGCSRCUDA *, const PetscScalar *, PetscScalar *, const MatGPUMatDotSums *, PetscInt *);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchMultBlock(void *, const Mat_SeqRGCSRCUDA *, PetscInt, const PetscScalar *, PetscInt, PetscScalar *, PetscInt);
PETSC_INTERN PetscErrorCode MatRgCSRCUDALaunchMultTranspose(void *, const Mat_SeqRGCSRCUDA *, const PetscScalar *, PetscScalar *);
