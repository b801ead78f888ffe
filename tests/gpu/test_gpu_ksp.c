static const char help[] = "KSP CG and GMRES with the petscgpumat types against aijcusparse: same iterations, same solution.\n"
                           "  -types ellrcuda   types to compare with aijcusparse\n";

#include <petscksp.h>
#include <petscgpumat.h>
#include <petscgpumat/private/rgcsrimpl.h>
#include "../common/testutil.h"
#include <petscdevice_cuda.h>
#include "../reference/emulate.h" /* MatGPUMatTransposeMultEmulate() */

/*
  2-D convection-diffusion, upwind, with a reaction term: nonsymmetric and well conditioned, so GMRES
  converges in few iterations without restarts and rounding differences cannot change the count.
*/
static PetscErrorCode CreateConvectionDiffusion(PetscInt k, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(2, k, A));
  for (PetscInt row = 0; row < k * k; row++) {
    PetscInt i = row % k;
    PetscCall(MatSetValue(*A, row, row, 0.8 + 0.5, ADD_VALUES));
    if (i > 0) PetscCall(MatSetValue(*A, row, row - 1, -0.8, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Solve(Mat A, const char *type, KSPType ksptype, Vec bhost, Vec *xhost, PetscInt *its)
{
  Mat B;
  Vec b, x;
  KSP ksp;
  PC  pc;

  PetscFunctionBeginUser;
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(MatSetType(B, type)); /* in-place conversion of an assembled AIJ, as -mat_type does */
  PetscCall(MatSetFromOptions(B)); /* the format's options */
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(VecCopy(bhost, b));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGMRESSetRestart(ksp, 300));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(VecDuplicate(bhost, xhost));
  PetscCall(VecCopy(x, *xhost));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Compare(Mat A, const char *problem, KSPType ksptype, const char *type, const char *options)
{
  Vec       b, xref, x;
  PetscInt  itsref, its;
  PetscReal nref, ndiff;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, NULL, &b));
  PetscCall(VecSet(b, 1.0));
  PetscCall(Solve(A, MATAIJCUSPARSE, ksptype, b, &xref, &itsref));
  if (options) PetscCall(PetscOptionsInsertString(NULL, options));
  PetscCall(Solve(A, type, ksptype, b, &x, &its));
  if (options) {
    PetscCall(PetscOptionsClearValue(NULL, "-mat_ellr_threads_per_row"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_sort_window"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_group_size"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_sort_min_saving"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_height"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_sort"));
  }
  PetscCall(VecNorm(xref, NORM_2, &nref));
  PetscCall(VecAXPY(x, -1.0, xref));
  PetscCall(VecNorm(x, NORM_2, &ndiff));
  TEST_CHECK(TestSameKSP(its, itsref, ndiff / nref, 1e-10), "KSP %s on %s: %s %s %" PetscInt_FMT " iterations, aijcusparse %" PetscInt_FMT "; solutions differ by %.2e (relative)", ksptype, problem, type, options ? options : "", its, itsref, (double)(ndiff / nref));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&xref));
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A factor asked for before the matrix is assembled (PETSc's KSP tests ex45: KSPSetFromOptions() of a PC that
  factors calls MatGetFactor() to learn the ordering), then ILU(0) on the device once it is: the residual is small
  and the factor is cuSPARSE's
*/
static PetscErrorCode CheckFactorBeforeAssembly(const char *type)
{
  const PetscInt n = 500;
  Mat            A, F;
  Vec            x, b, r;
  KSP            ksp;
  PC             pc;
  MatSolverType  solver;
  PetscReal      rn, bn;
  PetscBool      cusparse;

  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, &A));
  PetscCall(MatSetSizes(A, n, n, n, n));
  PetscCall(MatSetType(A, type));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_trisolve", "device")); /* a tridiagonal matrix would solve on the host */
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatSetUp(A));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCILU));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 200));
  PetscCall(KSPSetFromOptions(ksp));
  for (PetscInt i = 0; i < n; i++) {
    if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.5, INSERT_VALUES));
    PetscCall(MatSetValue(A, i, i, 4.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAXPY(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(b, NORM_2, &bn));
  PetscCall(PCFactorGetMatrix(pc, &F));
  PetscCall(MatFactorGetSolverType(F, &solver));
  PetscCall(PetscStrcmp(solver, MATSOLVERCUSPARSE, &cusparse));
  TEST_CHECK(rn <= 1e-8 * bn, "%s: ILU(0) set up before assembly: relative residual %.2e", type, (double)(rn / bn));
  TEST_CHECK(cusparse, "%s: ILU(0) set up before assembly: the factor is cuSPARSE's (got %s)", type, solver);
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_trisolve", "auto"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_trisolve"));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&r));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A symmetric tridiagonal matrix of `type`, scaled: each made by the same calls, so their object states agree */
static PetscErrorCode Tridiagonal(const char *type, PetscInt n, PetscScalar scale, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, n, n, n, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSetUp(*A));
  for (PetscInt i = 0; i < n; i++) {
    if (i > 0) PetscCall(MatSetValue(*A, i, i - 1, -1.0 * scale, INSERT_VALUES));
    if (i < n - 1) PetscCall(MatSetValue(*A, i, i + 1, -1.0 * scale, INSERT_VALUES));
    PetscCall(MatSetValue(*A, i, i, 2.5 * scale, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A factor set up with one matrix and factored numerically with others of the same pattern (mat tests ex28): each
   solve must use the matrix given to the numeric phase, whose states can carry the same numbers as the first's */
static PetscErrorCode CheckFactorOtherMatrix(const char *type)
{
  const PetscInt     n       = 300;
  const MatFactorType ftype[] = {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC};

  PetscFunctionBeginUser;
  for (size_t f = 0; f < PETSC_STATIC_ARRAY_LENGTH(ftype); f++) {
    Mat           A[3], F;
    Vec           x, b, r;
    IS            row, col;
    MatFactorInfo info;

    for (PetscInt k = 0; k < 3; k++) PetscCall(Tridiagonal(type, n, (PetscScalar)(k + 1), &A[k]));
    PetscCall(MatCreateVecs(A[0], &x, &b));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecSet(b, 1.0));
    PetscCall(MatGetFactor(A[0], MATSOLVERCUSPARSE, ftype[f], &F));
    PetscCall(MatGetOrdering(A[0], MATORDERINGNATURAL, &row, &col));
    PetscCall(MatFactorInfoInitialize(&info));
    info.fill = 5.0; /* as ex28 (MatFactorInfoInitialize() leaves 0, out of range for ILU) */
    if (ftype[f] == MAT_FACTOR_LU) PetscCall(MatLUFactorSymbolic(F, A[0], row, col, &info));
    else if (ftype[f] == MAT_FACTOR_ILU) PetscCall(MatILUFactorSymbolic(F, A[0], row, col, &info));
    else if (ftype[f] == MAT_FACTOR_CHOLESKY) PetscCall(MatCholeskyFactorSymbolic(F, A[0], row, &info));
    else PetscCall(MatICCFactorSymbolic(F, A[0], row, &info));
    /* A0, A1, A2; A1's values changed in place; A1's arrays made again (same pattern); A2 after A0 and A1 are
       destroyed (the shadow is made over the host arrays of the matrix it follows: none may be used once gone) */
    for (PetscInt step = 0; step < 6; step++) {
      const PetscInt k = step < 3 ? step : (step < 5 ? 1 : 2);
      PetscReal      rn;
      char           what[64];

      PetscCall(PetscSNPrintf(what, sizeof(what), "A%" PetscInt_FMT, k));
      if (step == 3) {
        PetscCall(MatScale(A[1], 1.5));
        PetscCall(PetscStrlcat(what, " scaled in place", sizeof(what)));
      }
      if (step == 4) {
        PetscCall(MatDestroy(&A[1]));
        PetscCall(Tridiagonal(type, n, 3.0, &A[1]));
        PetscCall(PetscStrlcat(what, " made again", sizeof(what)));
      }
      if (step == 5) {
        PetscCall(MatDestroy(&A[0]));
        PetscCall(MatDestroy(&A[1]));
        PetscCall(PetscStrlcat(what, " after A0 and A1 are destroyed", sizeof(what)));
      }
      if (ftype[f] == MAT_FACTOR_LU || ftype[f] == MAT_FACTOR_ILU) PetscCall(MatLUFactorNumeric(F, A[k], &info));
      else PetscCall(MatCholeskyFactorNumeric(F, A[k], &info));
      PetscCall(MatSolve(F, b, x));
      PetscCall(MatMult(A[k], x, r));
      PetscCall(VecAXPY(r, -1.0, b));
      PetscCall(VecNorm(r, NORM_INFINITY, &rn));
      TEST_CHECK(rn < 1e-10, "%s: %s factor set up with A0, numeric phase with %s: residual %.2e", type, MatFactorTypes[ftype[f]], what, (double)rn);
    }
    PetscCall(ISDestroy(&row));
    PetscCall(ISDestroy(&col));
    PetscCall(MatDestroy(&F));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
    for (PetscInt k = 0; k < 3; k++) PetscCall(MatDestroy(&A[k]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Calls so far of a -log_view event: MatCUSPARSCopyTo (uploads of aijcusparse matrices), GPUMatBuild (builds of our
  device copies), VecCUDACopyFrom (device-to-host vector copies)
*/
/*
  One device CSR serves cuSPARSE and the format: the first cuSPARSE factorization uploads the matrix once (its shadow),
  a sparse product reads the same, and after a change of values one upload refreshes the format (through the shadow)
  and serves the next factorization and product (counted by PETSc's MatCUSPARSCopyTo)
*/
static PetscErrorCode CheckOneUpload(const char *type)
{
  Mat           A, B, F, C;
  Vec           x, y;
  IS            row, col;
  MatFactorInfo finfo;
  MatGPUMatInfo info;
  PetscInt      n[5];

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  PetscCall(TestCreateLaplacian(2, 100, &A));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_device_factor", "0")); /* ILU(0) through the shadow (CheckDeviceFactor: without) */
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_device_factor"));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(B, x, y)); /* the format's build: the base's own upload */
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &n[0]));
  PetscCall(MatGetFactor(B, MATSOLVERCUSPARSE, MAT_FACTOR_ILU, &F));
  PetscCall(MatGetOrdering(B, MATORDERINGNATURAL, &row, &col));
  PetscCall(MatFactorInfoInitialize(&finfo));
  finfo.fill = 1.0; /* ILU(0) (MatFactorInfoInitialize() leaves 0, out of range) */
  PetscCall(MatILUFactorSymbolic(F, B, row, col, &finfo));
  PetscCall(MatLUFactorNumeric(F, B, &finfo));
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &n[1]));
  PetscCall(MatGPUMatGetInfo(B, &info));
  TEST_CHECK(n[1] - n[0] == 1 && info.device_csr_bytes == (size_t)(info.rows + 1) * sizeof(PetscInt) + (size_t)info.nnz * (sizeof(PetscInt) + sizeof(PetscScalar)), "%s: cuSPARSE's ILU(0) uploads the CSR once (%" PetscInt_FMT " uploads) and it is kept (%zu bytes)", type, n[1] - n[0], info.device_csr_bytes);
  PetscCall(MatMatMult(B, B, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &n[2]));
  TEST_CHECK(n[2] == n[1], "%s: MatMatMult reads the same device CSR (%" PetscInt_FMT " uploads)", type, n[2] - n[1]);
  PetscCall(MatScale(B, 2.0));
  PetscCall(MatMult(B, x, y));
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &n[3]));
  TEST_CHECK(n[3] - n[2] == 1, "%s: new values go up once, through the shadow (%" PetscInt_FMT " uploads)", type, n[3] - n[2]);
  PetscCall(MatLUFactorNumeric(F, B, &finfo));
  PetscCall(MatMatMult(B, B, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &n[4]));
  TEST_CHECK(n[4] == n[3], "%s: the numeric factorization and product after new values read them there (%" PetscInt_FMT " uploads)", type, n[4] - n[3]);
  {
    Mat       Ch;
    PetscBool eq;
    Vec       yh;
    PetscReal err;

    PetscCall(MatMatMult(A, A, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
    PetscCall(MatScale(Ch, 4.0));
    PetscCall(MatMultEqual(C, Ch, 5, &eq));
    TEST_CHECK(eq, "%s: the product after new values is (2A)(2A)", type);
    PetscCall(VecDuplicate(y, &yh));
    PetscCall(MatMult(A, x, yh));
    PetscCall(VecAYPX(yh, -2.0, y)); /* y - 2 A x: y = B x, B = 2 A refreshed through the shadow */
    PetscCall(VecNorm(yh, NORM_INFINITY, &err));
    TEST_CHECK(err < 1e-12, "%s: the format refreshed through the shadow: |2 A x - B x| = %.2e", type, (double)err);
    PetscCall(VecDestroy(&yh));
    PetscCall(MatDestroy(&Ch));
  }
  PetscCall(ISDestroy(&row));
  PetscCall(ISDestroy(&col));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&F));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_device_factor", "1"));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_device_factor"));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Uploads of 16 MB or more go through pinned buffers that several host threads fill (-mat_gpumat_upload_threads,
  src/base/gpumat_staged_copy.c). With 2, 3 and 5 threads (chunks ending anywhere in the arrays) the build and a value
  refresh of a matrix with 39 MB of values and 20 MB of column indices give, bit for bit, the products of CUDA's own
  pageable copy (1 thread), whose product is checked against SeqAIJ's; the staged path is taken (GPUMatStagedUpload)
  with more than one thread and not with one.
