#pragma once
/* The built-in matrices of the example programs (bench_spmv, bench_trisolve) and of the tests (TestCreateLaplacian()) */
#include <petscmat.h>

/*
  Built-in matrices on `comm`, assembled in parallel by rows: 2-D 5-point and 3-D 7-point Laplacians on k^d grids, the
  3-D 27-point stencil, and random rows ("rows": n = k^3 rows, lengths uniform in [1, 2*mean-1], columns
  near the diagonal, so the mean row length varies while x stays cache friendly).
*/
static inline PetscErrorCode ExampleCreateProblem(MPI_Comm comm, const char *problem, PetscInt k, PetscInt mean, Mat *A)
{
  PetscBool two, s27, rows;
  PetscInt  dim, n, rstart, rend, maxrow;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(problem, "lap2d5", &two));
  PetscCall(PetscStrcmp(problem, "lap3d27", &s27));
  PetscCall(PetscStrcmp(problem, "rows", &rows));
  dim    = two ? 2 : 3;
  n      = two ? k * k : k * k * k;
  maxrow = s27 ? 27 : rows ? 2 * mean : 2 * dim + 1;
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, PETSC_DECIDE, PETSC_DECIDE, n, n));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, maxrow, NULL));
  PetscCall(MatMPIAIJSetPreallocation(*A, maxrow, NULL, maxrow, NULL));
  PetscCall(MatGetOwnershipRange(*A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscInt    cols[1024], c = 0;
    PetscScalar vals[1024];
    PetscInt    i = row % k, j = (row / k) % k, l = dim == 3 ? row / (k * k) : 0;

    if (rows) {
      PetscInt len = 1 + (PetscInt)((row * 2654435761u) % (unsigned)(2 * mean - 1)), start = PetscMax(0, PetscMin(row - len / 2, n - len));
      for (c = 0; c < len; c++) cols[c] = start + c, vals[c] = (start + c == row) ? 2.0 * len : -1.0;
    } else if (s27) {
      for (PetscInt dl = -1; dl <= 1; dl++)
        for (PetscInt dj = -1; dj <= 1; dj++)
          for (PetscInt di = -1; di <= 1; di++) {
            if (i + di < 0 || i + di >= k || j + dj < 0 || j + dj >= k || l + dl < 0 || l + dl >= k) continue;
            cols[c]   = row + di + dj * k + dl * k * k;
            vals[c++] = (di || dj || dl) ? -1.0 : 26.0;
          }
    } else {
      if (dim == 3 && l > 0) cols[c] = row - k * k, vals[c++] = -1;
      if (j > 0) cols[c] = row - k, vals[c++] = -1;
      if (i > 0) cols[c] = row - 1, vals[c++] = -1;
      cols[c] = row, vals[c++] = 2.0 * dim;
      if (i < k - 1) cols[c] = row + 1, vals[c++] = -1;
      if (j < k - 1) cols[c] = row + k, vals[c++] = -1;
      if (dim == 3 && l < k - 1) cols[c] = row + k * k, vals[c++] = -1;
    }
    PetscCall(MatSetValues(*A, 1, &row, c, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

