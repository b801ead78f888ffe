#pragma once

/*
  Helpers shared by the test programs: PASS/FAIL/SKIP reporting, generated test matrices (edge cases and
  stencils), a float64 host reference product, and error-path checking.
*/
#include <petscgpumat.h>
#include <petscgpumat/private/petsccompat.h> /* PETSc-version differences the tests meet */
#include <unistd.h>
#include "../../examples/problems.h"

typedef struct {
  PetscInt passed, failed, skipped;
} TestCounts;

static TestCounts test_counts;

#define TEST_CHECK(cond, ...) \
  do { \
    char _what[512]; \
    PetscCall(PetscSNPrintf(_what, sizeof(_what), __VA_ARGS__)); \
    if (cond) { \
      test_counts.passed++; \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS: %s\n", _what)); \
    } else { \
      test_counts.failed++; \
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s (%s:%d)\n", _what, __FILE__, __LINE__)); \
    } \
  } while (0)

/*
  A KSP solve with our type against aijcusparse's: in double, the same iterations and solutions within tol; in
  single precision the formats' different summation orders round differently and the Krylov iterates drift apart,
  so iterations within 15 % (at least 2) and solutions within 1e-4 (relative)
*/
static inline PetscBool TestSameKSP(PetscInt its, PetscInt itsref, PetscReal reldiff, PetscReal tol)
{
#if defined(PETSC_USE_REAL_SINGLE)
  (void)tol;
  return (PetscBool)(PetscAbsInt(its - itsref) <= PetscMax(2, (15 * itsref) / 100) && reldiff <= 1e-4);
#else
  return (PetscBool)(its == itsref && reldiff <= tol);
#endif
}

static inline PetscErrorCode TestSkip(const char *what, const char *reason)
{
  PetscFunctionBeginUser;
  test_counts.skipped++;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SKIP: %s: %s\n", what, reason));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Exit status of a test program: nonzero if anything failed */
static inline int TestExitCode(void)
{
  return test_counts.failed ? 1 : 0;
}

/* Run `call` expecting a PETSc error; *code receives the error code (0 if none). Errors print nothing. */
#define TEST_EXPECT_ERROR(code, call) \
  do { \
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); \
    *(code) = (call); \
    PetscCall(PetscPopErrorHandler()); \
  } while (0)

/* Set one option, call MatSetFromOptions, expect error code `expected` (PETSC_SUCCESS: none), remove the option */
static inline PetscErrorCode TestSetOptionExpect(Mat A, const char *name, const char *value, PetscErrorCode expected)
{
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, name, value));
  TEST_EXPECT_ERROR(&ierr, MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, name));
  TEST_CHECK(ierr == expected, "option %s %s gives error %d (expected %d)", name, value, (int)ierr, (int)expected);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The text of MatView(A) in the ASCII info format (what -mat_view ::ascii_info prints), through a temporary file */
