static const char help[] = "MPI scaling of MatMult and of a CG solve on a 3-D 7-point Laplacian, for several matrix types in one run.\n"
                           "  -types aijcusparse,ellrcuda   types to time (each converted from the same MPIAIJ matrix); type+vecscatter:\n"
                           "                                our type with PETSc's VecScatter for the ghost values; type+staged: our\n"
                           "                                exchange through pinned host buffers (-mat_gpumat_halo_ipc 0)\n"
                           "  -grid nx,ny,nz                the grid (default 200,200,200)\n"
                           "  -weak                         weak scaling: nz is multiplied by the number of ranks\n"
                           "  -reps 50                      timed MatMult runs (median, min, max over the runs)\n"
                           "  -cg_its 200                   CG iterations timed (Jacobi, fixed count)\n"
                           "  -csv file                     append one line per type to this CSV file\n";

/*
  Each rank owns a contiguous block of rows (PETSc's default split) of the grid's natural ordering; the CSR of
  the local rows is written directly and given to MatCreateMPIAIJWithArrays() (assembling 30 M rows through
  MatSetValues() would take longer than the measurements). Every type is a conversion of that one matrix.

  A timed MatMult: all ranks synchronize their device and meet at a barrier, then the product runs and each
  rank synchronizes its device; the time of the run is the largest over the ranks. GFLOPS = (2 nnz - rows)/t.
  Each type's product is compared with the host MPIAIJ product first: a wrong result is marked VOID and the
  program exits with status 1.
*/
#include <petscksp.h>
#include <petscdevice_cuda.h>
#include <petscgpumat.h>
#include "spmv_metrics.h"