*/
static PetscErrorCode CheckStagedUpload(const char *type, Mat A, Vec xh)
{
  const char        *threads[] = {"1", "2", "3", "5"};
  PetscScalar       *first[2]  = {NULL, NULL};
  const PetscInt    *aj;
  const PetscInt    *ai;
  PetscInt           m, nrows;
  PetscBool          done;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ai, &aj, &done));
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(threads); k++) {
    Mat                B;
    Vec                x, y;
    const PetscScalar *ya;
    PetscInt           n0, n1;

    PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_upload_threads", threads[k]));
    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
    PetscCall(MatSetType(B, type));
    PetscCall(MatSetFromOptions(B));
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecCopy(xh, x));
    PetscCall(TestEventCount("GPUMatStagedUpload", &n0));
    for (PetscInt pass = 0; pass < 2; pass++) { /* the build, then a value refresh */
      if (pass) {
        PetscCall(MatSetValue(B, m / 2, aj[ai[m / 2]], 3.25, INSERT_VALUES)); /* same pattern, new values */
        PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
      }
      PetscCall(VecSet(y, NAN)); /* poisoned */
      PetscCall(MatMult(B, x, y));
      PetscCall(VecGetArrayRead(y, &ya));
      if (!k) {
        Mat Bh;
        Vec yh;
        PetscReal err, nrm;

        PetscCall(PetscMalloc1(m, &first[pass]));
        PetscCall(PetscArraycpy(first[pass], ya, m));
        PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &Bh));
        if (pass) {
          PetscCall(MatSetValue(Bh, m / 2, aj[ai[m / 2]], 3.25, INSERT_VALUES));
          PetscCall(MatAssemblyBegin(Bh, MAT_FINAL_ASSEMBLY));
          PetscCall(MatAssemblyEnd(Bh, MAT_FINAL_ASSEMBLY));
        }
        PetscCall(VecDuplicate(xh, &yh));
        PetscCall(MatMult(Bh, xh, yh));
        PetscCall(VecNorm(yh, NORM_INFINITY, &nrm));
        PetscCall(VecRestoreArrayRead(y, &ya));
        PetscCall(VecAXPY(yh, -1.0, y)); /* a NaN left in y shows here */
        PetscCall(VecGetArrayRead(y, &ya));
        PetscCall(VecNorm(yh, NORM_INFINITY, &err));
        TEST_CHECK(err <= 1e-12 * nrm, "%s: %s with CUDA's pageable copy equals SeqAIJ's product (|difference| %.2e of %.2e)", type, pass ? "refresh" : "build", (double)err, (double)nrm);
        PetscCall(VecDestroy(&yh));
        PetscCall(MatDestroy(&Bh));
      } else {
        TEST_CHECK(!memcmp(first[pass], ya, (size_t)m * sizeof(PetscScalar)), "%s: %s with %s upload threads gives the pageable copy's product bit for bit", type, pass ? "refresh" : "build", threads[k]);
      }
      PetscCall(VecRestoreArrayRead(y, &ya));
    }
    PetscCall(TestEventCount("GPUMatStagedUpload", &n1));
    if (!k) TEST_CHECK(n1 == n0, "%s: 1 upload thread is CUDA's own copy (%" PetscInt_FMT " staged uploads)", type, n1 - n0);
    else TEST_CHECK(n1 - n0 >= 3, "%s: %s upload threads stage the build's values and column indices and the refresh's values (%" PetscInt_FMT " staged uploads)", type, threads[k], n1 - n0);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_upload_threads", "0"));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &nrows, &ai, &aj, &done));
  PetscCall(PetscFree(first[0]));
  PetscCall(PetscFree(first[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = op(F)^-1 b with a device factor and with SeqAIJ's host factor Fh of the same matrix: the relative difference */
static PetscErrorCode FactorSolveDifference(Mat F, Mat Fh, PetscBool transpose, Vec b, PetscReal *diff)
{
  Vec       x, xh, bh;
  PetscReal nrm;

  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecSet(x, NAN)); /* poisoned: the solve writes every entry */
  PetscCall(MatCreateVecs(Fh, &xh, &bh));
  PetscCall(VecCopy(b, bh));
  if (transpose) {
    PetscCall(MatSolveTranspose(F, b, x));
    PetscCall(MatSolveTranspose(Fh, bh, xh));
  } else {
    PetscCall(MatSolve(F, b, x));
    PetscCall(MatSolve(Fh, bh, xh));
  }
  PetscCall(VecNorm(xh, NORM_INFINITY, &nrm));
  PetscCall(VecAXPY(xh, -1.0, x)); /* x back on the host */
  PetscCall(VecNorm(xh, NORM_INFINITY, diff));
  *diff = PetscIsNanReal(*diff) ? PETSC_MAX_REAL : *diff / nrm;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&bh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  ILU(0) and ICC(0) factored and solved on the device from the matrix's device CSR: no upload where the format's
  layout gives the CSR back (cmrscuda, ellrcuda, csrcuda; else one, the shadow's), whether the format was built before the
  factorization or by it (once either way); solves and ILU's transposed solves against SeqAIJ's host factor, also after
  new values refactored in place; the factor reports A's entries; a zero pivot is the factor's error, as on the host;
  a missing diagonal entry an error at the symbolic phase
*/
static PetscErrorCode CheckDeviceFactor(const char *type, PetscBool sorted)
{
  const MatFactorType ftype[] = {MAT_FACTOR_ILU, MAT_FACTOR_ICC};
  PetscBool           holds, cmrs, ellr, rgcsr;

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  PetscCall(PetscStrcmp(type, MATCMRSCUDA, &cmrs));
  PetscCall(PetscStrcmp(type, MATELLRCUDA, &ellr));
  PetscCall(PetscStrcmp(type, MATRGCSRCUDA, &rgcsr));
  PetscCall(PetscStrcmp(type, MATCSRCUDA, &holds));
  holds = (PetscBool)(holds || cmrs || ellr || rgcsr);
  for (size_t f = 0; f < PETSC_STATIC_ARRAY_LENGTH(ftype); f++) {
    for (PetscInt first = 0; first < 2; first++) { /* 0: multiplied before it is factored, 1: factored first */
      const PetscBool ilu = (PetscBool)(ftype[f] == MAT_FACTOR_ILU);
      Mat             A, B, F, Fh;
      Vec             x, b;
      IS              row, col;
      MatFactorInfo   finfo;
      MatInfo         info, ainfo;
      MatGPUMatInfo   ginfo;
      MatSolverType   solver;
      PetscInt        up[3], builds[2], nup;
      PetscReal       diff;
      PetscBool       cusparse;

      if (ilu) PetscCall(CreateConvectionDiffusion(60, &A));
      else PetscCall(TestCreateLaplacian(2, 60, &A));
      PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
      if (sorted) { /* RgCSR with its rows sorted by length: the layout gives the CSR back through its permutation */
        PetscCall(PetscOptionsInsertString(NULL, "-mat_rgcsr_sort_window 1000000000 -mat_rgcsr_sort_min_saving 0"));
        PetscCall(MatSetFromOptions(B));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_sort_window"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_sort_min_saving"));
      }
      PetscCall(MatCreateVecs(B, &x, &b));
      PetscCall(VecSetRandom(b, NULL));
      PetscCall(TestEventCount("GPUMatBuild", &builds[0]));
      PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[0]));
      if (!first) PetscCall(MatMult(B, b, x));
      PetscCall(MatGetOrdering(B, MATORDERINGNATURAL, &row, &col));
      PetscCall(MatFactorInfoInitialize(&finfo));
      finfo.fill = 1.0;
      PetscCall(MatGetFactor(B, MATSOLVERCUSPARSE, ftype[f], &F));
      PetscCall(MatGetFactor(A, MATSOLVERPETSC, ftype[f], &Fh));
      if (ilu) {
        PetscCall(MatILUFactorSymbolic(F, B, row, col, &finfo));
        PetscCall(MatILUFactorSymbolic(Fh, A, row, col, &finfo));
      } else {
        PetscCall(MatICCFactorSymbolic(F, B, row, &finfo));
        PetscCall(MatICCFactorSymbolic(Fh, A, row, &finfo));
      }
      for (PetscInt step = 0; step < 2; step++) { /* step 1: new values, the same pattern */
        if (step) {
          PetscCall(MatScale(A, 2.0));
          PetscCall(MatShift(A, 0.5));
          PetscCall(MatScale(B, 2.0));
          PetscCall(MatShift(B, 0.5));
        }
        if (ilu) {
          PetscCall(MatLUFactorNumeric(F, B, &finfo));
          PetscCall(MatLUFactorNumeric(Fh, A, &finfo));
        } else {
          PetscCall(MatCholeskyFactorNumeric(F, B, &finfo));
          PetscCall(MatCholeskyFactorNumeric(Fh, A, &finfo));
        }
        PetscCall(MatMult(B, b, x));
        PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[1 + step]));
        PetscCall(FactorSolveDifference(F, Fh, PETSC_FALSE, b, &diff));
        TEST_CHECK(diff <= 1e-10, "%s: device %s(0) (%s, %s) solves as SeqAIJ's host factor: relative difference %.2e", type, MatFactorTypes[ftype[f]], first ? "factored first" : "multiplied first", step ? "new values" : "first values", (double)diff);
        if (ilu) {
          PetscCall(FactorSolveDifference(F, Fh, PETSC_TRUE, b, &diff));
          TEST_CHECK(diff <= 1e-10, "%s: device ILU(0) transposed solve (%s) as the host factor's: relative difference %.2e", type, step ? "new values" : "first values", (double)diff);
        }
      }
      PetscCall(TestEventCount("GPUMatBuild", &builds[1]));
      PetscCall(MatGPUMatGetInfo(B, &ginfo));
      nup = up[1] - up[0];
      if (sorted) {
        MatRgCSRLayout D;

        PetscCall(MatRGCSRCUDAGetDeviceLayout(B, &D));
        TEST_CHECK(D.perm != NULL, "%s: %s(0): the rows were sorted (a permutation in the layout)", type, MatFactorTypes[ftype[f]]);
        PetscCall(MatRgCSRLayoutDestroy(&D));
      }
      TEST_CHECK(builds[1] - builds[0] == 1, "%s: %s(0) %s: the format is built once (%" PetscInt_FMT " builds)", type, MatFactorTypes[ftype[f]], first ? "factored first" : "multiplied first", builds[1] - builds[0]);
      TEST_CHECK(holds ? nup == 0 : nup <= 1, "%s: device %s(0) %s: %" PetscInt_FMT " uploads of an aijcusparse copy (expected %s)", type, MatFactorTypes[ftype[f]], first ? "factored first" : "multiplied first", nup, holds ? "none: the layout gives the CSR back" : "at most one");
      TEST_CHECK((nup == 0) == (ginfo.device_csr_bytes == 0), "%s: an aijcusparse copy is kept (%zu bytes) exactly where one was uploaded (%" PetscInt_FMT ")", type, ginfo.device_csr_bytes, nup);
      TEST_CHECK(!holds || up[2] == up[1], "%s: new values refactored from the format's refreshed layout (%" PetscInt_FMT " uploads)", type, up[2] - up[1]);
      PetscCall(MatFactorGetSolverType(F, &solver));
      PetscCall(PetscStrcmp(solver, MATSOLVERCUSPARSE, &cusparse));
      PetscCall(MatGetInfo(F, MAT_LOCAL, &info));
      PetscCall(MatGetInfo(A, MAT_LOCAL, &ainfo));
      TEST_CHECK(cusparse && info.nz_used == ainfo.nz_used, "%s: the device factor is cuSPARSE's (%s) and reports the matrix's entries (%.0f, matrix %.0f)", type, solver, info.nz_used, ainfo.nz_used);
      PetscCall(ISDestroy(&row));
      PetscCall(ISDestroy(&col));
      PetscCall(MatDestroy(&F));
      PetscCall(MatDestroy(&Fh));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&B));
      PetscCall(MatDestroy(&A));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A matrix the format refuses (ELLPACK-R's padding guard, one dense row): the device factor reads its aijcusparse copy
  and solves as SeqAIJ's host factor; the refused build leaves -log_view's events balanced (the next build is counted)
*/
static PetscErrorCode CheckDeviceFactorRefused(const char *type)
{
  Mat           A, B, F, Fh, L;
  Vec           b, x;
  IS            row, col;
  MatFactorInfo finfo;
  PetscInt      builds[2];
  PetscReal     diff;

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  PetscCall(TestCreateRandom(1500, 1500, 4, "denserow", 12, &A));
  PetscCall(MatShift(A, 1500.0));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(VecSetRandom(b, NULL));
  PetscCall(MatGetOrdering(B, MATORDERINGNATURAL, &row, &col));
  PetscCall(MatFactorInfoInitialize(&finfo));
  finfo.fill = 1.0;
  PetscCall(MatGetFactor(B, MATSOLVERCUSPARSE, MAT_FACTOR_ILU, &F));
  PetscCall(MatGetFactor(A, MATSOLVERPETSC, MAT_FACTOR_ILU, &Fh));
  PetscCall(MatILUFactorSymbolic(F, B, row, col, &finfo));
  PetscCall(MatILUFactorSymbolic(Fh, A, row, col, &finfo));
  PetscCall(MatLUFactorNumeric(F, B, &finfo));
  PetscCall(MatLUFactorNumeric(Fh, A, &finfo));
  PetscCall(FactorSolveDifference(F, Fh, PETSC_FALSE, b, &diff));
  TEST_CHECK(diff <= 1e-10, "%s: device ILU(0) of a matrix with one dense row solves as SeqAIJ's host factor: relative difference %.2e", type, (double)diff);
  PetscCall(TestCreateLaplacian(2, 30, &L));
  PetscCall(MatConvert(L, type, MAT_INPLACE_MATRIX, &L));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatCreateVecs(L, &x, &b));
  PetscCall(VecSet(x, 1.0));
  PetscCall(TestEventCount("GPUMatBuild", &builds[0]));
  PetscCall(MatMult(L, x, b));
  PetscCall(TestEventCount("GPUMatBuild", &builds[1]));
  TEST_CHECK(builds[1] - builds[0] == 1, "%s: after the dense-row matrix, the next build is counted in GPUMatBuild (%" PetscInt_FMT ")", type, builds[1] - builds[0]);
  PetscCall(ISDestroy(&row));
  PetscCall(ISDestroy(&col));
  PetscCall(MatDestroy(&F));
  PetscCall(MatDestroy(&Fh));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&L));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  aijcusparse's -mat_cusparse_use_cpu_solve on our matrix: cuSPARSE's ILU(0) factor then solves on the host (vectors
  come down) as SeqAIJ's factor does, and with no solver type named the host ILU factor is taken; ICC(0) solves on the
  device as aijcusparse's does, and without the key both do (nothing comes down)
