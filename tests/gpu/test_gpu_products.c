static const char help[] = "GPU products of the petscgpumat types against a float64 host reference.\n"
                           "  -types ellrcuda        types to test (comma list)\n"
                           "  -matrices_dir <dir>    directory of the real matrices (Matrix Market, .mtx.gz)\n"
                           "  -matrices a,b,...      real matrices to use (names without .mtx.gz)\n"
                           "  -quick                 skip the cases that allocate gigabytes (for compute-sanitizer)\n";

/*
  For every type, variant, and matrix (generated edge cases and real ones): MatMult, MatMultAdd (y != z and
  y == z), MatMultTranspose and MatMultTransposeAdd on CUDA vectors with random inputs drawn fresh and
  outputs poisoned with NaN, against a float64 reference; forward products bitwise identical over 10 runs;
  the device copy refreshed after value and pattern changes; the padding guard and device-memory errors
  leave no device memory behind and the matrix usable on the host.
*/
#include <petscgpumat.h>
#include <petscgpumat/private/cmrsimpl.h>
#include <petscgpumat/private/ellrimpl.h>
#include <petscgpumat/private/rgcsrimpl.h>
#include <petscdevice_cuda.h>
#include <math.h>
#include "../reference/emulate.h"
#include "../common/testutil.h"

typedef struct {
  const char *label;
  PetscErrorCode (*apply)(Mat, PetscInt);
  PetscInt count;
} Variants;

