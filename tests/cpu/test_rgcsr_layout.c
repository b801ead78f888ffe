static const char help[] = "Row-grouped CSR on the host: the paper's two-group example by hand, reordering, kernel emulation, options.\n";

#include <petscgpumat/private/rgcsrimpl.h>
#include <string.h>
#include "../reference/emulate.h"
#include "../common/testutil.h"

/*
  8 x 8 example in two groups of four rows (the layout of the paper's Figure 5):
    row 0: (0,1) (1,2)              row 4: (4,8) (5,9) (6,10) (7,11)
    row 1: (1,3)                    row 5: empty
    row 2: (0,4) (2,5) (3,6)        row 6: (5,12) (6,13)
    row 3: (3,7)                    row 7: (7,14)
*/
static const PetscInt    ex_ai[] = {0, 2, 3, 6, 7, 11, 11, 13, 14};
static const PetscInt    ex_aj[] = {0, 1, 1, 0, 2, 3, 3, 4, 5, 6, 7, 5, 6, 7};
static const PetscScalar ex_aa[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};

static PetscErrorCode CheckLayout(PetscInt W, const char *what, PetscCount stored, const PetscCount *gp, const int *rl, const int *perm, const int *col, const PetscScalar *val)
{
  MatRgCSRLayout L;
  PetscBool      ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatRgCSRLayoutCreate(8, 8, ex_ai, ex_aj, ex_aa, 4, 1, W, &L));
  ok = (PetscBool)(L.ngroups == 2 && L.stored == stored && L.gp[0] == gp[0] && L.gp[1] == gp[1] && L.gp[2] == gp[2]);
  TEST_CHECK(ok, "%s: 2 groups, groupPointers {%" PetscCount_FMT ", %" PetscCount_FMT ", %" PetscCount_FMT "}", what, gp[0], gp[1], gp[2]);
  ok = PETSC_TRUE;
  for (PetscInt p = 0; p < 8; p++) ok = (PetscBool)(ok && L.rl[p] == rl[p] && (perm ? L.perm && L.perm[p] == perm[p] : !L.perm));
  TEST_CHECK(ok, "%s: rowLengths and permutation by hand", what);
  ok = PETSC_TRUE;
  for (PetscCount s = 0; s < stored && s < L.stored; s++) ok = (PetscBool)(ok && L.col[s] == col[s] && L.val[s] == val[s]);
  TEST_CHECK(ok, "%s: columns and values by hand (%" PetscCount_FMT " slots, %" PetscCount_FMT " artificial zeros)", what, stored, stored - 14);
  PetscCall(MatRgCSRLayoutDestroy(&L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestHandLayouts(void)
{
  /* no reordering: group 0 has 3 slots per row, group 1 has 4 (the last group is a full one here) */
  const PetscCount  gp0[]   = {0, 12, 28};
  const int         rl0[]   = {2, 1, 3, 1, 4, 0, 2, 1};
  const int         col0[]  = {0, 1, 0, 3, 1, 1, 2, 3, 1, 1, 3, 3, 4, 0, 5, 7, 5, 0, 6, 7, 6, 0, 6, 7, 7, 0, 6, 7};
  const PetscScalar val0[]  = {1, 3, 4, 7, 2, 0, 5, 0, 0, 0, 6, 0, 8, 0, 12, 14, 9, 0, 13, 0, 10, 0, 0, 0, 11, 0, 0, 0};
  /* global sort by decreasing length (stable): rows 4 2 0 6 | 1 3 7 5, 20 slots instead of 28 */
  const PetscCount  gpw[]   = {0, 16, 20};
  const int         rlw[]   = {4, 3, 2, 2, 1, 1, 1, 0};
  const int         permw[] = {4, 2, 0, 6, 1, 3, 7, 5};
  const int         colw[]  = {4, 0, 0, 5, 5, 2, 1, 6, 6, 3, 1, 6, 7, 3, 1, 6, 1, 3, 7, 0};
  const PetscScalar valw[]  = {8, 4, 1, 12, 9, 5, 2, 13, 10, 6, 0, 0, 11, 0, 0, 0, 3, 7, 14, 0};
  MatRgCSRLayout    L;
  const int         perm4[] = {2, 0, 1, 3, 4, 6, 7, 5};
  PetscBool         ok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(CheckLayout(0, "8x8 example, G=4, no reordering", 28, gp0, rl0, NULL, col0, val0));
  PetscCall(CheckLayout(8, "8x8 example, G=4, global sort (W=8)", 20, gpw, rlw, permw, colw, valw));
  PetscCall(CheckLayout(100, "8x8 example, G=4, W=100 is global too", 20, gpw, rlw, permw, colw, valw));
  /* the last group may be shorter: the first 7 rows give groups of 4 and 3 rows, the second with stride 3 */
  PetscCall(MatRgCSRLayoutCreate(7, 8, ex_ai, ex_aj, ex_aa, 4, 1, 0, &L));
  TEST_CHECK(L.ngroups == 2 && L.gp[1] == 12 && L.gp[2] == 24 && L.col[12 + 1 * 3 + 2] == 6 && L.val[12 + 1 * 3 + 2] == 13 && L.val[12 + 3 * 3 + 0] == 11,
             "7 rows in groups of 4: the last group of 3 rows has 4 slots per row, stride 3 (groupPointers {0, 12, 24})");
  PetscCall(MatRgCSRLayoutDestroy(&L));
  PetscCall(MatRgCSRLayoutCreate(8, 8, ex_ai, ex_aj, ex_aa, 4, 1, 4, &L));
  for (PetscInt p = 0; p < 8; p++) ok = (PetscBool)(ok && L.perm[p] == perm4[p]);
  TEST_CHECK(ok, "8x8 example, sort window 4: rows sorted inside each window only (2 0 1 3 | 4 6 7 5)");
  PetscCall(MatRgCSRLayoutDestroy(&L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The emulated kernel against the float64 reference on every generated matrix, for groups, T and windows */
static PetscErrorCode TestEmulation(void)
{
  char           name[128];
  PetscBool      more = PETSC_TRUE;
  const PetscInt Gs[] = {32, 128, 96}, Ts[] = {1, 4, 32}, Ws[] = {0, 64, 1 << 30};

  PetscFunctionBeginUser;
  for (PetscInt idx = 0; more; idx++) {
    Mat A;

    PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    for (size_t c = 0; c < 3; c++)
      for (size_t w = 0; w < 3; w++) {
        const PetscInt  G = Gs[c], T = Ts[(c + w) % 3], W = Ws[w];
        const PetscInt *ai, *aj;
        PetscScalar    *aa, *x, *y, *z;
        PetscInt        m, n;
        MatRgCSRLayout  L;
        double         *ref, err;
        PetscBool       nanbad, slots = PETSC_TRUE, isperm = PETSC_TRUE;
        PetscInt       *seen;

        PetscCall(MatGetSize(A, &m, &n));
        PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
        PetscCall(MatRgCSRLayoutCreate(m, n, ai, aj, aa, G, T, W, &L));
        PetscCall(PetscMalloc4(n, &x, m, &y, m, &z, m, &ref));
        PetscCall(PetscCalloc1(m, &seen));
        for (PetscInt j = 0; j < n; j++) x[j] = PetscSinReal(1.0 + j);
        for (PetscInt i = 0; i < m; i++) y[i] = PetscCosReal(2.0 + i), z[i] = PETSC_MAX_REAL;
        PetscCall(MatRgCSRLayoutMult(&L, x, y, z));
        PetscCall(TestReferenceProduct(A, PETSC_FALSE, x, y, ref));
        PetscCall(TestRelativeError(m, z, ref, &err, &nanbad));
        TEST_CHECK(err <= TestTolerance() && !nanbad, "emulated RgCSR G=%" PetscInt_FMT " T=%" PetscInt_FMT " W=%" PetscInt_FMT " A x + y on %s: rel. error %.2e", G, T, W, name, err);
        /* the permutation is one, rows are sorted by decreasing length in each window, every entry sits in its slot */
        for (PetscInt p = 0; p < m; p++) {
          const PetscInt i = L.perm ? L.perm[p] : p;
          isperm           = (PetscBool)(isperm && i >= 0 && i < m && !seen[i]);
          if (i >= 0 && i < m) seen[i] = 1;
          if (W && p % W && p > 0) isperm = (PetscBool)(isperm && L.rl[p] <= L.rl[p - 1]);
          for (PetscInt k = 0; k < L.rl[p]; k++) {
            const PetscCount s = MatRgCSRSlot(&L, p, k);
            slots              = (PetscBool)(slots && s >= L.gp[p / G] && s < L.gp[p / G + 1] && L.col[s] == aj[ai[i] + k] && L.val[s] == aa[ai[i] + k]);
          }
        }
        TEST_CHECK(isperm && slots, "RgCSR G=%" PetscInt_FMT " T=%" PetscInt_FMT " W=%" PetscInt_FMT " on %s: permutation, window order and slots", G, T, W, name);
        { /* the diagonal read from the layout's rows (the device kernel's threads), into a poisoned array: AIJ's bit for bit */
          PetscScalar *d;
          PetscBool    same = PETSC_FALSE;

          PetscCall(PetscMalloc1(m + 1, &d));
          for (PetscInt i = 0; i < m; i++) d[i] = PETSC_MAX_REAL;
          PetscCall(MatRowGroupEmulateDiagonal(m, G, T, L.gp, L.perm, L.rl, L.col, L.val, d));
          PetscCall(TestSameDiagonal(A, d, &same));
          TEST_CHECK(same, "RgCSR G=%" PetscInt_FMT " T=%" PetscInt_FMT " W=%" PetscInt_FMT " diagonal from the layout, emulated on %s: bit for bit AIJ's", G, T, W, name);
          PetscCall(PetscFree(d));
        }
        {
          /* the device build's fill step, thread by thread (MatRowGroupFillThread(), which the kernel runs), from the
             groups step's output (here the host's), into poisoned arrays: bit for bit the host layout; then a value
             refresh with new values */
          int         *col = NULL;
          PetscScalar *val = NULL, *aa2 = NULL, *ref2 = NULL;
          PetscInt     nnz = m ? ai[m] : 0;
          PetscBool    same;

          if (L.stored) PetscCall(PetscMalloc3(L.stored, &col, L.stored, &val, L.stored, &ref2));
          if (L.stored) memset(col, 0x5a, (size_t)L.stored * sizeof(int));
          if (L.stored) memset(val, 0x5a, (size_t)L.stored * sizeof(PetscScalar));
          PetscCall(MatRgCSRLayoutFillEmulate(m, G, T, PETSC_TRUE, ai, aj, aa, L.gp, L.perm, col, val));
          same = (PetscBool)(!L.stored || (!memcmp(col, L.col, (size_t)L.stored * sizeof(int)) && !memcmp(val, L.val, (size_t)L.stored * sizeof(PetscScalar))));
          TEST_CHECK(same, "device build of RgCSR G=%" PetscInt_FMT " T=%" PetscInt_FMT " W=%" PetscInt_FMT " emulated on %s: bit for bit the host layout", G, T, W, name);
          {
            /* and back to CSR order through the permutation (the device factor's copy, MatRowGroupGatherThread()), into
               poisoned arrays: the CSR */
            PetscInt    *gj = NULL;
            PetscScalar *ga = NULL;

            PetscCall(PetscMalloc2(nnz + 1, &gj, nnz + 1, &ga));
            memset(gj, 0x5a, (size_t)(nnz + 1) * sizeof(PetscInt));
            memset(ga, 0x5a, (size_t)(nnz + 1) * sizeof(PetscScalar));
            PetscCall(MatRgCSRLayoutGatherEmulate(m, G, T, ai, L.gp, L.rl, L.perm, col, val, gj, ga));
            same = (PetscBool)(!nnz || (!memcmp(gj, aj, (size_t)nnz * sizeof(PetscInt)) && !memcmp(ga, aa, (size_t)nnz * sizeof(PetscScalar))));
            TEST_CHECK(same, "RgCSR G=%" PetscInt_FMT " T=%" PetscInt_FMT " W=%" PetscInt_FMT " back to CSR order, emulated on %s: bit for bit the CSR", G, T, W, name);
            PetscCall(PetscFree2(gj, ga));
          }
          PetscCall(PetscMalloc1(nnz + 1, &aa2));
          for (PetscInt k = 0; k < nnz; k++) aa2[k] = 2.0 * aa[k] + 1.0;
          if (L.stored) {
            memset(val, 0x5a, (size_t)L.stored * sizeof(PetscScalar));
            PetscCall(MatRgCSRLayoutFillValues(&L, ai, aa2, ref2));
          }
          PetscCall(MatRgCSRLayoutFillEmulate(m, G, T, PETSC_FALSE, ai, NULL, aa2, L.gp, L.perm, col, val));
          same = (PetscBool)(!L.stored || !memcmp(val, ref2, (size_t)L.stored * sizeof(PetscScalar)));
          TEST_CHECK(same, "device value refresh of RgCSR G=%" PetscInt_FMT " T=%" PetscInt_FMT " W=%" PetscInt_FMT " emulated on %s: bit for bit the host values", G, T, W, name);
          PetscCall(PetscFree(aa2));
          PetscCall(PetscFree3(col, val, ref2));
        }
        PetscCall(PetscFree4(x, y, z, ref));
        PetscCall(PetscFree(seen));
        PetscCall(MatRgCSRLayoutDestroy(&L));
      }
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestTypeAndOptions(void)
{
  Mat            A, B;
  PetscInt       v;
  PetscBool      flg;
  MatGPUMatInfo  info;
  PetscErrorCode ierr;
  Vec            x, y, z;
  PetscReal      nrm;

  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(1000, 1000, 6, "emptyrows", 4, &A));
  PetscCall(MatConvert(A, MATRGCSRCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQRGCSRCUDA, &flg));
  TEST_CHECK(flg, "MatConvert(aij, \"rgcsrcuda\") gives seqaijrgcsrcuda");
  PetscCall(MatRGCSRCUDAGetGroupSize(B, &v));
  TEST_CHECK(v == 128, "default group size 128 (%" PetscInt_FMT ")", v);
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_group_size", "64", PETSC_SUCCESS));
  PetscCall(MatRGCSRCUDAGetGroupSize(B, &v));
  TEST_CHECK(v == 64, "-mat_rgcsr_group_size 64 read back");
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_group_size", "48", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_group_size", "2048", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_group_size", "0", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_sort_window", "-5", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_sort_window", "1000", PETSC_SUCCESS));
  PetscCall(MatRGCSRCUDAGetSortWindow(B, &v));
  TEST_CHECK(v == 1000, "-mat_rgcsr_sort_window 1000 read back");
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_threads_per_row", "3", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_max_fill", "0.9", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_rgcsr_sort_min_saving", "1.5", PETSC_ERR_ARG_OUTOFRANGE));
  {
    /* the 3-D Laplacian: a global sort saves far less than 2 % of the slots, so it is skipped */
    Mat           L3;
    MatGPUMatInfo i0, i1;

    PetscCall(TestCreateLaplacian(3, 60, &L3));
    PetscCall(MatConvert(L3, MATRGCSRCUDA, MAT_INPLACE_MATRIX, &L3));
    PetscCall(MatGPUMatGetInfo(L3, &i0));
    PetscCall(MatRGCSRCUDASetSortWindow(L3, 1 << 30));
    PetscCall(MatGPUMatGetInfo(L3, &i1));
    TEST_CHECK(i0.stored == i1.stored && i1.index_count == i0.index_count, "3-D Laplacian: sorting skipped (saves < 2%%): %" PetscCount_FMT " slots, no permutation stored", i1.stored);
    PetscCall(TestSetOptionExpect(L3, "-mat_rgcsr_sort_min_saving", "0", PETSC_SUCCESS));
    PetscCall(MatGPUMatGetInfo(L3, &i1));
    TEST_CHECK(i1.stored <= i0.stored && i1.index_count == i0.index_count + i0.rows, "3-D Laplacian with -mat_rgcsr_sort_min_saving 0: sorted (%" PetscCount_FMT " slots), permutation stored", i1.stored);
    PetscCall(MatDestroy(&L3));
  }
  /* the layout measured without a device: sorting inside one global window stores no more than no sorting */
  PetscCall(MatGPUMatGetInfo(B, &info));
  {
    PetscCount sorted = info.stored;
    PetscCall(MatRGCSRCUDASetSortWindow(B, 0));
    PetscCall(MatGPUMatGetInfo(B, &info));
    TEST_CHECK(sorted <= info.stored && info.read_entries == info.nnz, "sorting cuts artificial zeros: %" PetscCount_FMT " slots sorted, %" PetscCount_FMT " unsorted, %" PetscCount_FMT " nonzeros", sorted, info.stored, info.nnz);
  }
  /* the padding guard */
  TEST_EXPECT_ERROR(&ierr, MatRgCSRCheckFill(100, 100, 50, 1000, 4.0));
  TEST_CHECK(ierr == PETSC_ERR_SUP, "RgCSR padding guard refuses fill 10 > 4");
  /* host products (no device: host vectors) equal AIJ's, sorted or not */
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatRGCSRCUDASetSortWindow(B, 100));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "rgcsrcuda MatMult with host vectors equals AIJ's");
  PetscCall(MatConvert(B, MATAIJ, MAT_INPLACE_MATRIX, &B));
  PetscCall(MatEqual(A, B, &flg));
  TEST_CHECK(flg, "round trip aij -> rgcsrcuda -> aij keeps every entry");
  PetscCall(MatConvert(B, MATELLRCUDA, MAT_INPLACE_MATRIX, &B));
  PetscCall(MatConvert(B, MATRGCSRCUDA, MAT_INPLACE_MATRIX, &B));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQRGCSRCUDA, &flg));
  TEST_CHECK(flg, "in-place conversion ellrcuda -> rgcsrcuda");
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(TestHandLayouts());
  PetscCall(TestEmulation());
  PetscCall(TestTypeAndOptions());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_rgcsr_layout: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