*/
static PetscErrorCode CheckCPUSolve(const char *type)
{
  const MatFactorType ftype[] = {MAT_FACTOR_ILU, MAT_FACTOR_ICC};

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  for (size_t f = 0; f < PETSC_STATIC_ARRAY_LENGTH(ftype); f++) {
    for (PetscInt cpu = 0; cpu < 2; cpu++) {
      Mat           A, B, F, Fh, D;
      Vec           b, x;
      IS            row, col;
      MatFactorInfo finfo;
      MatSolverType solver;
      PetscInt      down[2];
      PetscReal     diff;
      PetscBool     cusparse, hostsolve = (PetscBool)(cpu && ftype[f] == MAT_FACTOR_ILU);

      PetscCall(TestCreateLaplacian(2, 50, &A));
      PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
      PetscCall(PetscOptionsSetValue(NULL, "-mat_cusparse_use_cpu_solve", cpu ? "1" : "0"));
      PetscCall(MatSetFromOptions(B));
      PetscCall(PetscOptionsClearValue(NULL, "-mat_cusparse_use_cpu_solve"));
      PetscCall(MatCreateVecs(B, NULL, &b));
      PetscCall(VecSetRandom(b, NULL));
      PetscCall(MatGetOrdering(B, MATORDERINGNATURAL, &row, &col));
      PetscCall(MatFactorInfoInitialize(&finfo));
      finfo.fill = 1.0;
      PetscCall(MatGetFactor(B, MATSOLVERCUSPARSE, ftype[f], &F));
      PetscCall(MatGetFactor(A, MATSOLVERPETSC, ftype[f], &Fh));
      if (ftype[f] == MAT_FACTOR_ILU) {
        PetscCall(MatILUFactorSymbolic(F, B, row, col, &finfo));
        PetscCall(MatILUFactorSymbolic(Fh, A, row, col, &finfo));
        PetscCall(MatLUFactorNumeric(F, B, &finfo));
        PetscCall(MatLUFactorNumeric(Fh, A, &finfo));
      } else {
        PetscCall(MatICCFactorSymbolic(F, B, row, &finfo));
        PetscCall(MatICCFactorSymbolic(Fh, A, row, &finfo));
        PetscCall(MatCholeskyFactorNumeric(F, B, &finfo));
        PetscCall(MatCholeskyFactorNumeric(Fh, A, &finfo));
      }
      PetscCall(FactorSolveDifference(F, Fh, PETSC_FALSE, b, &diff));
      TEST_CHECK(diff <= 1e-10, "%s: cuSPARSE's %s(0) factor with -mat_cusparse_use_cpu_solve %" PetscInt_FMT " solves as SeqAIJ's: relative difference %.2e", type, MatFactorTypes[ftype[f]], cpu, (double)diff);
      PetscCall(VecDuplicate(b, &x));
      PetscCall(VecScale(b, 2.0)); /* b's values now on the device only (a scale by 1 does nothing) */
      PetscCall(TestEventCount("VecCUDACopyFrom", &down[0]));
      PetscCall(MatSolve(F, b, x));
      PetscCall(TestEventCount("VecCUDACopyFrom", &down[1]));
      TEST_CHECK(hostsolve ? down[1] > down[0] : down[1] == down[0], "%s: -mat_cusparse_use_cpu_solve %" PetscInt_FMT ": the %s(0) solve %s (%" PetscInt_FMT " device-to-host copies)", type, cpu, MatFactorTypes[ftype[f]], hostsolve ? "runs on the host" : "stays on the device", down[1] - down[0]);
      PetscCall(VecDestroy(&x));
      PetscCall(MatGetFactor(B, NULL, ftype[f], &D));
      PetscCall(MatFactorGetSolverType(D, &solver));
      PetscCall(PetscStrcmp(solver, MATSOLVERCUSPARSE, &cusparse));
      TEST_CHECK(!hostsolve || !cusparse, "%s: -mat_cusparse_use_cpu_solve: with no solver type named the ILU factor is the host's (got %s)", type, solver ? solver : "none");
      PetscCall(MatDestroy(&D));
      PetscCall(ISDestroy(&row));
      PetscCall(ISDestroy(&col));
      PetscCall(MatDestroy(&F));
      PetscCall(MatDestroy(&Fh));
      PetscCall(VecDestroy(&b));
      PetscCall(MatDestroy(&B));
      PetscCall(MatDestroy(&A));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  GAMG's prolongator smoothing, P = A P0 D^-1 alpha + P0 (MatAYPX with a pattern inside A P0's): with A and P0 of our
  type the product is cuSPARSE's, and the AYPX stays on the device (no device-to-host copy of the product); the
  result equals the host computation
*/
static PetscErrorCode CheckProductAYPX(const char *type)
{
  Mat       A, P0, Ah, P0h, C, Ch;
  PetscInt  down[2], m = 900, nc = 100;
  PetscBool eq;

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  PetscCall(TestCreateLaplacian(2, 30, &Ah));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, nc, 1, NULL, &P0h)); /* aggregates of 9 consecutive rows, as GAMG's tentative prolongator */
  for (PetscInt i = 0; i < m; i++) PetscCall(MatSetValue(P0h, i, i / 9, 1.0 / 3.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(P0h, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P0h, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(Ah, type, MAT_INITIAL_MATRIX, &A));
  PetscCall(MatConvert(P0h, type, MAT_INITIAL_MATRIX, &P0));
  PetscCall(MatMatMult(A, P0, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatMatMult(Ah, P0h, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
  PetscCall(TestEventCount("MatCUSPARSCopyFr", &down[0]));
  PetscCall(MatAYPX(C, -0.7, P0, SUBSET_NONZERO_PATTERN));
  PetscCall(TestEventCount("MatCUSPARSCopyFr", &down[1]));
  PetscCall(MatAYPX(Ch, -0.7, P0h, SUBSET_NONZERO_PATTERN));
  TEST_CHECK(down[1] == down[0], "%s: MatAYPX of a device product with a prolongator of ours stays on the device (%" PetscInt_FMT " device-to-host copies)", type, down[1] - down[0]);
  PetscCall(MatMultEqual(C, Ch, 10, &eq));
  TEST_CHECK(eq, "%s: MatAYPX of a device product with a prolongator of ours: the host's result", type);
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&P0));
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&P0h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatGetDiagonal() into a device vector stays on the device (PCJACOBI's set-up, every level of GAMG and PCMG): the
  vector is not left valid only on the host, so the device reciprocal and norm that follow copy nothing to the device;
  the values are AIJ's, missing diagonal entries (zeros) and rectangular matrices included; the output poisoned first;
  before the first product (from the host master copy) and after it with new values (from the built layout: ELLPACK-R
  and RgCSR read it from their rows, CMRS and CSR gather it from their values in CSR order; MatView says which)
*/
static PetscErrorCode CheckDiagonalOnDevice(const char *type)
{
  const PetscInt sizes[3][2] = {
    {300, 300},
    {200, 300},
    {300, 200}
  };

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  for (PetscInt c = 0; c < 3; c++) {
    Mat       Ah, A;
    Vec       v, vh;
    PetscInt  up[2];
    PetscReal diff;

    PetscCall(TestCreateRandom(sizes[c][0], sizes[c][1], 5, "emptyrows", 50 + c, &Ah)); /* few rows have their diagonal entry */
    for (PetscInt i = 0; i < PetscMin(sizes[c][0], sizes[c][1]); i += 3) PetscCall(MatSetValue(Ah, i, i, 2.0 + i, INSERT_VALUES)); /* every third row gets one */
    PetscCall(MatAssemblyBegin(Ah, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(Ah, MAT_FINAL_ASSEMBLY));
    PetscCall(MatConvert(Ah, type, MAT_INITIAL_MATRIX, &A));
    PetscCall(MatCreateVecs(A, NULL, &v));
    PetscCall(MatCreateVecs(Ah, NULL, &vh));
    for (PetscInt built = 0; built < 2; built++) { /* from the host master copy, then (CMRS, CSR) from the built layout */
      if (built) {
        Vec x;

        PetscCall(MatCreateVecs(A, &x, NULL));
        PetscCall(VecSet(x, 1.0));
        PetscCall(MatMult(A, x, v)); /* builds the layout */
        PetscCall(VecDestroy(&x));
        PetscCall(MatScale(A, 0.5)); /* new values: the layout's refresh, before the gather, must bring them */
        PetscCall(MatScale(Ah, 0.5));
      }
      PetscCall(VecSet(v, PETSC_MAX_REAL));
      PetscCall(TestEventCount("VecCUDACopyTo", &up[0]));
      PetscCall(MatGetDiagonal(A, v));
      PetscCall(VecShift(v, 1.0)); /* device ops, as PCJACOBI's: with v valid only on the host the first copies it up */
      PetscCall(VecNorm(v, NORM_2, &diff));
      PetscCall(TestEventCount("VecCUDACopyTo", &up[1]));
      PetscCall(MatGetDiagonal(Ah, vh));
      PetscCall(VecShift(vh, 1.0));
      PetscCall(VecAXPY(vh, -1.0, v));
      PetscCall(VecNorm(vh, NORM_INFINITY, &diff));
      TEST_CHECK(up[1] == up[0] && diff == 0, "%s %" PetscInt_FMT "x%" PetscInt_FMT "%s: MatGetDiagonal into a device vector leaves it on the device (%" PetscInt_FMT " host-to-device vector copies after) and equals AIJ's (difference %g)", type, sizes[c][0], sizes[c][1], built ? ", layout built, new values" : "", up[1] - up[0], (double)diff);
      if (built) { /* the root names as tests/run.sh gives them; autocuda: either, by its candidate */
        const char *rows = "the last MatGetDiagonal into a device vector: read on the device from the layout's rows";
        const char *csr  = "the last MatGetDiagonal into a device vector: gathered on the device from the layout's values in CSR order";
        PetscBool   byrows, bycsr, ok;
        char        text[8192];

        PetscCall(PetscStrcmpAny(type, &byrows, MATELLRCUDA, MATRGCSRCUDA, ""));
        PetscCall(PetscStrcmpAny(type, &bycsr, MATCMRSCUDA, MATCSRCUDA, ""));
        PetscCall(TestViewInfoText(A, text, sizeof(text)));
        ok = (PetscBool)(byrows ? !!strstr(text, rows) : bycsr ? !!strstr(text, csr) : strstr(text, rows) || strstr(text, csr));
        TEST_CHECK(ok, "%s %" PetscInt_FMT "x%" PetscInt_FMT ": MatView says the built layout gave the diagonal on the device (%s)", type, sizes[c][0], sizes[c][1], byrows ? "from its rows" : bycsr ? "from its values in CSR order" : "either");
      }
    }
    PetscCall(VecDestroy(&v));
    PetscCall(VecDestroy(&vh));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&Ah));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Zero pivots of the device factor, as SeqAIJ's host factor has them: a zero on the diagonal is the factor's error
  (MatFactorGetError(): a KSP's PC then fails, the solve says why), a missing diagonal entry an error at once
*/
static PetscErrorCode CheckDeviceFactorPivots(const char *type)
{
  const PetscInt n = 50;
  Mat            A, F;
  IS             row, col;
  MatFactorInfo  finfo;
  MatFactorError err;
  PetscErrorCode ierr;
  Vec            x, b;
  KSP            ksp;
  PC             pc;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  for (PetscInt missing = 0; missing < 2; missing++) {
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 3, NULL, &A));
    for (PetscInt i = 0; i < n; i++) {
      if (i > 0) PetscCall(MatSetValue(A, i, i - 1, -1.0, INSERT_VALUES));
      if (i < n - 1) PetscCall(MatSetValue(A, i, i + 1, -1.0, INSERT_VALUES));
      if (!(missing && i == 7)) PetscCall(MatSetValue(A, i, i, !missing && i == 0 ? 0.0 : 4.0, INSERT_VALUES)); /* a zero first pivot (a stored zero), or no diagonal entry in row 7 */
    }
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatConvert(A, type, MAT_INPLACE_MATRIX, &A));
    PetscCall(MatGetOrdering(A, MATORDERINGNATURAL, &row, &col));
    PetscCall(MatFactorInfoInitialize(&finfo));
    finfo.fill = 1.0;
    PetscCall(MatGetFactor(A, MATSOLVERCUSPARSE, MAT_FACTOR_ILU, &F));
    TEST_EXPECT_ERROR(&ierr, MatILUFactorSymbolic(F, A, row, col, &finfo));
    if (missing) TEST_CHECK(ierr == PETSC_ERR_ARG_WRONGSTATE, "%s: device ILU(0) of a matrix missing a diagonal entry: error %d (expected %d)", type, (int)ierr, (int)PETSC_ERR_ARG_WRONGSTATE);
    else {
      TEST_CHECK(ierr == PETSC_SUCCESS, "%s: device ILU(0) symbolic phase with a stored zero on the diagonal: error %d", type, (int)ierr);
      PetscCall(MatLUFactorNumeric(F, A, &finfo));
      PetscCall(MatFactorGetError(F, &err));
      TEST_CHECK(err == MAT_FACTOR_NUMERIC_ZEROPIVOT, "%s: device ILU(0) with a zero pivot: the factor's error is %d (expected MAT_FACTOR_NUMERIC_ZEROPIVOT)", type, (int)err);
      PetscCall(MatCreateVecs(A, &x, &b));
      PetscCall(VecSet(b, 1.0));
      PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
      PetscCall(KSPSetOperators(ksp, A, A));
      PetscCall(KSPGetPC(ksp, &pc));
      PetscCall(PCSetType(pc, PCILU));
      PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERCUSPARSE));
      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(KSPGetConvergedReason(ksp, &reason));
      TEST_CHECK(reason == KSP_DIVERGED_PC_FAILED, "%s: KSP with the device ILU(0) of a zero pivot: reason %s (expected DIVERGED_PC_FAILED)", type, KSPConvergedReasons[reason]);
      PetscCall(KSPDestroy(&ksp));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&b));
    }
    PetscCall(MatDestroy(&F));
    PetscCall(ISDestroy(&row));
    PetscCall(ISDestroy(&col));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A sparse product of ours (a Galerkin operator) is of the operand's type over the product cuSPARSE computed: it
  multiplies with no upload (its shadow is that product), serves the next product from there, takes new values with
  no upload of its own, and multiplies host vectors too (SNES's VI solvers give PCMG's levels host vectors), all
  against the host's PtAP
*/
/* y = C x on the device for a random x, against the host's Ch: the error, Ch x's norm and the uploads C x made */
static PetscErrorCode GalerkinMultError(Mat C, Mat Ch, Vec x, Vec y, Vec xh, Vec yh, Vec ych, PetscInt *uploads, PetscReal *err, PetscReal *nrm)
{
  PetscInt up[2];

  PetscFunctionBeginUser;
  PetscCall(VecSetRandom(xh, NULL));
  PetscCall(VecCopy(xh, x));
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[0]));
  PetscCall(MatMult(C, x, y));
  PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[1]));
  *uploads = up[1] - up[0];
  PetscCall(MatMult(Ch, xh, ych));
  PetscCall(VecNorm(ych, NORM_INFINITY, nrm));
  PetscCall(VecCopy(y, yh));
  PetscCall(VecAXPY(yh, -1.0, ych));
  PetscCall(VecNorm(yh, NORM_INFINITY, err));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckProductResult(const char *type)
{
  const PetscInt n = 900, nc = 450;
  Mat            Ah, Ph, Ch, A, P, C, CC;
  Vec            x, y, xh, yh, ych;
  PetscInt       up[4];
  PetscBool      same;
  PetscReal      err, nrm;

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  PetscCall(TestCreateLaplacian(2, 30, &Ah));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, nc, 2, NULL, &Ph));
  for (PetscInt i = 0; i < n; i++) {
    PetscInt    cols[2] = {i / 2, PetscMin(i / 2 + 1, nc - 1)};
    PetscScalar vals[2] = {1.0, 0.5};

    PetscCall(MatSetValues(Ph, 1, &i, cols[1] > cols[0] ? 2 : 1, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(Ph, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Ph, MAT_FINAL_ASSEMBLY));
  PetscCall(MatConvert(Ah, type, MAT_INITIAL_MATRIX, &A));
  PetscCall(MatConvert(Ph, type, MAT_INITIAL_MATRIX, &P));
  PetscCall(MatPtAP(Ah, Ph, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(PetscObjectTypeCompare((PetscObject)C, ((PetscObject)A)->type_name, &same));
  TEST_CHECK(same, "%s: MatPtAP gives a matrix of the operand's type (%s)", type, ((PetscObject)C)->type_name);
  PetscCall(MatCreateVecs(C, &x, &y));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nc, &xh)); /* host vectors, as a VI's reduced space gives */
  PetscCall(VecDuplicate(xh, &yh));
  PetscCall(VecDuplicate(xh, &ych));
  for (PetscInt step = 0; step < 2; step++) {
    PetscCall(GalerkinMultError(C, Ch, x, y, xh, yh, ych, &up[0], &err, &nrm));
    TEST_CHECK(err <= 1e-13 * nrm && up[0] == 0, "%s: the Galerkin operator multiplies on the device%s with no upload (%" PetscInt_FMT "): error %.2e", type, step ? " after new values" : "", up[0], (double)err);
    PetscCall(MatMult(C, xh, yh));
    PetscCall(VecAXPY(yh, -1.0, ych));
    PetscCall(VecNorm(yh, NORM_INFINITY, &err));
    TEST_CHECK(err <= 1e-13 * nrm, "%s: the Galerkin operator multiplies host vectors%s: error %.2e", type, step ? " after new values" : "", (double)err);
    if (!step) {
      PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[1]));
      PetscCall(MatMatMult(C, C, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &CC));
      PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[2]));
      TEST_CHECK(up[2] == up[1], "%s: the next product reads the Galerkin operator's device CSR (%" PetscInt_FMT " uploads)", type, up[2] - up[1]);
      PetscCall(MatDestroy(&CC));
      PetscCall(MatScale(Ah, 2.0)); /* new values: the fine operator's go up, the product's stay on the device */
      PetscCall(MatScale(A, 2.0));
      PetscCall(MatPtAP(Ah, Ph, MAT_REUSE_MATRIX, PETSC_DETERMINE, &Ch));
      PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[2]));
      PetscCall(MatPtAP(A, P, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C));
      PetscCall(TestEventCount("MatCUSPARSCopyTo", &up[3]));
      TEST_CHECK(up[3] - up[2] == 1, "%s: MatPtAP with new values uploads the operand's only (%" PetscInt_FMT " uploads)", type, up[3] - up[2]);
    }
  }
  { /* MatProductReplaceMats(): a new fine operator of the same pattern (PCMG given new operators), the old one gone */
    Mat A2;

    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &A2));
    PetscCall(MatScale(A2, 3.0));
    PetscCall(MatProductReplaceMats(A2, NULL, NULL, C));
    PetscCall(MatDestroy(&A));
    PetscCall(MatProductNumeric(C));
    PetscCall(MatScale(Ah, 3.0));
    PetscCall(MatPtAP(Ah, Ph, MAT_REUSE_MATRIX, PETSC_DETERMINE, &Ch));
    PetscCall(GalerkinMultError(C, Ch, x, y, xh, yh, ych, &up[0], &err, &nrm));
    TEST_CHECK(err <= 1e-13 * nrm, "%s: the Galerkin operator after MatProductReplaceMats() of a new fine operator: error %.2e", type, (double)err);
    PetscCall(MatDestroy(&A2));
  }
  PetscCall(MatDestroy(&P)); /* the product goes on without its operands' handles */
  PetscCall(MatMultEqual(C, Ch, 3, &same));
  TEST_CHECK(same, "%s: MatMultEqual of the Galerkin operator and the host's", type);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&yh));
  PetscCall(VecDestroy(&ych));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&Ph));
  PetscCall(MatDestroy(&Ah));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A rectangular matrix of ours multiplies transposed through its transpose formed on the device from its device CSR:
  the shadow's its MatPtAP made (a Galerkin prolongator), else the format's own entries, with no shadow made (a
  rediscretized multigrid's interpolation: until 2026-11-27 its first transposed product made one, an assembly on the
  host); MatMultTranspose and MatMultTransposeAdd (y == z too) against the host AIJ matrix, after a change of values
  as well, and the same bits from a second product. With compressed rows (an MPI off-diagonal block's device copy:
  only the nonempty rows; every third row of P empty here) the transpose comes from the host entries and the device
  rows, with no shadow either; also where no row has an entry (the off-diagonal block of one rank's interpolation in
  KSP ex45 on 2 ranks, which made a shadow of all its rows until 2026-11-27).
