static const char help[] = "MATSEQAUTOCUDA's choice on the CPU: matrices of known row statistics, the format the rule gives (features -> choice),\n"
                           "the type's creation paths, options, setters, MatView before the first product, duplicate and conversion.\n";

#include "../common/testutil.h"

/* A seq matrix of type `type` with the given row lengths (columns spread over n, diagonal first where it fits) */
static PetscErrorCode MatFromRowLengths(MatType type, PetscInt m, PetscInt n, const PetscInt len[], Mat *A)
{
  PetscFunctionBeginUser;
  PetscCall(MatCreate(PETSC_COMM_SELF, A));
  PetscCall(MatSetSizes(*A, m, n, m, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, len));
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt k = 0; k < len[i]; k++) PetscCall(MatSetValue(*A, i, (i + k * (n / PetscMax(len[i], 1) + 1)) % n, 1.0 + (PetscScalar)k, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckChoice(const char *what, PetscInt m, PetscInt n, const PetscInt len[], MatType expect)
{
  Mat         A;
  MatType     got;
  PetscBool   same;
  MatInfo     info;
  PetscReal   mu;

  PetscFunctionBeginUser;
  PetscCall(MatFromRowLengths(MATSEQAUTOCUDA, m, n, len, &A));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  mu = m ? (PetscReal)info.nz_used / (PetscReal)m : 0;
  PetscCall(MatAutoCUDAGetChoice(A, &got));
  PetscCall(PetscStrcmp(got, expect, &same));
  TEST_CHECK(same, "%s (%" PetscInt_FMT " rows, mean %.2f): the rule gives %s (expected %s)", what, m, (double)mu, got, expect);
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The same for a matrix of millions of entries, made from its CSR arrays (no MatSetValue()) and converted in place;
   columns consecutive from the diagonal */
static PetscErrorCode CheckChoiceLarge(const char *what, PetscInt m, const PetscInt len[], MatType expect)
{
  Mat          A;
  MatType      got;
  PetscBool    same;
  PetscInt    *ai, *aj;
  PetscScalar *aa;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(m + 1, &ai));
  ai[0] = 0;
  for (PetscInt i = 0; i < m; i++) ai[i + 1] = ai[i] + len[i];
  PetscCall(PetscMalloc2(ai[m], &aj, ai[m], &aa));
  for (PetscInt i = 0; i < m; i++) {
    const PetscInt start = PetscMin(i, m - len[i]);

    for (PetscInt k = 0; k < len[i]; k++) {
      aj[ai[i] + k] = start + k;
      aa[ai[i] + k] = 1.0;
    }
  }
  PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, m, m, ai, aj, aa, &A));
  PetscCall(MatConvert(A, MATSEQAUTOCUDA, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatAutoCUDAGetChoice(A, &got));
  PetscCall(PetscStrcmp(got, expect, &same));
  TEST_CHECK(same, "%s (%" PetscInt_FMT " rows, %" PetscInt_FMT " entries): the rule gives %s (expected %s)", what, m, ai[m], got, expect);
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFree(ai));
  PetscCall(PetscFree2(aj, aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscInt *len, m;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscMalloc1(40000, &len));

  /* features -> choice, one matrix on each side of each threshold */
  { /* 2-D 5-point stencil rows (100 x 100 grid): sigma/mu 0.04 */
    m = 10000;
    for (PetscInt i = 0; i < m; i++) {
      PetscInt x = i % 100, y = i / 100;

      len[i] = 1 + (x > 0) + (x < 99) + (y > 0) + (y < 99);
    }
    PetscCall(CheckChoice("2-D 5-point stencil rows", m, m, len, MATSEQELLRCUDA));
    len[17] = 0; /* one empty row: ELLPACK-R would store and read it */
    PetscCall(CheckChoice("the same with one empty row", m, m, len, MATSEQCMRSCUDA));
  }
  { /* constant rows but one 5x longer: within sigma/mu 0.1, beyond ELLPACK-R's padding guard (4 x mean) */
    m = 2000;
    for (PetscInt i = 0; i < m; i++) len[i] = 6;
    len[0] = 30;
    PetscCall(CheckChoice("constant rows of 6, one of 30", m, m, len, MATSEQCMRSCUDA));
    len[0] = 150; /* sigma/mu 0.53, but the longest row 25x the mean */
    PetscCall(CheckChoice("constant rows of 6, one of 150", m, m, len, MATSEQCSRCUDA));
    len[0] = 105; /* 17.3x the mean: above the threshold of 16 */
    PetscCall(CheckChoice("constant rows of 6, one of 105", m, m, len, MATSEQCSRCUDA));
    len[0] = 90; /* 14.9x the mean: below it */
    PetscCall(CheckChoice("constant rows of 6, one of 90", m, m, len, MATSEQCMRSCUDA));
  }
  { /* short rows of lengths 1..15: sigma/mu 0.54 */
    m = 3000;
    for (PetscInt i = 0; i < m; i++) len[i] = 1 + i % 15;
    PetscCall(CheckChoice("rows of 1..15 entries", m, m, len, MATSEQCMRSCUDA));
  }
  { /* two row lengths: 2 and 16 in equal numbers, sigma/mu 0.78; every third row 60, the others 2, sigma/mu 1.28 (both
       CMRS, whose warps share such rows); every tenth row 60, sigma/mu 2.23 (CSR), its longest row 7.7x the mean */
    m = 3000;
    for (PetscInt i = 0; i < m; i++) len[i] = i % 2 ? 16 : 2;
    PetscCall(CheckChoice("rows of 2 and 16 entries", m, m, len, MATSEQCMRSCUDA));
    for (PetscInt i = 0; i < m; i++) len[i] = i % 3 ? 2 : 60;
    PetscCall(CheckChoice("rows of 2 entries, every third of 60", m, m, len, MATSEQCMRSCUDA));
    for (PetscInt i = 0; i < m; i++) len[i] = i % 10 ? 2 : 60;
    PetscCall(CheckChoice("rows of 2 entries, every tenth of 60", m, m, len, MATSEQCSRCUDA));
  }
  { /* an arrow: one full row, the others 2: sigma/mu 10 */
    m = 1000;
    for (PetscInt i = 0; i < m; i++) len[i] = 2;
    len[0] = m;
    PetscCall(CheckChoice("arrow (one full row)", m, m, len, MATSEQCSRCUDA));
  }
  { /* power-law row lengths (exponent about 2): sigma/mu > 2 */
    m = 20000;
    for (PetscInt i = 0; i < m; i++) len[i] = PetscMin(m, (PetscInt)(20000.0 / ((PetscReal)(i + 1) * (PetscReal)(i + 1))) + 1);
    PetscCall(CheckChoice("power-law row lengths", m, m, len, MATSEQCSRCUDA));
  }
  { /* long rows: mean 50 > 48, regular */
    m = 300;
    for (PetscInt i = 0; i < m; i++) len[i] = 50;
    PetscCall(CheckChoice("rows of 50 entries", m, 1000, len, MATSEQCSRCUDA));
    for (PetscInt i = 0; i < m; i++) len[i] = 45; /* below the threshold of 48: regular, for ELLPACK-R */
    PetscCall(CheckChoice("rows of 45 entries", m, 1000, len, MATSEQELLRCUDA));
  }
  { /* large matrices (at least 1e7 entries). A few rows far longer than the mean (longest > 16 mu): CMRS where those
       rows hold under 15 % of the entries (heavy: longer than 4 mu), CSR where they hold more; below 1e7 entries, CSR */
    PetscInt *big;

    PetscCall(PetscMalloc1(1250000, &big));
    for (PetscInt i = 0; i < 1250000; i++) big[i] = i % 12500 ? 8 : 3000;
    PetscCall(CheckChoiceLarge("rows of 8, every 12500th of 3000 (heavy share 3 %)", 1250000, big, MATSEQCMRSCUDA));
    PetscCall(CheckChoiceLarge("the same, 1.2 M rows (under 1e7 entries)", 1200000, big, MATSEQCSRCUDA));
    for (PetscInt i = 0; i < 1250000; i++) big[i] = i % 6250 ? 8 : 8000;
    PetscCall(CheckChoiceLarge("rows of 8, every 6250th of 8000 (heavy share 14 %)", 1250000, big, MATSEQCMRSCUDA));
    for (PetscInt i = 0; i < 1200000; i++) big[i] = i % 4000 ? 8 : 8000;
    PetscCall(CheckChoiceLarge("rows of 8, every 4000th of 8000 (heavy share 20 %)", 1200000, big, MATSEQCSRCUDA));
    /* rows of medium length in a large matrix: CSR where they vary (15 and 25 entries, sigma/mu 0.25), CMRS below 1e7
       entries, ELLPACK-R where they are regular (27 each, as a 27-point stencil) */
    for (PetscInt i = 0; i < 600000; i++) big[i] = i % 2 ? 25 : 15;
    PetscCall(CheckChoiceLarge("rows of 15 and 25 entries (mean 20, sigma/mu 0.25)", 600000, big, MATSEQCSRCUDA));
    PetscCall(CheckChoiceLarge("the same, 450 000 rows (under 1e7 entries)", 450000, big, MATSEQCMRSCUDA));
    for (PetscInt i = 0; i < 400000; i++) big[i] = 27;
    PetscCall(CheckChoiceLarge("rows of 27 entries", 400000, big, MATSEQELLRCUDA));
    PetscCall(PetscFree(big));
  }
  { /* no entries */
    m = 50;
    for (PetscInt i = 0; i < m; i++) len[i] = 0;
    PetscCall(CheckChoice("no entries", m, m, len, MATSEQCMRSCUDA));
  }

  { /* the type: root name, options and setters, MatView before the first product, duplicate, conversions */
    Mat         A, B, C;
    MatType     got;
    PetscBool   flg, timed;
    PetscInt    h;
    PetscViewer sv;
    char        buf[4096];

    m = 400;
    for (PetscInt i = 0; i < m; i++) len[i] = 1 + i % 9;
    PetscCall(MatFromRowLengths(MATAUTOCUDA, m, m, len, &A));
    PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAUTOCUDA, &flg));
    TEST_CHECK(flg, "the root name autocuda gives %s on one process", MATSEQAUTOCUDA);
    PetscCall(PetscOptionsSetValue(NULL, "-mat_auto_timed", "1"));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_height", "3"));
    PetscCall(MatSetFromOptions(A));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_auto_timed"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_height"));
    PetscCall(MatAutoCUDAGetTimed(A, &timed));
    TEST_CHECK(timed, "-mat_auto_timed 1 sets the timed choice");
    PetscCall(MatCMRSCUDAGetHeight(A, &h));
    TEST_CHECK(h == 3, "a candidate's option (-mat_cmrs_height 3) reaches its parameter: %" PetscInt_FMT, h);
    PetscCall(MatAutoCUDASetTimed(A, PETSC_FALSE));
    PetscCall(MatELLRCUDASetMaxFill(A, 2.5));
    { /* MatView's ASCII info, through a file (the string viewer is not ASCII for MatView) */
      char  path[PETSC_MAX_PATH_LEN];
      FILE *fp;
      size_t n;

      PetscCall(PetscSNPrintf(path, sizeof(path), "/tmp/test_choose_rule_view_%d.txt", (int)getpid()));
      PetscCall(PetscViewerASCIIOpen(PETSC_COMM_SELF, path, &sv));
      PetscCall(PetscViewerPushFormat(sv, PETSC_VIEWER_ASCII_INFO));
      PetscCall(MatView(A, sv));
      PetscCall(PetscViewerPopFormat(sv));
      PetscCall(PetscViewerDestroy(&sv));
      fp = fopen(path, "r");
      n  = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
      buf[n] = 0;
      if (fp) fclose(fp);
      (void)remove(path);
      TEST_CHECK(strstr(buf, "the rule gives CMRS for the current pattern: short rows of varied lengths") != NULL, "MatView before the first product says what the rule gives and why");
      if (!strstr(buf, "the rule gives CMRS")) PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s\n", buf));
    }

    PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAUTOCUDA, &flg));
    PetscCall(MatCMRSCUDAGetHeight(B, &h));
    TEST_CHECK(flg && h == 3, "MatDuplicate keeps the type and the candidates' parameters (height %" PetscInt_FMT ")", h);
    {
      PetscReal f;

      PetscCall(MatELLRCUDAGetMaxFill(B, &f));
      TEST_CHECK(f == (PetscReal)2.5, "MatDuplicate keeps ELLPACK-R's max fill (%g)", (double)f);
    }
    PetscCall(MatAutoCUDAGetChoice(B, &got));
    PetscCall(PetscStrcmp(got, MATSEQCMRSCUDA, &flg));
    TEST_CHECK(flg, "the duplicate gives the same choice (%s)", got);
    PetscCall(MatConvert(B, MATCMRSCUDA, MAT_INITIAL_MATRIX, &C));
    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQCMRSCUDA, &flg));
    TEST_CHECK(flg, "MatConvert(autocuda -> cmrscuda)");
    PetscCall(MatConvert(C, MATAUTOCUDA, MAT_INPLACE_MATRIX, &C));
    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAUTOCUDA, &flg));
    TEST_CHECK(flg, "MatConvert(cmrscuda -> autocuda) in place");
    PetscCall(MatConvert(C, MATSEQAIJ, MAT_INPLACE_MATRIX, &C));
    PetscCall(MatEqual(A, C, &flg));
    TEST_CHECK(flg, "round trip autocuda -> cmrscuda -> autocuda -> aij keeps every entry");
    {
      PetscErrorCode (*f)(void) = NULL;

      PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatAutoCUDAGetChoice_C", &f));
      TEST_CHECK(!f, "back to seqaij: no composed function of the type left");
      PetscCall(PetscObjectQueryFunction((PetscObject)C, "MatCMRSCUDASetHeight_C", &f));
      TEST_CHECK(!f, "back to seqaij: no candidate's composed function left");
    }
    { /* host products (no device needed with host vectors) */
      Vec       x, y, yref;
      PetscReal nrm;

      PetscCall(MatBindToCPU(B, PETSC_TRUE));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, m, &x));
      PetscCall(VecDuplicate(x, &y));
      PetscCall(VecDuplicate(x, &yref));
      PetscCall(VecSetRandom(x, NULL));
      PetscCall(MatMult(C, x, yref));
      PetscCall(MatMult(B, x, y));
      PetscCall(VecAXPY(y, -1.0, yref));
      PetscCall(VecNorm(y, NORM_INFINITY, &nrm));
      TEST_CHECK(nrm == 0, "autocuda bound to the CPU: MatMult equals AIJ's");
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&y));
      PetscCall(VecDestroy(&yref));
    }
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&C));
  }
  { /* the type's functions on another type: a clear PETSc error for the getter, nothing for the setter (PETSc's convention) */
    Mat            A;
    MatType        got;
    PetscErrorCode ierr;

    m = 10;
    for (PetscInt i = 0; i < m; i++) len[i] = 1;
    PetscCall(MatFromRowLengths(MATSEQCMRSCUDA, m, m, len, &A));
    TEST_EXPECT_ERROR(&ierr, MatAutoCUDAGetChoice(A, &got));
    TEST_CHECK(ierr == PETSC_ERR_SUP, "MatAutoCUDAGetChoice() on a cmrscuda matrix: PETSC_ERR_SUP (%d)", (int)ierr);
    TEST_EXPECT_ERROR(&ierr, MatAutoCUDASetTimed(A, PETSC_TRUE));
    TEST_CHECK(ierr == PETSC_SUCCESS, "MatAutoCUDASetTimed() on a cmrscuda matrix does nothing (%d)", (int)ierr);
    PetscCall(MatDestroy(&A));
  }
  PetscCall(PetscFree(len));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
