static const char help[] = "SpMV (and KSP) benchmark of PETSc matrix types, GPU products timed with CUDA events.\n"
                           "  -types aijcusparse,sellcuda,ellrcuda,aij  types (the first that runs is the baseline of the speed-ups);\n"
                           "                                          GPU types are skipped, with the reason, where no GPU answers\n"
                           "  -problem <name>                         built-in matrix (default lap3d7):\n"
                           "     lap3d7|lap2d5|lap3d27                3-D 7-point, 2-D 5-point, 3-D 27-point Laplacians on n^d grids\n"
                           "     rows                                 n^3 rows, lengths uniform in 1..2*mean-1, columns near the diagonal\n"
                           "     perm                                 a random permutation matrix of n rows (the papers' p7: one entry per row and column)\n"
                           "     dense                                a dense n x n matrix stored sparse (default n 10000)\n"
                           "     powerlaw                             n rows, Pareto row lengths (exponent -alpha, minimum -mean/2), random columns\n"
                           "     denserows                            n rows of 7 entries near the diagonal plus -dense_rows rows of n/20 entries\n"
                           "     arrow                                n rows of 7 entries near the diagonal and one in column 0, and a full row 0\n"
                           "  -n <k>                                  grid points per dimension (lap*, rows; default 150), or rows (perm, powerlaw, denserows)\n"
                           "  -f <file.mtx[.gz]>                      a Matrix Market file instead\n"
                           "  -replicate <k>                          with -f: k copies of the matrix on the diagonal (GPU-filling size)\n"
                           "  -name <label> -set <label>              the matrix's name and set in the table and CSV\n"
                           "  -reps <r>                               timed products per GPU type (default 100; CPU types: at most 20 and about 2 s); the median is reported\n"
                           "  -csv <file>                             also write the results as CSV (refusals included, with their reason)\n"
                           "  -variants <v1,v2,...>                   extra runs of the petscgpumat types (at most 48), each variant as name:value[+name:value]\n"
                           "                                          e.g. -variants mat_ellr_threads_per_row:1,mat_ellr_threads_per_row:2\n"
                           "  -mean <m>                               mean row length of -problem rows|powerlaw (default 16)\n"
                           "  -dense_rows <d>                         dense rows of -problem denserows (default 8)\n"
                           "  -alpha <a>                              Pareto exponent of -problem powerlaw, 1.1..4 (default 2; smaller: longer rows)\n"
                           "  -ksp <none|auto|cg|cgfused|gmres>       also solve A x = b (b = A 1) with each type: CG (auto: symmetric with a\n"
                           "                                          positive diagonal) or GMRES(30), Jacobi, -ksp_rtol (1e-8), -ksp_max_it (1000);\n"
                           "                                          cgfused: petscgpumat's KSPCGFUSED (CG with fused GPU iterations);\n"
                           "                                          GPU types: time per iteration against CG's bound (beta+ + 8 vector passes) / B\n"
                           "                                          CPU types solve only matrices of at most 4 M nonzeros\n";

/*
  For each type: copy the host AIJ matrix and convert it in place (MatSetType, timed), run the first product
  (which builds the device copy, timed and synchronised), warm up, then time `reps` single MatMult calls, each
  between two CUDA events on PETSc's stream, and report median/min/max. The build time is the conversion plus
  the first product less one product (the median), in ms and in products. GFLOPS = (2 nnz - rows)/tau as in the
  papers; eta+- = beta+-/tau/B (spmv_metrics.h), each format with its own entries read and extra indices, B the
  device-to-device copy bandwidth measured in the same run. CPU types (aij) are timed with the wall clock.
  Each type's result is checked against the host AIJ product: a wrong result voids a time.
*/
#include <petscgpumat.h>
#include <petscgpumat/private/petsccompat.h> /* PETSc-version differences */
#include <petscksp.h>
#include <petscgpuksp.h>
#include <petscdevice_cuda.h>
#include <string.h>
#include "spmv_metrics.h"
#include "problems.h"

typedef struct {
  char   label[320], base_type[64], variant[256];
  double settype_ms, first_ms, build_ms, build_spmv, refresh_ms, refresh_spmv, median_ms, min_ms, max_ms, gflops, eta_plus, eta_minus, relerr, speedup;
  double stored_ratio;
  double beta_plus; /* bytes of one product at best (spmv_metrics.h) */
  size_t device_bytes;
  PetscBool gpu, ran;
  char   failure[512]; /* why the type refused the matrix (or was skipped); empty if it ran */
  /* KSP mode */
  char   ksp[16];
  PetscInt its;
  int    reason;
  double ksp_s, ksp_speedup, ksp_rnorm;
} Result;

#define HEAVY_ROW_MEANS 4 /* a row is heavy when longer than this many times the mean: MATGPUMAT_HEAVY_ROW_MEANS, the base's */