static inline PetscErrorCode TestViewInfoText(Mat A, char text[], size_t size)
{
  char        path[PETSC_MAX_PATH_LEN] = "/tmp/petscgpumat-view-XXXXXX";
  PetscViewer viewer;
  FILE       *fp;
  size_t      len;
  int         fd;

  PetscFunctionBeginUser;
  fd = mkstemp(path);
  PetscCheck(fd >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot create a temporary file %s", path);
  close(fd);
  PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, path, &viewer));
  PetscCall(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_INFO));
  PetscCall(MatView(A, viewer));
  PetscCall(PetscViewerPopFormat(viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(PetscFOpen(PETSC_COMM_SELF, path, "r", &fp));
  len       = fread(text, 1, size - 1, fp);
  text[len] = 0;
  PetscCall(PetscFClose(PETSC_COMM_SELF, fp));
  (void)remove(path);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- generated matrices (host MATSEQAIJ, assembled) ---------- */

static inline PetscErrorCode TestRandomValue(PetscRandom r, PetscScalar *v)
{
  PetscFunctionBeginUser;
  PetscCall(PetscRandomGetValue(r, v));
  *v = 2 * (*v) - 1; /* in [-1, 1): signs matter for cancellation */
  if (*v == 0) *v = 0.5;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Laplacian stencils on a grid of k^d points (2-D 5-point, 3-D 7-point), sequential: the examples' built-in ones */
static inline PetscErrorCode TestCreateLaplacian(PetscInt dim, PetscInt k, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(ExampleCreateProblem(PETSC_COMM_SELF, dim == 2 ? "lap2d5" : "lap3d7", k, 0, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A random m x n matrix: row i has a length drawn by `kind`:
    "uniform"  0..2*mean entries,          "powerlaw" heavy tail (a few long rows),
    "denserow" mean entries, row m/2 full, "emptyrows" every third row empty.
  Explicit zeros are stored in some rows (a value of 0 is an entry), columns are random and distinct.
*/
static inline PetscErrorCode TestCreateRandom(PetscInt m, PetscInt n, PetscInt mean, const char *kind, PetscInt seed, Mat *A)
{
  PetscRandom  r;
  PetscInt    *perm, *swap, *ai, *aj, *nnz, cap;
  PetscScalar *aa;
  PetscBool    powerlaw, denserow, emptyrows;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(kind, "powerlaw", &powerlaw));
  PetscCall(PetscStrcmp(kind, "denserow", &denserow));
  PetscCall(PetscStrcmp(kind, "emptyrows", &emptyrows));
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)seed));
  PetscCall(PetscRandomSeed(r));
  /* the rows in CSR first, so that the matrix is preallocated exactly: long rows inserted beyond a preallocation
     reallocate the whole matrix every few entries, minutes under valgrind */
  cap = m * (2 * mean + 1) + n + 1;
  PetscCall(PetscMalloc4(n, &perm, n, &swap, m + 1, &ai, m, &nnz));
  PetscCall(PetscMalloc2(cap, &aj, cap, &aa));
  for (PetscInt c = 0; c < n; c++) perm[c] = c;
  ai[0] = 0;
  for (PetscInt i = 0; i < m; i++) {
    PetscReal    u;
    PetscInt     len, *cols;
    PetscScalar *vals;

    PetscCall(PetscRandomGetValueReal(r, &u));
    if (powerlaw) len = (PetscInt)PetscMin((PetscReal)n, 1 + mean * 0.3 / PetscPowReal(u + 1e-3, 1.2));
    else len = (PetscInt)(u * (2 * mean + 1));
    if (denserow && i == m / 2) len = n;
    if (emptyrows && i % 3 == 1) len = 0;
    len = PetscMin(len, n);
    if (ai[i] + len > cap) {
      PetscInt    *aj2;
      PetscScalar *aa2;

      cap = 2 * (ai[i] + len);
      PetscCall(PetscMalloc2(cap, &aj2, cap, &aa2));
      PetscCall(PetscArraycpy(aj2, aj, ai[i]));
      PetscCall(PetscArraycpy(aa2, aa, ai[i]));
      PetscCall(PetscFree2(aj, aa));
      aj = aj2;
      aa = aa2;
    }
    cols = aj + ai[i];
    vals = aa + ai[i];
    /* len distinct random columns: partial Fisher-Yates on the identity, undone below in O(len) rather than resetting
       all n columns every row */
    for (PetscInt c = 0; c < len; c++) {
      PetscReal v;
      PetscInt  s, t;

      PetscCall(PetscRandomGetValueReal(r, &v));
      s       = c + (PetscInt)(v * (n - c));
      s       = PetscMin(s, n - 1);
      t       = perm[c];
      perm[c] = perm[s];
      perm[s] = t;
      cols[c] = perm[c];
      swap[c] = s;
      PetscCall(TestRandomValue(r, &vals[c]));
      if (i % 7 == 3 && c == 0) vals[c] = 0; /* an explicit zero */
    }
    for (PetscInt c = len - 1; c >= 0; c--) {
      const PetscInt t = perm[c];

      perm[c]       = perm[swap[c]];
      perm[swap[c]] = t;
    }
    PetscCall(PetscSortIntWithScalarArray(len, cols, vals));
    ai[i + 1] = ai[i] + len;
  }
  PetscCall(PetscRandomDestroy(&r));
  for (PetscInt i = 0; i < m; i++) nnz[i] = ai[i + 1] - ai[i];
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, m, n, m, n));
  PetscCall(MatSetType(*A, MATSEQAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, nnz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* callers may add entries after assembly */
  for (PetscInt i = 0; i < m; i++)
    if (nnz[i]) PetscCall(MatSetValues(*A, 1, &i, nnz[i], aj + ai[i], aa + ai[i], INSERT_VALUES));
  PetscCall(PetscFree4(perm, swap, ai, nnz));
  PetscCall(PetscFree2(aj, aa));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A dense m x n matrix stored sparse */
static inline PetscErrorCode TestCreateDense(PetscInt m, PetscInt n, PetscInt seed, Mat *A)
{
  PetscRandom r;
  PetscInt   *cols;
  PetscScalar *vals;

  PetscFunctionBeginUser;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r));
  PetscCall(PetscRandomSetSeed(r, (unsigned long)seed));
  PetscCall(PetscRandomSeed(r));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, n, NULL, A));
  PetscCall(PetscMalloc2(n, &cols, n, &vals));
  for (PetscInt i = 0; i < m; i++) {
    for (PetscInt j = 0; j < n; j++) {
      cols[j] = j;
      PetscCall(TestRandomValue(r, &vals[j]));
    }
    PetscCall(MatSetValues(*A, 1, &i, n, cols, vals, INSERT_VALUES));
  }
  PetscCall(PetscFree2(cols, vals));
  PetscCall(PetscRandomDestroy(&r));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How many times this rank has logged the event `name` so far (logging on: PetscLogDefaultBegin()) */
