static const char help[] = "MatProduct of the petscgpumat seq types (sparse and dense operands) against SeqAIJ's on the host.\n"
                           "  -types cmrscuda,...   types to test\n"
                           "  -bench_n <k>          also time MatMatMult with 4 and 8 dense columns against as many MatMult\n"
                           "                        on the 3-D 7-point Laplacian k^3, and MatMultTranspose of a k^3 x k^3/8\n"
                           "                        prolongator in each of its three ways (GPU only)\n";

/*
  Every product type (AB, AtB, ABt, PtAP, RARt, ABC) of random square and rectangular matrices of our types (and
  one operand plain SeqAIJ), AB/AtB/ABt with dense blocks of 1, 4 and 8 columns (CUDA and host blocks) and, on the
  device, PtAP/RARt with a dense P or R: the result equals SeqAIJ's host
  product to rounding, is of A's type (sparse results; a MATSEQAIJCUSPARSE on the device with
  -mat_gpumat_product_same_type 0), and ran on the device where one is usable; then the
  numeric phase again after A's values changed, the result poisoned with NaN first. Without a device the same
  checks hold for the host path (SeqAIJ's products, PETSc's column loop for dense operands).
*/
#include <petscgpumat.h>
#include <petscdevice_cuda.h>
#include "../common/testutil.h"

static PetscBool gpu, blockkernel = PETSC_TRUE; /* -mat_gpumat_block_kernel (default true): the dense products run the format's block kernel */
static PetscBool sametype = PETSC_TRUE;         /* -mat_gpumat_product_same_type: sparse results on the device of A's type (0: aijcusparse's) */