*/
static PetscErrorCode CheckDeviceTranspose(const char *type, PetscBool galerkin, PetscBool compressed, PetscBool empty)
{
  const PetscInt n = 400, nc = 101;
  Mat            P, Ph, A, Ah, C = NULL;
  Vec            x, y, yh, xh;
  PetscReal      err, nrm;
  char           text[4096];
  PetscBool      said;
  const char    *kind = galerkin ? "Galerkin" : empty ? "empty compressed-row" : compressed ? "compressed-row" : "plain";

  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, nc, 2, NULL, &Ph));
  for (PetscInt i = 0; i < n; i++) {
    PetscInt    c[2] = {i / 4, PetscMin(i / 4 + 1, nc - 1)};
    PetscScalar v[2] = {0.75 + 0.001 * i, 0.25};

    if ((compressed && i % 3 == 0) || empty) continue;
    PetscCall(MatSetValues(Ph, 1, &i, c[0] == c[1] ? 1 : 2, c, v, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(Ph, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(Ph, MAT_FINAL_ASSEMBLY));
  PetscCall(TestCreateLaplacian(2, 20, &Ah));
  PetscCall(MatConvert(Ph, type, MAT_INITIAL_MATRIX, &P));
  if (compressed) PetscCall(MatGPUMatSetCompressedRows(P, PETSC_TRUE));
  PetscCall(MatConvert(Ah, type, MAT_INITIAL_MATRIX, &A));
  if (galerkin) PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatCreateVecs(P, &x, &y)); /* x: coarse (nc), y: fine (n) */
  PetscCall(MatCreateVecs(Ph, &xh, &yh));
  for (PetscInt step = 0; step < 2; step++) {
    if (step) { /* new values: the shadow follows */
      PetscCall(MatScale(P, 3.0));
      PetscCall(MatScale(Ph, 3.0));
    }
    PetscCall(VecSetRandom(y, NULL));
    PetscCall(VecCopy(y, yh));
    PetscCall(MatMultTranspose(P, y, x));
    { /* the kernel's bits: its host emulation on the host matrix */
      const PetscInt    *ai, *aj;
      const PetscScalar *aa, *ya, *xa;
      PetscScalar       *ze;
      PetscMemType       mt;
      PetscBool          same;

      PetscCall(MatSeqAIJGetCSRAndMemType(Ph, &ai, &aj, (PetscScalar **)&aa, &mt));
      PetscCall(PetscMalloc1(nc, &ze));
      PetscCall(VecGetArrayRead(y, &ya));
      PetscCall(MatGPUMatTransposeMultEmulate(n, nc, ai, aj, aa, ya, NULL, ze));
      PetscCall(VecRestoreArrayRead(y, &ya));
      PetscCall(VecGetArrayRead(x, &xa));
      PetscCall(PetscMemcmp(xa, ze, (size_t)nc * sizeof(PetscScalar), &same));
      PetscCall(VecRestoreArrayRead(x, &xa));
      PetscCall(PetscFree(ze));
      TEST_CHECK(same, "%s: MatMultTranspose of a %s prolongator is its host emulation's, bit for bit%s", type, kind, step ? " after new values" : "");
    }
    {
      Vec       x2;
      PetscBool same;

      PetscCall(VecDuplicate(x, &x2));
      PetscCall(VecSet(x2, NAN)); /* poisoned */
      PetscCall(MatMultTranspose(P, y, x2));
      PetscCall(VecEqual(x, x2, &same));
      TEST_CHECK(same, "%s: MatMultTranspose of a %s prolongator gives the same bits twice%s", type, kind, step ? " after new values" : "");
      PetscCall(VecDestroy(&x2));
    }
    PetscCall(MatMultTranspose(Ph, yh, xh));
    PetscCall(VecAXPY(xh, -1.0, x));
    PetscCall(VecNorm(xh, NORM_INFINITY, &err));
    PetscCall(VecNorm(x, NORM_INFINITY, &nrm));
    TEST_CHECK(err <= 1e-14 * nrm, "%s: MatMultTranspose of a %s prolongator through its device transpose%s: error %.2e", type, kind, step ? " after new values" : "", (double)err);
    PetscCall(MatMultTranspose(Ph, yh, xh)); /* x = x + P^T y, in place */
    PetscCall(VecAXPY(xh, 1.0, x));
    PetscCall(MatMultTransposeAdd(P, y, x, x));
    PetscCall(VecAXPY(xh, -1.0, x));
    PetscCall(VecNorm(xh, NORM_INFINITY, &err));
    TEST_CHECK(err <= 1e-14 * nrm, "%s: MatMultTransposeAdd (y == z) of a %s prolongator through its device transpose%s: error %.2e", type, kind, step ? " after new values" : "", (double)err);
  }
  PetscCall(TestViewInfoText(P, text, sizeof(text)));
  said = strstr(text, "transposed products: a forward product of its transpose, formed on the device") ? PETSC_TRUE : PETSC_FALSE;
  TEST_CHECK(said, "%s: MatView of a %s prolongator says the transposed products run on its transpose formed on the device", type, kind);
  {
    const char *from = galerkin ? "formed on the device from the device CSR of its aijcusparse shadow" : compressed ? "formed on the device from its host entries and the device offsets of its nonempty rows" : "formed on the device from its layout's entries, copied back on the device";

    TEST_CHECK(strstr(text, from) != NULL, "%s: MatView of a %s prolongator says where its transpose came from (\"%s\")", type, kind, from);
  }
  if (!galerkin) TEST_CHECK(!strstr(text, "the device CSR that cuSPARSE's products"), "%s: a %s prolongator's transposed products make no cuSPARSE shadow (MatView lists none)", type, kind);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&yh));
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Ph));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where the factors made with no solver type named solve (-mat_gpumat_trisolve): forced either way, and by the
   rule at its extremes (a tridiagonal matrix: one row per level set; the 3-D 7-point Laplacian 64^3: ~4700 nonzeros
   per level set); the factor's solver type says which, MatView says why, and the solve is right either way */
