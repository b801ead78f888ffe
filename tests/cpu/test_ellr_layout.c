static const char help[] = "ELLPACK-R layout on the host: arrays by hand, kernel emulation vs AIJ MatMult, limits and errors.\n";

#include <petscgpumat/private/ellrimpl.h>
#include "../reference/emulate.h"
#include "../common/testutil.h"

/*
  The 4x4 example       [1 0 2 0]   row lengths rl = [2 1 4 1], longest row 4
                        [0 3 0 0]   padding: value 0, column = the row's last column
                        [4 5 6 7]
                        [0 0 0 8]
*/
static const PetscInt    ex_ai[] = {0, 2, 3, 7, 8};
static const PetscInt    ex_aj[] = {0, 2, 1, 0, 1, 2, 3, 3};
static const PetscScalar ex_aa[] = {1, 2, 3, 4, 5, 6, 7, 8};

static PetscErrorCode CheckArrays(PetscInt T, PetscInt width, const int *col, const PetscScalar *val)
{
  MatELLRLayout L;
  const int     rl[] = {2, 1, 4, 1};
  PetscBool     same_rl = PETSC_TRUE, same_col = PETSC_TRUE, same_val = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatELLRLayoutCreate(4, 4, ex_ai, ex_aj, ex_aa, T, &L));
  TEST_CHECK(L.width == width && L.stored == 4 * width && L.maxlen == 4, "4x4 example T=%" PetscInt_FMT ": width %" PetscInt_FMT " (expected %" PetscInt_FMT "), stored %" PetscCount_FMT, T, L.width, width, L.stored);
  for (PetscInt i = 0; i < 4; i++) same_rl = (PetscBool)(same_rl && L.rl[i] == rl[i]);
  for (PetscInt s = 0; s < 4 * width && s < L.stored; s++) {
    same_col = (PetscBool)(same_col && L.col[s] == col[s]);
    same_val = (PetscBool)(same_val && L.val[s] == val[s]);
  }
  TEST_CHECK(same_rl, "4x4 example T=%" PetscInt_FMT ": rl[] by hand", T);
  TEST_CHECK(same_col, "4x4 example T=%" PetscInt_FMT ": column array by hand", T);
  TEST_CHECK(same_val, "4x4 example T=%" PetscInt_FMT ": value array by hand", T);
  PetscCall(MatELLRLayoutDestroy(&L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestHandLayouts(void)
{
  /* T = 1: the paper's column-major layout, slot = k*m + i */
  const int         col1[] = {0, 1, 0, 3, 2, 1, 1, 3, 2, 1, 2, 3, 2, 1, 3, 3};
  const PetscScalar val1[] = {1, 3, 4, 8, 2, 0, 5, 0, 0, 0, 6, 0, 0, 0, 7, 0};
  /* T = 2: pairs of lanes side by side, slot = ((k/2)*m + i)*2 + k%2 */
  const int         col2[] = {0, 2, 1, 1, 0, 1, 3, 3, 2, 2, 1, 1, 2, 3, 3, 3};
  const PetscScalar val2[] = {1, 2, 3, 0, 4, 5, 8, 0, 0, 0, 0, 0, 6, 7, 0, 0};
  /* T = 4: one group of 4 lanes per row, which is row-major */
  const int         col4[] = {0, 2, 2, 2, 1, 1, 1, 1, 0, 1, 2, 3, 3, 3, 3, 3};
  const PetscScalar val4[] = {1, 2, 0, 0, 3, 0, 0, 0, 4, 5, 6, 7, 8, 0, 0, 0};
  /* T = 8: the width rounds up to 8 lanes */
  int         col8[32];
  PetscScalar val8[32];

  PetscFunctionBeginUser;
  PetscCall(CheckArrays(1, 4, col1, val1));
  PetscCall(CheckArrays(2, 4, col2, val2));
  PetscCall(CheckArrays(4, 4, col4, val4));
  for (PetscInt i = 0; i < 4; i++)
    for (PetscInt k = 0; k < 8; k++) {
      const PetscInt len = ex_ai[i + 1] - ex_ai[i];
      col8[i * 8 + k]    = (int)(k < len ? ex_aj[ex_ai[i] + k] : ex_aj[ex_ai[i + 1] - 1]);
      val8[i * 8 + k]    = k < len ? ex_aa[ex_ai[i] + k] : 0;
    }
  PetscCall(CheckArrays(8, 8, col8, val8));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host emulation of the kernel against AIJ MatMult, on every generated matrix and every T */
static PetscErrorCode TestEmulation(void)
{
  char      name[128];
  PetscBool more = PETSC_TRUE;

  PetscFunctionBeginUser;
  for (PetscInt idx = 0; more; idx++) {
    Mat A;

    PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    for (PetscInt T = 1; T <= 32; T *= 2) {
      const PetscInt *ai, *aj;
      PetscScalar    *aa, *xa, *ya, *z;
      const PetscScalar *ra;
      PetscInt        m, n;
      MatELLRLayout   L;
      Vec             x, y, r;
      double          err, *ref;
      PetscBool       nanbad;
      PetscRandom     rnd;

      PetscCall(MatGetSize(A, &m, &n));
      PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
      PetscCall(MatELLRLayoutCreate(m, n, ai, aj, aa, T, &L));
      PetscCall(MatCreateVecs(A, &x, &y));
      PetscCall(VecDuplicate(y, &r));
      PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
      PetscCall(PetscRandomSetSeed(rnd, (unsigned long)(17 * idx + T)));
      PetscCall(PetscRandomSeed(rnd));
      PetscCall(VecSetRandom(x, rnd));
      PetscCall(VecSetRandom(y, rnd));
      PetscCall(PetscRandomDestroy(&rnd));
      /* z = A x + y by the emulation, compared with AIJ's MatMultAdd and with the float64 reference */
      PetscCall(PetscMalloc2(m, &z, m, &ref));
      for (PetscInt i = 0; i < m; i++) z[i] = PETSC_MAX_REAL; /* poisoned */
      PetscCall(VecGetArray(x, &xa));
      PetscCall(VecGetArray(y, &ya));
      PetscCall(MatELLRLayoutMult(&L, xa, ya, z));
      PetscCall(TestReferenceProduct(A, PETSC_FALSE, xa, ya, ref));
      PetscCall(VecRestoreArray(x, &xa));
      PetscCall(VecRestoreArray(y, &ya));
      PetscCall(TestRelativeError(m, z, ref, &err, &nanbad));
      TEST_CHECK(err <= TestTolerance() && !nanbad, "emulated ELLR-T (T=%" PetscInt_FMT ") A x + y vs float64 reference on %s: rel. error %.2e", T, name, err);
      {
        /* the GPU tests' yardstick (error relative to sum |a_ij x_j| + |y_i|) is never larger than this one */
        double *mag, serr;

        PetscCall(PetscMalloc1(m, &mag));
        PetscCall(VecGetArray(x, &xa));
        PetscCall(VecGetArray(y, &ya));
        PetscCall(TestReferenceMagnitude(A, PETSC_FALSE, xa, ya, mag));
        PetscCall(VecRestoreArray(x, &xa));
        PetscCall(VecRestoreArray(y, &ya));
        PetscCall(TestScaledError(m, z, ref, mag, &serr, &nanbad));
        TEST_CHECK(serr <= err && !nanbad, "scaled error %.2e <= relative error %.2e on %s (T=%" PetscInt_FMT ")", serr, err, name, T);
        PetscCall(PetscFree(mag));
      }
      PetscCall(MatMultAdd(A, x, y, r));
      PetscCall(VecGetArrayRead(r, &ra));
      for (PetscInt i = 0; i < m; i++) ref[i] = (double)ra[i];
      PetscCall(VecRestoreArrayRead(r, &ra));
      PetscCall(TestRelativeError(m, z, ref, &err, &nanbad));
      TEST_CHECK(err <= TestTolerance() && !nanbad, "emulated ELLR-T (T=%" PetscInt_FMT ") vs AIJ MatMultAdd on %s: rel. error %.2e", T, name, err);
      {
        /* every stored entry sits in its slot, and padding is harmless: value 0, column in range */
        PetscBool ok = PETSC_TRUE;

        for (PetscInt i = 0; i < m; i++) {
          ok = (PetscBool)(ok && L.rl[i] == ai[i + 1] - ai[i]);
          for (PetscInt k = 0; k < L.width; k++) {
            const PetscCount s = MatELLRSlot(m, T, i, k);
            if (k < L.rl[i]) ok = (PetscBool)(ok && L.col[s] == aj[ai[i] + k] && L.val[s] == aa[ai[i] + k]);
            else ok = (PetscBool)(ok && L.val[s] == 0 && L.col[s] >= 0 && (L.col[s] < n || n == 0));
          }
        }
        TEST_CHECK(ok && L.width % T == 0 && L.width - L.maxlen < T, "ELLR-T (T=%" PetscInt_FMT ") slots and padding of %s (width %" PetscInt_FMT ", longest row %" PetscInt_FMT ")", T, name, L.width, L.maxlen);
      }
      { /* the diagonal read from the layout's rows (the device kernel's threads), into a poisoned array: AIJ's bit for bit */
        PetscScalar *d;
        PetscBool    same = PETSC_FALSE;

        PetscCall(PetscMalloc1(m + 1, &d));
        for (PetscInt i = 0; i < m; i++) d[i] = PETSC_MAX_REAL;
        PetscCall(MatRowGroupEmulateDiagonal(m, m, T, NULL, NULL, L.rl, L.col, L.val, d));
        PetscCall(TestSameDiagonal(A, d, &same));
        TEST_CHECK(same, "ELLR-T (T=%" PetscInt_FMT ") diagonal from the layout, emulated on %s: bit for bit AIJ's", T, name);
        PetscCall(PetscFree(d));
      }
      {
        /* the device build, thread by thread (MatRowGroupFillThread(), which the kernel runs), into poisoned arrays
           allocated as the device's are (nothing where nothing is stored): bit for bit the host layout; then a
           value refresh with new values */
        int         *rl = NULL, *col = NULL;
        PetscScalar *val = NULL, *aa2 = NULL, *ref2 = NULL;
        PetscInt     nnz = m ? ai[m] : 0;
        PetscBool    same;

        if (m) PetscCall(PetscMalloc1(m, &rl));
        if (L.stored) PetscCall(PetscMalloc3(L.stored, &col, L.stored, &val, L.stored, &ref2));
        if (m) memset(rl, 0x5a, (size_t)m * sizeof(int));
        if (L.stored) memset(col, 0x5a, (size_t)L.stored * sizeof(int));
        if (L.stored) memset(val, 0x5a, (size_t)L.stored * sizeof(PetscScalar));
        PetscCall(MatELLRLayoutFillEmulate(m, T, L.width, PETSC_TRUE, ai, aj, aa, rl, col, val));
        same = (PetscBool)((!m || !memcmp(rl, L.rl, (size_t)m * sizeof(int))) && (!L.stored || (!memcmp(col, L.col, (size_t)L.stored * sizeof(int)) && !memcmp(val, L.val, (size_t)L.stored * sizeof(PetscScalar)))));
        TEST_CHECK(same, "device build of ELLR-T (T=%" PetscInt_FMT ") emulated on %s: bit for bit the host layout", T, name);
        {
          /* and back to CSR order (the device factor's copy, MatRowGroupGatherThread()), into poisoned arrays: the CSR */
          PetscInt    *gj = NULL;
          PetscScalar *ga = NULL;

          PetscCall(PetscMalloc2(nnz + 1, &gj, nnz + 1, &ga));
          memset(gj, 0x5a, (size_t)(nnz + 1) * sizeof(PetscInt));
          memset(ga, 0x5a, (size_t)(nnz + 1) * sizeof(PetscScalar));
          PetscCall(MatELLRLayoutGatherEmulate(m, T, ai, rl, col, val, gj, ga));
          same = (PetscBool)(!nnz || (!memcmp(gj, aj, (size_t)nnz * sizeof(PetscInt)) && !memcmp(ga, aa, (size_t)nnz * sizeof(PetscScalar))));
          TEST_CHECK(same, "ELLR-T (T=%" PetscInt_FMT ") back to CSR order, emulated on %s: bit for bit the CSR", T, name);
          PetscCall(PetscFree2(gj, ga));
        }
        PetscCall(PetscMalloc1(nnz + 1, &aa2));
        for (PetscInt k = 0; k < nnz; k++) aa2[k] = 2.0 * aa[k] + 1.0;
        if (L.stored) {
          memset(val, 0x5a, (size_t)L.stored * sizeof(PetscScalar));
          PetscCall(MatELLRLayoutFillValues(&L, ai, aa2, ref2));
        }
        PetscCall(MatELLRLayoutFillEmulate(m, T, L.width, PETSC_FALSE, ai, NULL, aa2, rl, col, val));
        same = (PetscBool)(!L.stored || !memcmp(val, ref2, (size_t)L.stored * sizeof(PetscScalar)));
        TEST_CHECK(same, "device value refresh of ELLR-T (T=%" PetscInt_FMT ") emulated on %s: bit for bit the host values", T, name);
        PetscCall(PetscFree(aa2));
        PetscCall(PetscFree(rl));
        PetscCall(PetscFree3(col, val, ref2));
      }
      PetscCall(PetscFree2(z, ref));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&y));
      PetscCall(VecDestroy(&r));
      PetscCall(MatELLRLayoutDestroy(&L));
    }
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestLimitsAndErrors(void)
{
  PetscErrorCode ierr;
  MatELLRLayout  L;
  PetscInt       T, maxlen, width;
  PetscCount     stored;

  PetscFunctionBeginUser;
  TEST_EXPECT_ERROR(&ierr, MatELLRLayoutCreate(4, 4, ex_ai, ex_aj, ex_aa, 3, &L));
  TEST_CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "T=3 is refused with PETSC_ERR_ARG_OUTOFRANGE (got %d)", (int)ierr);
  TEST_EXPECT_ERROR(&ierr, MatELLRLayoutCreate(4, 4, ex_ai, ex_aj, ex_aa, 64, &L));
  TEST_CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "T=64 is refused with PETSC_ERR_ARG_OUTOFRANGE (got %d)", (int)ierr);
  /* the padding guard: the 4x4 example stores 16 slots for 8 nonzeros (fill 2) */
  PetscCall(MatELLRLayoutMeasure(4, 4, ex_ai, 1, &maxlen, &width, &stored));
  TEST_EXPECT_ERROR(&ierr, MatELLRCheckFill(4, 8, maxlen, stored, 1.5));
  TEST_CHECK(ierr == PETSC_ERR_SUP, "padding guard refuses fill 2 > max fill 1.5 (got %d)", (int)ierr);
  TEST_EXPECT_ERROR(&ierr, MatELLRCheckFill(4, 8, maxlen, stored, 2.0));
  TEST_CHECK(ierr == 0, "padding guard accepts fill 2 <= max fill 2");
  TEST_EXPECT_ERROR(&ierr, MatELLRCheckFill(4, 8, maxlen, stored, 0.0));
  TEST_CHECK(ierr == 0, "padding guard off with max fill 0");
  TEST_EXPECT_ERROR(&ierr, MatELLRCheckFill(0, 0, 0, 0, 4.0));
  TEST_CHECK(ierr == 0, "padding guard accepts the empty matrix");
  /* automatic T: 1 for regular rows up to 32 entries, else the largest power of two <= mean/4, at most 32 */
  {
    const PetscInt  mean[] = {0, 7, 26, 5, 16, 32, 64, 128, 256, 4096};
    const PetscInt  maxl[] = {0, 7, 27, 60, 31, 63, 127, 255, 511, 8191};
    const PetscInt  want[] = {1, 1, 1, 1, 4, 8, 16, 32, 32, 32};
    PetscBool       ok     = PETSC_TRUE;

    for (size_t c = 0; c < PETSC_STATIC_ARRAY_LENGTH(mean); c++) {
      PetscCall(MatGPUMatChooseThreadsPerRow(100, 100 * mean[c], maxl[c], &T));
      if (T != want[c]) {
        ok = PETSC_FALSE;
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# mean %" PetscInt_FMT " longest %" PetscInt_FMT ": T %" PetscInt_FMT ", expected %" PetscInt_FMT "\n", mean[c], maxl[c], T, want[c]));
      }
    }
    TEST_CHECK(ok, "automatic threads per row follows the measured rule on 10 cases");
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(TestHandLayouts());
  PetscCall(TestEmulation());
  PetscCall(TestLimitsAndErrors());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_ellr_layout: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
