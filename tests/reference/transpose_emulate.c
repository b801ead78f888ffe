/*
  Host emulation of the device transpose's product (src/base/gpumat_transpose.cu): z = A^T x (+ y) for an m x n CSR
  matrix A, the transpose's rows in the order of a stable sort of A's entries by column, each row summed by the
  kernel's lanes (MatGPUMatTransposeLanes()), lane l taking entries l, l + L, ... in order, then the lanes halving
  (lane k adds lane k + offset). The kernel's bits exactly.
*/
#include "emulate.h"

PetscErrorCode MatGPUMatTransposeMultEmulate(PetscInt m, PetscInt n, const PetscInt ai[], const PetscInt aj[], const PetscScalar aa[], const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  PetscInt    *ti, *next, *tj, L;
  PetscScalar *ta, part[32];

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(n + 1, &ti));
  PetscCall(PetscMalloc3(n, &next, ai[m], &tj, ai[m], &ta));
  for (PetscInt k = 0; k < ai[m]; k++) ti[aj[k] + 1]++;
  for (PetscInt c = 0; c < n; c++) ti[c + 1] += ti[c];
  for (PetscInt c = 0; c < n; c++) next[c] = ti[c];
  for (PetscInt i = 0; i < m; i++) /* rows in order: stable within each column */
    for (PetscInt k = ai[i]; k < ai[i + 1]; k++) {
      tj[next[aj[k]]]   = i;
      ta[next[aj[k]]++] = aa[k];
    }
  L = MatGPUMatTransposeLanes(n, ai[m]);
  for (PetscInt r = 0; r < n; r++) {
    for (PetscInt l = 0; l < L; l++) {
      part[l] = 0;
      for (PetscInt k = ti[r] + l; k < ti[r + 1]; k += L) part[l] = part[l] + ta[k] * x[tj[k]];
    }
    for (PetscInt offset = L / 2; offset > 0; offset /= 2)
      for (PetscInt l = 0; l < offset; l++) part[l] = part[l] + part[l + offset];
    z[r] = y ? y[r] + part[0] : part[0];
  }
  PetscCall(PetscFree(ti));
  PetscCall(PetscFree3(next, tj, ta));
  PetscFunctionReturn(PETSC_SUCCESS);
}
