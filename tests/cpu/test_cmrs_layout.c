static const char help[] = "CMRS on the host: the papers' 5x5 example in both orders, packing limits, kernel emulation, options.\n";

#include <petscgpumat/private/cmrsimpl.h>
#include "../reference/emulate.h"
#include "../common/testutil.h"

/* The matrix (2.1) of Koza et al. 2014:  [1 0 0 2 0; 0 3 0 0 4; 0 0 5 0 6; 0 0 7 8 9; 0 0 0 0 10] */
static const PetscInt    ex_ai[] = {0, 2, 4, 6, 9, 10};
static const PetscInt    ex_aj[] = {0, 3, 1, 4, 2, 4, 2, 3, 4, 4};
static const PetscScalar ex_aa[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

/* With 64-bit PetscInt the packed layout is refused (MatCMRSCanPack()): the type always uses the unpacked one */
static PetscBool CanPackTests(void)
{
  PetscBool can = PETSC_FALSE;

  return MatCMRSCanPack(5, &can) ? PETSC_FALSE : can;
}

static PetscErrorCode CheckExample(PetscBool sort, PetscBool pack, const PetscScalar *val, const PetscInt *colind, const PetscInt *ris)
{
  MatCMRSLayout    L;
  const PetscCount sp[] = {0, 4, 9, 10};
  PetscBool        ok   = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatCMRSLayoutCreate(5, 5, ex_ai, ex_aj, ex_aa, 2, sort, pack, &L));
  ok = (PetscBool)(L.strips == 3);
  for (PetscInt s = 0; s <= 3 && ok; s++) ok = (PetscBool)(L.sp[s] == sp[s]);
  TEST_CHECK(ok, "paper's example, height 2, %s, %s: StripPtr = [0 4 9 10]", sort ? "sorted" : "unsorted", pack ? "packed" : "unpacked");
  ok = PETSC_TRUE;
  for (PetscInt k = 0; k < 10; k++) ok = (PetscBool)(ok && L.val[k] == val[k] && MatCMRSColumn(&L, k) == colind[k] && MatCMRSRowInStrip(&L, k) == ris[k]);
  if (pack)
    for (PetscInt k = 0; k < 10; k++) ok = (PetscBool)(ok && L.col[k] == (((unsigned int)ris[k] << 28) | (unsigned int)colind[k]));
  else
    for (PetscInt k = 0; k < 10; k++) ok = (PetscBool)(ok && L.col[k] == (unsigned int)colind[k] && L.ris[k] == ris[k]);
  TEST_CHECK(ok, "paper's example, height 2, %s, %s: Val, ColInd, RowInStrip exactly as printed%s", sort ? "sorted" : "unsorted", pack ? "packed" : "unpacked", pack ? " (RowInStrip in bits 28..31)" : "");
  PetscCall(MatCMRSLayoutDestroy(&L));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestPaperExample(void)
{
  /* section 3 of the 2014 paper (unsorted) and section 4 (entries of each strip sorted by column) */
  const PetscScalar val0[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const PetscInt    col0[] = {0, 3, 1, 4, 2, 4, 2, 3, 4, 4};
  const PetscInt    ris0[] = {0, 0, 1, 1, 0, 0, 1, 1, 1, 0};
  const PetscScalar val1[] = {1, 3, 2, 4, 5, 7, 8, 6, 9, 10};
  const PetscInt    col1[] = {0, 1, 3, 4, 2, 2, 3, 4, 4, 4};
  const PetscInt    ris1[] = {0, 1, 0, 1, 0, 1, 1, 0, 1, 0};

  PetscFunctionBeginUser;
  if (!CanPackTests()) {
    MatCMRSLayout  L;
    PetscErrorCode ierr;

    TEST_EXPECT_ERROR(&ierr, MatCMRSLayoutCreate(5, 5, ex_ai, ex_aj, ex_aa, 2, PETSC_FALSE, PETSC_TRUE, &L));
    TEST_CHECK(ierr == PETSC_ERR_ARG_WRONG, "64-bit PetscInt: the packed layout is refused with a clear error (%d); packed cases skipped", (int)ierr);
    PetscCall(TestSkip("CMRS packed layouts (paper's example, emulation, padded)", "64-bit PetscInt: CMRS always uses the unpacked layout"));
  }
  for (PetscInt pack = 0; pack < (CanPackTests() ? 2 : 1); pack++) {
    PetscCall(CheckExample(PETSC_FALSE, (PetscBool)pack, val0, col0, ris0));
    PetscCall(CheckExample(PETSC_TRUE, (PetscBool)pack, val1, col1, ris1));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Column 2^28 - 1 packs; a matrix with 2^28 + 1 columns cannot, and the type switches to the unpacked layout */
static PetscErrorCode TestPackingLimits(void)
{
  const PetscInt  big = (PetscInt)1 << 28;
  const PetscInt  ai[] = {0, 2, 3}, aj1[] = {0, big - 1, 5};
  PetscScalar     aa[] = {1.5, 2.5, 3.5};
  MatCMRSLayout   L;
  PetscBool       can, ok;
  PetscErrorCode  ierr;

  PetscFunctionBeginUser;
  if (sizeof(PetscInt) != 4) {
    PetscCall(TestSkip("CMRS packing limits", "64-bit PetscInt: always unpacked"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatCMRSCanPack(big, &can));
  TEST_CHECK(can, "2^28 columns (largest column 2^28 - 1) can be packed");
  PetscCall(MatCMRSCanPack(big + 1, &ok));
  TEST_CHECK(!ok, "2^28 + 1 columns cannot be packed");
  PetscCall(MatCMRSLayoutCreate(2, big, ai, aj1, aa, 2, PETSC_FALSE, PETSC_TRUE, &L));
  TEST_CHECK(MatCMRSColumn(&L, 1) == big - 1 && MatCMRSRowInStrip(&L, 1) == 0 && MatCMRSColumn(&L, 2) == 5 && MatCMRSRowInStrip(&L, 2) == 1, "column 2^28 - 1 packs and unpacks exactly");
  PetscCall(MatCMRSLayoutDestroy(&L));
  {
    const PetscInt aj2[] = {0, big, 5};

    TEST_EXPECT_ERROR(&ierr, MatCMRSLayoutCreate(2, big + 1, ai, aj2, aa, 2, PETSC_FALSE, PETSC_TRUE, &L));
    TEST_CHECK(ierr == PETSC_ERR_ARG_WRONG, "packing 2^28 + 1 columns is refused, not truncated (%d)", (int)ierr);
    PetscCall(MatCMRSLayoutCreate(2, big + 1, ai, aj2, aa, 2, PETSC_FALSE, PETSC_FALSE, &L));
    TEST_CHECK(MatCMRSColumn(&L, 1) == big && L.ris && L.ris[2] == 1, "unpacked layout keeps column 2^28 and RowInStrip apart");
    PetscCall(MatCMRSLayoutDestroy(&L));
  }
  {
    /* through the type: MatView reports the unpacked layout; products on the host stay right */
    Mat          A;
    char         text[4096], *found;
    Vec          x, y;
    PetscScalar *ya;

    PetscCall(MatCreateSeqAIJCMRSCUDA(PETSC_COMM_SELF, 2, big + 1, 2, NULL, &A));
    PetscCall(MatSetValue(A, 0, 0, 1.5, INSERT_VALUES));
    PetscCall(MatSetValue(A, 0, big, 2.5, INSERT_VALUES));
    PetscCall(MatSetValue(A, 1, 5, 3.5, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    PetscCall(PetscStrstr(text, "unpacked", &found));
    TEST_CHECK(found != NULL, "MatView of a 2 x (2^28 + 1) cmrscuda matrix says the layout is unpacked");
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, big + 1, &x)); /* host vectors: this test runs without a GPU */
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, 2, &y));
    PetscCall(VecSet(x, 2.0));
    PetscCall(MatMult(A, x, y));
    PetscCall(VecGetArray(y, &ya));
    TEST_CHECK(ya[0] == 8.0 && ya[1] == 7.0, "host product of the wide matrix is right (%g, %g)", (double)ya[0], (double)ya[1]);
    PetscCall(VecRestoreArray(y, &ya));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestEmulation(void)
{
  char           name[128];
  PetscBool      more = PETSC_TRUE;
  const PetscInt hs[] = {1, 2, 3, 4, 8, 16}, scan_S[] = {1, 2, 4, 8, 16, 32};

  PetscFunctionBeginUser;
  for (PetscInt idx = 0; more; idx++) {
    Mat A;

    PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    for (size_t h = 0; h < PETSC_STATIC_ARRAY_LENGTH(hs); h++)
      for (PetscInt variant = 0; variant < 4; variant++) {
        const PetscBool sort = (PetscBool)(variant & 1), pack = (PetscBool)(variant >> 1);
        const PetscInt *ai, *aj;
        PetscScalar    *aa, *x, *y, *z;
        PetscInt        m, n;
        MatCMRSLayout   L;
        double         *ref, err;
        PetscBool       nanbad, entries = PETSC_TRUE;

        if (pack && !CanPackTests()) continue;

        PetscCall(MatGetSize(A, &m, &n));
        PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
        PetscCall(MatCMRSLayoutCreate(m, n, ai, aj, aa, hs[h], sort, pack, &L));
        PetscCall(PetscMalloc4(n, &x, m, &y, m, &z, m, &ref));
        for (PetscInt j = 0; j < n; j++) x[j] = PetscSinReal(3.0 + j);
        for (PetscInt i = 0; i < m; i++) y[i] = PetscCosReal(1.0 + i), z[i] = PETSC_MAX_REAL;
        PetscCall(MatCMRSLayoutMult(&L, x, y, z));
        PetscCall(TestReferenceProduct(A, PETSC_FALSE, x, y, ref));
        PetscCall(TestRelativeError(m, z, ref, &err, &nanbad));
        /* every entry of a strip belongs to it, columns are sorted when asked */
        for (PetscInt s = 0; s < L.strips; s++)
          for (PetscCount k = L.sp[s]; k < L.sp[s + 1]; k++) {
            const PetscInt r = s * hs[h] + MatCMRSRowInStrip(&L, k);
            entries          = (PetscBool)(entries && r < m && k >= ai[s * hs[h]] && MatCMRSRowInStrip(&L, k) < hs[h]);
            if (sort && k > L.sp[s]) entries = (PetscBool)(entries && MatCMRSColumn(&L, k - 1) <= MatCMRSColumn(&L, k));
          }
        TEST_CHECK(err <= TestTolerance() && !nanbad && entries, "emulated CMRS height %" PetscInt_FMT " %s %s on %s: rel. error %.2e", hs[h], sort ? "sorted" : "unsorted", pack ? "packed" : "unpacked", name, err);
        if (!sort) { /* the scan kernel's arithmetic: E entries per lane x S strips per warp */
          for (PetscInt E = 1; E <= 4; E *= 2) {
            double   worst = 0;
            PetscInt bad = 0;

            for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(scan_S); t++) {
              for (PetscInt i = 0; i < m; i++) z[i] = PETSC_MAX_REAL;
              PetscCall(MatCMRSLayoutMultScan(&L, scan_S[t], E, x, y, z));
              PetscCall(TestRelativeError(m, z, ref, &err, &nanbad));
              worst = PetscMax(worst, err);
              if (!(err <= TestTolerance()) || nanbad) bad = bad ? bad : scan_S[t];
            }
            TEST_CHECK(!bad, "emulated scan kernel, height %" PetscInt_FMT ", %" PetscInt_FMT " entries per lane, 1..32 strips per warp, %s on %s: worst rel. error %.2e%s", hs[h], E, pack ? "packed" : "unpacked", name, worst, bad ? " (first failing S printed below)" : "");
            if (bad) PetscCall(PetscPrintf(PETSC_COMM_SELF, "  first failing S: %" PetscInt_FMT "\n", bad));
          }
        }
        PetscCall(PetscFree4(x, y, z, ref));
        PetscCall(MatCMRSLayoutDestroy(&L));
      }
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scan kernel's emulation as it was before lane entries (E = 1 only, commit d711b14), kept to check that E = 1
   still adds in exactly the same order */
static PetscErrorCode LegacyMultScan(const MatCMRSLayout *L, PetscInt S, const PetscScalar x[], const PetscScalar y[], PetscScalar z[])
{
  const PetscInt H = L->height, rows = S * H;
  PetscScalar   *acc;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(rows, &acc));
  for (PetscInt s0 = 0; s0 < L->strips; s0 += S) {
    const PetscInt   s1 = PetscMin(s0 + S, L->strips);
    const PetscCount e0 = L->sp[s0], e1 = L->sp[s1];

    for (PetscInt q = 0; q < rows; q++) acc[q] = 0;
    for (PetscCount base = e0; base < e1; base += 32) {
      PetscScalar p[32], t[32];
      PetscInt    q[32], first[32], reach = 0;

      for (PetscInt lane = 0; lane < 32; lane++) {
        const PetscCount k = base + lane;
        PetscInt         g = 0;

        for (PetscInt u = s0 + 1; u < s1; u++) g += k >= L->sp[u];
        q[lane]     = k < e1 ? g * H + MatCMRSRowInStrip(L, k) : rows;
        p[lane]     = k < e1 ? L->val[k] * x[MatCMRSColumn(L, k)] : 0;
        first[lane] = lane && q[lane] == q[lane - 1] ? first[lane - 1] : lane;
        reach       = PetscMax(reach, lane - first[lane]);
      }
      for (PetscInt off = 1; off <= reach; off *= 2) {
        for (PetscInt lane = 0; lane < 32; lane++) t[lane] = lane >= off ? p[lane - off] : p[lane];
        for (PetscInt lane = 0; lane < 32; lane++)
          if (lane - off >= first[lane]) p[lane] += t[lane];
      }
      for (PetscInt lane = 0; lane < 32; lane++)
        if (base + lane < e1 && (lane == 31 || q[lane + 1] != q[lane])) acc[q[lane]] += p[lane];
    }
    for (PetscInt q = 0; q < rows; q++) {
      const PetscInt row = s0 * H + q;

      if (row < L->m) z[row] = y ? y[row] + acc[q] : acc[q];
    }
  }
  PetscCall(PetscFree(acc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The scan emulation for every E, S, height and layout on every generated matrix:
  - with small integers as values, x and y every partial sum is exact, so whatever the order of the additions the
    result must equal the exact product bit for bit: a product lost, added twice or added to the wrong row (carry,
    head, tail, middle rows, masked lanes, strip boundaries) shows as a wrong integer;
  - E = 1 adds exactly as the emulation did before lane entries (bitwise);
  - with real values E = 2 and E = 4 do add in another order than E = 1 (some result differs in its last bits) while
    agreeing with the float64 reference (TestEmulation).
*/
/*
  The scan emulation's inputs for A: integer values, x and y whose products and sums are exact in any order (below
  2^24), the exact result of y + A x with them, and real x, y; outputs z, z1. Free with ScanDataDestroy().
*/
typedef struct {
  PetscInt        m, n;
  const PetscInt *ai, *aj;
  PetscScalar    *aa;                   /* the matrix's own values */
  PetscScalar    *ival, *x, *y, *exact; /* integer values, x and y, and y + A x with them, exactly */
  PetscScalar    *xr, *yr, *z, *z1;     /* real x and y; outputs */
} ScanData;

static PetscErrorCode ScanDataCreate(Mat A, ScanData *d)
{
  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &d->m, &d->n));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &d->ai, &d->aj, &d->aa, NULL));
  PetscCall(PetscMalloc1((d->m ? d->ai[d->m] : 0) + 1, &d->ival));
  PetscCall(PetscMalloc4(d->n + 1, &d->x, d->m + 1, &d->y, d->n + 1, &d->xr, d->m + 1, &d->yr));
  PetscCall(PetscMalloc3(d->m + 1, &d->z, d->m + 1, &d->z1, d->m + 1, &d->exact));
  for (PetscInt k = 0; k < (d->m ? d->ai[d->m] : 0); k++) d->ival[k] = (PetscScalar)((k * 7 + 3) % 9 - 4);
  for (PetscInt j = 0; j < d->n; j++) d->x[j] = (PetscScalar)((j * 5) % 11 - 5), d->xr[j] = PetscSinReal(3.0 + j);
  for (PetscInt i = 0; i < d->m; i++) {
    d->y[i]     = (PetscScalar)(i % 13 - 6), d->yr[i] = PetscCosReal(1.0 + i);
    d->exact[i] = d->y[i];
    for (PetscInt k = d->ai[i]; k < d->ai[i + 1]; k++) d->exact[i] += d->ival[k] * d->x[d->aj[k]];
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ScanDataDestroy(ScanData *d)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(d->ival));
  PetscCall(PetscFree4(d->x, d->y, d->xr, d->yr));
  PetscCall(PetscFree3(d->z, d->z1, d->exact));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestScanExact(void)
{
  char           name[128];
  PetscBool      more = PETSC_TRUE;
  const PetscInt hs[] = {1, 2, 3, 4, 5, 8, 16}, Ss[] = {1, 2, 4, 8, 16, 32};
  PetscInt       order_diff[5] = {0}; /* rows whose result differs from E = 1's, for E = 2, 4 */
  PetscInt       configs = 0;

  PetscFunctionBeginUser;
  for (PetscInt idx = 0; more; idx++) {
    Mat       A;
    ScanData  d;
    char      first_bad[256] = "", first_legacy[256] = "";

    PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    PetscCall(ScanDataCreate(A, &d));
    for (size_t h = 0; h < PETSC_STATIC_ARRAY_LENGTH(hs); h++)
      for (PetscInt pack = 0; pack < (CanPackTests() ? 2 : 1); pack++) {
        MatCMRSLayout Li, Lr;

        PetscCall(MatCMRSLayoutCreate(d.m, d.n, d.ai, d.aj, d.ival, hs[h], PETSC_FALSE, (PetscBool)pack, &Li));
        PetscCall(MatCMRSLayoutCreate(d.m, d.n, d.ai, d.aj, d.aa, hs[h], PETSC_FALSE, (PetscBool)pack, &Lr));
        for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(Ss); t++) {
          PetscBool same;

          for (PetscInt E = 1; E <= 4; E *= 2) {
            PetscCall(MatCMRSLayoutMultScan(&Li, Ss[t], E, d.x, d.y, d.z));
            configs++;
            for (PetscInt i = 0; i < d.m && !first_bad[0]; i++)
              if (d.z[i] != d.exact[i])
                PetscCall(PetscSNPrintf(first_bad, sizeof(first_bad), "height %" PetscInt_FMT " S %" PetscInt_FMT " E %" PetscInt_FMT " %s: row %" PetscInt_FMT " gives %g, exactly %g", hs[h], Ss[t], E, pack ? "packed" : "unpacked", i, (double)d.z[i], (double)d.exact[i]));
          }
          /* real values: E = 1 against the old emulation, E = 2, 4 against E = 1 */
          PetscCall(MatCMRSLayoutMultScan(&Lr, Ss[t], 1, d.xr, d.yr, d.z1));
          PetscCall(LegacyMultScan(&Lr, Ss[t], d.xr, d.yr, d.z));
          PetscCall(PetscArraycmp(d.z, d.z1, d.m, &same));
          if (!same && !first_legacy[0]) PetscCall(PetscSNPrintf(first_legacy, sizeof(first_legacy), "height %" PetscInt_FMT " S %" PetscInt_FMT " %s", hs[h], Ss[t], pack ? "packed" : "unpacked"));
          for (PetscInt E = 2; E <= 4; E *= 2) {
            PetscCall(MatCMRSLayoutMultScan(&Lr, Ss[t], E, d.xr, d.yr, d.z));
            for (PetscInt i = 0; i < d.m; i++) order_diff[E] += d.z[i] != d.z1[i];
          }
        }
        PetscCall(MatCMRSLayoutDestroy(&Li));
        PetscCall(MatCMRSLayoutDestroy(&Lr));
      }
    TEST_CHECK(!first_bad[0], "scan emulation with integer data on %s: exact for E = 1, 2, 4 x S = 1..32 x heights 1, 2, 3, 4, 5, 8, 16%s%s", name, first_bad[0] ? "; first wrong: " : "", first_bad);
    TEST_CHECK(!first_legacy[0], "scan emulation, E = 1 on %s: bitwise the emulation before lane entries, every S and height%s%s", name, first_legacy[0] ? "; differs at " : "", first_legacy);
    PetscCall(ScanDataDestroy(&d));
    PetscCall(MatDestroy(&A));
  }
  TEST_CHECK(order_diff[2] > 0 && order_diff[4] > 0, "scan emulation: E = 2 and E = 4 add in another order than E = 1 (%" PetscInt_FMT " and %" PetscInt_FMT " results differ in their last bits over all %" PetscInt_FMT " configurations; all within the float64 reference's tolerance, see above)", order_diff[2], order_diff[4], configs);
  {
    MatCMRSLayout  L;
    PetscErrorCode ierr;
    PetscScalar    one = 1;

    PetscCall(MatCMRSLayoutCreate(5, 5, ex_ai, ex_aj, ex_aa, 2, PETSC_FALSE, PETSC_FALSE, &L));
    TEST_EXPECT_ERROR(&ierr, MatCMRSLayoutMultScan(&L, 2, 3, &one, NULL, &one));
    TEST_CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "scan emulation refuses 3 entries per lane (%d)", (int)ierr);
    PetscCall(MatCMRSLayoutDestroy(&L));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The generated set, then three matrices with very long rows */
static PetscErrorCode CreateSplitCase(PetscInt idx, char name[], size_t len, Mat *A, PetscBool *more)
{
  static PetscInt ngen = -1; /* the generated set's size, counted once: building it again for every case cost minutes under valgrind */

  PetscFunctionBeginUser;
  if (ngen < 0) {
    ngen = 0;
    for (PetscBool g = PETSC_TRUE; g; ngen++) {
      Mat B;

      PetscCall(TestCreateGenerated(ngen, name, len, &B, &g));
      PetscCall(MatDestroy(&B));
      if (!g) break;
    }
  }
  *more = PETSC_TRUE;
  if (idx < ngen) PetscCall(TestCreateGenerated(idx, name, len, A, more));
  else if (idx == ngen) {
    PetscCall(PetscStrncpy(name, "one row of 6000 among 6000 rows of mean 4", len));
    PetscCall(TestCreateRandom(6000, 6000, 4, "denserow", 31, A));
  } else if (idx == ngen + 1) {
    PetscCall(PetscStrncpy(name, "power-law rows 6000", len));
    PetscCall(TestCreateRandom(6000, 6000, 10, "powerlaw", 32, A));
  } else if (idx == ngen + 2) { /* more than CMRS_SPLIT_MAX_CHUNKS chunks of 512: longer chunks */
    PetscCall(PetscStrncpy(name, "one row of 280000 among 1000 rows of mean 4", len));
    PetscCall(TestCreateRandom(1000, 280000, 4, "denserow", 33, A));
  } else *more = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The split of long groups (MatCMRSSplitCreate(), the scan kernel's chunks): on every generated matrix and on a few with
  very long rows, for heights, strips per warp, lane entries and chunk sizes: the chunks of each split group follow
  each other from its first entry to its last at multiples of the group's chunk size (C, or the least multiple of
  512 that keeps the group to CMRS_SPLIT_MAX_CHUNKS chunks), the rows a chunk touches are those of its entries;
  the emulation with the split is exact on integer data; on real data, every row of an unsplit group and every row
  whose entries lie in one chunk is bitwise the unsplit emulation's (its partial sum is the same sequence of passes).
*/
static PetscErrorCode TestSplit(void)
{
  const PetscInt   hs[] = {1, 4, 16}, Ss[] = {1, 4, 32};
  const PetscCount Cs[] = {512, 1024};
  PetscInt         splitgroups = 0, spanning = 0, longchunks = 0;

  PetscFunctionBeginUser;
  for (PetscInt idx = 0;; idx++) {
    char            name[128], bad[256] = "";
    Mat             A;
    PetscBool       more;
    ScanData        d;

    PetscCall(CreateSplitCase(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    PetscCall(ScanDataCreate(A, &d));
    for (size_t h = 0; h < PETSC_STATIC_ARRAY_LENGTH(hs); h++) {
      MatCMRSLayout Li, Lr;

      PetscCall(MatCMRSLayoutCreate(d.m, d.n, d.ai, d.aj, d.ival, hs[h], PETSC_FALSE, PETSC_FALSE, &Li));
      PetscCall(MatCMRSLayoutCreate(d.m, d.n, d.ai, d.aj, d.aa, hs[h], PETSC_FALSE, PETSC_FALSE, &Lr));
      for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(Ss); t++)
        for (size_t cc = 0; cc < PETSC_STATIC_ARRAY_LENGTH(Cs); cc++) {
          MatCMRSSplit   sp;
          const PetscInt H = hs[h], S = Ss[t], rows = S * H;
          PetscCount     parts = 0;

          PetscCall(MatCMRSSplitCreate(d.m, H, d.ai, S, Cs[cc], &sp));
          splitgroups += sp.nlong;
          /* the plan */
          for (PetscInt l = 0; l < sp.nlong && !bad[0]; l++) {
            const PetscInt   w = sp.longgroup[l], r0 = w * rows, r1 = PetscMin(r0 + rows, d.m);
            const PetscCount e0 = d.ai[r0], e1 = d.ai[r1];
            const PetscCount Cg = sp.lc[l + 1] - sp.lc[l] > 1 ? sp.cend[sp.lc[l]] - sp.cstart[sp.lc[l]] : Cs[cc]; /* the group's chunk */

            if (Cg % CMRS_SPLIT_ALIGN || Cg < Cs[cc] || sp.lc[l + 1] - sp.lc[l] > CMRS_SPLIT_MAX_CHUNKS || (Cg > Cs[cc] && (Cg - CMRS_SPLIT_ALIGN) * CMRS_SPLIT_MAX_CHUNKS >= e1 - e0)) PetscCall(PetscSNPrintf(bad, sizeof(bad), "group %" PetscInt_FMT " of %" PetscCount_FMT " entries: %" PetscInt_FMT " chunks of %" PetscCount_FMT, w, e1 - e0, sp.lc[l + 1] - sp.lc[l], Cg));
            longchunks += Cg > Cs[cc];
            if (!sp.islong[w] || e1 - e0 <= 2 * Cs[cc] || sp.cstart[sp.lc[l]] != e0 || sp.cend[sp.lc[l + 1] - 1] != e1) PetscCall(PetscSNPrintf(bad, sizeof(bad), "group %" PetscInt_FMT ": its chunks do not span its entries", w));
            for (PetscInt c = sp.lc[l]; c < sp.lc[l + 1] && !bad[0]; c++) {
              PetscInt qa = -1, qb = -1;

              for (PetscInt r = r0; r < r1; r++)
                if (d.ai[r + 1] > d.ai[r] && d.ai[r] < sp.cend[c] && d.ai[r + 1] > sp.cstart[c]) {
                  if (qa < 0) qa = r - r0;
                  qb = r - r0;
                }
              if (sp.cgroup[c] != w || (sp.cstart[c] - e0) % Cg || (c > sp.lc[l] && sp.cstart[c] != sp.cend[c - 1]) || sp.cend[c] - sp.cstart[c] < Cg || sp.cend[c] - sp.cstart[c] >= 2 * Cg || sp.cqa[c] != qa || sp.cnq[c] != qb - qa + 1 || sp.coff[c] != parts)
                PetscCall(PetscSNPrintf(bad, sizeof(bad), "group %" PetscInt_FMT " chunk %" PetscInt_FMT ": entries %" PetscCount_FMT "..%" PetscCount_FMT ", rows %d+%d (the entries' rows: %" PetscInt_FMT "..%" PetscInt_FMT ")", w, c, sp.cstart[c], sp.cend[c], sp.cqa[c], sp.cnq[c], qa, qb));
              parts += sp.cnq[c];
            }
          }
          if (!bad[0] && parts != sp.nparts) PetscCall(PetscSNPrintf(bad, sizeof(bad), "%" PetscCount_FMT " partial sums, the chunks' rows add up to %" PetscCount_FMT, sp.nparts, parts));
          /* the emulation: exact on integers; on real data, the rows of one chunk as without the split */
          for (PetscInt E = 1; E <= 4 && !bad[0]; E *= 2) {
            PetscCall(MatCMRSLayoutMultScanSplit(&Li, S, E, &sp, d.x, d.y, d.z));
            for (PetscInt i = 0; i < d.m && !bad[0]; i++)
              if (d.z[i] != d.exact[i]) PetscCall(PetscSNPrintf(bad, sizeof(bad), "height %" PetscInt_FMT " S %" PetscInt_FMT " E %" PetscInt_FMT " C %" PetscCount_FMT ": row %" PetscInt_FMT " gives %g, exactly %g", H, S, E, Cs[cc], i, (double)d.z[i], (double)d.exact[i]));
            PetscCall(MatCMRSLayoutMultScanSplit(&Lr, S, E, &sp, d.xr, d.yr, d.z));
            PetscCall(MatCMRSLayoutMultScan(&Lr, S, E, d.xr, d.yr, d.z1));
            for (PetscInt i = 0; i < d.m && !bad[0]; i++) {
              const PetscInt w = i / rows;
              PetscBool      one = (PetscBool)!sp.islong[w];

              if (!one) { /* in a split group: whether the row's entries lie in one chunk */
                PetscInt l = 0;

                while (sp.longgroup[l] != w) l++;
                for (PetscInt c = sp.lc[l]; c < sp.lc[l + 1]; c++) one = (PetscBool)(one || (d.ai[i] >= sp.cstart[c] && d.ai[i + 1] <= sp.cend[c]));
                spanning += !one;
              }
              if (one && d.z[i] != d.z1[i]) PetscCall(PetscSNPrintf(bad, sizeof(bad), "height %" PetscInt_FMT " S %" PetscInt_FMT " E %" PetscInt_FMT " C %" PetscCount_FMT ": row %" PetscInt_FMT " (in one chunk) gives %.17g, without the split %.17g", H, S, E, Cs[cc], i, (double)d.z[i], (double)d.z1[i]));
            }
          }
          PetscCall(MatCMRSSplitDestroy(&sp));
        }
      PetscCall(MatCMRSLayoutDestroy(&Li));
      PetscCall(MatCMRSLayoutDestroy(&Lr));
    }
    TEST_CHECK(!bad[0], "CMRS split of long groups on %s: chunks, their rows, exact sums, rows of one chunk as without the split%s%s", name, bad[0] ? "; " : "", bad);
    PetscCall(ScanDataDestroy(&d));
    PetscCall(MatDestroy(&A));
  }
  TEST_CHECK(splitgroups > 0 && spanning > 0 && longchunks > 0, "CMRS split: groups were split (%" PetscInt_FMT "), rows spanned chunks (%" PetscInt_FMT "), groups got chunks longer than C (%" PetscInt_FMT ")", splitgroups, spanning, longchunks);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The heavy rows of the scan kernel (MatCMRSHeavy) on the cases of TestSplit(), for heights, strips per warp, thresholds
  and chunk sizes: every row longer than T is heavy once, listed by its group in row order with its row in the group and
  its entries; its chunks follow each other over its entries, at most C each (whole where C = 0); a row of one chunk is
  written by it, the others' partial sums are numbered in order, their chunks know their row's ticket, and the rows are
  listed for the combine; the emulation is exact on
  integer data
*/
static PetscErrorCode TestHeavy(void)
{
  const PetscInt   hs[] = {1, 4, 16}, Ss[] = {1, 4, 32}, Ts[] = {1, 8, 0};
  const PetscCount Cs[] = {0, 32, 512};
  PetscInt         heavyrows = 0, multi = 0;

  PetscFunctionBeginUser;
  for (PetscInt idx = 0;; idx++) {
    char            name[128], bad[256] = "";
    Mat             A;
    PetscBool       more;
    ScanData        d;

    PetscCall(CreateSplitCase(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    PetscCall(ScanDataCreate(A, &d));
    for (size_t h = 0; h < PETSC_STATIC_ARRAY_LENGTH(hs) && !bad[0]; h++) {
      MatCMRSLayout Li;

      PetscCall(MatCMRSLayoutCreate(d.m, d.n, d.ai, d.aj, d.ival, hs[h], PETSC_FALSE, PETSC_FALSE, &Li));
      for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(Ss) && !bad[0]; t++)
        for (size_t tt = 0; tt < PETSC_STATIC_ARRAY_LENGTH(Ts) && !bad[0]; tt++)
          for (size_t cc = 0; cc < PETSC_STATIC_ARRAY_LENGTH(Cs) && !bad[0]; cc++) {
            const PetscInt H = hs[h], S = Ss[t], rows = S * H, T = Ts[tt] ? Ts[tt] : CMRS_HEAVY_T;
            MatCMRSHeavy   hv;
            PetscInt       k = 0, c = 0, part = 0, mu = 0;

            PetscCall(MatCMRSHeavyCreate(d.m, H, d.ai, S, T, Cs[cc], &hv));
            for (PetscInt i = 0; i < d.m && !bad[0]; i++) {
              const PetscInt   w = i / rows;
              const PetscCount len = (PetscCount)d.ai[i + 1] - d.ai[i];
              PetscCount       e   = d.ai[i];
              PetscInt         n0  = c;

              if (len <= T) continue;
              if (k >= hv.nheavy || k < hv.gptr[w] || k >= hv.gptr[w + 1] || hv.hq[k] != i - w * rows || hv.hstart[k] != d.ai[i] || hv.hend[k] != d.ai[i + 1]) {
                PetscCall(PetscSNPrintf(bad, sizeof(bad), "T %" PetscInt_FMT ": row %" PetscInt_FMT " of %" PetscCount_FMT " entries is not heavy %" PetscInt_FMT " of group %" PetscInt_FMT, T, i, len, k, w));
                break;
              }
              k++;
              while (c < hv.nchunks && hv.crow[c] == i) {
                if (hv.cstart[c] != e || hv.cend[c] <= e || (Cs[cc] && hv.cend[c] - hv.cstart[c] > Cs[cc])) PetscCall(PetscSNPrintf(bad, sizeof(bad), "row %" PetscInt_FMT " chunk %" PetscInt_FMT ": entries %" PetscCount_FMT "..%" PetscCount_FMT " (C %" PetscCount_FMT ")", i, c, hv.cstart[c], hv.cend[c], Cs[cc]));
                e = hv.cend[c++];
              }
              if (!bad[0] && e != d.ai[i + 1]) PetscCall(PetscSNPrintf(bad, sizeof(bad), "row %" PetscInt_FMT ": its chunks end at %" PetscCount_FMT ", not %" PetscInt_FMT, i, e, d.ai[i + 1]));
              if (!bad[0] && c - n0 == 1 && (hv.cpart[n0] != -1 || hv.cmulti[n0] != -1)) PetscCall(PetscSNPrintf(bad, sizeof(bad), "row %" PetscInt_FMT " of one chunk has a partial sum", i));
              if (!bad[0] && c - n0 > 1) {
                for (PetscInt j = n0; j < c; j++)
                  if (hv.cpart[j] != part++ || hv.cmulti[j] != mu) PetscCall(PetscSNPrintf(bad, sizeof(bad), "row %" PetscInt_FMT ": chunk %" PetscInt_FMT "'s partial sum is %d, its row's ticket %d", i, j, hv.cpart[j], hv.cmulti[j]));
                if (mu >= hv.nmulti || hv.mrow[mu] != i || hv.mptr[mu + 1] != part) PetscCall(PetscSNPrintf(bad, sizeof(bad), "row %" PetscInt_FMT " of %" PetscInt_FMT " chunks is not combined %" PetscInt_FMT, i, c - n0, mu));
                mu++;
                multi++;
              }
            }
            if (!bad[0] && (k != hv.nheavy || c != hv.nchunks || mu != hv.nmulti || hv.gptr[hv.ngroups] != hv.nheavy)) PetscCall(PetscSNPrintf(bad, sizeof(bad), "T %" PetscInt_FMT " C %" PetscCount_FMT ": %" PetscInt_FMT " heavy rows, %" PetscInt_FMT " chunks, %" PetscInt_FMT " combined, counted %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT, T, Cs[cc], hv.nheavy, hv.nchunks, hv.nmulti, k, c, mu));
            heavyrows += hv.nheavy;
            for (PetscInt E = 1; E <= 4 && !bad[0]; E *= 2) {
              PetscCall(MatCMRSLayoutMultScanHeavy(&Li, S, E, &hv, d.x, d.y, d.z));
              for (PetscInt i = 0; i < d.m && !bad[0]; i++)
                if (d.z[i] != d.exact[i]) PetscCall(PetscSNPrintf(bad, sizeof(bad), "height %" PetscInt_FMT " S %" PetscInt_FMT " E %" PetscInt_FMT " T %" PetscInt_FMT " C %" PetscCount_FMT ": row %" PetscInt_FMT " gives %g, exactly %g", H, S, E, T, Cs[cc], i, (double)d.z[i], (double)d.exact[i]));
            }
            PetscCall(MatCMRSHeavyDestroy(&hv));
          }
      PetscCall(MatCMRSLayoutDestroy(&Li));
    }
    TEST_CHECK(!bad[0], "CMRS heavy rows on %s: the rows above T listed once by their groups, their chunks, partial sums and combine lists, exact sums%s%s", name, bad[0] ? "; " : "", bad);
    PetscCall(ScanDataDestroy(&d));
    PetscCall(MatDestroy(&A));
  }
  TEST_CHECK(heavyrows > 0 && multi > 0, "CMRS heavy rows: rows were heavy (%" PetscInt_FMT "), rows had several chunks (%" PetscInt_FMT ")", heavyrows, multi);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The padded variant: every pass of 32 items uses 32 distinct buffer cells (lane mod M, row), every nonzero
   appears once, strips hold whole passes, padding points at the padding column; the emulation stays exact */
static PetscErrorCode TestPadded(void)
{
  char           name[128];
  PetscBool      more = PETSC_TRUE;
  const PetscInt hs[] = {16, 16, 8, 4, 2}, Ms[] = {8, 2, 4, 8, 16};

  PetscFunctionBeginUser;
  for (PetscInt idx = 0; more; idx++) {
    Mat A;

    PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
    if (!more) break;
    for (size_t c = 0; c < PETSC_STATIC_ARRAY_LENGTH(hs); c++)
      for (PetscInt pack = 0; pack < (CanPackTests() ? 2 : 1); pack++) {
        const PetscInt *ai, *aj;
        PetscScalar    *aa, *x, *z;
        PetscInt        m, n, *seen;
        MatCMRSLayout   L;
        double         *ref, err;
        PetscBool       nanbad, ok = PETSC_TRUE;

        PetscCall(MatGetSize(A, &m, &n));
        PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
        PetscCall(MatCMRSLayoutCreatePadded(m, n, ai, aj, aa, hs[c], Ms[c], (PetscBool)pack, &L));
        PetscCall(PetscCalloc1((m ? ai[m] : 0) + 1, &seen));
        for (PetscInt s = 0; s < L.strips && ok; s++) {
          ok = (PetscBool)(ok && L.sp[s] % 32 == 0 && (L.sp[s + 1] - L.sp[s]) % 32 == 0);
          for (PetscCount p0 = L.sp[s]; p0 < L.sp[s + 1]; p0 += 32) {
            PetscInt used[CMRS_MAX_HEIGHT][32] = {{0}};

            for (PetscInt lane = 0; lane < 32; lane++) {
              const PetscCount k = p0 + lane;
              const PetscInt   r = MatCMRSRowInStrip(&L, k);

              ok = (PetscBool)(ok && r < hs[c] && !used[r][lane % Ms[c]]);
              if (r < hs[c]) used[r][lane % Ms[c]] = 1;
              if (L.src[k] >= 0) {
                ok = (PetscBool)(ok && s * hs[c] + r < m && ai[s * hs[c] + r] <= L.src[k] && L.src[k] < ai[s * hs[c] + r + 1] && MatCMRSColumn(&L, k) == aj[L.src[k]] && L.val[k] == aa[L.src[k]]);
                seen[L.src[k]]++;
              } else ok = (PetscBool)(ok && L.val[k] == 0 && L.col[k] == (pack ? ((unsigned int)r << CMRS_COL_BITS) | CMRS_PAD_PACKED : CMRS_PAD_UNPACKED));
            }
          }
        }
        for (PetscInt k = 0; k < (m ? ai[m] : 0); k++) ok = (PetscBool)(ok && seen[k] == 1);
        PetscCall(PetscMalloc3(n, &x, m, &z, m, &ref));
        for (PetscInt j = 0; j < n; j++) x[j] = PetscSinReal(5.0 + j);
        PetscCall(MatCMRSLayoutMult(&L, x, NULL, z));
        PetscCall(TestReferenceProduct(A, PETSC_FALSE, x, NULL, ref));
        PetscCall(TestRelativeError(m, z, ref, &err, &nanbad));
        TEST_CHECK(ok && err <= TestTolerance() && !nanbad, "padded CMRS height %" PetscInt_FMT " M %" PetscInt_FMT " %s on %s: distinct buffer cells per pass, every nonzero once, padding %.0f%%, rel. error %.1e", hs[c], Ms[c], pack ? "packed" : "unpacked", name, (m && ai[m]) ? 100.0 * (double)(L.nnz - ai[m]) / (double)ai[m] : 0.0, err);
        PetscCall(PetscFree3(x, z, ref));
        PetscCall(PetscFree(seen));
        PetscCall(MatCMRSLayoutDestroy(&L));
      }
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestTypeAndOptions(void)
{
  Mat           A, B;
  PetscInt      h;
  PetscBool     flg;
  MatGPUMatInfo info;
  Vec           x, y, z;
  PetscReal     nrm;

  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(1000, 900, 6, "emptyrows", 6, &A));
  PetscCall(MatConvert(A, MATCMRSCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQCMRSCUDA, &flg));
  TEST_CHECK(flg, "MatConvert(aij, \"cmrscuda\") gives seqaijcmrscuda");
  PetscCall(MatCMRSCUDAGetHeight(B, &h));
  TEST_CHECK(h == 16, "the scan variant (default) has automatic height 16 (%" PetscInt_FMT ")", h);
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_warp_strips", "3", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_warp_strips", "64", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_unroll", "3", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_warp_strips", "4", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_unroll", "2", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_unroll", "-1", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_heavy_length", "-1", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_heavy_length", "64", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_heavy_rows", "on", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_unroll", "0", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_lane_entries", "0", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_lane_entries", "3", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_lane_entries", "8", PETSC_ERR_ARG_OUTOFRANGE));
  {
    char text[4096], *found;
    Mat  D;

    PetscCall(TestViewInfoText(B, text, sizeof(text)));
    PetscCall(PetscStrstr(text, "4 entries per lane per pass", &found));
    TEST_CHECK(found != NULL, "MatView shows the default of 4 entries per lane per pass");
    PetscCall(TestSetOptionExpect(B, "-mat_cmrs_lane_entries", "1", PETSC_SUCCESS));
    PetscCall(TestViewInfoText(B, text, sizeof(text)));
    PetscCall(PetscStrstr(text, "1 entries per lane per pass", &found));
    TEST_CHECK(found != NULL, "-mat_cmrs_lane_entries 1 shows in MatView");
    PetscCall(MatCMRSCUDASetLaneEntries(B, 2));
    {
      PetscInt  E, bs;
      PetscBool sort, compressed;

      PetscCall(MatCMRSCUDAGetLaneEntries(B, &E));
      TEST_CHECK(E == 2, "MatCMRSCUDAGetLaneEntries() returns the 2 set (%" PetscInt_FMT ")", E);
      PetscCall(MatCMRSCUDAGetBlockSize(B, &bs));
      TEST_CHECK(bs == 128, "MatCMRSCUDAGetBlockSize() returns the default 128 (%" PetscInt_FMT ")", bs);
      PetscCall(MatCMRSCUDASetBlockSize(B, 256));
      PetscCall(MatCMRSCUDAGetBlockSize(B, &bs));
      TEST_CHECK(bs == 256, "MatCMRSCUDAGetBlockSize() returns the 256 set (%" PetscInt_FMT ")", bs);
      PetscCall(MatCMRSCUDASetBlockSize(B, 128));
      PetscCall(MatCMRSCUDAGetSort(B, &sort));
      TEST_CHECK(!sort, "MatCMRSCUDAGetSort() returns the default false");
      PetscCall(MatCMRSCUDASetSort(B, PETSC_TRUE));
      PetscCall(MatCMRSCUDAGetSort(B, &sort));
      TEST_CHECK(sort, "MatCMRSCUDAGetSort() returns the true set");
      PetscCall(MatCMRSCUDASetSort(B, PETSC_FALSE));
      PetscCall(MatGPUMatGetCompressedRows(B, &compressed));
      TEST_CHECK(!compressed, "MatGPUMatGetCompressedRows() returns the default false");
      PetscCall(MatGPUMatSetCompressedRows(B, PETSC_TRUE));
      PetscCall(MatGPUMatGetCompressedRows(B, &compressed));
      TEST_CHECK(compressed, "MatGPUMatGetCompressedRows() returns the true set");
      PetscCall(MatGPUMatSetCompressedRows(B, PETSC_FALSE));
    }
    PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &D));
    PetscCall(TestViewInfoText(D, text, sizeof(text)));
    PetscCall(PetscStrstr(text, "2 entries per lane per pass", &found));
    TEST_CHECK(found != NULL, "MatCMRSCUDASetLaneEntries(2) is kept by MatDuplicate");
    PetscCall(MatDestroy(&D));
    {
      PetscErrorCode ierr;

      TEST_EXPECT_ERROR(&ierr, MatCMRSCUDASetLaneEntries(B, 16));
      TEST_CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "MatCMRSCUDASetLaneEntries(16) gives PETSC_ERR_ARG_OUTOFRANGE (%d)", (int)ierr);
    }
  }
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_variant", "basic", PETSC_SUCCESS));
  PetscCall(MatCMRSCUDAGetHeight(B, &h));
  TEST_CHECK(h == 8, "basic variant: automatic height for about 3.5 nonzeros per row is 8 (%" PetscInt_FMT ")", h);
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_height", "8", PETSC_SUCCESS));
  PetscCall(MatCMRSCUDAGetHeight(B, &h));
  TEST_CHECK(h == 8, "-mat_cmrs_height 8 read back");
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_height", "-1", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_height", "17", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_block_size", "100", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_block_size", "2048", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_block_size", "256", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_sort", "1", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_buffer_columns", "3", PETSC_ERR_ARG_OUTOFRANGE));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_height", "2", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_variant", "padded", PETSC_ERR_ARG_OUTOFRANGE)); /* 2 x 8 < 32 cells */
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_height", "0", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_variant", "padded", PETSC_SUCCESS));
  PetscCall(MatCMRSCUDAGetHeight(B, &h));
  TEST_CHECK(h == 16, "the padded variant's automatic height is 16 (%" PetscInt_FMT ")", h);
  PetscCall(MatGPUMatGetInfo(B, &info));
  TEST_CHECK(info.stored >= info.nnz && info.stored % 32 == 0 && info.read_entries == info.stored, "padded variant: %" PetscCount_FMT " stored entries for %" PetscCount_FMT " nonzeros, whole passes, all read", info.stored, info.nnz);
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_variant", "basic", PETSC_SUCCESS));
  PetscCall(TestSetOptionExpect(B, "-mat_cmrs_variant", "fancy", PETSC_ERR_USER));
  /* no padding: the device stores less than 32-bit CSR (unpacked, as with 64-bit PetscInt: plus one RowInStrip byte per entry) */
  PetscCall(MatGPUMatGetInfo(B, &info));
  TEST_CHECK(info.stored == info.nnz && info.device_bytes <= info.csr_bytes + (CanPackTests() ? 0 : (size_t)info.nnz), "CMRS stores nnz entries in %zu bytes, CSR needs %zu%s", info.device_bytes, info.csr_bytes, CanPackTests() ? "" : " (+ 1 byte per entry, unpacked)");
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecSetRandom(x, NULL));
  PetscCall(MatMult(A, x, y));
  PetscCall(MatMult(B, x, z));
  PetscCall(VecAXPY(z, -1.0, y));
  PetscCall(VecNorm(z, NORM_INFINITY, &nrm));
  TEST_CHECK(nrm == 0, "cmrscuda MatMult with host vectors equals AIJ's");
  PetscCall(MatConvert(B, MATAIJ, MAT_INPLACE_MATRIX, &B));
  PetscCall(MatEqual(A, B, &flg));
  TEST_CHECK(flg, "round trip aij -> cmrscuda -> aij keeps every entry");
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scan kernel's automatic strips per warp (about 512 entries per warp with strips of 16 rows) and passes loaded
   ahead (2 where a warp takes at most 2 strips), as MatView says */
static PetscErrorCode TestAutomaticWarpStrips(void)
{
  const PetscInt means[] = {5, 13, 24}, strips[] = {4, 2, 1}, passes[] = {1, 2, 2};

  PetscFunctionBeginUser;
  for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(means); t++) {
    Mat       A;
    char      text[4096], want[64], *found;

    PetscCall(TestCreateRandom(3000, 3000, means[t], "uniform", 40 + (PetscInt)t, &A));
    PetscCall(MatConvert(A, MATSEQCMRSCUDA, MAT_INPLACE_MATRIX, &A));
    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    PetscCall(PetscSNPrintf(want, sizeof(want), "height 16 (automatic), %" PetscInt_FMT " strips per warp, %" PetscInt_FMT " passes loaded ahead, 4 entries per lane", strips[t], passes[t]));
    PetscCall(PetscStrstr(text, want, &found));
    TEST_CHECK(found != NULL, "mean row length about %" PetscInt_FMT ": the scan kernel's defaults: %" PetscInt_FMT " strips of 16 rows per warp, %" PetscInt_FMT " passes loaded ahead, 4 entries per lane (MatView: %s)", means[t], strips[t], passes[t], found ? "yes" : text);
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(TestPaperExample());
  PetscCall(TestPackingLimits());
  PetscCall(TestEmulation());
  PetscCall(TestScanExact());
  PetscCall(TestSplit());
  PetscCall(TestHeavy());
  PetscCall(TestPadded());
  PetscCall(TestTypeAndOptions());
  PetscCall(TestAutomaticWarpStrips());
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_cmrs_layout: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