/* || X - Y ||_F / max(|| Y ||_F, 1): X of any type, Y a host reference of the same shape (AIJ or dense) */
static PetscErrorCode RelativeDifference(Mat X, Mat Y, PetscReal *d)
{
  Mat       Xh;
  PetscReal ny;
  PetscBool dense;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)Y, MATSEQDENSE, &dense));
  PetscCall(MatConvert(X, dense ? MATSEQDENSE : MATSEQAIJ, MAT_INITIAL_MATRIX, &Xh));
  PetscCall(MatAXPY(Xh, -1.0, Y, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(Xh, NORM_FROBENIUS, d));
  PetscCall(MatNorm(Y, NORM_FROBENIUS, &ny));
  *d = PetscIsInfOrNanReal(*d) ? PETSC_INFINITY : *d / PetscMax(ny, 1.0);
  PetscCall(MatDestroy(&Xh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Poison(Mat C)
{
  PetscBool    dense;
  PetscScalar *a;
  PetscInt     m, n, nz = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)C, MATSEQDENSE, &dense));
  PetscCall(MatGetSize(C, &m, &n));
  if (dense) {
    PetscCall(MatDenseGetArrayWrite(C, &a));
    nz = m * n;
    for (PetscInt i = 0; i < nz; i++) a[i] = NAN;
    PetscCall(MatDenseRestoreArrayWrite(C, &a));
  } else {
    MatInfo info; /* (an aijcusparse result answers MatSeqAIJGetCSRAndMemType() with device arrays) */

    PetscCall(MatGetInfo(C, MAT_LOCAL, &info));
    nz = (PetscInt)info.nz_used;
    PetscCall(MatSeqAIJGetArrayWrite(C, &a));
    for (PetscInt i = 0; i < nz; i++) a[i] = NAN;
    PetscCall(MatSeqAIJRestoreArrayWrite(C, &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether A B with a CUDA block of vectors runs the format's block kernel: a layout with one thread per row (ELLPACK-R,
   RgCSR: these random matrices have short rows) or unsorted unpadded strips (CMRS), unless -mat_gpumat_block_kernel 0 */
static PetscErrorCode BlockKernelExpected(Mat A, PetscBool *expect)
{
  PetscBool ellr, rgcsr, cmrs, sorted = PETSC_TRUE;
  PetscInt  T = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQELLRCUDA, &ellr));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQRGCSRCUDA, &rgcsr));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQCMRSCUDA, &cmrs));
  if (ellr) PetscCall(MatELLRCUDAGetThreadsPerRow(A, &T));
  if (rgcsr) PetscCall(MatRGCSRCUDAGetThreadsPerRow(A, &T));
  if (cmrs) PetscCall(MatCMRSCUDAGetSort(A, &sorted));
  *expect = (PetscBool)(blockkernel && (T == 1 || (cmrs && !sorted)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* C = product(A, B[, D]) of `type`, and the same of the host copies; then again after A *= 1.5 */
static PetscErrorCode CheckProduct(const char *label, MatProductType ptype, Mat A, Mat B, Mat D, PetscBool sparse_result)
{
  Mat       C, Ah, Bh, Dh = NULL, Ch;
  PetscReal d;
  PetscBool   ours, ondevice;
  PetscObject shadows;
  MatType     atype, ctype, rtype;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
  if (B == A) { /* A^T A: the host product's operands are one matrix too */
    PetscCall(PetscObjectReference((PetscObject)Ah));
    Bh = Ah;
  } else PetscCall(MatConvert(B, sparse_result ? MATSEQAIJ : MATSEQDENSE, MAT_INITIAL_MATRIX, &Bh));
  if (D) PetscCall(MatConvert(D, MATSEQAIJ, MAT_INITIAL_MATRIX, &Dh));
  PetscCall(MatProductCreate(Ah, Bh, Dh, &Ch));
  PetscCall(MatProductSetType(Ch, ptype));
  PetscCall(MatProductSetFromOptions(Ch));
  PetscCall(MatProductSymbolic(Ch));
  PetscCall(MatProductNumeric(Ch));

  PetscCall(MatProductCreate(A, B, D, &C));
  PetscCall(MatProductSetType(C, ptype));
  PetscCall(MatProductSetFromOptions(C));
  PetscCall(MatProductSymbolic(C));
  PetscCall(MatProductNumeric(C));
  PetscCall(Poison(C)); /* (a symbolic phase need not allocate the values) */
  PetscCall(MatProductNumeric(C));
  PetscCall(RelativeDifference(C, Ch, &d));
  PetscCall(MatGetType(A, &atype));
  PetscCall(MatGetType(C, &ctype));
  rtype = gpu && !sametype ? MATSEQAIJCUSPARSE : atype; /* on the device: cuSPARSE's own result, kept there */
  PetscCall(PetscStrcmp(rtype, ctype, &ours));
  PetscCall(PetscObjectQuery((PetscObject)C, "MatGPUMatProductShadows", &shadows));
  ondevice = (PetscBool)(shadows != NULL);
  {
    PetscObject block;
    PetscBool   bcuda, expect = PETSC_FALSE;

    PetscCall(PetscObjectQuery((PetscObject)C, "MatGPUMatBlockKernel", &block));
    ondevice = (PetscBool)(ondevice || block);
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSECUDA, &bcuda));
    if (gpu && !sparse_result && ptype == MATPRODUCT_AB && bcuda) PetscCall(BlockKernelExpected(A, &expect)); /* a host block goes to cuSPARSE SpMM, as in aijcusparse */
    if (expect) TEST_CHECK(block != NULL, "%s: AB with a dense block ran the block kernel", label);
    if (!blockkernel) TEST_CHECK(block == NULL, "%s: -mat_gpumat_block_kernel 0: AB with a dense block ran cuSPARSE SpMM", label);
  }
  TEST_CHECK(d < 1e-13, "%s: %s equals SeqAIJ's (difference %.2e)", label, MatProductTypes[ptype], (double)d);
  if (sparse_result) TEST_CHECK(ours, "%s: %s result is a %s (got %s)", label, MatProductTypes[ptype], rtype, ctype);
  TEST_CHECK(ondevice == gpu, "%s: %s ran %s", label, MatProductTypes[ptype], gpu ? "on the device" : "on the host (no device)");

  /* the numeric phase again, with new values of A */
  PetscCall(MatScale(A, 1.5));
  PetscCall(MatScale(Ah, 1.5));
  PetscCall(MatProductNumeric(Ch));
  PetscCall(Poison(C));
  PetscCall(MatProductNumeric(C));
  PetscCall(RelativeDifference(C, Ch, &d));
  TEST_CHECK(d < 1e-13, "%s: %s numeric again after new values of A (difference %.2e)", label, MatProductTypes[ptype], (double)d);
  if (sparse_result) {
    Vec       x, y, yh;
    PetscReal e, n;

    /* the result's own products (its device copy follows the values the numeric phase brought) */
    PetscCall(MatCreateVecs(C, &x, &y));
    PetscCall(MatCreateVecs(Ch, NULL, &yh));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(C, x, y));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(Ch, x, yh));
    PetscCall(VecAXPY(yh, -1.0, y));
    PetscCall(VecNorm(yh, NORM_INFINITY, &e));
    PetscCall(VecNorm(y, NORM_INFINITY, &n));
    TEST_CHECK(e <= 1e-12 * PetscMax(n, 1.0), "%s: %s result's MatMult equals the host's (difference %.2e)", label, MatProductTypes[ptype], (double)e);
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(VecDestroy(&yh));
  }
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&Bh));
  PetscCall(MatDestroy(&Dh));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A B with a CUDA block B into a host block C the caller made (MatProductCreateWithMat()), as PCMG's finest level in
   KSPMatSolve() hands the user's MATSEQDENSE block: C stays a host block and holds A B after each numeric phase
   (aijcusparse's own numeric phase, after the first, wrote through C's host pointer: PETSc's KSP test ex26) */
static PetscErrorCode CheckHostResult(const char *label, Mat A, Mat X)
{
  Mat       C, Ah, Xh, Ch;
  PetscInt  m, nc;
  PetscReal   d;
  PetscBool   host, expect;
  PetscObject block;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(MatConvert(X, MATSEQDENSE, MAT_INITIAL_MATRIX, &Xh));
  PetscCall(MatMatMult(Ah, Xh, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatGetLocalSize(X, NULL, &nc));
  PetscCall(MatCreateDense(PETSC_COMM_SELF, m, nc, m, nc, NULL, &C));
  PetscCall(MatProductCreateWithMat(A, X, NULL, C));
  PetscCall(MatProductSetType(C, MATPRODUCT_AB));
  PetscCall(MatProductSetFromOptions(C));
  PetscCall(MatProductSymbolic(C));
  for (PetscInt pass = 0; pass < 3; pass++) { /* the numeric phase again: C is a host block at each start */
    PetscCall(Poison(C));
    PetscCall(MatProductNumeric(C));
    PetscCall(RelativeDifference(C, Ch, &d));
    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSE, &host));
    TEST_CHECK(d < 1e-13, "%s: AB into a host block the caller made equals SeqAIJ's (pass %" PetscInt_FMT ", difference %.2e)", label, pass, (double)d);
    TEST_CHECK(host, "%s: AB into a host block leaves it a host block (pass %" PetscInt_FMT ")", label, pass);
  }
  PetscCall(PetscObjectQuery((PetscObject)C, "MatGPUMatBlockKernel", &block));
  PetscCall(BlockKernelExpected(A, &expect));
  if (expect) TEST_CHECK(block != NULL, "%s: AB into a host block ran the block kernel", label);
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&Xh));
  PetscCall(MatDestroy(&Ah));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* PtAP and RARt with a dense P or R (SeqAIJ has none on the host): against the two host products they are made of */