static inline PetscErrorCode TestEventCount(const char *name, PetscInt *n)
{
  PetscLogEvent      ev;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  *n = 0;
  PetscCall(PetscLogEventGetId(name, &ev));
  PetscCall(PetscLogEventGetPerfInfo(PETSC_DETERMINE, ev, &info));
  *n = info.count;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The generated test set, by index; returns PETSC_FALSE in *more past the end. */
static inline PetscErrorCode TestCreateGenerated(PetscInt idx, char name[], size_t len, Mat *A, PetscBool *more)
{
  PetscFunctionBeginUser;
  *more = PETSC_TRUE;
  *A    = NULL;
  switch (idx) {
  case 0: PetscCall(PetscStrncpy(name, "0x0", len)); PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 0, 0, 0, NULL, A)); break;
  case 1: PetscCall(PetscStrncpy(name, "1x1", len)); PetscCall(TestCreateDense(1, 1, 1, A)); break;
  case 2: PetscCall(PetscStrncpy(name, "5x0 (no columns)", len)); PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 5, 0, 0, NULL, A)); break;
  case 3: PetscCall(PetscStrncpy(name, "0x5 (no rows)", len)); PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 0, 5, 0, NULL, A)); break;
  case 4: PetscCall(PetscStrncpy(name, "7x7 all rows empty", len)); PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 7, 7, 0, NULL, A)); break;
  case 5: PetscCall(PetscStrncpy(name, "diagonal 1000", len)); PetscCall(TestCreateRandom(1000, 1000, 0, "uniform", 5, A)); PetscCall(MatShift(*A, 3.0)); break;
  case 6: PetscCall(PetscStrncpy(name, "2-D 5-point 40x40", len)); PetscCall(TestCreateLaplacian(2, 40, A)); break;
  case 7: PetscCall(PetscStrncpy(name, "3-D 7-point 12^3", len)); PetscCall(TestCreateLaplacian(3, 12, A)); break;
  case 8: PetscCall(PetscStrncpy(name, "random 3000 uniform mean 6", len)); PetscCall(TestCreateRandom(3000, 3000, 6, "uniform", 8, A)); break;
  case 9: PetscCall(PetscStrncpy(name, "random 2000 empty rows", len)); PetscCall(TestCreateRandom(2000, 2000, 5, "emptyrows", 9, A)); break;
  case 10: PetscCall(PetscStrncpy(name, "rectangular tall 3000x400", len)); PetscCall(TestCreateRandom(3000, 400, 7, "uniform", 10, A)); break;
  case 11: PetscCall(PetscStrncpy(name, "rectangular wide 300x5000", len)); PetscCall(TestCreateRandom(300, 5000, 40, "uniform", 11, A)); break;
  case 12: PetscCall(PetscStrncpy(name, "one dense row 1500", len)); PetscCall(TestCreateRandom(1500, 1500, 4, "denserow", 12, A)); break;
  case 13: PetscCall(PetscStrncpy(name, "power-law rows 4000", len)); PetscCall(TestCreateRandom(4000, 4000, 10, "powerlaw", 13, A)); break;
  case 14: PetscCall(PetscStrncpy(name, "dense 120x120", len)); PetscCall(TestCreateDense(120, 120, 14, A)); break;
  case 15: PetscCall(PetscStrncpy(name, "long rows 500 mean 100", len)); PetscCall(TestCreateRandom(500, 2000, 100, "uniform", 15, A)); break;
  case 16: PetscCall(PetscStrncpy(name, "1x1000 single row", len)); PetscCall(TestCreateDense(1, 1000, 16, A)); break;
  case 17: PetscCall(PetscStrncpy(name, "1000x1 single column", len)); PetscCall(TestCreateDense(1000, 1, 17, A)); break;
  default: *more = PETSC_FALSE;
  }
  if (*A) {
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether d[] is, bit for bit, the diagonal that SeqAIJ's MatGetDiagonal() gives of A (zeros where a row has none) */
static inline PetscErrorCode TestSameDiagonal(Mat A, const PetscScalar d[], PetscBool *same)
{
  PetscInt           m;
  Vec                v;
  const PetscScalar *va;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &v));
  PetscCall(MatGetDiagonal(A, v));
  PetscCall(VecGetArrayRead(v, &va));
  *same = (PetscBool)(!m || !memcmp(d, va, (size_t)m * sizeof(PetscScalar)));
  PetscCall(VecRestoreArrayRead(v, &va));
  PetscCall(VecDestroy(&v));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ---------- float64 host reference ---------- */