static PetscErrorCode CreateLaplacian(MPI_Comm comm, PetscInt nx, PetscInt ny, PetscInt nz, Mat *A)
{
  PetscInt     N = nx * ny * nz, m = PETSC_DECIDE, rstart = 0, *ai, *aj, k = 0;
  PetscScalar *aa;
  PetscMPIInt  rank;

  PetscFunctionBeginUser;
  PetscCall(PetscSplitOwnership(comm, &m, &N));
  PetscCallMPI(MPI_Exscan(&m, &rstart, 1, MPIU_INT, MPI_SUM, comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) rstart = 0;
  PetscCall(PetscMalloc3(m + 1, &ai, 7 * m, &aj, 7 * m, &aa));
  ai[0] = 0;
  for (PetscInt r = rstart; r < rstart + m; r++) {
    const PetscInt i = r % nx, j = (r / nx) % ny, l = r / (nx * ny);

    if (l > 0) aj[k] = r - nx * ny, aa[k++] = -1;
    if (j > 0) aj[k] = r - nx, aa[k++] = -1;
    if (i > 0) aj[k] = r - 1, aa[k++] = -1;
    aj[k] = r, aa[k++] = 6;
    if (i < nx - 1) aj[k] = r + 1, aa[k++] = -1;
    if (j < ny - 1) aj[k] = r + nx, aa[k++] = -1;
    if (l < nz - 1) aj[k] = r + nx * ny, aa[k++] = -1;
    ai[r - rstart + 1] = k;
  }
  PetscCall(MatCreateMPIAIJWithArrays(comm, m, m, N, N, ai, aj, aa, A));
  PetscCall(PetscFree3(ai, aj, aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static int CompareDouble(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Device synchronize on this rank, then a barrier: every rank starts the next step together */
static PetscBool gpu;

static PetscErrorCode SyncDevice(void)
{
  PetscFunctionBeginUser;
  if (gpu) PetscCallCUDA(cudaDeviceSynchronize());
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode SyncAll(MPI_Comm comm)
{
  PetscFunctionBeginUser;
  PetscCall(SyncDevice());
  PetscCallMPI(MPI_Barrier(comm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm    comm;
  char       *types[16], csv[PETSC_MAX_PATH_LEN] = "";
  PetscInt    ntypes = 16, grid[3] = {200, 200, 200}, ng = 3, reps = 50, cgits = 200;
  PetscBool   weak = PETSC_FALSE, flg;
  PetscMPIInt size;
  Mat         A;
  char        reason[256];
  PetscInt    N, wrong = 0;
  PetscCount  nnz;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) PetscCall(PetscPrintf(comm, "GPU types skipped: %s\n", reason));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    PetscCall(PetscStrallocpy(MATAIJCUSPARSE, &types[0]));
    PetscCall(PetscStrallocpy(MATELLRCUDA, &types[1]));
    ntypes = 2;
  }
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-grid", grid, &ng, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-weak", &weak, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-reps", &reps, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cg_its", &cgits, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-csv", csv, sizeof(csv), NULL));
  if (weak) grid[2] *= size;
  N = grid[0] * grid[1] * grid[2];
  if (gpu) PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCall(CreateLaplacian(comm, grid[0], grid[1], grid[2], &A));
  {
    MatInfo info;

    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
    nnz = (PetscCount)info.nz_used;
  }
  PetscCall(PetscPrintf(comm, "# %s scaling, %d rank(s): 3-D 7-point Laplacian %" PetscInt_FMT "x%" PetscInt_FMT "x%" PetscInt_FMT ", %" PetscInt_FMT " rows, %" PetscCount_FMT " nonzeros, %" PetscInt_FMT " MatMult runs, %" PetscInt_FMT " CG iterations\n", weak ? "weak" : "strong", size, grid[0], grid[1], grid[2], N, nnz, reps, cgits));
  PetscCall(PetscPrintf(comm, "%-14s %10s %10s %10s %9s %12s\n", "type", "median ms", "min ms", "max ms", "GFLOPS", "CG ms/it"));
  for (PetscInt t = 0; t < ntypes; t++) {
    Mat        B;
    Vec        x, y, b;
    double    *times, med, tmin, tmax, cgms;
    KSP        ksp;
    PC         pc;
    PetscReal  err = 0, ynorm;
    PetscInt   its;
    PetscBool  host;

    char      *plus;
    char       type[64];

    /* "ellrcuda+vecscatter": our type with PETSc's VecScatter for the halo; "ellrcuda+staged": our exchange through
       pinned host buffers (no CUDA IPC) */
    PetscCall(PetscStrncpy(type, types[t], sizeof(type)));
    PetscCall(PetscStrchr(type, '+', &plus));
    if (plus) *plus++ = 0;
    PetscCall(PetscStrcmpAny(type, &host, MATAIJ, MATMPIAIJ, MATSEQAIJ, ""));
    if (!gpu && !host) continue;
    PetscCall(MatConvert(A, type, MAT_INITIAL_MATRIX, &B));
    if (plus) {
      PetscBool vs, st;

      PetscCall(PetscStrcmp(plus, "vecscatter", &vs));
      PetscCall(PetscStrcmp(plus, "staged", &st));
      PetscCheck(vs || st, comm, PETSC_ERR_ARG_WRONG, "Unknown halo exchange in %s: use +vecscatter or +staged", types[t]);
      PetscCall(PetscOptionsSetValue(NULL, vs ? "-mat_gpumat_halo_vecscatter" : "-mat_gpumat_halo_ipc", vs ? "1" : "0"));
    }
    PetscCall(MatSetFromOptions(B));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_vecscatter"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_ipc"));
    PetscCall(MatCreateVecs(B, &x, &y));
    PetscCall(VecSetRandom(x, NULL));
    PetscCall(MatMult(B, x, y)); /* warm-up: builds the device copy */
    {
      /* a benchmark of a wrong result is void: compare with the host MPIAIJ product */
      Vec xh, yh, yc;

      PetscCall(MatCreateVecs(A, &xh, &yh));
      PetscCall(VecCopy(x, xh));
      PetscCall(MatMult(A, xh, yh));
      PetscCall(VecDuplicate(yh, &yc));
      PetscCall(VecCopy(y, yc));
      PetscCall(VecAXPY(yc, -1.0, yh));
      PetscCall(VecNorm(yc, NORM_INFINITY, &err));
      PetscCall(VecNorm(yh, NORM_INFINITY, &ynorm));
      err = ynorm > 0 ? err / ynorm : err; /* relative, against a threshold that follows the precision */
      PetscCall(VecDestroy(&xh));
      PetscCall(VecDestroy(&yh));
      PetscCall(VecDestroy(&yc));
    }
    PetscCall(PetscMalloc1(reps, &times));
    for (PetscInt r = 0; r < reps; r++) {
      double t0, dt;

      PetscCall(SyncAll(comm));
      t0 = MPI_Wtime();
      PetscCall(MatMult(B, x, y));
      PetscCall(SyncDevice());
      dt = MPI_Wtime() - t0;
      PetscCallMPI(MPIU_Allreduce(&dt, &times[r], 1, MPI_DOUBLE, MPI_MAX, comm));
    }
    qsort(times, (size_t)reps, sizeof(double), CompareDouble);
    med  = 1e3 * times[reps / 2];
    tmin = 1e3 * times[0];
    tmax = 1e3 * times[reps - 1];
    /* CG with Jacobi, a fixed number of iterations (no convergence test in the loop's count) */
    PetscCall(VecDuplicate(y, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(KSPCreate(comm, &ksp));
    PetscCall(KSPSetOperators(ksp, B, B));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetTolerances(ksp, 1e-50, 1e-50, PETSC_DEFAULT, cgits));
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetUp(ksp));
    PetscCall(KSPSolve(ksp, b, x)); /* warm-up */
    PetscCall(SyncAll(comm));
    {
      double t0 = MPI_Wtime(), dt;

      PetscCall(KSPSolve(ksp, b, x));
      PetscCall(SyncDevice());
      dt = MPI_Wtime() - t0;
      PetscCallMPI(MPIU_Allreduce(&dt, &cgms, 1, MPI_DOUBLE, MPI_MAX, comm));
    }
    PetscCall(KSPGetIterationNumber(ksp, &its));
    cgms = 1e3 * cgms / (double)PetscMax(its, 1);
    PetscCall(PetscPrintf(comm, "%-14s %10.4f %10.4f %10.4f %9.1f %12.4f   (|y - y_aij|/|y_aij| = %.1e, %" PetscInt_FMT " CG its)%s\n", types[t], med, tmin, tmax, (2.0 * (double)nnz - (double)N) / (med * 1e-3) * 1e-9, cgms, (double)err, its,
                          err > SpMVResultTolerance(PETSC_MACHINE_EPSILON, 7) ? "  VOID: WRONG RESULT" : ""));
    if (err > SpMVResultTolerance(PETSC_MACHINE_EPSILON, 7)) wrong++; /* a 7-point Laplacian */
    if (csv[0]) {
      FILE *fp;

      PetscCall(PetscFOpen(comm, csv, "a", &fp));
      PetscCall(PetscFPrintf(comm, fp, "%s,%d,%s,%" PetscInt_FMT ",%" PetscCount_FMT ",%.6f,%.6f,%.6f,%.2f,%.6f,%" PetscInt_FMT ",%.3e\n", weak ? "weak" : "strong", size, types[t], N, nnz, med, tmin, tmax, (2.0 * (double)nnz - (double)N) / (med * 1e-3) * 1e-9, cgms, its, (double)err));
      PetscCall(PetscFClose(comm, fp));
    }
    PetscCall(PetscFree(times));
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&b));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&y));
    PetscCall(MatDestroy(&B));
  }
  PetscCall(MatDestroy(&A));
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  PetscCall(PetscFinalize());
  return wrong ? 1 : 0; /* a benchmark of a wrong result is void */
}