static PetscErrorCode CheckDenseTriple(const char *label, MatProductType ptype, Mat A, Mat X)
{
  Mat         C, Ah, Xh, T, Ch;
  PetscReal   d;
  PetscObject shadows;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(MatConvert(X, MATSEQDENSE, MAT_INITIAL_MATRIX, &Xh));
  if (ptype == MATPRODUCT_PtAP) {
    PetscCall(MatMatMult(Ah, Xh, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &T));
    PetscCall(MatTransposeMatMult(Xh, T, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
  } else {
    PetscCall(MatMatTransposeMult(Ah, Xh, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &T));
    PetscCall(MatMatMult(Xh, T, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
  }
  PetscCall(MatProductCreate(A, X, NULL, &C));
  PetscCall(MatProductSetType(C, ptype));
  PetscCall(MatProductSetFromOptions(C));
  PetscCall(MatProductSymbolic(C));
  PetscCall(Poison(C));
  PetscCall(MatProductNumeric(C));
  PetscCall(RelativeDifference(C, Ch, &d));
  PetscCall(PetscObjectQuery((PetscObject)C, "MatGPUMatProductShadows", &shadows));
  TEST_CHECK(d < 1e-13, "%s: %s equals the host's two products (difference %.2e)", label, MatProductTypes[ptype], (double)d);
  TEST_CHECK(shadows != NULL, "%s: %s with a dense operand ran on the device", label, MatProductTypes[ptype]);
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&Ch));
  PetscCall(MatDestroy(&T));
  PetscCall(MatDestroy(&Xh));
  PetscCall(MatDestroy(&Ah));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Random(PetscInt m, PetscInt n, PetscInt mean, const char *kind, PetscInt seed, MatType type, Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(m, n, mean, kind, seed, A));
  if (type) {
    PetscCall(MatConvert(*A, type, MAT_INPLACE_MATRIX, A));
    PetscCall(MatSetFromOptions(*A)); /* tests/run.sh: no padding guard (random rows); products inherit it */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestType(const char *type)
{
  const char *kinds[] = {"uniform", "emptyrows", "powerlaw"};

  PetscFunctionBeginUser;
  for (PetscInt k = 0; k < 3; k++) {
    Mat  A, P, R, Pa;
    char label[128];

    PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s", type, kinds[k]));
    PetscCall(Random(300, 300, 5, kinds[k], 10 + k, type, &A));
    PetscCall(Random(300, 80, 2, kinds[k], 20 + k, type, &P));
    PetscCall(Random(80, 300, 3, "uniform", 30 + k, type, &R));
    PetscCall(Random(300, 80, 2, "uniform", 40 + k, NULL, &Pa)); /* plain SeqAIJ */
    PetscCall(CheckProduct(label, MATPRODUCT_AB, A, P, NULL, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_AtB, A, P, NULL, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_ABt, A, R, NULL, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_PtAP, A, P, NULL, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_RARt, A, R, NULL, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_ABC, R, A, P, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_AtB, A, A, NULL, PETSC_TRUE));
    PetscCall(PetscStrlcat(label, ", P SeqAIJ", sizeof(label)));
    PetscCall(CheckProduct(label, MATPRODUCT_PtAP, A, Pa, NULL, PETSC_TRUE));
    PetscCall(CheckProduct(label, MATPRODUCT_AB, A, Pa, NULL, PETSC_TRUE));
    /* dense blocks on the device and (as aijcusparse takes them too: mat tests ex125) on the host */
    for (PetscInt nc = 1; nc <= 8; nc *= 2) {
      for (PetscInt host = 0; host < 2; host++) {
        Mat X, Xt;

        if (nc == 2 || (host && !gpu)) continue;
        PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s, %s dense block of %" PetscInt_FMT, type, kinds[k], host || !gpu ? "host" : "CUDA", nc));
        PetscCall(MatCreateDense(PETSC_COMM_SELF, 300, nc, 300, nc, NULL, &X));
        PetscCall(MatCreateDense(PETSC_COMM_SELF, nc, 300, nc, 300, NULL, &Xt));
        if (gpu && !host) PetscCall(MatConvert(X, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &X));
        if (gpu && !host) PetscCall(MatConvert(Xt, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &Xt));
        PetscCall(MatSetRandom(X, NULL));
        PetscCall(MatSetRandom(Xt, NULL));
        PetscCall(CheckProduct(label, MATPRODUCT_AB, A, X, NULL, PETSC_FALSE));
        PetscCall(CheckProduct(label, MATPRODUCT_AtB, A, X, NULL, PETSC_FALSE));
        PetscCall(CheckProduct(label, MATPRODUCT_ABt, A, Xt, NULL, PETSC_FALSE));
        if (gpu && !host) PetscCall(CheckHostResult(label, A, X));
        if (gpu) PetscCall(CheckDenseTriple(label, MATPRODUCT_PtAP, A, X));
        if (gpu) PetscCall(CheckDenseTriple(label, MATPRODUCT_RARt, A, Xt));
        PetscCall(MatDestroy(&X));
        PetscCall(MatDestroy(&Xt));
      }
    }
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&P));
    PetscCall(MatDestroy(&R));
    PetscCall(MatDestroy(&Pa));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Products with a MATDIAGONAL operand (mat tests ex309): PETSc asks our "anytype" handler first; the diagonal's
   own handler must still get its turn, on either side */
static PetscErrorCode TestDiagonalOperand(const char *type)
{
  Mat       A, D, C = NULL;
  Vec       d;
  PetscBool equal;

  PetscFunctionBeginUser;
  PetscCall(Random(150, 150, 5, "uniform", 60, type, &A));
  PetscCall(MatCreateVecs(A, &d, NULL));
  PetscCall(VecSetRandom(d, NULL));
  PetscCall(MatCreateDiagonal(d, &D));
  { /* PETSc before 3.26 has no product of AIJ with MATDIAGONAL at all: ask plain SeqAIJ first */
    Mat            Ah;
    PetscErrorCode ierr;

    PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatMatMult(Ah, D, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C);
    PetscCall(PetscPopErrorHandler());
    PetscCall(MatDestroy(&C));
    PetscCall(MatDestroy(&Ah));
    if (ierr) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "# %s: products with MATDIAGONAL not checked: this PETSc has none for SeqAIJ either (error %d)\n", type, (int)ierr));
      PetscCall(MatDestroy(&D));
      PetscCall(VecDestroy(&d));
      PetscCall(MatDestroy(&A));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(MatMatMult(A, D, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatMatMultEqual(A, D, C, 10, &equal));
  TEST_CHECK(equal, "%s: A * MATDIAGONAL equals its action on vectors", type);
  PetscCall(MatDestroy(&C));
  PetscCall(MatMatMult(D, A, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
  PetscCall(MatMatMultEqual(D, A, C, 10, &equal));
  TEST_CHECK(equal, "%s: MATDIAGONAL * A equals its action on vectors", type);
  PetscCall(MatDestroy(&C));
  PetscCall(MatDestroy(&D));
  PetscCall(VecDestroy(&d));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The user's algorithm: -matptap_via names SeqAIJ's host algorithm (used, the product on the host) or "cusparse"
  (the device product); aijcusparse's -mat_product_algorithm_backend_cpu; an unknown name is SeqAIJ's error.
*/
static PetscErrorCode TestUserAlgorithm(const char *type)
{
  const struct {
    const char *option, *value;
    PetscBool   api_user, host;
  } cases[] = {
    {"-matptap_via",                       "scalable", PETSC_TRUE,  PETSC_TRUE },
    {"-matptap_via",                       "rap",      PETSC_TRUE,  PETSC_TRUE },
    {"-matptap_via",                       "cusparse", PETSC_TRUE,  PETSC_FALSE},
    {"-mat_product_algorithm",             "scalable", PETSC_FALSE, PETSC_TRUE },
    {"-mat_product_algorithm_backend_cpu", "1",        PETSC_FALSE, PETSC_TRUE },
    {"-matptap_backend_cpu",               "0",        PETSC_TRUE,  PETSC_FALSE},
  };
  Mat A, P, Ah, Ph, Ch;

  PetscFunctionBeginUser;
  PetscCall(Random(200, 200, 5, "uniform", 50, type, &A));
  PetscCall(Random(200, 60, 2, "uniform", 51, type, &P));
  PetscCall(MatConvert(A, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(MatConvert(P, MATSEQAIJ, MAT_INITIAL_MATRIX, &Ph));
  PetscCall(MatPtAP(Ah, Ph, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Ch));
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(cases); i++) {
    Mat         C;
    PetscObject shadows;
    PetscBool   used;
    PetscReal   d;

    if (!gpu && !cases[i].host) continue; /* without a device, SeqAIJ reads the option: "cusparse" is not its */
    PetscCall(PetscOptionsSetValue(NULL, cases[i].option, cases[i].value));
    if (cases[i].api_user) PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C));
    else {
      PetscCall(MatProductCreate(A, P, NULL, &C));
      PetscCall(MatProductSetType(C, MATPRODUCT_PtAP));
      PetscCall(MatProductSetFromOptions(C));
      PetscCall(MatProductSymbolic(C));
      PetscCall(MatProductNumeric(C));
    }
    PetscCall(PetscOptionsUsed(NULL, cases[i].option + 1, &used)); /* names are stored without the dash */
    PetscCall(PetscObjectQuery((PetscObject)C, "MatGPUMatProductShadows", &shadows));
    PetscCall(RelativeDifference(C, Ch, &d));
    TEST_CHECK(d < 1e-13, "%s: PtAP with %s %s equals SeqAIJ's (difference %.2e)", type, cases[i].option, cases[i].value, (double)d);
    TEST_CHECK(used || (!gpu && strstr(cases[i].option, "backend")), "%s: %s %s is used", type, cases[i].option, cases[i].value);
    TEST_CHECK((shadows != NULL) == (gpu && !cases[i].host), "%s: PtAP with %s %s ran %s", type, cases[i].option, cases[i].value, shadows ? "on the device" : "on the host");
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsClearValue(NULL, cases[i].option));
  }
  { /* an algorithm nobody has: SeqAIJ's error, no leak */
    Mat            C = NULL;
    PetscErrorCode ierr;

    PetscCall(PetscOptionsSetValue(NULL, "-matptap_via", "nonesuch"));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &C);
    PetscCall(PetscPopErrorHandler());
    TEST_CHECK(ierr != PETSC_SUCCESS, "%s: -matptap_via nonesuch is an error (got %d)", type, (int)ierr);
    PetscCall(MatDestroy(&C));
    PetscCall(PetscOptionsClearValue(NULL, "-matptap_via"));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&Ph));
  PetscCall(MatDestroy(&Ch));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Median time of `reps` calls of MatMatMult (reuse) with nc columns, and of nc MatMult, on the device */
static PetscErrorCode Bench(const char *type, PetscInt k)
{
  Mat      A;
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(3, k, &A));
  PetscCall(MatGetLocalSize(A, &n, NULL));
  PetscCall(MatConvert(A, type, MAT_INPLACE_MATRIX, &A));
  for (PetscInt nc = 4; nc <= 8; nc += 4) {
    Mat         X, Y;
    Vec         x[8], y[8];
    cudaEvent_t e0, e1;
    float       tmm[11], tmv[11], t;
    const int   reps = 11;

    PetscCall(MatCreateDenseCUDA(PETSC_COMM_SELF, n, nc, n, nc, NULL, &X));
    PetscCall(MatSetRandom(X, NULL));
    PetscCall(MatMatMult(A, X, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &Y));
    for (PetscInt c = 0; c < nc; c++) {
      PetscCall(MatCreateVecs(A, &x[c], &y[c]));
      PetscCall(VecSetRandom(x[c], NULL));
      PetscCall(MatMult(A, x[c], y[c]));
    }
    PetscCallCUDA(cudaEventCreate(&e0));
    PetscCallCUDA(cudaEventCreate(&e1));
    for (int r = 0; r < reps; r++) {
      PetscCallCUDA(cudaDeviceSynchronize());
      PetscCallCUDA(cudaEventRecord(e0, 0));
      PetscCall(MatMatMult(A, X, MAT_REUSE_MATRIX, PETSC_DETERMINE, &Y));
      PetscCallCUDA(cudaEventRecord(e1, 0));
      PetscCallCUDA(cudaEventSynchronize(e1));
      PetscCallCUDA(cudaEventElapsedTime(&tmm[r], e0, e1));
      PetscCallCUDA(cudaEventRecord(e0, 0));
      for (PetscInt c = 0; c < nc; c++) PetscCall(MatMult(A, x[c], y[c]));
      PetscCallCUDA(cudaEventRecord(e1, 0));
      PetscCallCUDA(cudaEventSynchronize(e1));
      PetscCallCUDA(cudaEventElapsedTime(&tmv[r], e0, e1));
    }
    for (int i = 0; i < reps; i++) /* medians */
      for (int j = i + 1; j < reps; j++) {
        if (tmm[j] < tmm[i]) t = tmm[i], tmm[i] = tmm[j], tmm[j] = t;
        if (tmv[j] < tmv[i]) t = tmv[i], tmv[i] = tmv[j], tmv[j] = t;
      }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "# bench %s lap3d7 %" PetscInt_FMT "^3, %" PetscInt_FMT " columns: MatMatMult %.3f ms (%.3f per column), %" PetscInt_FMT " MatMult %.3f ms (%.3f each): %.2fx per vector\n", type, k, nc, (double)tmm[reps / 2], (double)tmm[reps / 2] / nc, nc,
                          (double)tmv[reps / 2], (double)tmv[reps / 2] / nc, (double)(tmv[reps / 2] / tmm[reps / 2])));
    PetscCallCUDA(cudaEventDestroy(e0));
    PetscCallCUDA(cudaEventDestroy(e1));
    for (PetscInt c = 0; c < nc; c++) {
      PetscCall(VecDestroy(&x[c]));
      PetscCall(VecDestroy(&y[c]));
    }
    PetscCall(MatDestroy(&X));
    PetscCall(MatDestroy(&Y));
  }
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Time of the first MatMultTranspose (which makes what the later ones read) and median of the next ones, of an
   aggregation-like prolongator (k^3 rows, k^3/8 columns, 3 entries a row), in each of the three ways:
   cuSPARSE on the device CSR (the default for rectangular matrices), an explicit transpose of the same type
   (-mat_gpumat_explicit_transpose 1), the transposed kernels (-mat_gpumat_explicit_transpose 0) */
static PetscErrorCode BenchTranspose(const char *type, PetscInt k)
{
  const PetscInt    n = k * k * k, nc = n / 8;
  const int         reps = 11;
  const char *const way[] = {NULL, "1", "0"}, *const name[] = {"cuSPARSE on the device CSR", "explicit transpose", "transposed kernels"};

  PetscFunctionBeginUser;
  for (int w = 0; w < 3; w++) {
    Mat         P;
    Vec         x, y;
    cudaEvent_t e0, e1;
    float       t[11], first, tmp;

    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, nc, 3, NULL, &P));
    for (PetscInt i = 0; i < n; i++) {
      PetscInt    c = i / 8, cols[3] = {PetscMax(c - 1, 0), c, PetscMin(c + 1, nc - 1)};
      PetscScalar v[3] = {0.25, 0.5, 0.25};

      if (cols[0] == cols[1] || cols[1] == cols[2]) PetscCall(MatSetValue(P, i, c, 1.0, INSERT_VALUES));
      else PetscCall(MatSetValues(P, 1, &i, 3, cols, v, INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
    PetscCall(MatConvert(P, type, MAT_INPLACE_MATRIX, &P));
    if (way[w]) {
      PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_explicit_transpose", way[w]));
      PetscCall(MatSetFromOptions(P));
      PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_explicit_transpose"));
    }
    PetscCall(MatCreateVecs(P, &y, &x));
    PetscCall(VecSetRandom(y, NULL));
    PetscCall(MatMult(P, y, x)); /* the format's own build, outside the timing */
    PetscCall(VecSetRandom(x, NULL));
    PetscCallCUDA(cudaEventCreate(&e0));
    PetscCallCUDA(cudaEventCreate(&e1));
    for (int r = -1; r < reps; r++) {
      PetscCallCUDA(cudaDeviceSynchronize());
      PetscCallCUDA(cudaEventRecord(e0, 0));
      PetscCall(MatMultTranspose(P, x, y));
      PetscCallCUDA(cudaEventRecord(e1, 0));
      PetscCallCUDA(cudaEventSynchronize(e1));
      PetscCallCUDA(cudaEventElapsedTime(r < 0 ? &first : &t[r], e0, e1));
    }
    for (int i = 0; i < reps; i++)
      for (int j = i + 1; j < reps; j++)
        if (t[j] < t[i]) tmp = t[i], t[i] = t[j], t[j] = tmp;
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "# bench %s MatMultTranspose of a %" PetscInt_FMT " x %" PetscInt_FMT " prolongator, %s: first %.3f ms, then %.3f ms\n", type, n, nc, name[w], (double)first, (double)t[reps / 2]));
    PetscCallCUDA(cudaEventDestroy(e0));
    PetscCallCUDA(cudaEventDestroy(e1));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&P));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *types[8], reason[256];
  PetscInt  ntypes = 8, bench = 0;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) PetscCall(PetscPrintf(PETSC_COMM_SELF, "# no device (%s): the host path is checked\n", reason));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    PetscCall(PetscStrallocpy(MATCMRSCUDA, &types[0]));
    ntypes = 1;
  }
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-bench_n", &bench, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_block_kernel", &blockkernel, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mat_gpumat_product_same_type", &sametype, NULL));
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscCall(TestType(types[t]));
    PetscCall(TestUserAlgorithm(types[t]));
    PetscCall(TestDiagonalOperand(types[t]));
    if (bench && gpu) PetscCall(Bench(types[t], bench));
    if (bench && gpu) PetscCall(BenchTranspose(types[t], bench));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "# %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