/* z = op(A) x (+ y) in double precision from the host CSR of a SeqAIJ (or subclass) matrix */
static inline PetscErrorCode TestReferenceProduct(Mat A, PetscBool trans, const PetscScalar *x, const PetscScalar *y, double *z)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscInt        m, n;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  if (!trans) {
    for (PetscInt i = 0; i < m; i++) {
      double s = y ? (double)y[i] : 0.0;
      for (PetscInt k = ai[i]; k < ai[i + 1]; k++) s += (double)aa[k] * (double)x[aj[k]];
      z[i] = s;
    }
  } else {
    for (PetscInt j = 0; j < n; j++) z[j] = y ? (double)y[j] : 0.0;
    for (PetscInt i = 0; i < m; i++)
      for (PetscInt k = ai[i]; k < ai[i + 1]; k++) z[aj[k]] += (double)aa[k] * (double)x[i];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max_i |z_i - ref_i| / max(max_i |ref_i|, tiny), and whether any z_i is NaN where ref_i is not */
static inline PetscErrorCode TestRelativeError(PetscInt n, const PetscScalar *z, const double *ref, double *err, PetscBool *nan_mismatch)
{
  double num = 0, den = 0;

  PetscFunctionBeginUser;
  *nan_mismatch = PETSC_FALSE;
  for (PetscInt i = 0; i < n; i++) {
    double zi = (double)z[i];

    if (isnan(zi) != isnan(ref[i])) *nan_mismatch = PETSC_TRUE;
    if (isnan(ref[i])) continue;
    num = PetscMax(num, fabs(zi - ref[i]));
    den = PetscMax(den, fabs(ref[i]));
  }
  *err = num / PetscMax(den, 1e-300);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  mag_i = sum_j |a_ij x_j| (+ |y_i|): the scale of the rounding error of any summation order. A sum with heavy
  cancellation (a transpose product adding 1000 terms with atomics, say) can be far smaller than its terms, so
  the error of a correct result is bounded by eps times mag, not by eps times the result.
*/
static inline PetscErrorCode TestReferenceMagnitude(Mat A, PetscBool trans, const PetscScalar *x, const PetscScalar *y, double *mag)
{
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscInt        m, n;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  for (PetscInt k = 0; k < (trans ? n : m); k++) mag[k] = y ? fabs((double)y[k]) : 0.0;
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt k = ai[i]; k < ai[i + 1]; k++) {
      const double t = fabs((double)aa[k] * (double)(trans ? x[i] : x[aj[k]]));

      mag[trans ? aj[k] : i] += t;
    }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* max_i |z_i - ref_i| / max_i mag_i, with mag from TestReferenceMagnitude(), and NaN mismatches as in TestRelativeError() */
static inline PetscErrorCode TestScaledError(PetscInt n, const PetscScalar *z, const double *ref, const double *mag, double *err, PetscBool *nan_mismatch)
{
  double num = 0, den = 0;

  PetscFunctionBeginUser;
  *nan_mismatch = PETSC_FALSE;
  for (PetscInt i = 0; i < n; i++) {
    const double zi = (double)z[i];

    if (isnan(zi) != isnan(ref[i])) *nan_mismatch = PETSC_TRUE;
    if (isnan(ref[i])) continue;
    num = PetscMax(num, fabs(zi - ref[i]));
    den = PetscMax(den, mag[i]);
  }
  *err = num / PetscMax(den, 1e-300);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscReal TestTolerance(void)
{
  return PetscDefined(USE_REAL_SINGLE) ? 1e-5 : 1e-12;
}