static PetscErrorCode CheckTriSolveChoice(const char *type)
{
  const char *modes[]  = {"host", "device", "auto", "auto"};
  const char *expect[] = {MATSOLVERPETSCGPUMAT, MATSOLVERCUSPARSE, MATSOLVERPETSCGPUMAT, MATSOLVERCUSPARSE};

  PetscFunctionBeginUser;
  for (PetscInt c = 0; c < 4; c++) {
    Mat           A, F;
    Vec           x, b, r;
    IS            row, col;
    MatFactorInfo info;
    MatSolverType solver;
    PetscBool     same;
    PetscReal     rn;
    char          text[4096];

    if (c == 3) {
      PetscCall(TestCreateLaplacian(3, 64, &A));
      PetscCall(MatConvert(A, type, MAT_INPLACE_MATRIX, &A));
    } else PetscCall(Tridiagonal(type, 2000, 1.0, &A));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_trisolve", modes[c]));
    PetscCall(MatSetFromOptions(A));
    PetscCall(MatGetFactor(A, NULL, MAT_FACTOR_ILU, &F));
    PetscCall(MatFactorGetSolverType(F, &solver));
    PetscCall(PetscStrcmp(solver, expect[c], &same));
    TEST_CHECK(same, "%s: -mat_gpumat_trisolve %s on %s: the ILU factor is %s's (got %s)", type, modes[c], c == 3 ? "lap3d7 64^3" : "a tridiagonal matrix", expect[c], solver);
    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    TEST_CHECK(strstr(text, "triangular solves of its factor") != NULL, "%s: MatView says where the factor solves and why", type);
    PetscCall(MatGetOrdering(A, MATORDERINGNATURAL, &row, &col));
    PetscCall(MatFactorInfoInitialize(&info));
    info.fill = 1.0;
    PetscCall(MatILUFactorSymbolic(F, A, row, col, &info));
    PetscCall(MatLUFactorNumeric(F, A, &info));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecSet(b, 1.0));
    PetscCall(MatSolve(F, b, x));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAXPY(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_INFINITY, &rn));
    if (c < 3) TEST_CHECK(rn < 1e-10, "%s: -mat_gpumat_trisolve %s: ILU(0) of a tridiagonal matrix is exact (residual %.2e)", type, modes[c], (double)rn);
    { /* the solution scaled in place on the device, as weighted PCASM does (VecPointwiseMult(y, w, y)) */
      Vec       w, y;
      PetscReal d, xn;

      PetscCall(VecDuplicate(x, &w));
      PetscCall(VecDuplicate(x, &y));
      PetscCall(VecSet(w, 2.0));
      PetscCall(MatSolve(F, b, y));
      PetscCall(VecPointwiseMult(y, w, y));
      PetscCall(VecAXPY(y, -2.0, x));
      PetscCall(VecNorm(y, NORM_INFINITY, &d));
      PetscCall(VecNorm(x, NORM_INFINITY, &xn));
      TEST_CHECK(d <= 1e-12 * xn, "%s: -mat_gpumat_trisolve %s: the solution scaled in place on the device (difference %.2e)", type, modes[c], (double)d);
      PetscCall(VecDestroy(&w));
      PetscCall(VecDestroy(&y));
    }
    for (PetscInt cuda = 0; cuda < 2 && c < 3; cuda++) { /* blocks of right-hand sides (PCMatApply, KSPMatSolve): host and CUDA */
      Mat       B, X, R;
      PetscReal e, bn;
      PetscInt  m;

      PetscCall(MatGetLocalSize(A, &m, NULL));
      PetscCall(MatCreateDense(PETSC_COMM_SELF, m, 3, m, 3, NULL, &B));
      if (cuda) PetscCall(MatConvert(B, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &B));
      PetscCall(MatSetRandom(B, NULL));
      PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &X));
      PetscCall(MatMatSolve(F, B, X));
      PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &R));
      PetscCall(MatAXPY(R, -1.0, B, SAME_NONZERO_PATTERN));
      PetscCall(MatNorm(R, NORM_FROBENIUS, &e));
      PetscCall(MatNorm(B, NORM_FROBENIUS, &bn));
      TEST_CHECK(e <= 1e-10 * bn, "%s: -mat_gpumat_trisolve %s: MatMatSolve with a %s block (relative residual %.2e)", type, modes[c], cuda ? "CUDA" : "host", (double)(e / bn));
      if (!cuda && same && !strcmp(expect[c], MATSOLVERPETSCGPUMAT)) { /* in place, as mat tests ex125 does with host factors (cuSPARSE's, like aijcusparse's, takes no B == X) */
        PetscCall(MatCopy(B, X, SAME_NONZERO_PATTERN));
        PetscCall(MatMatSolve(F, X, X));
        PetscCall(MatDestroy(&R));
        PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &R));
        PetscCall(MatAXPY(R, -1.0, B, SAME_NONZERO_PATTERN));
        PetscCall(MatNorm(R, NORM_FROBENIUS, &e));
        TEST_CHECK(e <= 1e-10 * bn, "%s: -mat_gpumat_trisolve %s: MatMatSolve(F, X, X) with a host block (relative residual %.2e)", type, modes[c], (double)(e / bn));
      }
      PetscCall(MatDestroy(&R));
      PetscCall(MatDestroy(&X));
      PetscCall(MatDestroy(&B));
    }
    PetscCall(ISDestroy(&row));
    PetscCall(ISDestroy(&col));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
    PetscCall(MatDestroy(&F));
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_trisolve"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  LU of a matrix of -mat_gpumat_dense_lu_min to _max rows of a 3-D grid with no solver type named: the dense LU on the
  device, solved by its explicit inverse (MATSOLVERCUDA). On a nonsymmetric matrix (3-D convection-diffusion 13^3):
  the solution, the transposed solve, blocks of right-hand sides (host and CUDA), host vectors, a second numeric phase
  with new values, KSP with PCLU, MatView, the composed function gone with the factor; a matrix with a zero column
  gives a zero pivot; with -mat_gpumat_dense_lu_max 0, and for a 2-D grid (bandwidth below n / 25), the factor is
  cuSPARSE's, and by name (MATSOLVERCUDA) the dense one at any size.
