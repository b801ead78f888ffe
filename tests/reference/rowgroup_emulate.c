/* The host emulation of the row-group engine's product (rowgroupcuda.h), for ELLPACK-R and RgCSR: the tests' bit-for-bit reference (compiled with -ffp-contract=off, into the tests only) */
#include <petscgpumat/private/rowgroupimpl.h>
#include "emulate.h"

/*
  z = A x (+ y) computed the way the kernel does: lane t of stored row p sums its slots below rl[p], then the lanes
  are combined pairwise (lane t += lane t + T/2, then T/4, ...), as the warp shuffle does; z written at the row's
  matrix row (perm). gp NULL: one group of all m rows (ELLPACK-R)
*/
PetscErrorCode MatRowGroupEmulateMult(PetscInt m, PetscInt G, PetscInt T, const PetscCount gp[], const int perm[], const int rl[], const int col[], const PetscScalar val[], const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  PetscScalar lane[32];

  PetscFunctionBegin;
  for (PetscInt p = 0; p < m; p++) {
    const PetscInt i = perm ? perm[p] : p;

    for (PetscInt t = 0; t < T; t++) {
      PetscCount s, step;
      int        K;

      MatRowGroupSlots((int)m, (int)G, (int)T, 0, gp, (int)p, (int)t, &s, &step, &K);
      lane[t] = 0;
      for (PetscInt k = t; k < rl[p]; k += T, s += step) lane[t] += val[s] * x[col[s]];
    }
    for (PetscInt half = T / 2; half > 0; half /= 2)
      for (PetscInt t = 0; t < half; t++) lane[t] += lane[t + half];
    z[i] = y ? y[i] + lane[0] : lane[0];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The layout's diagonal as the device kernel reads it: every stored row's thread (MatRowGroupDiagonalThread()) in turn */
PetscErrorCode MatRowGroupEmulateDiagonal(PetscInt m, PetscInt G, PetscInt T, const PetscCount gp[], const int perm[], const int rl[], const int col[], const PetscScalar val[], PetscScalar d[])
{
  PetscFunctionBegin;
  for (PetscInt p = 0; p < m; p++) MatRowGroupDiagonalThread((int)p, (int)m, (int)G, (int)T, gp, perm, rl, col, val, d);
  PetscFunctionReturn(PETSC_SUCCESS);
}