typedef struct {
  PetscInt   rows, cols, maxrow, empty;
  double     nnz, mu, sigma, heavy; /* heavy: the share of the entries in heavy rows (the choosing type's feature) */
} MatStats;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* splitmix64: a deterministic hash, so every rank and every run builds the same matrix */
static inline uint64_t Mix(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double Unit(uint64_t z) { return (double)(Mix(z) >> 11) * (1.0 / 9007199254740992.0); } /* [0,1) */

static PetscBool IsGPUTypeName(const char *type)
{
  return (PetscBool)(strstr(type, "cuda") || strstr(type, "cusparse") || strstr(type, "hip") || strstr(type, "kokkos"));
}

static int cmp_int(const void *a, const void *b)
{
  PetscInt x = *(const PetscInt *)a, y = *(const PetscInt *)b;
  return x < y ? -1 : x > y;
}

/*
  The irregular built-in matrices (one process), built as CSR and handed to MatSeqAIJSetPreallocationCSR():
    perm       n rows, one entry per row and column at a random position (a random permutation, the papers' p7);
    dense      n x n, every entry stored (diagonally dominant);
    powerlaw   n rows of Pareto-distributed lengths (exponent alpha, minimum mean/2, capped at min(n, 20000)): the
               diagonal plus random columns over the whole matrix; diagonally dominant;
    arrow      n rows of 7 entries around the diagonal and one in column 0, and row 0 full (n entries): the
               arrow matrices of optimisation and bordered systems, one row as long as the matrix;
    denserows  n rows of 7 entries around the diagonal, and ndense rows, evenly spread, holding every 20th column
               (n/20 entries): a few dense rows, as in circuits and optimisation matrices; diagonally dominant.
*/
static PetscErrorCode CreateIrregular(const char *problem, PetscInt n, PetscInt mean, PetscReal alpha, PetscInt ndense, Mat *A)
{
  PetscBool    perm, dense, power, arrow;
  PetscInt    *ia, *ja, *len;
  PetscScalar *va;
  PetscInt64   total = 0;
  PetscMPIInt  size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCheck(size == 1, PETSC_COMM_WORLD, PETSC_ERR_SUP, "-problem %s runs on one process", problem);
  PetscCall(PetscStrcmp(problem, "perm", &perm));
  PetscCall(PetscStrcmp(problem, "dense", &dense));
  PetscCall(PetscStrcmp(problem, "powerlaw", &power));
  PetscCall(PetscStrcmp(problem, "arrow", &arrow));
  PetscCall(PetscMalloc1(n, &len));
  for (PetscInt i = 0; i < n; i++) {
    if (perm) len[i] = 1;
    else if (dense) len[i] = n;
    else if (power) {
      const double u = 1.0 - Unit(7 * (uint64_t)i + 1), xm = PetscMax(1.0, mean / 2.0);
      const double L = alpha == 2.0 ? xm / PetscSqrtReal(u) : xm * PetscPowReal(u, -1.0 / alpha); /* alpha 2: the matrices of the earlier runs, bit for bit */

      len[i] = (PetscInt)PetscMin((double)PetscMin(n, 20000), PetscMax(1.0, L));
    } else if (arrow) len[i] = i ? 8 : n;
    else {
      const PetscInt stride = n / PetscMax(1, ndense);
      len[i] = 7;
      if (ndense > 0 && i % stride == stride / 2 && i / stride < ndense) len[i] = 8 + n / 20;
    }
    total += len[i];
  }
  PetscCheck(total < PETSC_INT_MAX, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-problem %s -n %" PetscInt_FMT " needs %" PetscInt64_FMT " entries, too many for 32-bit indices", problem, n, total);
  PetscCall(PetscMalloc3(n + 1, &ia, total, &ja, total, &va));
  ia[0] = 0;
  if (perm) {
    /* Fisher-Yates with the deterministic hash */
    for (PetscInt i = 0; i < n; i++) ja[i] = i;
    for (PetscInt i = n - 1; i > 0; i--) {
      PetscInt j = (PetscInt)(Mix(11 * (uint64_t)i + 3) % (uint64_t)(i + 1)), t = ja[i];
      ja[i] = ja[j];
      ja[j] = t;
    }
    for (PetscInt i = 0; i < n; i++) ia[i + 1] = i + 1, va[i] = 0.5 + Unit(13 * (uint64_t)i);
  } else {
    PetscInt64 p = 0;

    for (PetscInt i = 0; i < n; i++) {
      PetscInt   c = 0, *cols = ja + p;
      PetscReal  off = 0;

      if (dense) {
        for (c = 0; c < n; c++) cols[c] = c;
      } else if (power) {
        cols[c++] = i;
        for (PetscInt t = 1; t < len[i]; t++) cols[c++] = (PetscInt)(Mix(((uint64_t)i << 20) + (uint64_t)t) % (uint64_t)n);
      } else if (arrow && !i) {
        for (c = 0; c < n; c++) cols[c] = c;
      } else if (arrow) {
        for (PetscInt j = PetscMax(0, i - 3); j <= PetscMin(n - 1, i + 3); j++) cols[c++] = j;
        cols[c++] = 0;
      } else {
        for (PetscInt j = PetscMax(0, i - 3); j <= PetscMin(n - 1, i + 3); j++) cols[c++] = j;
        if (len[i] > 7) {
          for (PetscInt j = i % 20; j < n; j += 20) cols[c++] = j;
        }
      }
      qsort(cols, (size_t)c, sizeof(PetscInt), cmp_int);
      {
        PetscInt u = 0;
        for (PetscInt t = 0; t < c; t++)
          if (!u || cols[t] != cols[u - 1]) cols[u++] = cols[t];
        c = u;
      }
      for (PetscInt t = 0; t < c; t++) {
        if (cols[t] == i) continue;
        va[p + t] = -(0.1 + 0.9 * Unit(((uint64_t)i << 24) ^ (uint64_t)cols[t] ^ 0x5bd1e995ull));
        off += PetscAbsScalar(va[p + t]);
      }
      for (PetscInt t = 0; t < c; t++)
        if (cols[t] == i) va[p + t] = off + 1.0;
      p += c;
      ia[i + 1] = (PetscInt)p;
    }
  }
  PetscCall(MatCreate(PETSC_COMM_WORLD, A));
  PetscCall(MatSetSizes(*A, n, n, n, n));
  PetscCall(MatSetType(*A, MATSEQAIJ));
  PetscCall(MatSeqAIJSetPreallocationCSR(*A, ia, ja, va));
  PetscCall(PetscFree3(ia, ja, va));
  PetscCall(PetscFree(len));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rows, nonzeros, mean and standard deviation of the row lengths, longest row, empty rows, the heavy rows' share */
static PetscErrorCode ComputeStats(Mat A, MatStats *s)
{
  PetscInt rstart, rend, ncols;
  double   v[3] = {0, 0, 0};
  PetscInt mx[2] = {0, 0};

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &s->rows, &s->cols));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt row = rstart; row < rend; row++) {
    PetscCall(MatGetRow(A, row, &ncols, NULL, NULL));
    v[0] += ncols;
    v[1] += (double)ncols * ncols;
    if (!ncols) v[2] += 1;
    mx[0] = PetscMax(mx[0], ncols);
    PetscCall(MatRestoreRow(A, row, &ncols, NULL, NULL));
  }
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, mx, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  s->nnz    = v[0];
  s->mu     = v[0] / PetscMax(1, s->rows);
  s->sigma  = PetscSqrtReal(PetscMax(0.0, v[1] / PetscMax(1, s->rows) - s->mu * s->mu));
  s->maxrow = mx[0];
  s->empty  = (PetscInt)v[2];
  s->heavy  = 0;
  if (s->maxrow > HEAVY_ROW_MEANS * s->mu) { /* a second pass: rows longer than 4 mu, mu known now */
    for (PetscInt row = rstart; row < rend; row++) {
      PetscCall(MatGetRow(A, row, &ncols, NULL, NULL));
      if (ncols > HEAVY_ROW_MEANS * s->mu) s->heavy += ncols;
      PetscCall(MatRestoreRow(A, row, &ncols, NULL, NULL));
    }
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &s->heavy, 1, MPI_DOUBLE, MPI_SUM, PetscObjectComm((PetscObject)A)));
    s->heavy /= s->nnz;
  }
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

