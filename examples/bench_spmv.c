static const char help[] = "SpMV benchmark of PETSc matrix types on the GPU, timed with CUDA events.\n"
                           "  -types aijcusparse,sellcuda,ellrcuda   types (the first is the baseline of the speed-ups)\n"
                           "  -problem lap3d7|lap2d5|lap3d27|rows    built-in matrix (default lap3d7)\n"
                           "  -n <k>                                  grid points per dimension (default 150: 3.4 M rows in 3-D)\n"
                           "  -f <file.mtx[.gz]>                      a Matrix Market file instead\n"
                           "  -replicate <k>                          with -f: k copies of the matrix on the diagonal (GPU-filling size)\n"
                           "  -reps <r>                               timed products per type (default 100); the median is reported\n"
                           "  -csv <file>                             also write the results as CSV\n"
                           "  -variants <v1,v2,...>                   extra runs of the petscgpumat types, each variant as name:value[+name:value]\n"
                           "                                          e.g. -variants mat_ellr_threads_per_row:1,mat_ellr_threads_per_row:2\n"
                           "  -mean <m>                               mean row length of -problem rows (default 16)\n";

/*
  For each type: convert the host AIJ matrix (timed), warm up, then time `reps` single MatMult calls, each
  between two CUDA events on PETSc's stream, and report median/min/max. GFLOPS = (2 nnz - rows)/tau as in the
  papers. eta+ = beta+/tau/B with beta+ = (s_v + s_i) stored + s_i index_count + 2 s_v rows (the papers' beta+,
  each format with its own stored entries and extra indices) and B the device-to-device copy bandwidth
  measured in the same run. Each type's result is checked against the baseline's: a wrong result voids a time.
*/
#include <petscgpumat.h>
#include <petscdevice_cuda.h>
#include <string.h>
#include "spmv_metrics.h"

typedef struct {
  char   label[128];
  double convert_s, median_ms, min_ms, max_ms, gflops, eta_plus, eta_minus, relerr, speedup;
  double stored_ratio;
  size_t device_bytes;
  char   failure[512]; /* why the type refused the matrix; empty if it ran */
} Result;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/*
  Built-in matrices, assembled in parallel by rows: 2-D 5-point and 3-D 7-point Laplacians on k^d grids, the
  3-D 27-point stencil, and random rows ("rows": n = k^3 rows, lengths uniform in [1, 2*mean-1], columns
  near the diagonal, so the mean row length varies while x stays cache friendly).
*/
static PetscErrorCode CreateProblem(const char *problem, PetscInt k, PetscInt mean, Mat *A)
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
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
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