static PetscErrorCode ApplyELLR(Mat A, PetscInt v)
{
  const PetscInt T[] = {0, 1, 2, 4, 8, 16, 32};

  PetscFunctionBeginUser;
  PetscCall(MatELLRCUDASetThreadsPerRow(A, T[v]));
  PetscCall(MatELLRCUDASetMaxFill(A, 0)); /* correctness on every shape: no padding guard here */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* (group size, threads per row, sort window): defaults, the paper's kernel, reordering, and odd shapes */
static PetscErrorCode ApplyRgCSR(Mat A, PetscInt v)
{
  const PetscInt G[] = {128, 32, 128, 256, 1024, 64, 96, 128};
  const PetscInt T[] = {0, 1, 1, 4, 0, 32, 2, 8};
  const PetscInt W[] = {0, 0, 1 << 30, 64, 1 << 30, 0, 200, 1000};

  PetscFunctionBeginUser;
  PetscCall(MatRGCSRCUDASetGroupSize(A, G[v]));
  PetscCall(MatRGCSRCUDASetThreadsPerRow(A, T[v]));
  PetscCall(MatRGCSRCUDASetSortWindow(A, W[v]));
  PetscCall(MatRGCSRCUDASetMaxFill(A, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  (height, sort, block size) for the basic variant, then (height, M) for the padded one, then the scan variant:
  (height, strips per warp, passes loaded ahead, entries per lane, block size, built on the host or the GPU), with
  sorting at 25 (the scan variant then runs Algorithm 1), then scan variants with 2 and 4 entries per lane
*/
static PetscErrorCode ApplyCMRS(Mat A, PetscInt v)
{
  const PetscInt    h[] = {4, 1, 2, 3, 4, 5, 8, 16, 16, 7, 16, 16, 4, 8, 0, 1, 2, 4, 8, 16, 16, 5, 16, 3, 16, 4, 16, 16, 1, 5, 3, 16};
  const PetscBool   s[] = {PETSC_FALSE, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE, PETSC_TRUE, PETSC_TRUE, PETSC_FALSE, PETSC_TRUE, PETSC_FALSE, PETSC_TRUE};
  const PetscInt    b[] = {128, 32, 64, 128, 256, 96, 512, 1024, 128, 160, 128, 256, 64, 128, 128, 32, 64, 96, 256, 1024, 128, 160, 128, 64, 128, 128, 128, 128, 32, 160, 64, 256};
  const char       *M[] = {"8", "2", "8", "4"};
  const char *const S[] = {"0", "0", "0", "1", "4", "1", "2", "0", "32", "8", "0", "0", "0", "0", "1", "8", "32", "4"}; /* scan: strips per warp */
  const char *const U[] = {"4", "4", "2", "1", "4", "2", "4", "4", "4", "1", "4", "4", "2", "1", "1", "4", "2", "4"}; /* scan: passes ahead */
  const char *const E[] = {"1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "1", "2", "4", "2", "4", "2", "2"}; /* scan: entries per lane */
  const char *const D[] = {"1", "1", "1", "0", "1", "1", "1", "0", "1", "1", "0", "1", "1", "1", "0", "1", "1", "0"}; /* scan: built on the GPU */

  PetscFunctionBeginUser;
  PetscCall(MatCMRSCUDASetHeight(A, h[v]));
  PetscCall(MatCMRSCUDASetBlockSize(A, b[v]));
  PetscCall(MatCMRSCUDASetSort(A, v < 10 ? s[v] : (PetscBool)(v == 25)));
  if (v < 10) PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_variant", "basic"));
  else if (v < 14) {
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_variant", "padded"));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_buffer_columns", M[v - 10]));
  } else {
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_variant", "scan"));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_warp_strips", S[v - 14]));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_unroll", U[v - 14]));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_lane_entries", E[v - 14]));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_device_convert", D[v - 14]));
  }
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_variant"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_buffer_columns"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_warp_strips"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_unroll"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_lane_entries"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_device_convert"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cuSPARSE's two CSR SpMV algorithms */
static PetscErrorCode ApplyCSR(Mat A, PetscInt v)
{
  PetscFunctionBeginUser;
  PetscCall(MatCSRCUDASetSpMVAlgorithm(A, v ? 2 : 1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The choosing type: its rule, then the timed choice */
static PetscErrorCode ApplyAuto(Mat A, PetscInt v)
{
  PetscFunctionBeginUser;
  PetscCall(MatAutoCUDASetTimed(A, v ? PETSC_TRUE : PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode GetVariants(const char *type, Variants *var)
{
  PetscBool ellr, rgcsr, cmrs, csr, autoc;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(type, MATELLRCUDA, &ellr));
  PetscCall(PetscStrcmp(type, MATRGCSRCUDA, &rgcsr));
  PetscCall(PetscStrcmp(type, MATCMRSCUDA, &cmrs));
  PetscCall(PetscStrcmp(type, MATCSRCUDA, &csr));
  PetscCall(PetscStrcmp(type, MATAUTOCUDA, &autoc));
  if (ellr) {
    var->label = "threads per row T (index into 0,1,2,4,8,16,32)";
    var->apply = ApplyELLR;
    var->count = 7;
  } else if (rgcsr) {
    var->label = "(group size, T, sort window) combinations";
    var->apply = ApplyRgCSR;
    var->count = 8;
  } else if (cmrs) {
    var->label = "(height, sort, block size) combinations, then the padded and the scan variants";
    var->apply = ApplyCMRS;
    var->count = 32;
  } else if (csr) {
    var->label = "SpMV algorithm (CUSPARSE_SPMV_CSR_ALG1, ALG2)";
    var->apply = ApplyCSR;
    var->count = 2;
  } else if (autoc) {
    var->label = "choice (the rule, timed)";
    var->apply = ApplyAuto;
    var->count = 2;
  } else SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP, "No variants known for %s", type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Poison(Vec v)
{
  PetscFunctionBeginUser;
  PetscCall(VecSet(v, (PetscScalar)NAN));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Compare the device result z with the float64 reference of op(A) x (+ y) */
static PetscErrorCode CheckProduct(Mat Ahost, PetscBool trans, Vec x, Vec y, Vec z, double *err, PetscBool *ok)
{
  const PetscScalar *xa, *ya = NULL, *za;
  double            *ref, *mag;
  PetscInt           nz;
  PetscBool          nanbad;

  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(z, &nz));
  PetscCall(PetscMalloc2(nz, &ref, nz, &mag));
  PetscCall(VecGetArrayRead(x, &xa));
  if (y) PetscCall(VecGetArrayRead(y, &ya));
  PetscCall(TestReferenceProduct(Ahost, trans, xa, ya, ref));
  PetscCall(TestReferenceMagnitude(Ahost, trans, xa, ya, mag));
  PetscCall(VecRestoreArrayRead(x, &xa));
  if (y) PetscCall(VecRestoreArrayRead(y, &ya));
  PetscCall(VecGetArrayRead(z, &za));
  /* error relative to sum |a_ij x_j| (+ |y_i|): the atomics of the transpose products add in any order */
  PetscCall(TestScaledError(nz, za, ref, mag, err, &nanbad));
  PetscCall(VecRestoreArrayRead(z, &za));
  PetscCall(PetscFree2(ref, mag));
  *ok = (PetscBool)(*err <= TestTolerance() && !nanbad);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CheckAllProducts(Mat Ahost, Mat B, PetscRandom rnd, const char *what, PetscBool full)
{
  Vec       x, y, z, xt, yt, zt;
  double    err, worst = 0;
  PetscBool ok, allok = PETSC_TRUE;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecDuplicate(y, &z));
  PetscCall(VecDuplicate(y, &xt));
  PetscCall(VecDuplicate(x, &yt));
  PetscCall(VecDuplicate(x, &zt));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetRandom(y, rnd));
  /* MatMult */
  PetscCall(Poison(z));
  PetscCall(MatMult(B, x, z));
  PetscCall(CheckProduct(Ahost, PETSC_FALSE, x, NULL, z, &err, &ok));
  TEST_CHECK(ok, "%s: MatMult rel. error %.2e", what, err);
  if (full) {
    /* MatMultAdd, y != z */
    PetscCall(Poison(z));
    PetscCall(MatMultAdd(B, x, y, z));
    PetscCall(CheckProduct(Ahost, PETSC_FALSE, x, y, z, &err, &ok));
    allok = (PetscBool)(allok && ok), worst = PetscMax(worst, err);
    /* MatMultAdd, y == z */
    PetscCall(VecCopy(y, z));
    PetscCall(MatMultAdd(B, x, z, z));
    PetscCall(CheckProduct(Ahost, PETSC_FALSE, x, y, z, &err, &ok));
    allok = (PetscBool)(allok && ok), worst = PetscMax(worst, err);
    /* MatMultTranspose and MatMultTransposeAdd */
    PetscCall(VecSetRandom(xt, rnd));
    PetscCall(VecSetRandom(yt, rnd));
    PetscCall(Poison(zt));
    PetscCall(MatMultTranspose(B, xt, zt));
    PetscCall(CheckProduct(Ahost, PETSC_TRUE, xt, NULL, zt, &err, &ok));
    allok = (PetscBool)(allok && ok), worst = PetscMax(worst, err);
    PetscCall(Poison(zt));
    PetscCall(MatMultTransposeAdd(B, xt, yt, zt));
    PetscCall(CheckProduct(Ahost, PETSC_TRUE, xt, yt, zt, &err, &ok));
    allok = (PetscBool)(allok && ok), worst = PetscMax(worst, err);
    PetscCall(VecCopy(yt, zt));
    PetscCall(MatMultTransposeAdd(B, xt, zt, zt));
    PetscCall(CheckProduct(Ahost, PETSC_TRUE, xt, yt, zt, &err, &ok));
    allok = (PetscBool)(allok && ok), worst = PetscMax(worst, err);
    TEST_CHECK(allok, "%s: MatMultAdd (y!=z, y==z), MatMultTranspose, MatMultTransposeAdd (y!=z, y==z): worst rel. error %.2e", what, worst);
    {
      /* bitwise reproducible forward products (not asked of cuSPARSE's CUSPARSE_SPMV_CSR_ALG1, which it does not promise so) */
      Vec                z0;
      const PetscScalar *a0, *a1;
      PetscInt           n, alg = 2;
      PetscBool          same = PETSC_TRUE, csr;

      PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQCSRCUDA, &csr));
      if (!csr) { /* the choosing type multiplies with the CSR candidate where it chose it */
        PetscBool autoc;
        MatType   chosen;

        PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAUTOCUDA, &autoc));
        if (autoc) PetscCall(MatAutoCUDAGetChoice(B, &chosen));
        if (autoc) PetscCall(PetscStrcmp(chosen, MATSEQCSRCUDA, &csr));
      }
      if (csr) PetscCall(MatCSRCUDAGetSpMVAlgorithm(B, &alg));
      PetscCall(VecDuplicate(z, &z0));
      PetscCall(MatMult(B, x, z0));
      for (PetscInt r = 0; r < 10 && same && alg == 2; r++) {
        PetscCall(Poison(z));
        PetscCall(MatMult(B, x, z));
        PetscCall(VecGetLocalSize(z, &n));
        PetscCall(VecGetArrayRead(z0, &a0));
        PetscCall(VecGetArrayRead(z, &a1));
        PetscCall(PetscMemcmp(a0, a1, (size_t)n * sizeof(PetscScalar), &same));
        PetscCall(VecRestoreArrayRead(z0, &a0));
        PetscCall(VecRestoreArrayRead(z, &a1));
      }
      if (alg == 2) TEST_CHECK(same, "%s: 10 forward products bitwise identical", what);
      PetscCall(VecDestroy(&z0));
    }
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(VecDestroy(&z));
  PetscCall(VecDestroy(&xt));
  PetscCall(VecDestroy(&yt));
  PetscCall(VecDestroy(&zt));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The host CSR of B, the oracle of the device layout checks; *skip where the device holds the nonempty rows only */
static PetscErrorCode HostCSR(Mat B, PetscBool *skip, PetscInt *m, PetscInt *n, const PetscInt **ai, const PetscInt **aj, PetscScalar **aa)
{
  PetscFunctionBeginUser;
  PetscCall(MatGPUMatGetCompressedRows(B, skip));
  PetscCall(MatGetLocalSize(B, m, n));
  PetscCall(MatSeqAIJGetCSRAndMemType(B, ai, aj, aa, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ELLPACK-R: the layout built on the GPU equals, bit for bit, the host layout (ellr_layout.c) of the same CSR */
static PetscErrorCode CheckELLRDeviceLayout(Mat B, const char *what, const char *when)
{
  MatELLRLayout   D, H;
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscInt        m, n;
  PetscBool       skip, same;

  PetscFunctionBeginUser;
  PetscCall(HostCSR(B, &skip, &m, &n, &ai, &aj, &aa));
  if (skip) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatELLRCUDAGetDeviceLayout(B, &D));
  PetscCall(MatELLRLayoutCreate(m, n, ai, aj, aa, D.T, &H));
  same = (PetscBool)(D.m == H.m && D.width == H.width && D.stored == H.stored && D.maxlen == H.maxlen);
  same = (PetscBool)(same && !memcmp(D.rl, H.rl, (size_t)m * sizeof(int)) && !memcmp(D.col, H.col, (size_t)H.stored * sizeof(int)) && !memcmp(D.val, H.val, (size_t)H.stored * sizeof(PetscScalar)));
  TEST_CHECK(same, "%s: the ELLPACK-R layout built on the GPU %s equals the host layout bit for bit (T = %" PetscInt_FMT ", width %" PetscInt_FMT ")", what, when, H.T, H.width);
  PetscCall(MatELLRLayoutDestroy(&D));
  PetscCall(MatELLRLayoutDestroy(&H));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* RgCSR: the layout built on the GPU (groups, row lengths, permutation, slots) equals, bit for bit, the host layout
   (rgcsr_layout.c) of the same CSR with the parameters the build chose */
static PetscErrorCode CheckRgCSRDeviceLayout(Mat B, const char *what, const char *when)
{
  MatRgCSRLayout  D, H;
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscInt        m, n;
  PetscBool       skip, same;

  PetscFunctionBeginUser;
  PetscCall(HostCSR(B, &skip, &m, &n, &ai, &aj, &aa));
  if (skip) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatRGCSRCUDAGetDeviceLayout(B, &D));
  PetscCall(MatRgCSRLayoutCreate(m, n, ai, aj, aa, D.G, D.T, D.W, &H));
  same = (PetscBool)(D.m == H.m && D.ngroups == H.ngroups && D.stored == H.stored && D.maxlen == H.maxlen && !D.perm == !H.perm);
  same = (PetscBool)(same && !memcmp(D.gp, H.gp, (size_t)(H.ngroups + 1) * sizeof(PetscCount)) && !memcmp(D.rl, H.rl, (size_t)m * sizeof(int)));
  same = (PetscBool)(same && (!H.perm || !memcmp(D.perm, H.perm, (size_t)m * sizeof(int))));
  same = (PetscBool)(same && !memcmp(D.col, H.col, (size_t)H.stored * sizeof(int)) && !memcmp(D.val, H.val, (size_t)H.stored * sizeof(PetscScalar)));
  TEST_CHECK(same, "%s: the RgCSR layout built on the GPU %s equals the host layout bit for bit (G = %" PetscInt_FMT ", T = %" PetscInt_FMT ", W = %" PetscInt_FMT ", %" PetscCount_FMT " slots)", what, when, H.G, H.T, H.W, H.stored);
  PetscCall(MatRgCSRLayoutDestroy(&D));
  PetscCall(MatRgCSRLayoutDestroy(&H));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The row statistics reduced on the GPU (MatGPUMatRowStatsOnDevice(), used at the builds of large matrices) equal the
   host's pass over the same row offsets, outputs poisoned first; the heavy rows are those longer than
   MATGPUMAT_HEAVY_ROW_MEANS x the mean, as the base asks at a build */
static PetscErrorCode CheckRowStatsOnDevice(Mat A, const char *name)
{
  const PetscInt *ai;
  PetscInt        m, nzrows = -1, maxlen = -1, hnz = 0, hmax = 0, light;
  PetscReal       sumsq = -1.0, hsq = 0.0;
  PetscCount      heavy = -1, hheavy = 0;
  PetscInt       *d_ai;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
  light = m ? (PetscInt)((PetscCount)MATGPUMAT_HEAVY_ROW_MEANS * ai[m] / m) : 0;
  for (PetscInt i = 0; i < m; i++) {
    hnz += ai[i + 1] > ai[i];
    hmax = PetscMax(hmax, ai[i + 1] - ai[i]);
    hsq += (PetscReal)(ai[i + 1] - ai[i]) * (PetscReal)(ai[i + 1] - ai[i]);
    if ((PetscReal)(ai[i + 1] - ai[i]) * m > MATGPUMAT_HEAVY_ROW_MEANS * (PetscReal)ai[m]) hheavy += ai[i + 1] - ai[i];
  }
  PetscCallCUDA(cudaMalloc((void **)&d_ai, (size_t)(m + 1) * sizeof(PetscInt)));
  PetscCallCUDA(cudaMemcpy(d_ai, ai, (size_t)(m + 1) * sizeof(PetscInt), cudaMemcpyHostToDevice));
  PetscCall(MatGPUMatRowStatsOnDevice(m, d_ai, light, NULL, &nzrows, &maxlen, &sumsq, &heavy)); /* the legacy stream, as the copy above */
  PetscCallCUDA(cudaFree(d_ai));
  TEST_CHECK(nzrows == hnz && maxlen == hmax && sumsq == hsq && heavy == hheavy,
             "%s: row statistics on the device equal the host's (nonempty rows %" PetscInt_FMT "/%" PetscInt_FMT ", longest %" PetscInt_FMT "/%" PetscInt_FMT ", sum of squares %.17g/%.17g, entries of heavy rows %" PetscCount_FMT "/%" PetscCount_FMT ")", name, nzrows, hnz, maxlen, hmax, (double)sumsq, (double)hsq, heavy, hheavy);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every variant of `type` on matrix A (host AIJ) */
static PetscErrorCode TestMatrix(Mat A, const char *name, const char *type, PetscRandom rnd)
{
  Variants var;
  char     what[256];

  PetscFunctionBeginUser;
  PetscCall(GetVariants(type, &var));
  for (PetscInt v = 0; v < var.count; v++) {
    Mat B;

    PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
    PetscCall(MatSetFromOptions(B)); /* -mat_rgcsr_sort_min_saving 0, set in main: reorder whenever asked */
    PetscCall(var.apply(B, v));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s variant %" PetscInt_FMT " on %s", type, v, name));
    PetscCall(CheckAllProducts(A, B, rnd, what, PETSC_TRUE));
    if (!strcmp(type, MATELLRCUDA)) {
      PetscCall(CheckELLRDeviceLayout(B, what, "at its build"));
      PetscCall(MatScale(B, -1.5)); /* same pattern: the values are refreshed on the device */
      PetscCall(CheckELLRDeviceLayout(B, what, "after a value refresh"));
    }
    if (!strcmp(type, MATRGCSRCUDA)) {
      PetscCall(CheckRgCSRDeviceLayout(B, what, "at its build"));
      PetscCall(MatScale(B, -1.5));
      PetscCall(CheckRgCSRDeviceLayout(B, what, "after a value refresh"));
    }
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Matrices without a single entry, made as PETSc's sub-matrix and DM code makes them (no preallocation: SeqAIJ may
  have no column array at all), square and rectangular: every product gives the reference (y, or 0), outputs
  poisoned first. (Regression: ELLPACK-R's device build left the row lengths unwritten when there was no column
  array; PETSc's KSP tests ex9, PCFIELDSPLIT of a MATNEST with empty off-diagonal blocks, read garbage lengths.)
*/
static PetscErrorCode TestNoEntries(const char *type, PetscRandom rnd)
{
  const PetscInt sizes[][2] = {
    {7, 3},
    {3, 7},
    {5, 5}
  };

  PetscFunctionBeginUser;
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(sizes); k++) {
    Mat  A, B;
    char what[128];

    PetscCall(MatCreate(PETSC_COMM_SELF, &B));
    PetscCall(MatSetSizes(B, sizes[k][0], sizes[k][1], sizes[k][0], sizes[k][1]));
    PetscCall(MatSetType(B, type));
    PetscCall(MatSetUp(B));
    PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
    PetscCall(MatConvert(B, MATSEQAIJ, MAT_INITIAL_MATRIX, &A));
    PetscCall(PetscSNPrintf(what, sizeof(what), "%s without entries, %" PetscInt_FMT " x %" PetscInt_FMT, type, sizes[k][0], sizes[k][1]));
    PetscCall(CheckAllProducts(A, B, rnd, what, PETSC_TRUE));
    if (!strcmp(type, MATELLRCUDA)) PetscCall(CheckELLRDeviceLayout(B, what, "at its build"));
    PetscCall(MatDestroy(&A));
    PetscCall(MatDestroy(&B));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Values change (same pattern: values-only upload), pattern changes (rebuild), MatBindToCPU back and forth */
static PetscErrorCode TestDeviceRefresh(const char *type, PetscRandom rnd)
{
  Mat         A, B;
  char        what[256];
  PetscInt    r = 3, c = 17;
  PetscScalar v = 2.5;

  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(500, 500, 8, "uniform", 77, &A));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatSetOption(B, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: first product", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_FALSE));
  PetscCall(MatScale(B, -3.0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: after MatScale (values only)", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_FALSE));
  PetscCall(MatShift(B, 1.0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: after MatShift", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_FALSE));
  PetscCall(MatSetValues(B, 1, &r, 1, &c, &v, ADD_VALUES));
  PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: after MatSetValues (new nonzero: rebuild)", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_FALSE));
  {
    PetscInt rows[2] = {0, 250};
    PetscCall(MatZeroRows(B, 2, rows, 1.0, NULL, NULL));
  }
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: after MatZeroRows", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_FALSE));
  PetscCall(MatBindToCPU(B, PETSC_TRUE));
  PetscCall(MatScale(B, 0.5));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: bound to CPU, CUDA vectors", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_TRUE));
  PetscCall(MatBindToCPU(B, PETSC_FALSE));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: unbound again after a change on the host", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_TRUE));
  PetscCall(MatZeroEntries(B));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s refresh: after MatZeroEntries", type));
  PetscCall(CheckAllProducts(B, B, rnd, what, PETSC_FALSE));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatDestroy frees every byte the device copy took (the vectors stay alive around it) */
static PetscErrorCode TestDestroyFreesDevice(const char *type, PetscRandom rnd)
{
  Mat    A, B;
  Vec    x, y;
  size_t free0, free1, free2, total;

  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(200000, 200000, 12, "uniform", 91, &A));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSetType(x, VECCUDA));
  PetscCall(VecSetType(y, VECCUDA));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSet(y, 0));
  /* one build and destroy first: CUDA loads a kernel's module lazily at its first launch, and keeps it */
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatMult(B, x, y));
  PetscCall(MatDestroy(&B));
  PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatGPUMatDenseLUWarmupWait(NULL, NULL)); /* its allocations are not the matrix's */
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&free0, &total));
  PetscCall(MatMult(B, x, y));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&free1, &total));
  PetscCall(MatDestroy(&B));
  PetscCallCUDA(cudaMemGetInfo(&free2, &total));
  TEST_CHECK(free1 < free0 && free2 == free0, "%s: the device copy took %zu bytes and MatDestroy gave all back (%zu -> %zu -> %zu free)", type, free0 - free1, free0, free1, free2);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* CMRS with more than 2^28 columns: the unpacked layout on the device (x holds 2^28 + 1 entries, 2 GB) */
static PetscErrorCode TestCMRSUnpacked(void)
{
  const PetscInt     big = ((PetscInt)1 << 28) + 1;
  Mat                A;
  Vec                x, y;
  const PetscScalar *ya;

  PetscFunctionBeginUser;
  if (sizeof(PetscInt) != 4) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCreateSeqAIJCMRSCUDA(PETSC_COMM_SELF, 3, big, 2, NULL, &A));
  PetscCall(MatSetValue(A, 0, 0, 1.5, INSERT_VALUES));
  PetscCall(MatSetValue(A, 0, big - 1, 2.5, INSERT_VALUES));
  PetscCall(MatSetValue(A, 2, big - 2, -1.0, INSERT_VALUES));
  PetscCall(MatSetValue(A, 2, 7, 4.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCMRSCUDASetHeight(A, 2));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 3.0));
  PetscCall(VecSetValue(x, big - 1, 5.0, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(VecSet(y, (PetscScalar)NAN));
  PetscCall(MatMult(A, x, y));
  PetscCall(VecGetArrayRead(y, &ya));
  TEST_CHECK(ya[0] == 1.5 * 3 + 2.5 * 5 && ya[1] == 0 && ya[2] == -3.0 + 12.0, "cmrscuda, 2^28 + 1 columns (unpacked layout) on the GPU: y = (%g, %g, %g)", (double)ya[0], (double)ya[1], (double)ya[2]);
  PetscCall(VecRestoreArrayRead(y, &ya));
  for (PetscInt E = 2; E <= 4; E *= 2) { /* the scan kernel's unpacked layout with several entries per lane */
    PetscCall(MatCMRSCUDASetLaneEntries(A, E));
    PetscCall(VecSet(y, (PetscScalar)NAN));
    PetscCall(MatMult(A, x, y));
    PetscCall(VecGetArrayRead(y, &ya));
    TEST_CHECK(ya[0] == 1.5 * 3 + 2.5 * 5 && ya[1] == 0 && ya[2] == -3.0 + 12.0, "cmrscuda, 2^28 + 1 columns (unpacked layout), %" PetscInt_FMT " entries per lane: y = (%g, %g, %g)", E, (double)ya[0], (double)ya[1], (double)ya[2]);
    PetscCall(VecRestoreArrayRead(y, &ya));
  }
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The padded CMRS variant's explicit zeros must not turn an Inf of x into NaN (0 * Inf) in rows that never read it */
static PetscErrorCode TestCMRSPaddingInf(PetscRandom rnd)
{
  Mat                A, B;
  Vec                x, y;
  const PetscScalar *ya;
  PetscInt           n = 1000, bad = 0;

  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(2, 100, &A)); /* column j appears only in rows j-100 .. j+100 */
  PetscCall(MatConvert(A, MATCMRSCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_variant", "padded"));
  PetscCall(MatSetFromOptions(B));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_variant"));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSetValue(x, 0, (PetscScalar)INFINITY, INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(MatMult(B, x, y));
  PetscCall(VecGetArrayRead(y, &ya));
  for (PetscInt i = 200; i < n * 10; i++) bad += PetscIsInfOrNanScalar(ya[i]);
  PetscCall(VecRestoreArrayRead(y, &ya));
  TEST_CHECK(bad == 0, "padded cmrscuda: x[0] = Inf leaves rows that do not read it finite (%" PetscInt_FMT " non-finite)", bad);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The CMRS scan kernel against its host emulation MatCMRSLayoutMultScanSplit(), bit for bit (MatMult and MatMultAdd),
  for E = 1, 2, 4 entries per lane and several (height, strips per warp, passes ahead), without the split of long
  groups, with chunks of 512 entries (every group of more than 1024 split), and with heavy rows (rows longer than 1.5
  means summed by warps of their own, in chunks of 512 entries or whole: MatCMRSLayoutMultScanHeavy()), on the
  generated matrices
*/
static PetscErrorCode TestCMRSScanBitwise(PetscRandom rnd)
{
  const PetscInt    hs[] = {16, 16, 16, 5, 1, 3, 16, 8, 2};
  const PetscInt    Ss[] = {2, 1, 4, 8, 32, 16, 32, 2, 1};
  const char *const Us[] = {"2", "1", "4", "2", "1", "4", "2", "4", "1"};
  const char *const Cs[] = {"0", "512", "512", "0"}; /* the last two: heavy rows */
  char              name[128], Sstr[16];
  PetscBool         more = PETSC_TRUE, longest = PETSC_FALSE;

  PetscFunctionBeginUser;
  for (PetscInt idx = 0; more; idx++) {
    Mat             A;
    const PetscInt *ai, *aj;
    PetscScalar    *aa;
    PetscInt        m, n;
    PetscBool       packed;

    PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
    if (!more && !longest) { /* then a row of more than CMRS_SPLIT_MAX_CHUNKS chunks of 512 (longer chunks), each lane of the combine adding several */
      PetscCall(PetscStrncpy(name, "one row of 280000 among 1000", sizeof(name)));
      PetscCall(TestCreateRandom(1000, 280000, 4, "denserow", 18, &A));
      more = longest = PETSC_TRUE;
    }
    if (!more) break;
    PetscCall(MatGetSize(A, &m, &n));
    PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
    PetscCall(MatCMRSCanPack(n, &packed));
    for (PetscInt E = 1; E <= 4; E *= 2) {
      char first_bad[256] = "";

      for (size_t cfg = 0; cfg < 4 * PETSC_STATIC_ARRAY_LENGTH(hs); cfg++) {
        const size_t       c = cfg / 4, split = cfg % 4;
        const PetscBool    heavy = (PetscBool)(split >= 2);
        const PetscInt     T     = PetscMax(1, (PetscInt)(1.5 * (double)ai[m] / (double)PetscMax(m, 1)));
        char               Tstr[32];
        MatCMRSHeavy       hv;
        Mat                B;
        Vec                x, y, z, w;
        MatCMRSLayout      L;
        MatCMRSSplit       sp;
        PetscScalar       *ez, *ew;
        const PetscScalar *xa, *ya, *za, *wa;
        PetscBool          same_z, same_w;

        PetscCall(MatConvert(A, MATCMRSCUDA, MAT_INITIAL_MATRIX, &B));
        PetscCall(PetscSNPrintf(Sstr, sizeof(Sstr), "%" PetscInt_FMT, Ss[c]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_variant", "scan"));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_warp_strips", Sstr));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_unroll", Us[c]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_split_entries", Cs[split]));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_heavy_rows", heavy ? "on" : "off"));
        PetscCall(PetscSNPrintf(Tstr, sizeof(Tstr), "%" PetscInt_FMT, T));
        PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_heavy_length", Tstr));
        PetscCall(MatSetFromOptions(B));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_heavy_rows"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_heavy_length"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_variant"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_warp_strips"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_unroll"));
        PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_split_entries"));
        PetscCall(MatCMRSCUDASetHeight(B, hs[c]));
        PetscCall(MatCMRSCUDASetLaneEntries(B, E));
        PetscCall(MatGPUMatSetCompressedRows(B, PETSC_FALSE)); /* the emulation runs on all rows */
        PetscCall(MatCreateVecs(B, &x, &y));
        PetscCall(VecDuplicate(y, &z));
        PetscCall(VecDuplicate(y, &w));
        PetscCall(VecSetRandom(x, rnd));
        PetscCall(VecSetRandom(y, rnd));
        PetscCall(Poison(z));
        PetscCall(Poison(w));
        PetscCall(MatMult(B, x, z));
        PetscCall(MatMultAdd(B, x, y, w));
        PetscCall(MatCMRSLayoutCreate(m, n, ai, aj, aa, hs[c], PETSC_FALSE, packed, &L));
        PetscCall(PetscMalloc2(m + 1, &ez, m + 1, &ew));
        PetscCall(VecGetArrayRead(x, &xa));
        PetscCall(VecGetArrayRead(y, &ya));
        PetscCall(MatCMRSSplitCreate(m, hs[c], ai, Ss[c], split % 3 ? 512 : 0, &sp));
        PetscCall(MatCMRSHeavyCreate(m, hs[c], ai, Ss[c], T, split % 3 ? 512 : 0, &hv));
        if (heavy && hv.nheavy) { /* else the kernel splits groups as without heavy rows */
          PetscCall(MatCMRSLayoutMultScanHeavy(&L, Ss[c], E, &hv, xa, NULL, ez));
          PetscCall(MatCMRSLayoutMultScanHeavy(&L, Ss[c], E, &hv, xa, ya, ew));
        } else {
          PetscCall(MatCMRSLayoutMultScanSplit(&L, Ss[c], E, &sp, xa, NULL, ez));
          PetscCall(MatCMRSLayoutMultScanSplit(&L, Ss[c], E, &sp, xa, ya, ew));
        }
        PetscCall(MatCMRSHeavyDestroy(&hv));
        PetscCall(MatCMRSSplitDestroy(&sp));
        PetscCall(VecRestoreArrayRead(x, &xa));
        PetscCall(VecRestoreArrayRead(y, &ya));
        PetscCall(VecGetArrayRead(z, &za));
        PetscCall(VecGetArrayRead(w, &wa));
        PetscCall(PetscArraycmp(za, ez, m, &same_z));
        PetscCall(PetscArraycmp(wa, ew, m, &same_w));
        if ((!same_z || !same_w) && !first_bad[0]) {
          PetscInt i = 0;

          while (i < m && !memcmp(&za[i], &ez[i], sizeof(PetscScalar)) && !memcmp(&wa[i], &ew[i], sizeof(PetscScalar))) i++;
          PetscCall(PetscSNPrintf(first_bad, sizeof(first_bad), "height %" PetscInt_FMT " S %" PetscInt_FMT " U %s split %s heavy %s: row %" PetscInt_FMT ": MatMult %.17g vs %.17g, MatMultAdd %.17g vs %.17g", hs[c], Ss[c], Us[c], Cs[split], heavy ? Tstr : "off", i, (double)za[i], (double)ez[i], (double)wa[i], (double)ew[i]));
        }
        PetscCall(VecRestoreArrayRead(z, &za));
        PetscCall(VecRestoreArrayRead(w, &wa));
        PetscCall(PetscFree2(ez, ew));
        PetscCall(MatCMRSLayoutDestroy(&L));
        PetscCall(VecDestroy(&x));
        PetscCall(VecDestroy(&y));
        PetscCall(VecDestroy(&z));
        PetscCall(VecDestroy(&w));
        PetscCall(MatDestroy(&B));
      }
      TEST_CHECK(!first_bad[0], "cmrscuda scan kernel, %" PetscInt_FMT " entries per lane, on %s: MatMult and MatMultAdd bitwise equal to the host emulation for 9 (height, S, U), without and with the split of long groups, and with heavy rows%s%s", E, name, first_bad[0] ? "; first difference: " : "", first_bad);
    }
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An n x n matrix with a long first row (len entries, columns 0, stride, 2 stride, ...) and 2 on the rest of the diagonal */
static PetscErrorCode CreateLongRowMatrix(PetscInt n, PetscInt len, PetscInt stride, Mat *A)
{
  PetscInt    *nnz, *cols, row = 0;
  PetscScalar *vals;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(n, &nnz, len, &cols, len, &vals));
  for (PetscInt i = 0; i < n; i++) nnz[i] = i ? 1 : len;
  for (PetscInt k = 0; k < len; k++) cols[k] = stride * k, vals[k] = 1.0 / (k + 1);
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, n, n, 0, nnz, A));
  PetscCall(MatSetValues(*A, 1, &row, len, cols, vals, INSERT_VALUES));
  for (PetscInt i = 1; i < n; i++) PetscCall(MatSetValue(*A, i, i, 2.0, INSERT_VALUES));
  PetscCall(PetscFree3(nnz, cols, vals));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* B's first product, expected to fail at the build: the error, and whether the device's free memory is as before */
static PetscErrorCode MultExpectingBuildError(Mat B, PetscRandom rnd, Vec *x, Vec *y, PetscErrorCode *ierr, PetscBool *nothing_kept)
{
  size_t free0, free1, total;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, x, y));
  PetscCall(VecSetRandom(*x, rnd));
  PetscCall(VecSet(*y, 0)); /* allocate the vectors on the device before measuring */
  PetscCall(MatGPUMatDenseLUWarmupWait(NULL, NULL));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&free0, &total));
  TEST_EXPECT_ERROR(ierr, MatMult(B, *x, *y));
  PetscCallCUDA(cudaMemGetInfo(&free1, &total));
  *nothing_kept = (PetscBool)(free0 == free1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Errors at build time (padding guard, device memory) leave nothing on the device; the host path still works */
static PetscErrorCode TestBuildErrors(PetscRandom rnd)
{
  Mat            A, B;
  Vec            x, y;
  size_t         free0, free1, total;
  PetscErrorCode ierr;
  PetscBool      kept_none;

  PetscFunctionBeginUser;
  /* ELLPACK-R padding guard: one dense row */
  PetscCall(TestCreateRandom(20000, 20000, 4, "denserow", 5, &A));
  PetscCall(MatConvert(A, MATELLRCUDA, MAT_INITIAL_MATRIX, &B));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(VecSet(y, 0)); /* allocate the vectors on the device before measuring */
  PetscCall(MatGPUMatDenseLUWarmupWait(NULL, NULL));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCallCUDA(cudaMemGetInfo(&free0, &total));
  TEST_EXPECT_ERROR(&ierr, MatMult(B, x, y));
  PetscCallCUDA(cudaMemGetInfo(&free1, &total));
  TEST_CHECK(ierr == PETSC_ERR_SUP, "ellrcuda padding guard: one dense row of 20000 gives PETSC_ERR_SUP (%d)", (int)ierr);
  TEST_CHECK(free0 == free1, "ellrcuda padding guard: no device memory kept (%zu -> %zu free)", free0, free1);
  PetscCall(MatBindToCPU(B, PETSC_TRUE));
  PetscCall(CheckAllProducts(A, B, rnd, "ellrcuda after the padding-guard error, bound to the CPU", PETSC_FALSE));
  PetscCall(MatDestroy(&B));
  /* RgCSR's guard: the dense row pads its whole group */
  PetscCall(MatConvert(A, MATRGCSRCUDA, MAT_INITIAL_MATRIX, &B));
  TEST_EXPECT_ERROR(&ierr, MatMult(B, x, y));
  PetscCall(cudaMemGetInfo(&free1, &total) == cudaSuccess ? PETSC_SUCCESS : PETSC_ERR_GPU);
  TEST_CHECK(ierr == PETSC_ERR_SUP && free0 == free1, "rgcsrcuda padding guard: one dense row gives PETSC_ERR_SUP (%d), no device memory kept", (int)ierr);
  PetscCall(MatRGCSRCUDASetMaxFill(B, 0));
  PetscCall(CheckAllProducts(A, B, rnd, "rgcsrcuda with the guard lifted (-mat_rgcsr_max_fill 0) on one dense row", PETSC_TRUE));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  /* RgCSR's kernels address a group's slots with 32-bit offsets: a group of 1024 rows padded to a row of 2^21 + 1
     entries (2^31 + 1024 slots) is refused with the guard lifted, before any allocation of the layout */
  {
    PetscCall(CreateLongRowMatrix(2200000, 2097153, 1, &A));
    PetscCall(MatConvert(A, MATRGCSRCUDA, MAT_INITIAL_MATRIX, &B));
    PetscCall(MatRGCSRCUDASetMaxFill(B, 0));
    PetscCall(MatRGCSRCUDASetGroupSize(B, 1024));
    PetscCall(MultExpectingBuildError(B, rnd, &x, &y, &ierr, &kept_none));
    TEST_CHECK(ierr == PETSC_ERR_SUP, "rgcsrcuda: a group of 1024 rows padded to 2^21 + 1 entries gives PETSC_ERR_SUP (%d)", (int)ierr);
    TEST_CHECK(kept_none, "rgcsrcuda: the group-size error keeps no device memory");
    PetscCall(MatRGCSRCUDASetGroupSize(B, 32)); /* 2^26 + 32 slots in the first group: built */
    PetscCall(MatMult(B, x, y));
    {
      Vec       yh;
      PetscReal err, ref;

      PetscCall(VecDuplicate(y, &yh));
      PetscCall(MatMult(A, x, yh));
      PetscCall(VecNorm(yh, NORM_INFINITY, &ref));
      PetscCall(VecAXPY(yh, -1.0, y));
      PetscCall(VecNorm(yh, NORM_INFINITY, &err));
      TEST_CHECK(err <= 1e-12 * ref, "rgcsrcuda: the same matrix in groups of 32 rows multiplies: error %g of %g", (double)err, (double)ref);
      PetscCall(VecDestroy(&yh));
    }
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&A));
  }
  /* device memory exhaustion: a padded layout of ~1.2 TB */
  {
    PetscCall(CreateLongRowMatrix(1000000, 100000, 10, &A));
    PetscCall(MatConvert(A, MATELLRCUDA, MAT_INITIAL_MATRIX, &B));
    PetscCall(MatELLRCUDASetMaxFill(B, 0));
    PetscCall(MultExpectingBuildError(B, rnd, &x, &y, &ierr, &kept_none));
    TEST_CHECK(ierr == PETSC_ERR_MEM, "ellrcuda: a 1.2 TB padded layout gives PETSC_ERR_MEM (%d)", (int)ierr);
    TEST_CHECK(kept_none, "ellrcuda: device memory error keeps no device memory");
    PetscCall(MatBindToCPU(B, PETSC_TRUE));
    PetscCall(CheckAllProducts(A, B, rnd, "ellrcuda after the device-memory error, bound to the CPU", PETSC_FALSE));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&B));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char        types_str[256] = "ellrcuda", dir[PETSC_MAX_PATH_LEN] = "../shared/matrices", *types[8], *mats[64];
  PetscInt    ntypes = 8, nmats = 64;
  PetscBool   gpu, flg;
  char        reason[256], name[128];
  PetscRandom rnd;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) {
    PetscCall(TestSkip("GPU products (test_gpu_products)", reason));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCall(PetscOptionsSetValue(NULL, "-mat_rgcsr_sort_min_saving", "0")); /* exercise the permutation on every matrix */
  PetscCall(PetscOptionsGetString(NULL, NULL, "-matrices_dir", dir, sizeof(dir), NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    PetscCall(PetscStrallocpy(types_str, &types[0]));
    ntypes = 1;
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-matrices", mats, &nmats, &flg));
  if (!flg) nmats = 0;
  PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &rnd));
  PetscCall(PetscRandomSetType(rnd, PETSCRAND48));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  for (PetscInt t = 0; t < ntypes; t++) {
    PetscBool more = PETSC_TRUE;

    PetscCall(TestNoEntries(types[t], rnd));
    for (PetscInt idx = 0; more; idx++) {
      Mat A;

      PetscCall(TestCreateGenerated(idx, name, sizeof(name), &A, &more));
      if (!more) break;
      if (!t) PetscCall(CheckRowStatsOnDevice(A, name));
      PetscCall(TestMatrix(A, name, types[t], rnd));
      PetscCall(MatDestroy(&A));
    }
    for (PetscInt k = 0; k < nmats; k++) {
      char      path[PETSC_MAX_PATH_LEN];
      Mat       A;
      PetscBool exists;

      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s.mtx.gz", dir, mats[k]));
      PetscCall(PetscTestFile(path, 'r', &exists));
      if (!exists) {
        PetscCall(TestSkip(mats[k], "file not found"));
        continue;
      }
      PetscCall(MatLoadMatrixMarket(PETSC_COMM_SELF, path, MATSEQAIJ, &A));
      if (!t) PetscCall(CheckRowStatsOnDevice(A, mats[k]));
      PetscCall(TestMatrix(A, mats[k], types[t], rnd));
      PetscCall(MatDestroy(&A));
    }
    PetscCall(TestDeviceRefresh(types[t], rnd));
    PetscCall(TestDestroyFreesDevice(types[t], rnd));
  }
  /* -quick (compute-sanitizer runs): skip the cases that allocate gigabytes (2^28 columns, 1.2 TB layouts) */
  PetscCall(PetscOptionsHasName(NULL, NULL, "-quick", &flg));
  if (!flg) {
    PetscCall(TestBuildErrors(rnd));
    PetscCall(TestCMRSUnpacked());
  }
  PetscCall(TestCMRSPaddingInf(rnd));
  for (PetscInt t = 0; t < ntypes && !flg; t++) { /* not with -quick (compute-sanitizer, compressed rows): the variants above cover E there */
    PetscBool cmrs;

    PetscCall(PetscStrcmp(types[t], MATCMRSCUDA, &cmrs));
    if (cmrs) PetscCall(TestCMRSScanBitwise(rnd));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt k = 0; k < nmats; k++) PetscCall(PetscFree(mats[k]));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_gpu_products: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