*/
static PetscErrorCode CreateConvectionDiffusion3D(PetscInt k, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(3, k, A));
  for (PetscInt row = 0; row < k * k * k; row++) {
    PetscCall(MatSetValue(*A, row, row, 1.3, ADD_VALUES));
    if (row % k > 0) PetscCall(MatSetValue(*A, row, row - 1, -0.8, ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode DenseLUSolveError(Mat F, Mat Ah, PetscBool transpose, PetscBool hostvecs, PetscReal *err)
{
  Vec       b, x, bh, xh, r;
  PetscReal rn, bn;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(Ah, &xh, &bh));
  PetscCall(VecDuplicate(bh, &r));
  PetscCall(VecSetRandom(bh, NULL));
  if (hostvecs) {
    PetscCall(VecDuplicate(bh, &b));
    PetscCall(VecDuplicate(xh, &x));
  } else {
    PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, Ah->rmap->n, &b));
    PetscCall(VecDuplicate(b, &x));
  }
  PetscCall(VecCopy(bh, b));
  PetscCall(VecSet(x, -7.0)); /* poisoned */
  if (transpose) PetscCall(MatSolveTranspose(F, b, x));
  else PetscCall(MatSolve(F, b, x));
  PetscCall(VecCopy(x, xh));
  if (transpose) PetscCall(MatMultTranspose(Ah, xh, r));
  else PetscCall(MatMult(Ah, xh, r));
  PetscCall(VecAXPY(r, -1.0, bh));
  PetscCall(VecNorm(r, NORM_2, &rn));
  PetscCall(VecNorm(bh, NORM_2, &bn));
  *err = rn / bn;
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&r));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The solution of F with host vectors against that with CUDA vectors (device solves stage host vectors) */
static PetscErrorCode HostVectorSolveDifference(Mat F, PetscInt n, PetscBool transpose, PetscReal *diff)
{
  Vec       b, x, bh, xh, xc;
  PetscReal xn;

  PetscFunctionBeginUser;
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &bh));
  PetscCall(VecDuplicate(bh, &xh));
  PetscCall(VecDuplicate(bh, &xc));
  PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, n, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecSetRandom(bh, NULL));
  PetscCall(VecCopy(bh, b));
  PetscCall(VecSet(xh, -7.0)); /* poisoned */
  if (transpose) {
    PetscCall(MatSolveTranspose(F, b, x));
    PetscCall(MatSolveTranspose(F, bh, xh));
  } else {
    PetscCall(MatSolve(F, b, x));
    PetscCall(MatSolve(F, bh, xh));
  }
  PetscCall(VecCopy(x, xc));
  PetscCall(VecAXPY(xc, -1.0, xh));
  PetscCall(VecNorm(xc, NORM_INFINITY, diff));
  PetscCall(VecNorm(x, NORM_INFINITY, &xn));
  *diff /= xn;
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&bh));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&xc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckDenseLU(const char *type)
{
  Mat            Ah, A, F;
  IS             row, col;
  MatFactorInfo  info;
  MatSolverType  solver;
  MatFactorError ferr;
  PetscReal      e;
  char           text[4096];

  PetscFunctionBeginUser;
  { /* a 2-D grid of 64^2 rows: bandwidth 64 < n / 25, cuSPARSE's; by name the dense one */
    Mat A2;

    PetscCall(TestCreateLaplacian(2, 64, &A2));
    PetscCall(MatConvert(A2, type, MAT_INPLACE_MATRIX, &A2));
    PetscCall(MatGetFactor(A2, NULL, MAT_FACTOR_LU, &F));
    PetscCall(MatFactorGetSolverType(F, &solver));
    TEST_CHECK(!strcmp(solver, MATSOLVERCUSPARSE), "%s: LU of a 2-D grid of 4096 rows (bandwidth 64) with no solver type named is cuSPARSE's (got %s)", type, solver);
    PetscCall(MatDestroy(&F));
    PetscCall(MatGetFactor(A2, MATSOLVERCUDA, MAT_FACTOR_LU, &F));
    PetscCall(MatFactorGetSolverType(F, &solver));
    TEST_CHECK(!strcmp(solver, MATSOLVERCUDA), "%s: -pc_factor_mat_solver_type cuda: the dense LU (got %s)", type, solver);
    PetscCall(MatDestroy(&F));
    { /* cuSPARSE's factors (LU and Cholesky through the shadow, ILU(0) and ICC(0) from the device CSR) given host vectors */
      const MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ILU, MAT_FACTOR_ICC};

      PetscCall(MatSetOption(A2, MAT_SPD, PETSC_TRUE));
      PetscCall(MatGetOrdering(A2, MATORDERINGNATURAL, &row, &col));
      for (PetscInt f = 0; f < 4; f++) {
        PetscCall(MatGetFactor(A2, MATSOLVERCUSPARSE, ftypes[f], &F));
        PetscCall(MatFactorInfoInitialize(&info));
        info.fill = ftypes[f] == MAT_FACTOR_ILU || ftypes[f] == MAT_FACTOR_ICC ? 1.0 : 5.0;
        if (ftypes[f] == MAT_FACTOR_LU) PetscCall(MatLUFactorSymbolic(F, A2, row, col, &info));
        else if (ftypes[f] == MAT_FACTOR_ILU) PetscCall(MatILUFactorSymbolic(F, A2, row, col, &info));
        else if (ftypes[f] == MAT_FACTOR_CHOLESKY) PetscCall(MatCholeskyFactorSymbolic(F, A2, row, &info));
        else PetscCall(MatICCFactorSymbolic(F, A2, row, &info));
        if (ftypes[f] == MAT_FACTOR_LU || ftypes[f] == MAT_FACTOR_ILU) PetscCall(MatLUFactorNumeric(F, A2, &info));
        else PetscCall(MatCholeskyFactorNumeric(F, A2, &info));
        for (PetscInt t = 0; t < (ftypes[f] == MAT_FACTOR_LU || ftypes[f] == MAT_FACTOR_ILU ? 2 : 1); t++) {
          PetscCall(HostVectorSolveDifference(F, 4096, (PetscBool)t, &e));
          TEST_CHECK(e <= 1e-14, "%s: cuSPARSE's %s factor: %s with host vectors as with CUDA ones (relative difference %.2e)", type, MatFactorTypes[ftypes[f]], t ? "MatSolveTranspose" : "MatSolve", (double)e);
        }
        PetscCall(MatDestroy(&F));
      }
      PetscCall(ISDestroy(&row));
      PetscCall(ISDestroy(&col));
    }
    PetscCall(MatDestroy(&A2));
  }
  PetscCall(CreateConvectionDiffusion3D(13, &Ah)); /* 2197 rows, bandwidth 169: within the defaults */
  PetscCall(MatConvert(Ah, type, MAT_INITIAL_MATRIX, &A));
  PetscCall(MatGetFactor(A, NULL, MAT_FACTOR_LU, &F));
  PetscCall(MatFactorGetSolverType(F, &solver));
  TEST_CHECK(!strcmp(solver, MATSOLVERCUDA), "%s: LU of a 3-D grid of 2197 rows with no solver type named is the dense LU on the device (got %s)", type, solver);
  PetscCall(MatGetOrdering(A, MATORDERINGNATURAL, &row, &col));
  PetscCall(MatFactorInfoInitialize(&info));
  info.fill = 5.0;
  PetscCall(MatLUFactorSymbolic(F, A, row, col, &info));
  PetscCall(MatLUFactorNumeric(F, A, &info));
  PetscCall(MatFactorGetError(F, &ferr));
  TEST_CHECK(ferr == MAT_FACTOR_NOERROR, "%s: dense LU: factor error %d", type, (int)ferr);
  for (PetscInt t = 0; t < 2; t++) {
    for (PetscInt h = 0; h < 2; h++) {
      PetscCall(DenseLUSolveError(F, Ah, (PetscBool)t, (PetscBool)h, &e));
      TEST_CHECK(e <= 1e-12, "%s: dense LU: %s with %s vectors, relative residual %.2e", type, t ? "MatSolveTranspose" : "MatSolve", h ? "host" : "CUDA", (double)e);
    }
  }
  for (PetscInt cuda = 0; cuda < 2; cuda++) {
    Mat       B, X, R;
    PetscReal bn;

    PetscCall(MatCreateDense(PETSC_COMM_SELF, 2197, 3, 2197, 3, NULL, &B));
    PetscCall(MatSetRandom(B, NULL));
    if (cuda) PetscCall(MatConvert(B, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &B));
    PetscCall(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &X));
    PetscCall(MatMatSolve(F, B, X));
    PetscCall(MatConvert(X, MATSEQDENSE, MAT_INPLACE_MATRIX, &X));
    PetscCall(MatMatMult(Ah, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &R));
    PetscCall(MatConvert(B, MATSEQDENSE, MAT_INPLACE_MATRIX, &B));
    PetscCall(MatAXPY(R, -1.0, B, SAME_NONZERO_PATTERN));
    PetscCall(MatNorm(R, NORM_FROBENIUS, &e));
    PetscCall(MatNorm(B, NORM_FROBENIUS, &bn));
    TEST_CHECK(e <= 1e-12 * bn, "%s: dense LU: MatMatSolve with a %s block, relative residual %.2e", type, cuda ? "CUDA" : "host", (double)(e / bn));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&X));
    PetscCall(MatDestroy(&B));
  }
  /* new values, same factor: A and Ah scaled by 3 */
  PetscCall(MatScale(A, 3.0));
  PetscCall(MatScale(Ah, 3.0));
  PetscCall(MatLUFactorNumeric(F, A, &info));
  PetscCall(DenseLUSolveError(F, Ah, PETSC_FALSE, PETSC_FALSE, &e));
  TEST_CHECK(e <= 1e-12, "%s: dense LU: a second numeric phase with new values, relative residual %.2e", type, (double)e);
  PetscCall(TestViewInfoText(F, text, sizeof(text)));
  TEST_CHECK(strstr(text, "explicit inverse") && strstr(text, "package used to perform factorization: cuda") && strstr(text, "ran in a host thread"), "%s: dense LU: MatView says what the factor is and that cuSOLVER was set up beforehand:\n%s", type, text);
  {
    void (*fn)(void) = NULL;

    PetscCall(MatDestroy(&F));
    PetscCall(MatGetFactor(A, MATSOLVERCUDA, MAT_FACTOR_LU, &F));
    PetscCall(PetscObjectQueryFunction((PetscObject)F, "MatFactorGetSolverType_C", &fn));
    TEST_CHECK(fn != NULL, "%s: dense LU: MatFactorGetSolverType_C composed on the factor", type);
    PetscCall(MatDestroy(&F)); /* -checkfunctionlist (run.sh) fails the program if it stayed */
  }
  { /* KSP with PCLU: one application solves */
    KSP       ksp;
    PC        pc;
    Vec       x, b, r;
    PetscReal rn, bn;

    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecDuplicate(b, &r));
    PetscCall(VecSetRandom(b, NULL));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPPREONLY));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCLU));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PCFactorGetMatrix(pc, &F));
    PetscCall(MatFactorGetSolverType(F, &solver));
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAXPY(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rn));
    PetscCall(VecNorm(b, NORM_2, &bn));
    TEST_CHECK(!strcmp(solver, MATSOLVERCUDA) && rn <= 1e-12 * bn, "%s: KSPPREONLY + PCLU: the dense LU (%s) solves, relative residual %.2e", type, solver, (double)(rn / bn));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&r));
  }
  { /* device memory taken by another user: a clear PETSC_ERR_MEM, nothing kept; the factor works once it is given back */
    size_t         avail = 0, total = 0, after = 0;
    void          *hog   = NULL;
    PetscErrorCode ierr;

    PetscCall(MatGetFactor(A, MATSOLVERCUDA, MAT_FACTOR_LU, &F));
    PetscCall(MatLUFactorSymbolic(F, A, row, col, &info));
    PetscCall(MatGPUMatDenseLUWarmupWait(NULL, NULL));
    PetscCallCUDA(cudaMemGetInfo(&avail, &total));
    if (cudaMalloc(&hog, avail - ((size_t)48 << 20)) == cudaSuccess) { /* 48 MB left: less than the two 2197^2 arrays */
      PetscCallCUDA(cudaMemGetInfo(&avail, &total));
      TEST_EXPECT_ERROR(&ierr, MatLUFactorNumeric(F, A, &info));
      PetscCallCUDA(cudaMemGetInfo(&after, &total));
      TEST_CHECK(ierr == PETSC_ERR_MEM && after + ((size_t)1 << 20) >= avail, "%s: dense LU without device memory: error %d (expected PETSC_ERR_MEM), free memory %zu before and %zu after", type, (int)ierr, avail, after);
      PetscCallCUDA(cudaFree(hog));
      PetscCall(MatLUFactorNumeric(F, A, &info));
      PetscCall(DenseLUSolveError(F, Ah, PETSC_FALSE, PETSC_FALSE, &e));
      TEST_CHECK(e <= 1e-12, "%s: dense LU: the numeric phase again once the memory is free, relative residual %.2e", type, (double)e);
    } else (void)cudaGetLastError();
    PetscCall(MatDestroy(&F));
  }
  /* a zero column: a zero pivot, the factor's error as PETSc's factorizations set it */
  { /* column 5's entries (rows 4, 5, 6, 18 and 174 of the 13^3 grid) set to zero */
    const PetscInt rows[] = {4, 5, 6, 18, 174};

    for (PetscInt k = 0; k < 5; k++) PetscCall(MatSetValue(A, rows[k], 5, 0.0, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatGetFactor(A, NULL, MAT_FACTOR_LU, &F));
  PetscCall(MatLUFactorSymbolic(F, A, row, col, &info));
  PetscCall(MatLUFactorNumeric(F, A, &info));
  PetscCall(MatFactorGetError(F, &ferr));
  TEST_CHECK(ferr == MAT_FACTOR_NUMERIC_ZEROPIVOT, "%s: dense LU of a matrix with a zero column: error %d (expected MAT_FACTOR_NUMERIC_ZEROPIVOT)", type, (int)ferr);
  PetscCall(MatDestroy(&F));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_dense_lu_max", "0"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_trisolve", "auto"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatGetFactor(A, NULL, MAT_FACTOR_LU, &F));
  PetscCall(MatFactorGetSolverType(F, &solver));
  TEST_CHECK(!strcmp(solver, MATSOLVERCUSPARSE), "%s: -mat_gpumat_dense_lu_max 0: LU is cuSPARSE's again (got %s)", type, solver);
  PetscCall(MatDestroy(&F));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_dense_lu_max", "8192")); /* the default again: the option's value stays in the program's setting */
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_dense_lu_max"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_trisolve"));
  PetscCall(ISDestroy(&row));
  PetscCall(ISDestroy(&col));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&Ah));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The dense LU's warm-up (src/base/gpumat_factor_warmup.c): the first matrix of ours on the device starts it where the
  dense LU can be taken and -mat_gpumat_dense_lu_warmup is not 0, and it ran without an error (the factorizations after
  it are CheckDenseLU()'s)
*/
static PetscErrorCode CheckDenseLUWarmup(const char *type)
{
  Mat       A;
  PetscBool ran, on = PETSC_TRUE;
  PetscInt  max     = 8192;
  PetscReal ms;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_dense_lu_warmup", &on, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mat_gpumat_dense_lu_max", &max, NULL));
  PetscCall(TestCreateLaplacian(2, 8, &A));
  PetscCall(MatConvert(A, type, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatGPUMatDenseLUWarmupWait(&ran, &ms));
  TEST_CHECK(ran == (PetscBool)(on && max > 0), "%s: the dense LU's warm-up %s (%.1f ms) with -mat_gpumat_dense_lu_warmup %d and -mat_gpumat_dense_lu_max %" PetscInt_FMT, type, ran ? "ran" : "did not run", (double)ms, (int)on, max);
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A sparse product's values come to the host master copy of its result through the same staging buffers where they
  are 16 MB or more (src/base/gpumat_staged_copy.c, gpumat_product.c). C = A D with D diagonal (plain SeqAIJ) has A's
  39 MB of values: with 2, 3 and 5 threads its host values after a numeric phase (poisoned before it) are those of
  CUDA's own copy (1 thread) bit for bit, which are SeqAIJ's product's; the staged path is taken (GPUMatStagedDownload)
  with more than one thread and not with one; C's product on the device afterwards is SeqAIJ's too (the device copy
  stays current beside the host's).
*/
static PetscErrorCode CheckStagedDownload(const char *type, Mat A, Vec xh)
{
  const char        *threads[] = {"1", "2", "3", "5"};
  PetscScalar       *first     = NULL;
  Mat                D, Ch;
  Vec                d, yh;
  PetscInt           m, nz = 0;
  PetscReal          nrm;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatCreateVecs(A, &d, &yh));
  PetscCall(VecSetRandom(d, NULL));
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m, m, 1, NULL, &D));
  PetscCall(MatDiagonalSet(D, d, INSERT_VALUES));
  PetscCall(MatMatMult(A, D, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch)); /* SeqAIJ's, on the host */
  PetscCall(MatMult(Ch, xh, yh));
  PetscCall(VecNorm(yh, NORM_INFINITY, &nrm));
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(threads); k++) {
    Mat                B, C;
    Vec                x, y;
    const PetscScalar *ca, *cha;
    PetscScalar       *w;
    PetscInt           n0, n1;
    PetscReal          err = 0, yerr;

    PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_upload_threads", threads[k]));
    PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
    PetscCall(MatSetFromOptions(B)); /* reads -mat_gpumat_upload_threads */
    PetscCall(MatMatMult(B, D, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
    PetscCall(MatSeqAIJGetArrayWrite(C, &w));
    {
      MatInfo info;

      PetscCall(MatGetInfo(C, MAT_LOCAL, &info));
      nz = (PetscInt)info.nz_used;
    }
    for (PetscInt i = 0; i < nz; i++) w[i] = NAN; /* poisoned */
    PetscCall(MatSeqAIJRestoreArrayWrite(C, &w));
    PetscCall(TestEventCount("GPUMatStagedDownload", &n0));
    PetscCall(MatMatMult(B, D, MAT_REUSE_MATRIX, PETSC_DETERMINE, &C)); /* the numeric phase again */
    PetscCall(TestEventCount("GPUMatStagedDownload", &n1));
    if (!k) TEST_CHECK(n1 == n0, "%s: 1 thread downloads a product's values with CUDA's own copy (%" PetscInt_FMT " staged downloads)", type, n1 - n0);
    else TEST_CHECK(n1 - n0 == 1, "%s: %s threads stage the download of a product's 39 MB of values (%" PetscInt_FMT " staged downloads)", type, threads[k], n1 - n0);
    PetscCall(MatSeqAIJGetArrayRead(C, &ca));
    if (!k) {
      PetscCall(MatSeqAIJGetArrayRead(Ch, &cha));
      for (PetscInt i = 0; i < nz; i++) err = PetscMax(err, PetscIsNanScalar(ca[i]) ? PETSC_INFINITY : PetscAbsScalar(ca[i] - cha[i]));
      PetscCall(MatSeqAIJRestoreArrayRead(Ch, &cha));
      TEST_CHECK(err <= 1e-14, "%s: a product's values downloaded with CUDA's copy are SeqAIJ's (|difference| %.2e)", type, (double)err);
      PetscCall(PetscMalloc1(nz, &first));
      PetscCall(PetscArraycpy(first, ca, nz));
    } else {
      TEST_CHECK(!memcmp(first, ca, (size_t)nz * sizeof(PetscScalar)), "%s: a product's values downloaded by %s threads are CUDA's copy's bit for bit", type, threads[k]);
    }
    PetscCall(MatSeqAIJRestoreArrayRead(C, &ca));
    PetscCall(MatCreateVecs(C, &x, &y));
    PetscCall(VecCopy(xh, x));
    PetscCall(VecSet(y, NAN));
    PetscCall(MatMult(C, x, y));
    PetscCall(VecAXPY(y, -1.0, yh)); /* a NaN left in y shows here */
    PetscCall(VecNorm(y, NORM_INFINITY, &yerr));
    TEST_CHECK(yerr <= 1e-12 * nrm, "%s: after a download by %s thread(s), the product matrix's own product on the device is SeqAIJ's (|difference| %.2e of %.2e)", type, threads[k], (double)yerr, (double)nrm);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_upload_threads", "0"));
  PetscCall(PetscFree(first));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&D));
  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&yh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[8], reason[256];
  PetscInt  ntypes = 8;
  PetscBool gpu, flg;
  Mat       lap, cd, big;
  Vec       bigx;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) {
    PetscCall(TestSkip("KSP on the GPU (test_gpu_ksp)", reason));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    PetscCall(PetscStrallocpy(MATELLRCUDA, &types[0]));
    ntypes = 1;
  }
  PetscCall(CheckDenseLUWarmup(types[0])); /* before any other matrix of ours */
  PetscCall(PetscOptionsHasName(NULL, NULL, "-warmup_only", &flg));
  if (flg) {
    for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_gpu_ksp: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
    PetscCall(PetscFinalize());
    return TestExitCode();
  }
  PetscCall(TestCreateLaplacian(3, 40, &lap));
  PetscCall(CreateConvectionDiffusion(200, &cd));
  PetscCall(TestCreateRandom(700001, 700001, 7, "uniform", 31, &big)); /* 4.9 M entries: 39 MB of values, 20 MB of column indices */
  PetscCall(MatCreateVecs(big, &bigx, NULL));
  PetscCall(VecSetRandom(bigx, NULL));
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscBool ellr, rgcsr, cmrs;

    PetscCall(PetscStrcmp(types[t], MATELLRCUDA, &ellr));
    PetscCall(CheckFactorBeforeAssembly(types[t]));
    PetscCall(CheckFactorOtherMatrix(types[t]));
    PetscCall(CheckOneUpload(types[t]));
    PetscCall(CheckStagedUpload(types[t], big, bigx));
    PetscCall(CheckStagedDownload(types[t], big, bigx));
    PetscCall(CheckProductResult(types[t]));
    PetscCall(CheckDeviceFactor(types[t], PETSC_FALSE));
    if (!strcmp(types[t], MATRGCSRCUDA)) PetscCall(CheckDeviceFactor(types[t], PETSC_TRUE));
    PetscCall(CheckDeviceFactorPivots(types[t]));
    PetscCall(CheckDeviceFactorRefused(types[t]));
    PetscCall(CheckCPUSolve(types[t]));
    PetscCall(CheckProductAYPX(types[t]));
    PetscCall(CheckDiagonalOnDevice(types[t]));
    PetscCall(CheckDeviceTranspose(types[t], PETSC_TRUE, PETSC_FALSE, PETSC_FALSE));
    PetscCall(CheckDeviceTranspose(types[t], PETSC_FALSE, PETSC_FALSE, PETSC_FALSE));
    PetscCall(CheckDeviceTranspose(types[t], PETSC_FALSE, PETSC_TRUE, PETSC_FALSE));
    PetscCall(CheckDeviceTranspose(types[t], PETSC_FALSE, PETSC_TRUE, PETSC_TRUE));
    PetscCall(CheckTriSolveChoice(types[t]));
    PetscCall(CheckDenseLU(types[t]));
    PetscCall(Compare(lap, "3-D 7-point Laplacian 40^3", KSPCG, types[t], NULL));
    PetscCall(Compare(cd, "2-D convection-diffusion 200^2", KSPGMRES, types[t], NULL));
    PetscCall(PetscStrcmp(types[t], MATRGCSRCUDA, &rgcsr));
    if (rgcsr) {
      PetscCall(Compare(lap, "3-D 7-point Laplacian 40^3", KSPCG, types[t], "-mat_rgcsr_sort_window 100000 -mat_rgcsr_sort_min_saving 0"));
      PetscCall(Compare(cd, "2-D convection-diffusion 200^2", KSPGMRES, types[t], "-mat_rgcsr_sort_window 512 -mat_rgcsr_group_size 64 -mat_rgcsr_sort_min_saving 0"));
    }
    PetscCall(PetscStrcmp(types[t], MATCMRSCUDA, &cmrs));
    if (cmrs) {
      PetscCall(Compare(lap, "3-D 7-point Laplacian 40^3", KSPCG, types[t], "-mat_cmrs_height 8 -mat_cmrs_sort"));
      PetscCall(Compare(cd, "2-D convection-diffusion 200^2", KSPGMRES, types[t], "-mat_cmrs_height 2"));
    }
    if (ellr) {
      PetscCall(Compare(lap, "3-D 7-point Laplacian 40^3", KSPCG, types[t], "-mat_ellr_threads_per_row 4"));
      PetscCall(Compare(cd, "2-D convection-diffusion 200^2", KSPGMRES, types[t], "-mat_ellr_threads_per_row 2"));
    }
    PetscCall(PetscFree(types[t]));
  }
  PetscCall(MatDestroy(&lap));
  PetscCall(MatDestroy(&cd));
  PetscCall(MatDestroy(&big));
  PetscCall(VecDestroy(&bigx));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_gpu_ksp: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
