static const char help[] = "Triangular solves of ILU(0)/ICC(0) factors on the device (cuSPARSE, aijcusparse's factor) and on the host\n"
                           "(SeqAIJ's), with device vectors, against the level sets of the matrix's triangles: the data of the rule\n"
                           "by which our types choose where their factors solve (-mat_gpumat_trisolve auto).\n\n"
                           "  -problems <p:k,...>    built-in matrices (lap2d5, lap3d7, lap3d27 on k^d grids; default: a range of each)\n"
                           "  -f <file,...>          Matrix Market files (square; factored as A + I, graphs lacking diagonal entries)\n"
                           "  -factor <ilu|icc>      the factorization (default ilu)\n"
                           "  -reps <r>              timed solves (and 5 numeric factorizations) per matrix and side (default 30)\n"
                           "  -csv <file>            also write the rows to a CSV file\n";

/*
  Each solve is timed as a Krylov method sees it: the right-hand side was just written on the device and the
  solution is read there next (a VecScale() by 1 on each side, the same for both factors), so the host factor
  pays for moving both vectors. Each repetition is synchronised; the median is reported.
*/
#include <petscgpumat.h>
#include <petscdevice.h>
#include <petsctime.h>
#include "problems.h"

static PetscErrorCode Sync(void)
{
  PetscDeviceContext dctx;

  PetscFunctionBeginUser;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextSynchronize(dctx));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Median(PetscInt n, PetscReal t[], double *median)
{
  PetscFunctionBeginUser;
  PetscCall(PetscSortReal(n, t));
  *median = (double)(n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Median numeric factorization (ms) and solve (us) of A (MATSEQAIJ or MATSEQAIJCUSPARSE) with `solver` */
static PetscErrorCode TimeFactor(Mat A, MatSolverType solver, MatFactorType ftype, PetscInt reps, double *numeric_ms, double *solve_us, PetscBool *failed)
{
  Mat             F;
  IS              row, col;
  MatFactorInfo   info;
  Vec             b, x;
  PetscReal      *t;
  PetscLogDouble  t0, t1;
  MatFactorError  err;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(PetscMax(reps, 5), &t));
  PetscCall(MatGetFactor(A, solver, ftype, &F));
  PetscCall(MatGetOrdering(A, MATORDERINGNATURAL, &row, &col));
  PetscCall(MatFactorInfoInitialize(&info));
  info.fill        = 1.0;
  info.levels      = 0;
  info.shifttype   = (PetscReal)MAT_SHIFT_NONZERO;
  info.shiftamount = 1e-12;
  if (ftype == MAT_FACTOR_ILU) PetscCall(MatILUFactorSymbolic(F, A, row, col, &info));
  else PetscCall(MatICCFactorSymbolic(F, A, row, &info));
  for (PetscInt r = 0; r < 5; r++) {
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    if (ftype == MAT_FACTOR_ILU) PetscCall(MatLUFactorNumeric(F, A, &info));
    else PetscCall(MatCholeskyFactorNumeric(F, A, &info));
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    t[r] = 1e3 * (t1 - t0);
  }
  PetscCall(Median(5, t, numeric_ms));
  PetscCall(MatFactorGetError(F, &err));
  *failed = (PetscBool)(err != MAT_FACTOR_NOERROR);
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecSetType(x, VECCUDA));
  PetscCall(VecSetType(b, VECCUDA));
  PetscCall(VecSet(b, 1.0));
  for (PetscInt r = -2; r < reps; r++) { /* two warm-up solves */
    PetscCall(Sync());
    PetscCall(PetscTime(&t0));
    PetscCall(VecScale(b, 1.0)); /* b last written on the device */
    PetscCall(MatSolve(F, b, x));
    PetscCall(VecScale(x, 1.0)); /* x next read on the device */
    PetscCall(Sync());
    PetscCall(PetscTime(&t1));
    if (r >= 0) t[r] = 1e6 * (t1 - t0);
  }
  PetscCall(Median(reps, t, solve_us));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(ISDestroy(&row));
  PetscCall(ISDestroy(&col));
  PetscCall(MatDestroy(&F));
  PetscCall(PetscFree(t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Measure(Mat A, const char *name, MatFactorType ftype, PetscInt reps, FILE *csv)
{
  Mat            Ad;
  PetscInt       lower, upper, n;
  PetscCount     nnz;
  PetscLogDouble t0, t1;
  double         hn, hs, dn, ds, per_level;
  PetscBool      hfail, dfail;
  MatInfo        minfo;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, &n, NULL));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &minfo));
  nnz = (PetscCount)minfo.nz_used;
  PetscCall(PetscTime(&t0));
  PetscCall(MatGPUMatGetTriangularLevels(A, &lower, &upper));
  PetscCall(PetscTime(&t1));
  per_level = (double)nnz / (double)PetscMax(lower + upper, 1);
  PetscCall(TimeFactor(A, MATSOLVERPETSC, ftype, reps, &hn, &hs, &hfail));
  PetscCall(MatConvert(A, MATSEQAIJCUSPARSE, MAT_INITIAL_MATRIX, &Ad));
  PetscCall(TimeFactor(Ad, MATSOLVERCUSPARSE, ftype, reps, &dn, &ds, &dfail));
  PetscCall(MatDestroy(&Ad));
  PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-24s %9" PetscInt_FMT " %10" PetscCount_FMT " %7" PetscInt_FMT " %7" PetscInt_FMT " %10.1f %8.2f | %9.1f %9.1f %6.2f | %8.2f %8.2f%s\n", name, n, nnz, lower, upper, per_level, 1e3 * (t1 - t0), hs, ds, hs / ds, hn, dn,
                        hfail || dfail ? "  (zero pivot)" : ""));
  if (csv) fprintf(csv, "%s,%s,%" PetscInt_FMT ",%" PetscCount_FMT ",%" PetscInt_FMT ",%" PetscInt_FMT ",%.2f,%.3f,%.2f,%.2f,%.4f,%.3f,%.3f,%d\n", name, MatFactorTypes[ftype], n, nnz, lower, upper, per_level, 1e3 * (t1 - t0), hs, ds, hs / ds, hn, dn, (int)(hfail || dfail));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char          *problems[64], *files[64], factor[8] = "ilu", csvname[PETSC_MAX_PATH_LEN] = "", reason[256];
  const char    *defaults[] = {"lap2d5:16", "lap2d5:32", "lap2d5:64", "lap2d5:128", "lap2d5:256", "lap2d5:512", "lap2d5:1024", "lap2d5:2048", "lap3d7:8", "lap3d7:16", "lap3d7:32", "lap3d7:64", "lap3d7:100", "lap3d7:150", "lap3d27:16", "lap3d27:32", "lap3d27:64", "lap3d27:100"};
  PetscInt       np = 64, nf = 64, reps = 30;
  PetscBool      set, gpu, icc;
  FILE          *csv = NULL;
  MatFactorType  ftype;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-problems", problems, &np, &set));
  if (!set) {
    np = PETSC_STATIC_ARRAY_LENGTH(defaults);
    for (PetscInt i = 0; i < np; i++) PetscCall(PetscStrallocpy(defaults[i], &problems[i]));
  }
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-f", files, &nf, &set));
  if (!set) nf = 0;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-factor", factor, sizeof(factor), NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-csv", csvname, sizeof(csvname), NULL));
  PetscCall(PetscStrcmp(factor, "icc", &icc));
  ftype = icc ? MAT_FACTOR_ICC : MAT_FACTOR_ILU;
  PetscCheck(reps >= 1, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "-reps must be at least 1");
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) {
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "bench_trisolve: needs a GPU (%s); nothing measured\n", reason));
  } else {
    if (csvname[0]) {
      csv = fopen(csvname, "w");
      PetscCheck(csv, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", csvname);
      fprintf(csv, "matrix,factor,rows,nnz,levels_lower,levels_upper,nnz_per_level,levels_ms,host_solve_us,device_solve_us,device_speedup,host_numeric_ms,device_numeric_ms,zero_pivot\n");
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%s(0) solves, median of %" PetscInt_FMT " (us), device vectors; numeric factorization, median of 5 (ms)\n", icc ? "ICC" : "ILU", reps));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-24s %9s %10s %7s %7s %10s %8s | %9s %9s %6s | %8s %8s\n", "matrix", "rows", "nnz", "lower", "upper", "nnz/level", "lvl ms", "host us", "device us", "dev x", "host ms", "dev ms"));
    for (PetscInt i = 0; i < np; i++) {
      char    *colon, name[64];
      PetscInt k;
      Mat      A;

      PetscCall(PetscStrchr(problems[i], ':', &colon));
      PetscCheck(colon, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "-problems takes name:k entries, not %s", problems[i]);
      *colon = 0;
      k      = atoi(colon + 1);
      PetscCall(ExampleCreateProblem(PETSC_COMM_WORLD, problems[i], k, 0, &A));
      PetscCall(PetscSNPrintf(name, sizeof(name), "%s:%" PetscInt_FMT, problems[i], k));
      PetscCall(Measure(A, name, ftype, reps, csv));
      PetscCall(MatDestroy(&A));
    }
    for (PetscInt i = 0; i < nf; i++) {
      Mat         A;
      const char *base;
      PetscInt    m, n;

      PetscErrorCode ierr;

      base = strrchr(files[i], '/') ? strrchr(files[i], '/') + 1 : files[i];
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = MatLoadMatrixMarket(PETSC_COMM_SELF, files[i], MATSEQAIJ, &A);
      PetscCall(PetscPopErrorHandler());
      if (ierr) { /* e.g. a complex matrix in a real build */
        PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-24s cannot be read here (error %d): skipped\n", base, (int)ierr));
        continue;
      }
      PetscCall(MatGetSize(A, &m, &n));
      if (m == n) { /* A + I: graphs lack diagonal entries, which ILU needs (the levels are those of A + I's pattern) */
        PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
        PetscCall(MatShift(A, 1.0));
        PetscCall(Measure(A, base, ftype, reps, csv));
      }
      else PetscCall(PetscPrintf(PETSC_COMM_SELF, "%-24s not square: skipped\n", base));
      PetscCall(MatDestroy(&A));
    }
    if (csv) fclose(csv);
  }
  for (PetscInt i = 0; i < np; i++) PetscCall(PetscFree(problems[i]));
  for (PetscInt i = 0; i < nf; i++) PetscCall(PetscFree(files[i]));
  PetscCall(PetscFinalize());
  return 0;
}
