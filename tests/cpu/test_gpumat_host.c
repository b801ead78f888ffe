static const char help[] = "petscgpumat types without a GPU: conversions, host operations, options, MatView, errors.\n";

#include <petscgpumat.h>
#include "../common/testutil.h"
#include "../reference/emulate.h" /* MatGPUMatTransposeMultEmulate() */

/* The same nonzero pattern and values (host CSR) */
static PetscErrorCode SameEntries(Mat A, Mat B, PetscBool *same)
{
  const PetscInt *ai, *aj, *bi, *bj;
  PetscScalar    *aa, *ba;
  PetscInt        m, n, mb, nb;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatGetSize(B, &mb, &nb));
  *same = (PetscBool)(m == mb && n == nb);
  if (!*same) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  PetscCall(MatSeqAIJGetCSRAndMemType(B, &bi, &bj, &ba, NULL));
  for (PetscInt i = 0; i <= m && *same; i++) *same = (PetscBool)(ai[i] == bi[i]);
  for (PetscInt k = 0; *same && k < ai[m]; k++) *same = (PetscBool)(aj[k] == bj[k] && aa[k] == ba[k]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IsType(Mat A, MatType type, PetscBool *flg)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, type, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestConversions(void)
{
  Mat       A, B, C, D, E;
  PetscBool flg, same;
  VecType   vt;
  PetscInt  T;

  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(200, 150, 5, "emptyrows", 1, &A));
  /* MAT_INITIAL_MATRIX, by root name and by full name */
  PetscCall(MatConvert(A, MATELLRCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(IsType(B, MATSEQELLRCUDA, &flg));
  PetscCall(SameEntries(A, B, &same));
  TEST_CHECK(flg && same, "MatConvert(aij, \"ellrcuda\", MAT_INITIAL_MATRIX): seqaijellrcuda, same entries");
  PetscCall(MatGetVecType(B, &vt));
  {
    PetscBool avail;

    PetscCall(PetscGPUMatDeviceAvailable(&avail, NULL, 0));
    PetscCall(PetscStrcmp(vt, avail ? VECCUDA : VECSTANDARD, &flg));
    TEST_CHECK(flg, "default vector type of ellrcuda is %s where %s (%s)", avail ? VECCUDA : VECSTANDARD, avail ? "a CUDA device answers" : "no CUDA device can be used", vt);
  }
  PetscCall(MatBoundToCPU(B, &flg));
  TEST_CHECK(!flg, "a converted matrix is not bound to the CPU (its products are the GPU ones)");
  {
    Mat C;
    PetscCall(MatCreateSeqAIJELLRCUDA(PETSC_COMM_SELF, 3, 3, 1, NULL, &C));
    PetscCall(MatBoundToCPU(C, &flg));
    TEST_CHECK(!flg, "a created ellrcuda matrix is not bound to the CPU");
    PetscCall(MatDestroy(&C));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatConvert(A, MATSEQELLRCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(IsType(B, MATSEQELLRCUDA, &flg));
  TEST_CHECK(flg, "MatConvert(aij, \"seqaijellrcuda\", MAT_INITIAL_MATRIX)");
  /* MAT_REUSE_MATRIX picks up new values */
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatConvert(A, MATSEQELLRCUDA, MAT_REUSE_MATRIX, &B));
  PetscCall(SameEntries(A, B, &same));
  TEST_CHECK(same, "MatConvert(MAT_REUSE_MATRIX) copies new values");
  /* MAT_INPLACE_MATRIX */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
  PetscCall(MatConvert(C, MATELLRCUDA, MAT_INPLACE_MATRIX, &C));
  PetscCall(IsType(C, MATSEQELLRCUDA, &flg));
  PetscCall(SameEntries(A, C, &same));
  TEST_CHECK(flg && same, "MatConvert(MAT_INPLACE_MATRIX) to ellrcuda");
  /* MatSetType on an assembled AIJ converts in place */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &D));
  PetscCall(MatSetType(D, MATELLRCUDA));
  PetscCall(IsType(D, MATSEQELLRCUDA, &flg));
  PetscCall(SameEntries(A, D, &same));
  TEST_CHECK(flg && same, "MatSetType(assembled aij, \"ellrcuda\") keeps the entries");
  /* MatDuplicate keeps type and parameters */
  PetscCall(MatELLRCUDASetThreadsPerRow(D, 8));
  PetscCall(MatDuplicate(D, MAT_COPY_VALUES, &E));
  PetscCall(IsType(E, MATSEQELLRCUDA, &flg));
  PetscCall(MatELLRCUDAGetThreadsPerRow(E, &T));
  PetscCall(SameEntries(A, E, &same));
  TEST_CHECK(flg && same && T == 8, "MatDuplicate keeps type, entries and threads per row (%" PetscInt_FMT ")", T);
  PetscCall(MatDestroy(&E));
  /* back to AIJ: initial and in place */
  PetscCall(MatConvert(D, MATAIJ, MAT_INITIAL_MATRIX, &E));
  PetscCall(IsType(E, MATSEQAIJ, &flg));
  PetscCall(SameEntries(A, E, &same));
  PetscCall(MatGetVecType(E, &vt));
  TEST_CHECK(flg && same, "MatConvert(ellrcuda, \"aij\", MAT_INITIAL_MATRIX) gives seqaij with every entry");
  PetscCall(PetscStrcmp(vt, VECSTANDARD, &flg));
  TEST_CHECK(flg, "converted back, the default vector type is standard again (%s)", vt);
  PetscCall(MatDestroy(&E));
  PetscCall(MatConvert(D, MATSEQAIJ, MAT_INPLACE_MATRIX, &D));
  PetscCall(IsType(D, MATSEQAIJ, &flg));
  PetscCall(SameEntries(A, D, &same));
  PetscCall(PetscObjectQueryFunction((PetscObject)D, "MatELLRCUDASetThreadsPerRow_C", &E)); /* any non-NULL pointer would do */
  TEST_CHECK(flg && same && !E, "MatConvert(ellrcuda, \"seqaij\", MAT_INPLACE_MATRIX) strips everything");
  /* and again to ellrcuda: round trip AIJ -> ELLR -> AIJ -> ELLR */
  PetscCall(MatConvert(D, MATELLRCUDA, MAT_INPLACE_MATRIX, &D));
  PetscCall(IsType(D, MATSEQELLRCUDA, &flg));
  PetscCall(SameEntries(A, D, &same));
  TEST_CHECK(flg && same, "round trip aij -> ellrcuda -> aij -> ellrcuda");
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestCreationRoutes(void)
{
  Mat       A, B;
  PetscBool flg;
  PetscInt  i, cols[2];
  PetscScalar v[2] = {2, -1};

  PetscFunctionBeginUser;
  /* -mat_type ellrcuda through MatSetFromOptions, then preallocation and assembly */
  PetscCall(PetscOptionsSetValue(NULL, "-t1_mat_type", "ellrcuda"));
  PetscCall(MatCreate(PETSC_COMM_SELF, &A));
  PetscCall(MatSetOptionsPrefix(A, "t1_"));
  PetscCall(MatSetSizes(A, 10, 10, 10, 10));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSeqAIJSetPreallocation(A, 2, NULL));
  for (i = 0; i < 10; i++) {
    cols[0] = i;
    cols[1] = (i + 1) % 10;
    PetscCall(MatSetValues(A, 1, &i, 2, cols, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(IsType(A, MATSEQELLRCUDA, &flg));
  TEST_CHECK(flg, "-mat_type ellrcuda via MatSetFromOptions");
  PetscCall(PetscOptionsClearValue(NULL, "-t1_mat_type"));
  /* the convenience constructor */
  PetscCall(MatCreateSeqAIJELLRCUDA(PETSC_COMM_SELF, 10, 12, 3, NULL, &B));
  PetscCall(IsType(B, MATSEQELLRCUDA, &flg));
  TEST_CHECK(flg, "MatCreateSeqAIJELLRCUDA");
  /* the process-wide upload setting: out of range is a clear error that leaves it as it was */
  PetscCall(TestSetOptionExpect(B, "-mat_gpumat_upload_threads", "17", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_gpumat_upload_threads", "-1", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_gpumat_upload_threads", "4", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_gpumat_upload_threads", "0", PETSC_SUCCESS));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Apply the same host operations to an AIJ matrix and to its ellrcuda copy; compare entries and products. */
/* A SeqAIJ matrix with every other entry of each row of A (a subset of its pattern), values 1, 2, ... */
static PetscErrorCode SubsetOf(Mat A, Mat *S)
{
  PetscInt m, n, maxrow = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &m, &n));
  for (PetscInt i = 0; i < m; i++) {
    PetscInt nc;

    PetscCall(MatGetRow(A, i, &nc, NULL, NULL));
    maxrow = PetscMax(maxrow, nc);
    PetscCall(MatRestoreRow(A, i, &nc, NULL, NULL));
  }
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, (maxrow + 1) / 2, NULL, S));
  for (PetscInt i = 0; i < m; i++) {
    const PetscInt *cols;
    PetscInt        nc;

    PetscCall(MatGetRow(A, i, &nc, &cols, NULL));
    for (PetscInt k = 0; k < nc; k += 2) PetscCall(MatSetValue(*S, i, cols[k], (PetscScalar)(i + k + 1), INSERT_VALUES));
    PetscCall(MatRestoreRow(A, i, &nc, &cols, NULL));
  }
  PetscCall(MatAssemblyBegin(*S, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*S, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestHostOperations(PetscBool bind, PetscInt m)
{
  Mat         A, B, X;
  Vec         x, y, z, w, d1, d2;
  PetscBool   same;
  PetscReal   nrm;
  PetscInt    rows[3] = {0, 7, 42}, r = 5, c = 199;
  PetscScalar val     = 1.25;
  char        how[64];

  PetscFunctionBeginUser;
  /* from 2^20 entries on (m = 180 000 by 6), with -mat_gpumat_host_threads above 1, the value operations run on host
     threads (src/base/gpumat_host_values.c): the same entries as AIJ all the same */
  PetscCall(PetscSNPrintf(how, sizeof(how), "%s, %" PetscInt_FMT " rows", bind ? "bound to CPU" : "host vectors", m));
  PetscCall(TestCreateRandom(m, m, 6, "uniform", 2, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatConvert(A, MATELLRCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  if (bind) PetscCall(MatBindToCPU(B, PETSC_TRUE));
  PetscCall(TestCreateRandom(m, m, 6, "uniform", 3, &X));

#define BOTH(call_a, call_b, what) \
  do { \
    PetscCall(call_a); \
    PetscCall(call_b); \
    PetscCall(SameEntries(A, B, &same)); \
    TEST_CHECK(same, "%s (%s): same entries as AIJ", what, how); \
  } while (0)
  BOTH(MatScale(A, -2.0), MatScale(B, -2.0), "MatScale");
  BOTH(MatShift(A, 4.0), MatShift(B, 4.0), "MatShift");
  BOTH(MatAXPY(A, 0.5, X, DIFFERENT_NONZERO_PATTERN), MatAXPY(B, 0.5, X, DIFFERENT_NONZERO_PATTERN), "MatAXPY (new pattern)");
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* MatAXPY replaced the storage */
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  {
    /* the same with a block size of 2 (PETSc's mat test ex37, MatCopy(DIFFERENT_NONZERO_PATTERN) from AIJ): X of another
       type sends MatAXPY() to MatAXPY_Basic(), which allocates what our MatAXPYGetPreallocation_C counts, the exact
       union, as AIJ's own MatAXPY() does (PETSc's general preallocator would reserve whole 2 x 2 blocks) */
    Mat     Y2[2], X2;
    MatInfo info[2];

    for (PetscInt k = 0; k < 3; k++) {
      Mat M;

      PetscCall(MatCreate(PETSC_COMM_SELF, &M));
      PetscCall(MatSetSizes(M, 40, 40, 40, 40));
      PetscCall(MatSetBlockSize(M, 2));
      PetscCall(MatSetType(M, MATSEQAIJ));
      PetscCall(MatSeqAIJSetPreallocation(M, 3, NULL));
      for (PetscInt i = 0; i < 40; i++) {
        PetscInt    cols[3] = {i, k < 2 ? i - 1 : i + 2, k < 2 ? i + 1 : i - 3}; /* X (k = 2): another pattern */
        PetscScalar v[3]    = {k < 2 ? 2.0 : 3.0, -1.0, k < 2 ? -1.0 : -2.0};

        for (PetscInt j = 0; j < 3; j++)
          if (cols[j] >= 0 && cols[j] < 40) PetscCall(MatSetValue(M, i, cols[j], v[j], INSERT_VALUES));
      }
      PetscCall(MatAssemblyBegin(M, MAT_FINAL_ASSEMBLY));
      PetscCall(MatAssemblyEnd(M, MAT_FINAL_ASSEMBLY));
      if (k < 2) Y2[k] = M;
      else X2 = M;
    }
    PetscCall(MatConvert(Y2[1], MATELLRCUDA, MAT_INPLACE_MATRIX, &Y2[1]));
    if (bind) PetscCall(MatBindToCPU(Y2[1], PETSC_TRUE));
    PetscCall(MatAXPY(Y2[0], 1.0, X2, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatAXPY(Y2[1], 1.0, X2, DIFFERENT_NONZERO_PATTERN));
    PetscCall(SameEntries(Y2[0], Y2[1], &same));
    PetscCall(MatGetInfo(Y2[0], MAT_LOCAL, &info[0]));
    PetscCall(MatGetInfo(Y2[1], MAT_LOCAL, &info[1]));
    TEST_CHECK(same, "MatAXPY (new pattern, block size 2, X plain AIJ) (%s): same entries as AIJ", how);
    TEST_CHECK(info[1].nz_allocated == info[0].nz_allocated && info[1].nz_used == info[0].nz_used, "MatAXPY (new pattern, block size 2) (%s): %g entries allocated for %g used, as AIJ (%g for %g)", how, info[1].nz_allocated, info[1].nz_used, info[0].nz_allocated, info[0].nz_used);
    PetscCall(PetscObjectTypeCompare((PetscObject)Y2[1], MATSEQELLRCUDA, &same));
    TEST_CHECK(same, "MatAXPY (new pattern, block size 2) (%s): the result keeps its type", how);
    PetscCall(MatDestroy(&Y2[1]));
    PetscCall(MatDestroy(&Y2[0]));
    PetscCall(MatDestroy(&X2));
  }
  /* unassembled CSR arrays hold gaps: compare after assembly */
  PetscCall(MatSetValues(A, 1, &r, 1, &c, &val, ADD_VALUES));
  PetscCall(MatSetValues(B, 1, &r, 1, &c, &val, ADD_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  BOTH(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY), MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY), "MatSetValues (new nonzero) and assembly");
  BOTH(MatZeroRows(A, 3, rows, 5.0, NULL, NULL), MatZeroRows(B, 3, rows, 5.0, NULL, NULL), "MatZeroRows");
  {
    /* AXPY where X's pattern is inside Y's (X of B's type, as in GAMG: PETSc calls the type's AXPY only then): our
       row merge or BLAS axpy keeps B's pattern; entries outside it fall back to SeqAIJ's */
    Mat              S, Sb, W, Wb;
    PetscObjectState nz0, nz1;

    PetscCall(SubsetOf(A, &S));
    PetscCall(MatConvert(S, MATELLRCUDA, MAT_INITIAL_MATRIX, &Sb));
    PetscCall(MatGetNonzeroState(B, &nz0));
    BOTH(MatAXPY(A, -1.5, S, SUBSET_NONZERO_PATTERN), MatAXPY(B, -1.5, Sb, SUBSET_NONZERO_PATTERN), "MatAXPY (subset pattern)");
    BOTH(MatAYPX(A, 0.25, S, SUBSET_NONZERO_PATTERN), MatAYPX(B, 0.25, Sb, SUBSET_NONZERO_PATTERN), "MatAYPX (subset pattern)");
    BOTH(MatAXPY(A, 0.5, S, DIFFERENT_NONZERO_PATTERN), MatAXPY(B, 0.5, Sb, DIFFERENT_NONZERO_PATTERN), "MatAXPY (DIFFERENT claimed, a subset)");
    PetscCall(MatDestroy(&S));
    PetscCall(MatDestroy(&Sb));
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &S));
    PetscCall(MatConvert(S, MATELLRCUDA, MAT_INITIAL_MATRIX, &Sb));
    BOTH(MatAXPY(A, 3.0, S, DIFFERENT_NONZERO_PATTERN), MatAXPY(B, 3.0, Sb, DIFFERENT_NONZERO_PATTERN), "MatAXPY (DIFFERENT claimed, the same pattern)");
    PetscCall(MatGetNonzeroState(B, &nz1));
    TEST_CHECK(nz0 == nz1, "MatAXPY/MatAYPX with X's pattern inside Y's (%s) keep the pattern (nonzero state %" PetscInt64_FMT " -> %" PetscInt64_FMT ")", how, (PetscInt64)nz0, (PetscInt64)nz1);
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE)); /* AIJ's DIFFERENT path replaced A's storage */
    if (m <= 1000) { /* AIJ inserts such entries one by one, each moving the rest of the array */
      PetscCall(TestCreateRandom(m, m, 2, "uniform", 4, &W)); /* not a subset although called one */
      PetscCall(MatConvert(W, MATELLRCUDA, MAT_INITIAL_MATRIX, &Wb));
      BOTH(MatAXPY(A, 2.0, W, SUBSET_NONZERO_PATTERN), MatAXPY(B, 2.0, Wb, SUBSET_NONZERO_PATTERN), "MatAXPY (SUBSET claimed, not a subset)");
      PetscCall(MatDestroy(&W));
      PetscCall(MatDestroy(&Wb));
    }
    PetscCall(MatDestroy(&S));
    PetscCall(MatDestroy(&Sb));
  }
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 0.75));
  BOTH(MatDiagonalSet(A, x, ADD_VALUES), MatDiagonalSet(B, x, ADD_VALUES), "MatDiagonalSet");
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecSetRandom(y, NULL));
  BOTH(MatDiagonalScale(A, y, NULL), MatDiagonalScale(B, y, NULL), "MatDiagonalScale (rows)");
  BOTH(MatDiagonalScale(A, NULL, x), MatDiagonalScale(B, NULL, x), "MatDiagonalScale (columns)");
  BOTH(MatDiagonalScale(A, y, x), MatDiagonalScale(B, y, x), "MatDiagonalScale (both)");
  /* products with host vectors: the host path, same results as AIJ */
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &w));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(VecSetRandom(w, NULL));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "MatMult (%s) equals AIJ's", how);
  PetscCall(MatMultAdd(A, x, w, y));
  PetscCall(MatMultAdd(B, x, w, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "MatMultAdd (%s) equals AIJ's", how);
  PetscCall(MatMultTranspose(A, x, y));
  PetscCall(MatMultTranspose(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "MatMultTranspose (%s) equals AIJ's", how);
  PetscCall(MatMultTransposeAdd(A, x, w, y));
  PetscCall(MatMultTransposeAdd(B, x, w, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "MatMultTransposeAdd (%s) equals AIJ's", how);
  PetscCall(VecDuplicate(y, &d1));
  PetscCall(VecDuplicate(y, &d2));
  PetscCall(MatGetDiagonal(A, d1));
  PetscCall(MatGetDiagonal(B, d2));
  PetscCall(VecAXPY(d2, -1.0, d1));
  PetscCall(VecNorm(d2, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "MatGetDiagonal (%s) equals AIJ's", how);
  /* MatCopy into the ellrcuda matrix, MatZeroEntries */
  PetscCall(MatDestroy(&X));
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &X));
  PetscCall(MatScale(X, 7.0));
  BOTH(MatCopy(X, A, SAME_NONZERO_PATTERN), MatCopy(X, B, SAME_NONZERO_PATTERN), "MatCopy");
  BOTH(MatZeroEntries(A), MatZeroEntries(B), "MatZeroEntries");
#undef BOTH
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&w));
  PetscCall(VecDestroy(&d1));
  PetscCall(VecDestroy(&d2));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&X));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestOptions(void)
{
  Mat            A, B;
  PetscInt       T;
  PetscReal      f;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(2, 10, &A));
  PetscCall(MatConvert(A, MATELLRCUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_threads_per_row", "8", PETSC_SUCCESS));
  PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T));
  TEST_CHECK(T == 8, "-mat_ellr_threads_per_row 8 read back (%" PetscInt_FMT ")", T);
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_threads_per_row", "3", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_threads_per_row", "64", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_threads_per_row", "-1", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_threads_per_row", "two", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_max_fill", "0.5", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_max_fill", "2.5", PETSC_SUCCESS));
  PetscCall(MatELLRCUDAGetMaxFill(A, &f));
  TEST_CHECK(f == 2.5, "-mat_ellr_max_fill 2.5 read back (%g)", (double)f);
  PetscCall(TestSetOptionExpect(A, "-mat_ellr_threads_per_row", "0", PETSC_SUCCESS));
  PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T));
  TEST_CHECK(T == 1, "automatic threads per row for a 5-point stencil is 1 (%" PetscInt_FMT ")", T);
  /* options under the matrix's prefix */
  PetscCall(MatSetOptionsPrefix(A, "sys_"));
  PetscCall(TestSetOptionExpect(A, "-sys_mat_ellr_threads_per_row", "16", PETSC_SUCCESS));
  PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T));
  TEST_CHECK(T == 16, "prefixed -sys_mat_ellr_threads_per_row 16 (%" PetscInt_FMT ")", T);
  /* setters: bad values, and getters on a matrix of another type */
  TEST_EXPECT_ERROR(&ierr, MatELLRCUDASetThreadsPerRow(A, 5));
  TEST_CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "MatELLRCUDASetThreadsPerRow(5) refused");
  PetscCall(TestCreateLaplacian(2, 4, &B));
  PetscCall(MatELLRCUDASetThreadsPerRow(B, 4)); /* ignored on other types, as PETSc setters are */
  TEST_EXPECT_ERROR(&ierr, MatELLRCUDAGetThreadsPerRow(B, &T));
  TEST_CHECK(ierr != 0, "MatELLRCUDAGetThreadsPerRow on a seqaij matrix is an error (%d)", (int)ierr);
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatGPUMatGetInfo before any build, on the 4x4 example of the layout test (longest row 4, 8 nonzeros) */
static PetscErrorCode TestInfoAndView(void)
{
  Mat           A;
  MatGPUMatInfo info;
  PetscInt      i, cols[4] = {0, 1, 2, 3};
  PetscScalar   v[4]       = {4, 5, 6, 7};
  char          text[4096];
  char         *found1, *found2, *found3;

  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqAIJELLRCUDA(PETSC_COMM_SELF, 4, 4, 4, NULL, &A));
  i = 0;
  PetscCall(MatSetValue(A, 0, 0, 1, INSERT_VALUES));
  PetscCall(MatSetValue(A, 0, 2, 2, INSERT_VALUES));
  PetscCall(MatSetValue(A, 1, 1, 3, INSERT_VALUES));
  i = 2;
  PetscCall(MatSetValues(A, 1, &i, 4, cols, v, INSERT_VALUES));
  PetscCall(MatSetValue(A, 3, 3, 8, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatELLRCUDASetThreadsPerRow(A, 1));
  PetscCall(MatGPUMatGetInfo(A, &info));
  TEST_CHECK(info.rows == 4 && info.cols == 4 && info.nnz == 8 && info.stored == 16, "MatGPUMatGetInfo: 4x4, nnz 8, stored 16 (got %" PetscCount_FMT ")", info.stored);
  TEST_CHECK(info.device_bytes == 4 * sizeof(int) + 16 * (sizeof(int) + sizeof(PetscScalar)) /* rl, col, val */ && info.csr_bytes == 5 * sizeof(int) + 8 * (sizeof(int) + sizeof(PetscScalar)), "MatGPUMatGetInfo: device bytes %zu, CSR bytes %zu", info.device_bytes, info.csr_bytes);
  TEST_CHECK(info.device_csr_bytes == 0, "MatGPUMatGetInfo: no device CSR before a cuSPARSE product or factorization (%zu bytes)", info.device_csr_bytes);
  TEST_CHECK(!info.device_valid, "MatGPUMatGetInfo: no device copy before the first product");
  /* MatView -mat_view ::ascii_info prints the format and its parameters */
  PetscCall(TestViewInfoText(A, text, sizeof(text)));
  PetscCall(PetscStrstr(text, "ELLPACK-R GPU storage", &found1));
  PetscCall(PetscStrstr(text, "threads per row T = 1", &found2));
  PetscCall(PetscStrstr(text, "device copy not built yet", &found3));
  TEST_CHECK(found1 && found2 && found3, "MatView ascii_info shows format, T and device state");
  {
    PetscBool gpu;
    char     *found4, *found5;

    /* one line for the device copy's state; without a device, a line that says the products run on the host */
    PetscCall(PetscStrstr(text, "stale", &found4));
    TEST_CHECK(!found4, "MatView of a fresh matrix prints one state for its device copy (not built yet), not also stale");
    PetscCall(PetscGPUMatDeviceAvailable(&gpu, NULL, 0));
    PetscCall(PetscStrstr(text, "no usable CUDA device: MatCreateVecs() gives host vectors", &found5));
    TEST_CHECK(gpu ? !found5 : found5 != NULL, "MatView says whether the products run on the host for want of a device (device %s)", gpu ? "available" : "absent");
    /* how MatScale, MatDiagonalScale and MatAXPY run on the host master copy; with a device, where the diagonal comes from */
    PetscCall(PetscStrstr(text, "MatScale, MatDiagonalScale, MatAXPY on the host master copy", &found4));
    PetscCall(PetscStrstr(text, "MatGetDiagonal into device vectors: read on the device from the layout once it is built", &found5));
    TEST_CHECK(found4 && (gpu ? found5 != NULL : !found5), "MatView says how the value operations run on the host and (device %s) where an ELLPACK-R diagonal comes from", gpu ? "available" : "absent");
  }
  PetscCall(MatDestroy(&A));
  { /* a matrix made over given arrays (as a sparse product's result is) reports those entries allocated, where SeqAIJ reports none */
    PetscInt    ai[3] = {0, 2, 3}, aj[3] = {0, 1, 1};
    PetscScalar aa[3] = {1, 2, 3};
    MatInfo     minfo;

    PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, 2, 2, ai, aj, aa, &A));
    PetscCall(MatConvert(A, MATCMRSCUDA, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &minfo));
    TEST_CHECK(minfo.nz_used == 3 && minfo.nz_allocated == 3 && minfo.nz_unneeded == 0, "MatGetInfo of a matrix over given arrays: 3 used, %g allocated, %g unneeded", minfo.nz_allocated, minfo.nz_unneeded);
    PetscCall(MatConvert(A, MATSEQAIJ, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatGetInfo(A, MAT_LOCAL, &minfo));
    TEST_CHECK(minfo.nz_allocated == 0, "MatGetInfo after the conversion back to SeqAIJ: SeqAIJ's own count (%g allocated)", minfo.nz_allocated);
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Steps of a forward (lower) or backward (upper) triangular solve done one level set at a time: the oracle of
   MatGPUMatGetTriangularLevels(), computed another way (rows become solvable when their dependencies are solved) */
static PetscErrorCode LevelsBySteps(Mat A, PetscBool upper, PetscInt *steps)
{
  const PetscInt *ai, *aj;
  PetscInt        n, left;
  PetscBool       done, *solved, *now;

  PetscFunctionBeginUser;
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
  PetscCall(PetscCalloc2(n, &solved, n, &now));
  for (*steps = 0, left = n; left > 0; (*steps)++) {
    for (PetscInt i = 0; i < n; i++) {
      now[i] = PETSC_FALSE;
      if (solved[i]) continue;
      now[i] = PETSC_TRUE;
      for (PetscInt k = ai[i]; k < ai[i + 1]; k++)
        if ((upper ? aj[k] > i : aj[k] < i) && !solved[aj[k]]) now[i] = PETSC_FALSE;
    }
    for (PetscInt i = 0; i < n; i++)
      if (now[i]) solved[i] = PETSC_TRUE, left--;
  }
  PetscCall(PetscFree2(solved, now));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The level sets of the triangles, which decide where the factors of our types solve (-mat_gpumat_trisolve auto) */
static PetscErrorCode TestTriangularLevels(void)
{
  const char *kinds[] = {"uniform", "powerlaw", "emptyrows"};
  Mat         A;
  PetscInt    lower, upper, lref = -1, uref = -1;

  PetscFunctionBeginUser;
  for (PetscInt k = 3; k <= 12; k += 9) { /* 2-D 5-point: 2k - 1 each; 3-D 7-point: 3k - 2 each, as our type too */
    PetscCall(TestCreateLaplacian(2, k, &A));
    PetscCall(MatGPUMatGetTriangularLevels(A, &lower, &upper));
    TEST_CHECK(lower == 2 * k - 1 && upper == 2 * k - 1, "2-D 5-point Laplacian %" PetscInt_FMT "^2: %" PetscInt_FMT " and %" PetscInt_FMT " level sets (expected %" PetscInt_FMT ")", k, lower, upper, 2 * k - 1);
    PetscCall(MatDestroy(&A));
    PetscCall(TestCreateLaplacian(3, k, &A));
    PetscCall(MatConvert(A, MATSEQCMRSCUDA, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatGPUMatGetTriangularLevels(A, &lower, &upper));
    TEST_CHECK(lower == 3 * k - 2 && upper == 3 * k - 2, "3-D 7-point Laplacian %" PetscInt_FMT "^3 (%s): %" PetscInt_FMT " and %" PetscInt_FMT " level sets (expected %" PetscInt_FMT ")", k, MATSEQCMRSCUDA, lower, upper, 3 * k - 2);
    PetscCall(MatDestroy(&A));
  }
  for (PetscInt i = 0; i < 3; i++) {
    PetscCall(TestCreateRandom(300, 300, 3, kinds[i], 50 + i, &A));
    PetscCall(MatGPUMatGetTriangularLevels(A, &lower, &upper));
    PetscCall(LevelsBySteps(A, PETSC_FALSE, &lref));
    PetscCall(LevelsBySteps(A, PETSC_TRUE, &uref));
    TEST_CHECK(lower == lref && upper == uref, "random %s 300: %" PetscInt_FMT " and %" PetscInt_FMT " level sets, %" PetscInt_FMT " and %" PetscInt_FMT " solve steps", kinds[i], lower, upper, lref, uref);
    PetscCall(MatDestroy(&A));
  }
  for (PetscInt i = 0; i < 2; i++) { /* a structurally symmetric pattern (B + B^T), counted in full and, marked so, over its lower triangle */
    Mat B, Bt;

    PetscCall(TestCreateRandom(400, 400, 3, kinds[i], 70 + i, &B));
    PetscCall(MatTranspose(B, MAT_INITIAL_MATRIX, &Bt));
    PetscCall(MatAXPY(B, 1.0, Bt, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatConvert(B, MATSEQCMRSCUDA, MAT_INITIAL_MATRIX, &A));
    PetscCall(MatGPUMatGetTriangularLevels(A, &lref, &uref));
    PetscCall(MatSetOption(A, MAT_STRUCTURALLY_SYMMETRIC, PETSC_TRUE));
    PetscCall(MatGPUMatGetTriangularLevels(A, &lower, &upper));
    TEST_CHECK(lower == lref && upper == uref && lref == uref, "random %s 400 symmetrized: %" PetscInt_FMT " and %" PetscInt_FMT " level sets from its lower triangle, %" PetscInt_FMT " and %" PetscInt_FMT " in full", kinds[i], lower, upper, lref, uref);
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&Bt));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(TestCreateRandom(300, 200, 3, "uniform", 60, &A));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  TEST_CHECK(MatGPUMatGetTriangularLevels(A, &lower, &upper) == PETSC_ERR_ARG_SIZ, "a rectangular matrix has no triangular levels: PETSC_ERR_ARG_SIZ");
  PetscCall(PetscPopErrorHandler());
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The automatic parameters plan from the rows the device copy holds: a block whose few nonempty rows are long (an
  MPI off-diagonal block of a matrix with dense coupling rows) gets the threads per row and CMRS counts of those
  rows once its rows are compressed, not of a mean pulled down by its empty rows; and the plan follows a new pattern
*/
static PetscErrorCode TestPlanFromStoredRows(void)
{
  const PetscInt m = 2000, n = 500, len = 64;
  MatType        types[] = {MATSEQELLRCUDA, MATSEQRGCSRCUDA};

  PetscFunctionBeginUser;
  for (PetscInt t = 0; t < 2; t++) {
    Mat      A;
    PetscInt T[3];

    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, len, NULL, &A));
    for (PetscInt i = 0; i < m; i += 100) /* 20 rows of 64 entries, the rest empty */
      for (PetscInt k = 0; k < len; k++) PetscCall(MatSetValue(A, i, (i + 7 * k) % n, 1.0 + k, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatConvert(A, types[t], MAT_INPLACE_MATRIX, &A));
    if (t == 0) PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T[0]));
    else PetscCall(MatRGCSRCUDAGetThreadsPerRow(A, &T[0]));
    PetscCall(MatGPUMatSetCompressedRows(A, PETSC_TRUE));
    if (t == 0) PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T[1]));
    else PetscCall(MatRGCSRCUDAGetThreadsPerRow(A, &T[1]));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    for (PetscInt i = 1; i < m; i += 100) PetscCall(MatSetValue(A, i, 0, 1.0, INSERT_VALUES)); /* 20 short rows more: a new pattern */
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    if (t == 0) PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T[2]));
    else PetscCall(MatRGCSRCUDAGetThreadsPerRow(A, &T[2]));
    TEST_CHECK(T[0] == 1 && T[1] == 16 && T[2] == 8, "%s: threads per row from the stored rows: %" PetscInt_FMT " over all rows (mean 0.64), %" PetscInt_FMT " over the 20 nonempty ones (mean 64), %" PetscInt_FMT " once 20 one-entry rows join (mean 32.5)", types[t], T[0], T[1], T[2]);
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether MatView (ASCII info) prints `piece`, as `present` says */
static PetscErrorCode CheckView(Mat A, const char piece[], PetscBool present, const char what[])
{
  char  text[4096];
  char *found;

  PetscFunctionBeginUser;
  PetscCall(TestViewInfoText(A, text, sizeof(text)));
  PetscCall(PetscStrstr(text, piece, &found));
  TEST_CHECK((found != NULL) == present, "%s: MatView %s \"%s\"", what, present ? "prints" : "does not print", piece);
  if ((found != NULL) != present) PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s\n", text));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Expects `want` in A's MatView (ASCII info) */
static PetscErrorCode ExpectView(Mat A, const char want[], const char what[])
{
  PetscFunctionBeginUser;
  PetscCall(CheckView(A, want, PETSC_TRUE, what));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* m rows of `len` entries (columns i, i + 1, ... mod n), and row 0 of `first` entries; as CMRS */
static PetscErrorCode CreateCMRSRows(PetscInt m, PetscInt n, PetscInt len, PetscInt first, Mat *A)
{
  PetscInt    *nnz, *cols;
  PetscScalar *vals;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(m, &nnz, n, &cols, n, &vals));
  for (PetscInt i = 0; i < m; i++) nnz[i] = i ? len : first;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, 0, nnz, A));
  for (PetscInt i = 0; i < m; i++) {
    for (PetscInt k = 0; k < nnz[i]; k++) cols[k] = (i + k) % n, vals[k] = 1.0;
    PetscCall(MatSetValues(*A, 1, &i, nnz[i], cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(*A, MATSEQCMRSCUDA, MAT_INPLACE_MATRIX, A));
  PetscCall(PetscFree3(nnz, cols, vals));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  CMRS's automatic kernel: the scan kernel at every mean row length; its heavy rows where some row is longer than 256
  entries, and the mean row is longer than 64 entries or the rows longer than 4 means hold 20 % of the entries
*/
static PetscErrorCode TestCMRSAutomaticPlan(void)
{
  Mat A;

  PetscFunctionBeginUser;
  PetscCall(CreateCMRSRows(400, 1000, 70, 300, &A)); /* mean 70.6, one row of 300 */
  PetscCall(ExpectView(A, "variant auto: scan", "CMRS, mean row of 70 entries"));
  PetscCall(ExpectView(A, "heavy rows planned: rows longer than 256 entries", "CMRS, mean row of 70 entries and a row of 300"));
  PetscCall(MatDestroy(&A));
  PetscCall(CreateCMRSRows(400, 1000, 70, 256, &A)); /* no row longer than 256 */
  PetscCall(ExpectView(A, "variant auto: scan", "CMRS, mean row of 70 entries, none longer than 256"));
  PetscCall(CheckView(A, "heavy rows planned", PETSC_FALSE, "CMRS, mean row of 70 entries, none longer than 256"));
  PetscCall(MatDestroy(&A));
  PetscCall(CreateCMRSRows(400, 1000, 60, 300, &A)); /* mean 60.6: the row of 300 holds 1.2 % of the entries */
  PetscCall(CheckView(A, "heavy rows planned", PETSC_FALSE, "CMRS, mean row of 60 entries, one row of 300 (1.2 % of the entries)"));
  PetscCall(MatDestroy(&A));
  PetscCall(CreateCMRSRows(20, 1000, 10, 400, &A)); /* mean 29.5: the row of 400 holds 68 % of the entries */
  PetscCall(ExpectView(A, "heavy rows planned: rows longer than 256 entries", "CMRS, mean row of 30 entries, one row of 400 holding 68 % of them"));
  PetscCall(MatDestroy(&A));
  PetscCall(CreateCMRSRows(400, 1000, 70, 300, &A));
  PetscCall(TestSetOptionExpect(A, "-mat_cmrs_heavy_rows", "off", PETSC_SUCCESS));
  PetscCall(CheckView(A, "heavy rows planned", PETSC_FALSE, "CMRS, mean row of 70 entries and a row of 300, -mat_cmrs_heavy_rows off"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The plan record (src/base/gpumat_plan.c): made from the row statistics before any build, printed by MatView and
  returned by the getters; made again after a new pattern, a structural parameter, or a launch parameter (which
  keeps the layout)
*/
static PetscErrorCode TestPlanRecord(void)
{
  Mat      A;
  PetscInt T, h;
  MatType  choice;

  PetscFunctionBeginUser;
  /* ELLPACK-R: the longest row and the slots it makes, before any build; again after a longer row joins */
  PetscCall(TestCreateLaplacian(2, 10, &A));
  PetscCall(MatConvert(A, MATSEQELLRCUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(ExpectView(A, "threads per row T = 1 (automatic", "ELLPACK-R plan before a build"));
  PetscCall(ExpectView(A, "rows 100, longest row 5, slots per row (width) 5", "ELLPACK-R plan before a build"));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (PetscInt j = 20; j < 60; j++) PetscCall(MatSetValue(A, 0, j, 1.0, INSERT_VALUES)); /* row 0: 43 entries */
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T));
  TEST_CHECK(T == 1, "ELLPACK-R after a long row joins: T %" PetscInt_FMT " (mean 5.0, longest 43)", T);
  PetscCall(ExpectView(A, "rows 100, longest row 43, slots per row (width) 43", "ELLPACK-R plan after a new pattern"));
  PetscCall(MatELLRCUDASetThreadsPerRow(A, 4));
  PetscCall(ExpectView(A, "threads per row T = 4, max fill", "ELLPACK-R plan after T is set"));
  PetscCall(ExpectView(A, "slots per row (width) 44", "ELLPACK-R plan after T is set (43 rounded up to a multiple of 4)"));
  PetscCall(MatDestroy(&A));

  /* CMRS: the scan kernel's plan; a launch parameter (block size, passes loaded ahead) planned again */
  PetscCall(TestCreateLaplacian(2, 10, &A));
  PetscCall(MatConvert(A, MATSEQCMRSCUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatCMRSCUDAGetHeight(A, &h));
  TEST_CHECK(h == 16, "CMRS scan kernel's automatic height %" PetscInt_FMT " (16)", h);
  PetscCall(ExpectView(A, "variant auto: scan (H100 kernel: warp segmented scan on the unsorted layout), height 16 (automatic), 4 strips per warp, 1 passes loaded ahead, 4 entries per lane per pass, block size 128", "CMRS plan before a build"));
  PetscCall(MatCMRSCUDASetBlockSize(A, 256));
  PetscCall(ExpectView(A, "block size 256", "CMRS plan after the block size is set"));
  PetscCall(TestSetOptionExpect(A, "-mat_cmrs_unroll", "4", PETSC_SUCCESS));
  PetscCall(ExpectView(A, "4 strips per warp, 4 passes loaded ahead", "CMRS plan after -mat_cmrs_unroll 4"));
  PetscCall(MatCMRSCUDASetSort(A, PETSC_TRUE));
  PetscCall(MatCMRSCUDAGetHeight(A, &h));
  TEST_CHECK(h == 8, "CMRS sorted strips (Algorithm 1): automatic height %" PetscInt_FMT " (8 at mean row length 4.6)", h);
  PetscCall(ExpectView(A, "variant basic (Algorithm 1) (the scan kernel needs unsorted strips), height 8 (automatic)", "CMRS plan with sorted strips"));
  PetscCall(MatDestroy(&A));

  /* RgCSR: what a build would store, measured once per pattern before any build, measured again after a new one */
  {
    MatGPUMatInfo info0, info1, info2;

    PetscCall(TestCreateLaplacian(2, 10, &A));
    PetscCall(MatConvert(A, MATSEQRGCSRCUDA, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatGPUMatGetInfo(A, &info0));
    PetscCall(MatGPUMatGetInfo(A, &info1));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    for (PetscInt j = 20; j < 60; j++) PetscCall(MatSetValue(A, 0, j, 1.0, INSERT_VALUES)); /* row 0: 43 entries, in the first group of 100 rows */
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatGPUMatGetInfo(A, &info2));
    TEST_CHECK(info0.stored == 500 && info1.stored == info0.stored && info2.stored == 4300, "RgCSR stored slots before a build: %" PetscCount_FMT ", %" PetscCount_FMT " again, %" PetscCount_FMT " after a 43-entry row joins its group of 100 rows (500, 500, 4300)", info0.stored, info1.stored, info2.stored);
    PetscCall(MatDestroy(&A));
  }

  /* the choosing type: the rule's candidate is the plan's, and each candidate's getters answer from its own plan */
  PetscCall(TestCreateLaplacian(2, 10, &A));
  PetscCall(MatConvert(A, MATSEQAUTOCUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatAutoCUDAGetChoice(A, &choice));
  PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T));
  PetscCall(MatCMRSCUDAGetHeight(A, &h));
  TEST_CHECK(choice && T == 1 && h == 16, "autocuda plans every candidate: choice %s, ELLPACK-R T %" PetscInt_FMT ", CMRS height %" PetscInt_FMT, choice ? choice : "(none)", T, h);
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The host emulation of the device transpose's product (the oracle its kernel is held to bit for bit on the GPU)
  against SeqAIJ's MatMultTranspose(): transposes with short, middling and long rows (the kernel's 4, 8 and 32 lanes),
  empty rows and columns, with and without y
*/
static PetscErrorCode TestTransposeEmulation(void)
{
  const PetscInt m = 300, ns[3] = {80, 40, 40}, per[3] = {1, 2, 5}; /* transposes' mean rows about 3, 13, 32 */

  PetscFunctionBeginUser;
  for (PetscInt c = 0; c < 3; c++) {
    const PetscInt     n = ns[c];
    Mat                A;
    Vec                x, y, z;
    const PetscInt    *ai, *aj;
    PetscScalar       *aa, *ze;
    const PetscScalar *xa, *ya, *zr;
    PetscMemType       mt;
    PetscReal          err = 0, nrm = 0;

    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, n, per[c], NULL, &A));
    for (PetscInt i = 0; i < m; i++) {
      if (i % 7 == 3) continue; /* empty rows of A */
      for (PetscInt k = 0; k < per[c]; k++) {
        PetscInt    col = (i * 7 + 13 * k) % (n - 1); /* column n - 1 stays empty */
        PetscScalar v   = 1.0 / (1.0 + i + k) - 0.3;

        PetscCall(MatSetValues(A, 1, &i, 1, &col, &v, ADD_VALUES));
      }
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatCreateVecs(A, &z, &x)); /* x: A's rows, z: its columns */
    PetscCall(VecDuplicate(z, &y));
    PetscCall(VecSetRandom(x, NULL));
    PetscCall(VecSetRandom(y, NULL));
    PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mt));
    PetscCall(PetscMalloc1(n, &ze));
    for (PetscInt withy = 0; withy < 2; withy++) {
      PetscCall(VecGetArrayRead(x, &xa));
      PetscCall(VecGetArrayRead(y, &ya));
      PetscCall(MatGPUMatTransposeMultEmulate(m, n, ai, aj, aa, xa, withy ? ya : NULL, ze));
      PetscCall(VecRestoreArrayRead(x, &xa));
      PetscCall(VecRestoreArrayRead(y, &ya));
      if (withy) PetscCall(MatMultTransposeAdd(A, x, y, z));
      else PetscCall(MatMultTranspose(A, x, z));
      PetscCall(VecGetArrayRead(z, &zr));
      for (PetscInt j = 0; j < n; j++) {
        err = PetscMax(err, PetscAbsScalar(ze[j] - zr[j]));
        nrm = PetscMax(nrm, PetscAbsScalar(zr[j]));
      }
      PetscCall(VecRestoreArrayRead(z, &zr));
      TEST_CHECK(err <= 1e-13 * nrm, "the device transpose's host emulation (%" PetscInt_FMT " lanes) equals MatMultTranspose%s: error %.2e", MatGPUMatTransposeLanes(n, ai[m]), withy ? "Add" : "", (double)err);
    }
    PetscCall(VecGetArrayRead(y, &ya)); /* the empty column: y's entry */
    TEST_CHECK(ze[n - 1] == ya[n - 1], "the device transpose's host emulation gives y's entry at an empty column");
    PetscCall(VecRestoreArrayRead(y, &ya));
    PetscCall(PetscFree(ze));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&z));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscBool gpu, only;
  char      reason[256];
  PetscInt  large = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# device: %s\n", gpu ? "available" : reason));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# precision: %s\n", PetscDefined(USE_REAL_SINGLE) ? "single" : "double"));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-device_only", &only)); /* tests/run.sh asks this first */
  if (only) {
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(TestConversions());
  PetscCall(TestCreationRoutes());
  PetscCall(TestHostOperations(PETSC_FALSE, 300));
  PetscCall(TestHostOperations(PETSC_TRUE, 300));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-large_rows", &large, NULL)); /* tests/run.sh: cpu-host-threads */
  if (large) PetscCall(TestHostOperations(PETSC_FALSE, large));
  PetscCall(TestOptions());
  PetscCall(TestInfoAndView());
  PetscCall(TestTriangularLevels());
  PetscCall(TestPlanFromStoredRows());
  PetscCall(TestPlanRecord());
  PetscCall(TestCMRSAutomaticPlan());
  PetscCall(TestTransposeEmulation());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_gpumat_host: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
