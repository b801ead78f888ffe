#pragma once

/*
  Helpers of the MPI tests: a seq test matrix (the same on every rank) distributed as an assembled parallel
  matrix, vectors whose entries depend only on their global index, and the four products of a parallel matrix
  checked, row by row, against the float64 reference of the seq matrix.
*/
#include "testutil.h"

/* A value in [-1, 1) from (seed, global index): the same on every rank and every layout */
static inline PetscScalar TestHashValue(PetscInt seed, PetscInt i)
{
  unsigned long long h = (unsigned long long)(i + 1) * 0x9E3779B97F4A7C15ull ^ (unsigned long long)(seed + 7) * 0xC2B2AE3D27D4EB4Full;

  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return (PetscScalar)((double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static inline PetscErrorCode TestFillVec(Vec v, PetscInt seed)
{
  PetscInt     lo, hi;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(VecGetOwnershipRange(v, &lo, &hi));
  PetscCall(VecGetArrayWrite(v, &a));
  for (PetscInt i = lo; i < hi; i++) a[i - lo] = TestHashValue(seed, i);
  PetscCall(VecRestoreArrayWrite(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  S (seq, identical on every rank) as a parallel matrix with PETSc's default split of rows and columns.
  type: set before preallocation (NULL: MATAIJ). The rows are inserted with exact preallocation.
*/
static inline PetscErrorCode TestDistribute(MPI_Comm comm, Mat S, MatType type, Mat *A)
{
  PetscInt M, N, m = PETSC_DECIDE, n = PETSC_DECIDE, rstart = 0, cstart = 0, *dnnz, *onnz;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(S, &M, &N));
  PetscCall(PetscSplitOwnership(comm, &m, &M));
  PetscCall(PetscSplitOwnership(comm, &n, &N));
  PetscCallMPI(MPI_Exscan(&m, &rstart, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Exscan(&n, &cstart, 1, MPIU_INT, MPI_SUM, comm));
  {
    PetscMPIInt rank;

    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    if (!rank) rstart = cstart = 0; /* MPI_Exscan leaves rank 0's result undefined */
  }
  PetscCall(PetscCalloc2(m, &dnnz, m, &onnz));
  for (PetscInt i = 0; i < m; i++) {
    const PetscInt *cols;
    PetscInt        nc;

    PetscCall(MatGetRow(S, rstart + i, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k++) {
      if (cols[k] >= cstart && cols[k] < cstart + n) dnnz[i]++;
      else onnz[i]++;
    }
    PetscCall(MatRestoreRow(S, rstart + i, &nc, &cols, NULL));
  }
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, m, n, M, N));
  PetscCall(MatSetType(*A, type ? type : MATAIJ));
  PetscCall(MatXAIJSetPreallocation(*A, 1, dnnz, onnz, NULL, NULL));
  PetscCall(PetscFree2(dnnz, onnz));
  for (PetscInt i = rstart; i < rstart + m; i++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           nc;

    PetscCall(MatGetRow(S, i, &nc, &cols, &vals));
    PetscCall(MatSetValues(*A, 1, &i, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(S, i, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscErrorCode TestCreateVecType(MPI_Comm comm, PetscInt nlocal, PetscInt nglobal, VecType vtype, Vec *v)
{
  PetscFunctionBeginUser;
  PetscCall(VecCreate(comm, v));
  PetscCall(VecSetSizes(*v, nlocal, nglobal));
  PetscCall(VecSetType(*v, vtype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The four products of the parallel matrix A (MatMult, MatMultAdd with y != z and y == z, MatMultTranspose,
  MatMultTransposeAdd) on vectors of type vtype, outputs poisoned with NaN, against the float64 reference of S
  (the same matrix, seq). One TEST_CHECK per product; the error is the largest over the ranks.
*/
static inline PetscErrorCode TestMPIProducts(Mat A, Mat S, VecType vtype, PetscInt seed, const char *label)
{
  static const char *const names[] = {"MatMult", "MatMultAdd (y != z)", "MatMultAdd (y == z)", "MatMultTranspose", "MatMultTransposeAdd"};
  MPI_Comm                 comm     = PetscObjectComm((PetscObject)A);
  PetscInt                 M, N, m, n;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatGetLocalSize(A, &m, &n));
  for (PetscInt op = 0; op < 5; op++) {
    const PetscBool    trans = (PetscBool)(op >= 3), add = (PetscBool)(op == 1 || op == 2 || op == 4);
    const PetscInt     nin = trans ? M : N, nout = trans ? N : M;
    Vec                x, y = NULL, z;
    PetscScalar       *xf, *yf = NULL;
    double            *ref, *mag, err = 0, errmax;
    const PetscScalar *za;
    PetscInt           lo, hi;
    PetscBool          nan_mismatch = PETSC_FALSE;
    int                bad, badmax;

    PetscCall(TestCreateVecType(comm, trans ? m : n, nin, vtype, &x));
    PetscCall(TestCreateVecType(comm, trans ? n : m, nout, vtype, &z));
    PetscCall(TestFillVec(x, seed + op));
    if (add) {
      PetscCall(VecDuplicate(z, &y));
      PetscCall(TestFillVec(y, seed + 10 + op));
    }
    PetscCall(VecSet(z, NAN));
    switch (op) {
    case 0: PetscCall(MatMult(A, x, z)); break;
    case 1: PetscCall(MatMultAdd(A, x, y, z)); break;
    case 2: PetscCall(VecCopy(y, z)); PetscCall(MatMultAdd(A, x, z, z)); break;
    case 3: PetscCall(MatMultTranspose(A, x, z)); break;
    default: PetscCall(MatMultTransposeAdd(A, x, y, z)); break;
    }
    /* the reference, from the full vectors every rank can compute */
    PetscCall(PetscMalloc4(nin, &xf, nout, &yf, nout, &ref, nout, &mag));
    for (PetscInt i = 0; i < nin; i++) xf[i] = TestHashValue(seed + op, i);
    for (PetscInt i = 0; i < nout; i++) yf[i] = TestHashValue(seed + 10 + op, i);
    PetscCall(TestReferenceProduct(S, trans, xf, add ? yf : NULL, ref));
    PetscCall(TestReferenceMagnitude(S, trans, xf, add ? yf : NULL, mag));
    PetscCall(VecGetOwnershipRange(z, &lo, &hi));
    PetscCall(VecGetArrayRead(z, &za));
    PetscCall(TestScaledError(hi - lo, za, ref + lo, mag + lo, &err, &nan_mismatch));
    PetscCall(VecRestoreArrayRead(z, &za));
    PetscCall(PetscFree4(xf, yf, ref, mag));
    bad = nan_mismatch ? 1 : 0;
    PetscCallMPI(MPIU_Allreduce(&err, &errmax, 1, MPI_DOUBLE, MPI_MAX, comm));
    PetscCallMPI(MPIU_Allreduce(&bad, &badmax, 1, MPI_INT, MPI_MAX, comm));
    TEST_CHECK(!badmax && errmax <= TestTolerance(), "%s: %s on %s vectors, scaled error %.2e%s", label, names[op], vtype, errmax, badmax ? " (NaN where the reference has none)" : "");
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&z));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