/* A timed solve's time per iteration (microseconds; 0 without iterations) */
static double KSPIterationMicroseconds(const Result *res)
{
  return res->its > 0 ? res->ksp_s / (double)res->its * 1e6 : 0.0;
}

/* CG's iteration bound (spmv_metrics.h) for the type's stored bytes at the copy bandwidth B, microseconds; 0 for a
   CPU type (B is the GPU's) */
static double KSPBoundMicroseconds(const Result *res, const MatStats *st, double bw)
{
  return res->gpu && bw > 0 ? SpMVCGIterationBound(res->beta_plus, (double)st->rows, (double)sizeof(PetscScalar), bw) * 1e6 : 0.0;
}

/* Solve A x = b with B (the type under test): one 3-iteration warm-up, then one timed solve from x = 0 */
static PetscErrorCode SolveWith(Mat B, Vec bhost, const char *ksptype, PetscReal rtol, PetscInt maxit, Result *res)
{
  KSP                ksp;
  PC                 pc;
  Vec                x, b;
  PetscLogDouble     t0, t1;
  PetscReal          rnorm;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(VecCopy(bhost, b));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)B), &ksp));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_CURRENT, PETSC_CURRENT, 3));
  PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_FALSE));
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x)); /* warm-up: PC setup, vector kernels, library handles */
  PetscCall(KSPSetTolerances(ksp, rtol, PETSC_CURRENT, PETSC_CURRENT, maxit));
  PetscCall(VecSet(x, 0.0));
  if (res->gpu) {
    PetscDeviceContext dctx;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
  PetscCall(PetscTime(&t0));
  PetscCall(KSPSolve(ksp, b, x));
  if (res->gpu) {
    PetscDeviceContext dctx;
    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
  PetscCall(PetscTime(&t1));
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));
  PetscCall(KSPGetResidualNorm(ksp, &rnorm));
  res->reason    = (int)reason;
  res->ksp_s     = t1 - t0;
  res->ksp_rnorm = (double)rnorm;
  PetscCall(PetscStrncpy(res->ksp, ksptype, sizeof(res->ksp)));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode BenchType(Mat A, const MatStats *st, const char *type, const char *options, PetscInt reps, double bw, Vec xhost, Vec yref, const char *ksptype, Vec bksp, PetscReal rtol, PetscInt maxit, Result *res)
{
  Mat                B;
  Vec                x, y;
  cudaEvent_t        e0, e1;
  cudaStream_t       stream = NULL;
  PetscDeviceContext dctx = NULL;
  void              *handle;
  double            *t, t0, t1;
  float              ms;
  double             nnz = st->nnz, stored, index_count, sv = sizeof(PetscScalar), si = sizeof(int);
  PetscBool          gpumat = PETSC_FALSE;
  char               opts[512] = "";
  PetscReal          nref, ndiff;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(res->label, sizeof(res->label), "%s%s%s", type, options ? " " : "", options ? options : ""));
  PetscCall(PetscStrncpy(res->base_type, type, sizeof(res->base_type)));
  PetscCall(PetscStrncpy(res->variant, options ? options : "", sizeof(res->variant)));
  res->gpu = IsGPUTypeName(type);
  if (!res->gpu) reps = PetscMin(reps, 20);
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
  PetscCall(PetscTime(&t1));
  res->settype_ms = (t1 - t0) * 1e3;
  PetscCall(MatCreateVecs(B, &x, &y));
  PetscCall(VecCopy(xhost, x));
  if (res->gpu) {
    const PetscScalar *xa;
    PetscBool          cudavec;

    PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &cudavec, VECSEQCUDA, VECMPICUDA, ""));
    if (cudavec) PetscCall(VecCUDAGetArrayRead(x, &xa)); /* x on the device before the first product: its time is the matrix's build */
    if (cudavec) PetscCall(VecCUDARestoreArrayRead(x, &xa));
    PetscCall(PetscDeviceContextSynchronize(dctx));
  }
  {
    /* the first product builds the device copy; a format may refuse the matrix (padding guard, memory):
       report that in the table instead of stopping the whole benchmark */
    PetscErrorCode ierr;
    PetscGPUMatErrorText message;

    PetscCall(PetscTime(&t0));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatMult(B, x, y);
    PetscCall(PetscPopErrorHandler());
    if (ierr) {
      PetscCall(PetscErrorMessage(ierr, NULL, &message));
      PetscCall(PetscSNPrintf(res->failure, sizeof(res->failure), "refused: %s", message));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s refused the matrix: %s\n", res->label, message));
      PetscCall(VecDestroy(&x));
      PetscCall(VecDestroy(&y));
      PetscCall(MatDestroy(&B));
      if (options) PetscCall(ClearVariantOptions(opts));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (dctx) PetscCall(PetscDeviceContextSynchronize(dctx));
    PetscCall(PetscTime(&t1));
    res->first_ms = (t1 - t0) * 1e3;
  }
  if (res->gpu) {
    PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
    stream = handle ? *(cudaStream_t *)handle : NULL;
  }
  for (PetscInt r = 0; r < (res->gpu ? 5 : 1); r++) PetscCall(MatMult(B, x, y));
  PetscCall(PetscMalloc1(reps, &t));
  if (res->gpu) {
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
    PetscCallCUDA(cudaEventDestroy(e0));
    PetscCallCUDA(cudaEventDestroy(e1));
  } else {
    double spent = 0;

    for (PetscInt r = 0; r < reps; r++) {
      PetscCall(PetscTime(&t0));
      PetscCall(MatMult(B, x, y));
      PetscCall(PetscTime(&t1));
      t[r] = (t1 - t0) * 1e3;
      spent += t1 - t0;
      if (r >= 2 && spent > 2.0) { /* a CPU reference, not a race: at most about 2 s (at least 3 products) */
        reps = r + 1;
        break;
      }
    }
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  res->median_ms = t[reps / 2];
  res->min_ms    = t[0];
  res->max_ms    = t[reps - 1];
  PetscCall(PetscFree(t));
  {
    /* the build measured again on fresh copies (GPU types): one build of a few milliseconds varies by more than the
       30 % it is judged by (the suite of 2026-11-26: csrcuda, the very upload of aijcusparse in our pipeline, above
       1.3x of aijcusparse's build on 6-8 of 86 matrices); build_ms is the median of three, the first included */
    double   builds[3] = {res->settype_ms + res->first_ms, 0, 0};
    PetscInt nb        = 1;

    for (; res->gpu && nb < 3; nb++) {
      Mat C;

      PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &C));
      PetscCall(PetscDeviceContextSynchronize(dctx));
      PetscCall(PetscTime(&t0));
      PetscCall(MatSetType(C, type));
      PetscCall(MatSetFromOptions(C)); /* the variant's options are still set */
      PetscCall(MatMult(C, x, y));
      PetscCall(PetscDeviceContextSynchronize(dctx));
      PetscCall(PetscTime(&t1));
      builds[nb] = (t1 - t0) * 1e3;
      PetscCall(MatDestroy(&C));
    }
    qsort(builds, (size_t)nb, sizeof(double), cmp_double);
    res->build_ms = builds[nb / 2] - res->median_ms;
  }
  if (options) PetscCall(ClearVariantOptions(opts));
  res->build_spmv = res->build_ms / res->median_ms;
  res->refresh_ms = res->refresh_spmv = -1;
  if (res->gpu) {
    /* a value refresh, as in SNES or TS re-assembling the same pattern: one entry set again on the host and the
       matrix assembled (object state up, nonzero state unchanged), then the product that brings the values to the
       device, less one product; the assembly is timed too, since some types upload there (sellcuda) */
    PetscInt           row = 0, ncols = 0, c = -1;
    PetscScalar        v   = 0;
    const PetscInt    *cols;
    const PetscScalar *vals;

    for (; row < st->rows && c < 0; row++) { /* the first entry of the first nonempty row (MatRestoreRow() zeroes ncols) */
      PetscCall(MatGetRow(A, row, &ncols, &cols, &vals));
      if (ncols) c = cols[0], v = vals[0];
      PetscCall(MatRestoreRow(A, row, &ncols, &cols, &vals));
    }
    if (c >= 0) {
      double tr[5];

      row--;
      for (PetscInt k = 0; k < 5; k++) { /* the median of 5: the assembly (where a type uploads there) and the product */
        PetscCall(MatSetValue(B, row, c, v, INSERT_VALUES));
        PetscCall(PetscDeviceContextSynchronize(dctx));
        PetscCall(PetscTime(&t0));
        PetscCall(MatAssemblyBegin(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatAssemblyEnd(B, MAT_FINAL_ASSEMBLY));
        PetscCall(MatMult(B, x, y));
        PetscCall(PetscDeviceContextSynchronize(dctx));
        PetscCall(PetscTime(&t1));
        tr[k] = (t1 - t0) * 1e3 - res->median_ms;
      }
      qsort(tr, 5, sizeof(double), cmp_double);
      res->refresh_ms   = tr[2];
      res->refresh_spmv = res->refresh_ms / res->median_ms;
    }
  }
  /* metrics */
  stored            = nnz;
  index_count       = st->rows + 1; /* CSR row offsets */
  res->device_bytes = 0;
  res->stored_ratio = 1.0;
  PetscCall(IsGPUMat(B, &gpumat));
  if (gpumat) {
    MatGPUMatInfo info;

    PetscCall(MatGPUMatGetInfo(B, &info));
    stored            = (double)info.read_entries; /* the bytes a product moves: padding it skips does not count */
    res->stored_ratio = (double)info.stored / nnz;
    index_count       = (double)info.index_count;
    res->device_bytes = info.device_bytes;
  }
  {
    const SpMVMetrics met = SpMVMetricsCompute(st->rows, nnz, stored, index_count, sv, si, res->median_ms * 1e-3, bw);

    res->gflops    = met.gflops;
    res->beta_plus = met.beta_plus;
    res->eta_plus  = res->gpu ? met.eta_plus : -1;
    res->eta_minus = res->gpu ? met.eta_minus : -1;
  }
  /* the result against the host AIJ product */
  {
    Vec yh;

    PetscCall(VecDuplicate(yref, &yh));
    PetscCall(VecCopy(y, yh));
    PetscCall(VecNorm(yref, NORM_INFINITY, &nref));
    PetscCall(VecAXPY(yh, -1.0, yref));
    PetscCall(VecNorm(yh, NORM_INFINITY, &ndiff));
    res->relerr = nref > 0 ? (double)(ndiff / nref) : (double)ndiff;
    PetscCall(VecDestroy(&yh));
  }
  res->ran = PETSC_TRUE;
  /* KSP: CPU types only on small matrices (a reference, not a race) */
  if (ksptype && (res->gpu || nnz <= 4e6)) PetscCall(SolveWith(B, bksp, ksptype, rtol, maxit, res));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Commas and newlines out of a message that goes into one CSV field */
static void CSVSafe(char *s)
{
  for (; *s; s++)
    if (*s == ',' || *s == '\n' || *s == '"') *s = ';';
}

/* CG for a symmetric matrix with a positive diagonal, GMRES otherwise */
static PetscErrorCode ChooseKSP(Mat A, const char *ksp, const char **type)
{
  PetscBool sym = PETSC_FALSE, cg, gmres, fused;
  Vec       d;
  PetscReal dmin;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(ksp, "cg", &cg));
  PetscCall(PetscStrcmp(ksp, "gmres", &gmres));
  PetscCall(PetscStrcmp(ksp, KSPCGFUSED, &fused));
  if (cg || gmres || fused) {
    *type = cg ? KSPCG : fused ? KSPCGFUSED : KSPGMRES;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatIsSymmetric(A, 1e-12, &sym));
  PetscCall(MatCreateVecs(A, &d, NULL));
  PetscCall(MatGetDiagonal(A, d));
  PetscCall(VecMin(d, NULL, &dmin));
  PetscCall(VecDestroy(&d));
  *type = (sym && dmin > 0) ? KSPCG : KSPGMRES;
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define BENCH_MAX_VARIANTS 48
#define BENCH_MAX_RESULTS  128

int main(int argc, char **argv)
{
  char       *types[16], *variants[BENCH_MAX_VARIANTS], problem[32] = "lap3d7", file[PETSC_MAX_PATH_LEN] = "", csv[PETSC_MAX_PATH_LEN] = "", reason[256] = "";
  char        name[256] = "", set[64] = "", ksp[16] = "none";
  PetscInt    ntypes = 16, nvariants = BENCH_MAX_VARIANTS, k = 150, reps = 100, mean = 16, ndense = 8, nres = 0, replicate = 1, maxit = 1000, base = -1;
  PetscReal   alpha = 2.0;
  PetscReal   rtol = 1e-8;
  PetscBool   flg, fflg, nflg, gpu, csvflg, irregular = PETSC_FALSE, anycpu = PETSC_FALSE;
  Mat         A;
  Vec         xhost, yref, bksp = NULL;
  double      bw = 0;
  Result     *res;
  MatStats    st, src;
  PetscRandom rnd;
  FILE       *fp = NULL;
  const char *ksptype = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscCalloc1(BENCH_MAX_RESULTS, &res));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    const char *def[] = {MATAIJCUSPARSE, "sellcuda", MATCMRSCUDA, MATELLRCUDA, MATRGCSRCUDA};
    for (ntypes = 0; ntypes < 5; ntypes++) PetscCall(PetscStrallocpy(def[ntypes], &types[ntypes]));
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-variants", variants, &nvariants, &flg));
  if (!flg) nvariants = 0;
  if (nvariants == BENCH_MAX_VARIANTS) { /* PetscOptionsGetStringArray() drops the rest silently */
    char   raw[16384];
    size_t commas = 0;

    PetscCall(PetscOptionsGetString(NULL, NULL, "-variants", raw, sizeof(raw), NULL));
    for (const char *c = raw; *c; c++) commas += *c == ',';
    PetscCheck(commas < BENCH_MAX_VARIANTS, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "At most %d -variants per run", BENCH_MAX_VARIANTS);
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", problem, sizeof(problem), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-f", file, sizeof(file), &fflg));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-csv", csv, sizeof(csv), &csvflg));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-name", name, sizeof(name), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-set", set, sizeof(set), NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-ksp", ksp, sizeof(ksp), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &k, &nflg));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-mean", &mean, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dense_rows", &ndense, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-alpha", &alpha, NULL));
  PetscCheck(alpha >= 1.1 && alpha <= 4.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-alpha %g must be in 1.1..4", (double)alpha);
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-replicate", &replicate, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ksp_max_it", &maxit, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-ksp_rtol", &rtol, NULL));
  PetscCheck(reps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-reps %" PetscInt_FMT " must be positive", reps);
  PetscCheck(replicate >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-replicate %" PetscInt_FMT " must be positive", replicate);
  PetscCall(PetscStrInList(ksp, "none,auto,cg,cgfused,gmres", ',', &flg));
  PetscCheck(flg, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown -ksp %s: none, auto, cg, cgfused or gmres", ksp);
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  for (PetscInt t = 0; t < ntypes; t++)
    if (!IsGPUTypeName(types[t])) anycpu = PETSC_TRUE;
  if (!gpu) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bench_spmv: GPU types skipped: %s.\n%s\n", reason,
                          anycpu ? "Only the CPU types run here; run the benchmark on a machine with an NVIDIA GPU for the others (see README: the device runner)." : "No CPU type was requested, so there is nothing to run; run the benchmark on a machine with an NVIDIA GPU (see README: the device runner)."));
    if (!anycpu) {
      for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
      for (PetscInt v = 0; v < nvariants; v++) PetscCall(PetscFree(variants[v]));
      PetscCall(PetscFree(res));
      PetscCall(PetscFinalize());
      return 0;
    }
  }
  if (fflg) {
    const char *base_name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;

    PetscCall(MatLoadMatrixMarket(PETSC_COMM_WORLD, file, MATAIJ, &A));
    if (!name[0]) {
      PetscCall(PetscStrncpy(name, base_name, sizeof(name)));
      if (strstr(name, ".mtx")) *strstr(name, ".mtx") = 0;
    }
  } else {
    PetscCall(PetscStrInList(problem, "perm,dense,powerlaw,denserows,arrow", ',', &irregular));
    PetscCall(PetscStrInList(problem, "lap2d5,lap3d7,lap3d27,rows", ',', &flg));
    PetscCheck(flg || irregular, PETSC_COMM_WORLD, PETSC_ERR_ARG_WRONG, "Unknown -problem %s: lap2d5, lap3d7, lap3d27, rows, perm, dense, powerlaw, denserows or arrow", problem);
    PetscCheck(mean >= 1 && mean <= 512, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-mean %" PetscInt_FMT " must be in 1..512", mean);
    if (irregular) {
      PetscBool dense;

      PetscCall(PetscStrcmp(problem, "dense", &dense));
      if (!nflg) k = dense ? 10000 : 2000000;
      PetscCheck(k >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " must be positive", k);
      PetscCall(CreateIrregular(problem, k, mean, alpha, ndense, &A));
    } else PetscCall(ExampleCreateProblem(PETSC_COMM_WORLD, problem, k, mean, &A));
    if (!name[0]) PetscCall(PetscSNPrintf(name, sizeof(name), "%s-n%" PetscInt_FMT, problem, k));
  }
  PetscCall(ComputeStats(A, &src));
  if (replicate > 1) {
    Mat R;

    PetscCall(Replicate(A, replicate, &R));
    PetscCall(MatDestroy(&A));
    A = R;
  }
  PetscCall(ComputeStats(A, &st));
  if (gpu) {
    /* the device, cuSPARSE and cuBLAS initialised before the first type's conversion is timed */
    Mat       warm;
    Vec       wx, wy;
    PetscReal wnorm;

    PetscCall(MeasureCopyBandwidth(&bw));
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 64, 64, 1, NULL, &warm));
    for (PetscInt i = 0; i < 64; i++) PetscCall(MatSetValue(warm, i, i, 1.0, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(warm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(warm, MAT_FINAL_ASSEMBLY));
    PetscCall(MatSetType(warm, MATAIJCUSPARSE));
    PetscCall(MatCreateVecs(warm, &wx, &wy));
    PetscCall(VecSet(wx, 1.0));
    PetscCall(MatMult(warm, wx, wy));
    PetscCall(VecNorm(wy, NORM_2, &wnorm));
    PetscCall(VecDestroy(&wx));
    PetscCall(VecDestroy(&wy));
    PetscCall(MatDestroy(&warm));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix %s%s%s: %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %.0f, row length mean %.2f, sigma %.2f, max %" PetscInt_FMT ", %" PetscInt_FMT " empty rows, %.1f %% of the entries in rows longer than %d x mean", name, fflg ? " from " : "", fflg ? file : "", st.rows, st.cols, st.nnz, st.mu, st.sigma, st.maxrow, st.empty, 100 * st.heavy, HEAVY_ROW_MEANS));
  if (replicate > 1) PetscCall(PetscPrintf(PETSC_COMM_WORLD, " (%" PetscInt_FMT " copies on the diagonal of the %" PetscInt_FMT " x %" PetscInt_FMT " matrix, nnz %.0f)", replicate, src.rows, src.cols, src.nnz));
  if (gpu) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; device copy bandwidth B = %.0f GB/s; median of %" PetscInt_FMT " MatMult, CUDA events\n", bw / 1e9, reps));
  else PetscCall(PetscPrintf(PETSC_COMM_WORLD, "; median of %" PetscInt_FMT " MatMult, wall clock\n", PetscMin(reps, 20)));
  PetscCall(MatCreateVecs(A, &xhost, &yref));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetInterval(rnd, -1.0, 1.0));
  PetscCall(VecSetRandom(xhost, rnd));
  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(MatMult(A, xhost, yref)); /* host AIJ reference */
  PetscCall(PetscStrcmp(ksp, "none", &flg));
  if (!flg) {
    if (st.rows != st.cols) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP skipped: the matrix is not square\n"));
    else {
      Vec one;

      PetscCall(ChooseKSP(A, ksp, &ksptype));
      PetscCall(VecDuplicate(xhost, &one));
      PetscCall(VecDuplicate(yref, &bksp));
      PetscCall(VecSet(one, 1.0));
      PetscCall(MatMult(A, one, bksp)); /* b = A 1: every type solves the same system */
      PetscCall(VecDestroy(&one));
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "KSP: %s + Jacobi, rtol %g, at most %" PetscInt_FMT " iterations, b = A 1, x0 = 0; one timed solve per type after a 3-iteration warm-up\n", ksptype, (double)rtol, maxit));
    }
  }
  for (PetscInt v = -1; v < nvariants; v++) {
    for (PetscInt t = 0; t < ntypes; t++) {
      Result *r = &res[nres];

      if (nres >= BENCH_MAX_RESULTS) break;
      if (v >= 0) {
        char      key[32];
        char     *found;

        /* a variant applies to the type whose options it names: "ellrcuda" <-> "mat_ellr_", ... */
        PetscCall(PetscStrncpy(key, "mat_", sizeof(key)));
        PetscCall(PetscStrlcat(key, types[t] + (types[t][0] == 's' && types[t][1] == 'e' && types[t][2] == 'q' ? 6 : 0), sizeof(key))); /* seqaijellrcuda -> ellrcuda */
        key[PetscMax(4, (int)strlen(key) - 4)] = 0;                                           /* mat_ellrcuda -> mat_ellr */
        PetscCall(PetscStrlcat(key, "_", sizeof(key)));
        PetscCall(PetscStrstr(variants[v], key, &found));
        if (!found) continue;
      }
      if (IsGPUTypeName(types[t]) && !gpu) {
        if (v < 0) {
          PetscCall(PetscSNPrintf(r->label, sizeof(r->label), "%s", types[t]));
          PetscCall(PetscStrncpy(r->base_type, types[t], sizeof(r->base_type)));
          PetscCall(PetscSNPrintf(r->failure, sizeof(r->failure), "skipped: %s", reason));
          r->gpu = PETSC_TRUE;
          nres++;
        }
        continue;
      }
      PetscCall(BenchType(A, &st, types[t], v >= 0 ? variants[v] : NULL, reps, bw, xhost, yref, ksptype, bksp, rtol, maxit, r));
      nres++;
    }
  }
  for (PetscInt r = 0; r < nres && base < 0; r++)
    if (res[r].ran) base = r;
  for (PetscInt r = 0; r < nres; r++) {
    res[r].speedup     = res[r].ran ? res[base].median_ms / res[r].median_ms : 0;
    res[r].ksp_speedup = res[r].ran && res[r].ksp[0] && res[base].ksp[0] && res[r].ksp_s > 0 ? res[base].ksp_s / res[r].ksp_s : 0;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %10s %9s %9s %8s %7s %7s %9s %8s %9s %9s %10s %9s\n", "type", "median ms", "min ms", "max ms", "GFLOPS", "eta+", "eta-", "speed-up", "stored", "build ms", "build/SpMV", "refresh ms", "rel.err"));
  for (PetscInt r = 0; r < nres; r++) {
    Result *q = &res[r];

    if (!q->ran) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %.140s\n", q->label, q->failure));
    else if (q->gpu)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %10.4f %9.4f %9.4f %8.1f %7.3f %7.3f %9.3f %8.3f %9.1f %9.0f %10.2f %9.1e%s\n", q->label, q->median_ms, q->min_ms, q->max_ms, q->gflops, q->eta_plus, q->eta_minus, q->speedup, q->stored_ratio, q->build_ms, q->build_spmv, q->refresh_ms, q->relerr, q->relerr > SpMVResultTolerance(PETSC_MACHINE_EPSILON, (double)st.maxrow) ? "  WRONG RESULT" : ""));
    else
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %10.4f %9.4f %9.4f %8.1f %7s %7s %9.3f %8.3f %9.1f %9.0f %10s %9.1e%s (CPU)\n", q->label, q->median_ms, q->min_ms, q->max_ms, q->gflops, "-", "-", q->speedup, q->stored_ratio, q->build_ms, q->build_spmv, "-", q->relerr, q->relerr > SpMVResultTolerance(PETSC_MACHINE_EPSILON, (double)st.maxrow) ? "  WRONG RESULT" : ""));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "speed-up: median time of %s / median time of the type; stored: stored entries / nnz; build: conversion from AIJ + first product - one product (ms, and in products; GPU types: the median of three builds of fresh copies, the first included); refresh: an entry set again on the host (same pattern), then the assembly and the product that upload the values - one product (ms, median of 5)\n", base >= 0 ? res[base].label : "-"));
  if (ksptype) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %6s %6s %10s %10s %11s %13s %10s %9s %9s %7s\n", "KSP", "its", "reason", "solve s", "speed-up", "res. norm", "+ build s", "speed-up", "us/it", "bound us", "ratio"));
    for (PetscInt r = 0; r < nres; r++)
      if (res[r].ran && res[r].ksp[0]) {
        const double with = res[r].ksp_s + res[r].build_ms * 1e-3, basewith = base >= 0 && res[base].ksp[0] ? res[base].ksp_s + res[base].build_ms * 1e-3 : 0;
        const double it_us = KSPIterationMicroseconds(&res[r]), bound_us = KSPBoundMicroseconds(&res[r], &st, bw);
        char         bound[2][16] = {"-", "-"}; /* CPU types: none (B is the GPU's bandwidth) */

        if (bound_us > 0) {
          PetscCall(PetscSNPrintf(bound[0], sizeof(bound[0]), "%.1f", bound_us));
          PetscCall(PetscSNPrintf(bound[1], sizeof(bound[1]), "%.3f", it_us / bound_us));
        }
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-44s %6" PetscInt_FMT " %6d %10.4f %10.3f %11.3e %13.4f %10.3f %9.1f %9s %7s\n", res[r].label, res[r].its, res[r].reason, res[r].ksp_s, res[r].ksp_speedup, res[r].ksp_rnorm, with, basewith > 0 && with > 0 ? basewith / with : 0.0, it_us, bound[0], bound[1]));
      }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "+ build: the solve with the matrix's device build (the build column above) added: what a program's first solve pays for the matrix; us/it: the solve's time per iteration; bound: an iteration's bytes at best (the product's beta+ and %d more passes over a vector, %d in all; types not of this library counted as CSR) / B; ratio: us/it over the bound\n", SPMV_CG_VECTOR_PASSES - 2, SPMV_CG_VECTOR_PASSES));
  }
  if (csvflg) {
    PetscCall(PetscFOpen(PETSC_COMM_WORLD, csv, "w", &fp));
    PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "matrix,rows,cols,nnz,type,median_ms,min_ms,max_ms,gflops,eta_plus,eta_minus,speedup_vs_first,stored_over_nnz,convert_s,copy_bw_GBs,rel_err,"
                                                 "set,base_type,variant,status,mu,sigma,max_row,empty_rows,heavy_share,replicate,src_rows,src_nnz,settype_ms,first_ms,build_ms,build_spmv,refresh_ms,refresh_spmv,device_MB,gpu,"
                                                 "ksp,ksp_its,ksp_reason,ksp_s,ksp_speedup_vs_first,ksp_rnorm,ksp_with_build_s,ksp_it_us,ksp_bound_us,message\n"));
    for (PetscInt r = 0; r < nres; r++) {
      Result *q = &res[r];
      char    msg[512], eta[2][32];

      PetscCall(PetscStrncpy(msg, q->failure, sizeof(msg)));
      CSVSafe(msg);
      CSVSafe(q->label);
      eta[0][0] = eta[1][0] = 0; /* CPU types: no eta (B is the GPU's bandwidth) */
      if (q->gpu) {
        PetscCall(PetscSNPrintf(eta[0], sizeof(eta[0]), "%.4f", q->eta_plus));
        PetscCall(PetscSNPrintf(eta[1], sizeof(eta[1]), "%.4f", q->eta_minus));
      }
      if (q->ran)
        PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s,%" PetscInt_FMT ",%" PetscInt_FMT ",%.0f,%s,%.5f,%.5f,%.5f,%.2f,%s,%s,%.4f,%.4f,%.4f,%.1f,%.2e,", name, st.rows, st.cols, st.nnz, q->label, q->median_ms, q->min_ms, q->max_ms, q->gflops, eta[0], eta[1], q->speedup, q->stored_ratio,
                               (q->settype_ms + q->first_ms) * 1e-3, bw / 1e9, q->relerr));
      else PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s,%" PetscInt_FMT ",%" PetscInt_FMT ",%.0f,%s,,,,,,,,,,%.1f,,", name, st.rows, st.cols, st.nnz, q->label, bw / 1e9));
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s,%s,%s,%s,%.3f,%.3f,%" PetscInt_FMT ",%" PetscInt_FMT ",%.4f,%" PetscInt_FMT ",%" PetscInt_FMT ",%.0f,", set, q->base_type, q->variant, q->ran ? (q->relerr > SpMVResultTolerance(PETSC_MACHINE_EPSILON, (double)st.maxrow) ? "wrong" : "ok") : (q->failure[0] == 's' ? "skipped" : "refused"), st.mu, st.sigma, st.maxrow, st.empty, st.heavy, replicate, src.rows, src.nnz));
      if (q->ran) {
        PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%.3f,%.3f,%.3f,%.1f,", q->settype_ms, q->first_ms, q->build_ms, q->build_spmv));
        if (q->refresh_ms >= -0.5) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%.3f,%.1f,", q->refresh_ms, q->refresh_spmv));
        else PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, ",,"));
        PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%.2f,%d,", q->device_bytes / 1048576.0, (int)q->gpu));
      } else PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, ",,,,,,,%d,", (int)q->gpu));
      if (q->ran && q->ksp[0]) {
        const double bound_us = KSPBoundMicroseconds(q, &st, bw);

        PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s,%" PetscInt_FMT ",%d,%.5f,%.4f,%.3e,%.5f,%.2f,", q->ksp, q->its, q->reason, q->ksp_s, q->ksp_speedup, q->ksp_rnorm, q->ksp_s + q->build_ms * 1e-3, KSPIterationMicroseconds(q)));
        if (bound_us > 0) PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%.2f,", bound_us));
        else PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, ","));
      } else PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, ",,,,,,,,,"));
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, fp, "%s\n", msg));
    }
    PetscCall(PetscFClose(PETSC_COMM_WORLD, fp));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt v = 0; v < nvariants; v++) PetscCall(PetscFree(variants[v]));
  PetscCall(PetscFree(res));
  PetscCall(VecDestroy(&bksp));
  PetscCall(VecDestroy(&xhost));
  PetscCall(VecDestroy(&yref));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
