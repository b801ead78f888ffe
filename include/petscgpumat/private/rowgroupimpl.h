#pragma once

/*
  The row-group engine's build and gather, thread by thread, in C: the device kernels of the formats built on it
  (ELLPACK-R, RgCSR) and their host emulations (tests/reference/) run these same functions. The layout is described
  in rowgroupcuda.h: stored row p of group g (Gg rows, padded to K slots a row) has entry k at
  gp[g] + ((k / T) * Gg + t) * T + k % T. gp NULL is one group of all m rows padded to `width` slots a row
  (ELLPACK-R, whose build also writes the row lengths); otherwise groups of G rows at the offsets gp (RgCSR, whose
  groups step wrote the row lengths rl and the permutation perm, NULL for none).
*/
#include <petscgpumat/private/gpumatimpl.h>

#if defined(__CUDACC__)
  #define MATROWGROUP_HOST_DEVICE __host__ __device__
#else
  #define MATROWGROUP_HOST_DEVICE
#endif

/* Stored row p's first slot for lane `lane`, the step between that lane's slots, and the row's padded length K */
static inline MATROWGROUP_HOST_DEVICE void MatRowGroupSlots(int m, int G, int T, int width, const PetscCount *gp, int p, int lane, PetscCount *first, PetscCount *step, int *K)
{
  if (!gp) {
    *first = (PetscCount)p * T + lane;
    *step  = (PetscCount)m * T;
    *K     = width;
  } else {
    const int g = p / G, t = p - g * G, Gg = m - g * G < G ? m - g * G : G;

    *first = gp[g] + (PetscCount)t * T + lane;
    *step  = (PetscCount)Gg * T;
    *K     = (int)((gp[g + 1] - gp[g]) / Gg);
  }
}

/*
  The build, thread by thread: thread tid = (stored row p, lane) writes the slots lane, lane + T, ... of p up to its
  padded length (consecutive threads, consecutive addresses). structure: a build (col and val; padding repeats the
  row's last column, value 0; with gp NULL also rl[p]), else a value refresh (val only, aj unused). col and val are
  NULL where nothing is stored (cudaMalloc of 0 bytes).
*/
static inline MATROWGROUP_HOST_DEVICE void MatRowGroupFillThread(long long tid, int m, int G, int T, int width, const PetscCount *gp, const int *perm, int structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, int *rl, int *col, PetscScalar *val)
{
  const int      p = (int)(tid / T), lane = (int)(tid % T), i = perm ? perm[p] : p;
  const PetscInt start = ai[i];
  const int      len   = (int)(ai[i + 1] - start);
  const int      pad   = structure && len ? (int)aj[start + len - 1] : 0;
  PetscCount     s, step;
  int            K;

  MatRowGroupSlots(m, G, T, width, gp, p, lane, &s, &step, &K);
  if (structure && !gp && lane == 0) rl[p] = len;
  for (int k = lane; k < K; k += T, s += step) {
    if (structure) col[s] = k < len ? (int)aj[start + k] : pad;
    val[s] = k < len ? aa[start + k] : (PetscScalar)0;
  }
}

/*
  The inverse of the build, thread by thread: thread tid = (stored row p, lane) copies its slots below rl[p] back to
  its matrix row's CSR places (columns and values; either output may be NULL), for what reads the device CSR besides
  the products (the device ILU(0)/ICC(0) factor)
*/
static inline MATROWGROUP_HOST_DEVICE void MatRowGroupGatherThread(long long tid, int m, int G, int T, const PetscCount *gp, const int *perm, const PetscInt *ai, const int *rl, const int *col, const PetscScalar *val, PetscInt *aj, PetscScalar *aa)
{
  const int      p = (int)(tid / T), lane = (int)(tid % T), len = rl[p];
  const PetscInt start = ai[perm ? perm[p] : p];
  PetscCount     s, step;
  int            K;

  MatRowGroupSlots(m, G, T, 0, gp, p, lane, &s, &step, &K);
  for (int k = lane; k < len; k += T, s += step) {
    if (aj) aj[start + k] = (PetscInt)col[s];
    if (aa) aa[start + k] = val[s];
  }
}

/*
  The diagonal, thread by thread: thread p (a stored row) writes d[i], i its matrix row, the value of the row's entry in
  column i, 0 where it has none. The columns of a row ascend (CSR's order, which the build keeps), so the walk stops at
  the first column at or past i. With T lanes, entry k of the row sits at lane k % T's (k / T)-th slot.
*/
static inline MATROWGROUP_HOST_DEVICE void MatRowGroupDiagonalThread(int p, int m, int G, int T, const PetscCount *gp, const int *perm, const int *rl, const int *col, const PetscScalar *val, PetscScalar *d)
{
  const int   i = perm ? perm[p] : p, len = rl[p];
  PetscScalar v = 0;
  PetscCount  first, step;
  int         K;

  MatRowGroupSlots(m, G, T, 0, gp, p, 0, &first, &step, &K);
  for (int k = 0; k < len; k++) {
    const PetscCount s = first + (PetscCount)(k / T) * step + k % T;

    if (col[s] < i) continue;
    if (col[s] == i) v = val[s];
    break;
  }
  d[i] = v;
}