/* k copies of A on the diagonal: real structure at a GPU-filling size (each row keeps its pattern and locality) */
static PetscErrorCode Replicate(Mat A, PetscInt k, Mat *R)
{
  PetscInt        m, n, *nnz;
  const PetscInt *ai, *aj;
  PetscScalar    *aa;
  PetscInt       *cols;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, NULL));
  PetscCall(PetscMalloc2(m * k, &nnz, n, &cols));
  for (PetscInt c = 0; c < k; c++)
    for (PetscInt i = 0; i < m; i++) nnz[c * m + i] = ai[i + 1] - ai[i];
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, m * k, n * k, 0, nnz, R));
  for (PetscInt c = 0; c < k; c++)
    for (PetscInt i = 0; i < m; i++) {
      const PetscInt row = c * m + i, len = ai[i + 1] - ai[i];

      for (PetscInt t = 0; t < len; t++) cols[t] = aj[ai[i] + t] + c * n;
      PetscCall(MatSetValues(*R, 1, &row, len, cols, aa + ai[i], INSERT_VALUES));
    }
  PetscCall(PetscFree2(nnz, cols));
  PetscCall(MatAssemblyBegin(*R, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*R, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device-to-device copy bandwidth (bytes read + written per second), median of 20 copies of 1 GiB */
static PetscErrorCode MeasureCopyBandwidth(double *bw)
{
  size_t      bytes = (size_t)1 << 30;
  void       *a, *b;
  cudaEvent_t e0, e1;
  double      t[20];
  float       ms;

  PetscFunctionBeginUser;
  PetscCallCUDA(cudaMalloc(&a, bytes));
  PetscCallCUDA(cudaMalloc(&b, bytes));
  PetscCallCUDA(cudaMemset(a, 1, bytes));
  PetscCallCUDA(cudaEventCreate(&e0));
  PetscCallCUDA(cudaEventCreate(&e1));
  PetscCallCUDA(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  for (int r = 0; r < 20; r++) {
    PetscCallCUDA(cudaEventRecord(e0, 0));
    PetscCallCUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
    PetscCallCUDA(cudaEventRecord(e1, 0));
    PetscCallCUDA(cudaEventSynchronize(e1));
    PetscCallCUDA(cudaEventElapsedTime(&ms, e0, e1));
    t[r] = ms;
  }
  qsort(t, 20, sizeof(double), cmp_double);
  *bw = 2.0 * (double)bytes / (t[10] * 1e-3);
  PetscCallCUDA(cudaEventDestroy(e0));
  PetscCallCUDA(cudaEventDestroy(e1));
  PetscCallCUDA(cudaFree(a));
  PetscCallCUDA(cudaFree(b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode IsGPUMat(Mat B, PetscBool *flg)
{
  PetscErrorCode (*f)(Mat, MatGPUMatInfo *) = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatGPUMatGetInfo_C", &f));
  *flg = (PetscBool)(f != NULL);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Remove the options a variant inserted ("-name value -name value"), and only those */
static PetscErrorCode ClearVariantOptions(char opts[])
{
  char *tok = opts;

  PetscFunctionBeginUser;
  for (char *c = opts;; c++) {
    if (*c == ' ' || !*c) {
      const PetscBool end = (PetscBool)!*c;

      *c = 0;
      if (tok[0] == '-') PetscCall(PetscOptionsClearValue(NULL, tok));
      if (end) break;
      tok = c + 1;
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BenchType(Mat A, const char *type, const char *options, PetscInt reps, double bw, Vec xhost, Vec yref, Result *res)
{
  Mat                B;
  Vec                x, y;
  cudaEvent_t        e0, e1;
  cudaStream_t       stream;
  PetscDeviceContext dctx;
  void              *handle;
  double            *t, t0;
  float              ms;
  PetscInt           m, n;
  MatInfo            minfo;
  double             nnz, stored, index_count, sv = sizeof(PetscScalar), si = sizeof(int);
  PetscBool          gpumat = PETSC_FALSE;
  char               opts[512] = "";
  PetscReal          nref, ndiff;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(res->label, sizeof(res->label), "%s%s%s", type, options ? " " : "", options ? options : ""));
  if (options) {
    /* "mat_ellr_threads_per_row:2+other:v" -> "-mat_ellr_threads_per_row 2 -other v" (a value may not start with '-') */
    size_t len, o = 0;

    PetscCall(PetscStrlen(options, &len));
    PetscCheck(2 * len + 2 < sizeof(opts), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Variant too long: %s", options);
    opts[o++] = '-';
    for (size_t c = 0; c < len; c++) {
      if (options[c] == ':') opts[o++] = ' ';
      else if (options[c] == '+') opts[o++] = ' ', opts[o++] = '-';
      else opts[o++] = options[c];
    }
    opts[o] = 0;
    PetscCall(PetscOptionsInsertString(NULL, opts));
  }
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(PetscTime(&t0));
  PetscCall(MatSetType(B, type)); /* in place, as -mat_type does; MatConvert() to sellcuda is PETSc's slow generic path */
  PetscCall(MatSetFromOptions(B));
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecCopy(xhost, x));
  {
    /* the first product builds the device copy; a format may refuse the matrix (padding guard, memory):
       report that in the table instead of stopping the whole benchmark */
    PetscErrorCode ierr;
    char          *message;

    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatMult(B, x, y);
    PetscCall(PetscPopErrorHandler());
    if (ierr) {
      PetscCall(PetscErrorMessage(ierr, NULL, &message));
      PetscCall(PetscSNPrintf(res->failure, sizeof(res->failure), "%s", message));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s refused the matrix: %s\n", res->label, message));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&y));
      PetscCall(MatDestroy(&B));
      if (options) PetscCall(ClearVariantOptions(opts));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
  }
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextSynchronize(dctx));
  PetscCall(PetscTime(&res->convert_s));
  res->convert_s -= t0;
  if (options) PetscCall(ClearVariantOptions(opts));
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  stream = handle ? *(cudaStream_t *)handle : NULL;
  for (PetscInt r = 0; r < 5; r++) PetscCall(MatMult(B, x, y));
  PetscCall(PetscMalloc1(reps, &t));
  PetscCallCUDA(cudaEventCreate(&e0));
  PetscCallCUDA(cudaEventCreate(&e1));
  for (PetscInt r = 0; r < reps; r++) {
    PetscCallCUDA(cudaEventRecord(e0, stream));
    PetscCall(MatMult(B, x, y));
    PetscCallCUDA(cudaEventRecord(e1, stream));
    PetscCallCUDA(cudaEventSynchronize(e1));
    PetscCallCUDA(cudaEventElapsedTime(&ms, e0, e1));
    t[r] = ms;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  res->median_ms = t[reps / 2];
  res->min_ms    = t[0];
  res->max_ms    = t[reps - 1];
  PetscCall(PetscFree(t));
  PetscCallCUDA(cudaEventDestroy(e0));
  PetscCallCUDA(cudaEventDestroy(e1));
  /* metrics */
  PetscCall(MatGetSize(B, &m, &n));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &minfo));
  nnz         = minfo.nz_used;
  stored      = nnz;
  index_count = m + 1; /* CSR row offsets */
  res->device_bytes = 0;
  PetscCall(IsGPUMat(B, &gpumat));
  if (gpumat) {
    MatGPUMatInfo info;

    PetscCall(MatGPUMatGetInfo(B, &info));
    stored            = (double)info.read_entries; /* the bytes a product moves: padding it skips does not count */
    res->stored_ratio = (double)info.stored / nnz;
    index_count       = (double)info.index_count;
    res->device_bytes = info.device_bytes;
  }
  if (!gpumat) res->stored_ratio = 1.0;
  {
    const SpMVMetrics met = SpMVMetricsCompute(m, nnz, stored, index_count, sv, si, res->median_ms * 1e-3, bw);

    res->gflops    = met.gflops;
    res->eta_plus  = met.eta_plus;
    res->eta_minus = met.eta_minus;
  }
  /* the result against the reference */
  if (yref) {
    Vec yh;

    PetscCall(VecDuplicate(yref, &yh));
    PetscCall(VecCopy(y, yh));
    PetscCall(VecNorm(yref, NORM_INFINITY, &nref));
    PetscCall(VecAXPY(yh, -1.0, yref));
    PetscCall(VecNorm(yh, NORM_INFINITY, &ndiff));
    res->relerr = (double)(ndiff / nref);
    PetscCall(VecDestroy(&yh));
  } else res->relerr = 0;
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char       *types[16], *variants[16], problem[32] = "lap3d7", file[PETSC_MAX_PATH_LEN] = "", csv[PETSC_MAX_PATH_LEN] = "", reason[256];
  PetscInt    ntypes = 16, nvariants = 16, k = 150, reps = 100, mean = 16, m, n, nres = 0;
  PetscBool   flg, fflg, gpu, csvflg;
  Mat         A;
  Vec         xhost, yref;
  double      bw;
  Result      res[64] = {{{0}}};
  MatInfo     minfo;
  PetscRandom rnd;
  FILE       *fp = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    const char *def[] = {MATAIJCUSPARSE, "sellcuda", MATCMRSCUDA, MATELLRCUDA, MATRGCSRCUDA};
    for (ntypes = 0; ntypes < 5; ntypes++) PetscCall(PetscStrallocpy(def[ntypes], &types[ntypes]));
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-variants", variants, &nvariants, &flg));
  if (!flg) nvariants = 0;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &fflg));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-csv", csv, sizeof(csv), &csvflg));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &k, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mean", &mean, NULL));
  PetscCheck(reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps %" PetscInt_FMT " must be positive", reps);
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bench_spmv: GPU types skipped: %s.\nThe benchmark times GPU products only; run it on a machine with an NVIDIA GPU (see README: the device runner).\n", reason));
    for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
    for (PetscInt v = 0; v < nvariants; v++) PetscCall(PetscFree(variants[v]));
    PetscCall(PetscFinalize());
    return 0;
  }
  if (fflg) {
    PetscInt k = 1;

    PetscCall(MatLoadMatrixMarket(PETSC_COMM_WORLD, file, MATAIJ, &A));
    PetscCall(PetscOptionsGetInt(NULL, NULL, "-replicate", &k, NULL));
    PetscCheck(k >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-replicate %" PetscInt_FMT " must be positive", k);
    if (k > 1) {
      Mat R;

      PetscCall(Replicate(A, k, &R));
      PetscCall(MatDestroy(&A));
      A = R;
    }
  }
  else {
    PetscCall(PetscStrInList(problem, "lap2d5,lap3d7,lap3d27,rows", ',', &flg));
    PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown -problem %s: lap2d5, lap3d7, lap3d27 or rows", problem);
    PetscCheck(mean >= 1 && mean <= 512, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-mean %" PetscInt_FMT " must be in 1..512", mean);
    PetscCall(CreateProblem(problem, k, mean, &A));
  }
  PetscCall(MatGetSize(A, &m, &n));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &minfo));
  PetscCall(MeasureCopyBandwidth(&bw));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %s: %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %.0f (mean %.2f per row); device copy bandwidth B = %.0f GB/s; median of %" PetscInt_FMT " MatMult, CUDA events\n", fflg ? file : problem, m, n, minfo.nz_used, minfo.nz_used / m, bw / 1e9, reps));
  PetscCall(MatCreateVecs(A, &xhost, &yref));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(VecSetRandom(xhost, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatMult(A, xhost, yref)); /* host AIJ reference */
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(BenchType(A, types[t], NULL, reps, bw, xhost, yref, &res[nres++]));
  for (PetscInt v = 0; v < nvariants; v++) {
    for (PetscInt t = 0; t < ntypes; t++) {
      char      key[32];
      PetscBool ours;
      char     *found;

      /* a variant applies to the type whose options it names: "ellrcuda" <-> "mat_ellr_", ... */
      PetscCall(PetscStrncpy(key, "mat_", sizeof(key)));
      PetscCall(PetscStrlcat(key, types[t] + (types[t][0] == 's' ? 6 : 0), sizeof(key))); /* seqaijellrcuda -> ellrcuda */
      key[PetscMax(4, (int)strlen(key) - 4)] = 0;                                           /* mat_ellrcuda -> mat_ellr */
      PetscCall(PetscStrlcat(key, "_", sizeof(key)));
      PetscCall(PetscStrstr(variants[v], key, &found));
      ours = (PetscBool)(found != NULL);
      if (ours && nres < 64) PetscCall(BenchType(A, types[t], variants[v], reps, bw, xhost, yref, &res[nres++]));
    }
  }
  for (PetscInt r = 0; r < nres; r++) res[r].speedup = res[r].failure[0] ? 0 : res[0].median_ms / res[r].median_ms;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %10s %9s %9s %8s %7s %7s %9s %8s %10s %9s\n", "type", "median ms", "min ms", "max ms", "GFLOPS", "eta+", "eta-", "speed-up", "stored", "convert s", "rel.err"));
  for (PetscInt r = 0; r < nres; r++)
    if (res[r].failure[0]) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s refused: %.100s\n", res[r].label, res[r].failure));
    else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %10.4f %9.4f %9.4f %8.1f %7.3f %7.3f %9.3f %8.3f %10.3f %9.1e%s\n", res[r].label, res[r].median_ms, res[r].min_ms, res[r].max_ms, res[r].gflops, res[r].eta_plus, res[r].eta_minus, res[r].speedup, res[r].stored_ratio, res[r].convert_s, res[r].relerr,
                          res[r].relerr > 1e-10 ? "  WRONG RESULT" : ""));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "speed-up: median time of %s / median time of the type; stored: stored entries / nnz; convert: AIJ -> type incl. first product\n", res[0].label));
  if (csvflg) {
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, csv, "w", &fp));
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "matrix,rows,cols,nnz,type,median_ms,min_ms,max_ms,gflops,eta_plus,eta_minus,speedup_vs_first,stored_over_nnz,convert_s,copy_bw_GBs,rel_err\n"));
    for (PetscInt r = 0; r < nres; r++)
      if (!res[r].failure[0]) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s,%" PetscInt_FMT ",%" PetscInt_FMT ",%.0f,%s,%.5f,%.5f,%.5f,%.2f,%.4f,%.4f,%.4f,%.4f,%.4f,%.1f,%.2e\n", fflg ? file : problem, m, n, minfo.nz_used, res[r].label, res[r].median_ms, res[r].min_ms, res[r].max_ms, res[r].gflops, res[r].eta_plus, res[r].eta_minus, res[r].speedup,
                             res[r].stored_ratio, res[r].convert_s, bw / 1e9, res[r].relerr));
    PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt v = 0; v < nvariants; v++) PetscCall(PetscFree(variants[v]));
  PetscCall(VecDestroy(&xhost));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
