static char help[] = "Compares KSP solve times for one matrix stored as several matrix types.\n\n\
The matrix is assembled once as MATAIJ on the host and copied into each type with MatDuplicate() and MatSetType(), so\n\
every type solves exactly the same system. For each type a first solve is timed with its setup (the\n\
conversion, the device build of the matrix, the preconditioner's setup), then R solves. The table reports the\n\
iterations, the true relative residual ||b - A x||/||b|| and the\n\
error ||x - x_exact||_inf/||x_exact||_inf (both computed on the host AIJ matrix), the minimum solve\n\
time and its time per iteration (bench_spmv -ksp puts it beside the bandwidth bound), the first solve with setup, the MatMult count per solve and time per call (from PETSc logging, one log\n\
stage per type), and the speed-ups relative to the first type (the GPU and its libraries are initialized before\n\
any type is timed).\n\n\
Options:\n\
  -types <t1,t2,...>        matrix types to compare; the first is the baseline; t:k solves with KSP type k\n\
                            (cmrscuda:cgfused: petscgpumat's fused CG) instead of the options' KSP\n\
                            (default aij,aijcusparse,sellcuda,cmrscuda,ellrcuda,rgcsrcuda,csrcuda,autocuda). GPU types (names containing\n\
                            cuda, cusparse, hip or kokkos) are skipped when no GPU is usable\n\
  -f <file>                 read the matrix: Matrix Market (plain or gzip; told by its banner) or PETSc binary\n\
  -problem <lap3d7,lap2d5>  built-in matrix when -f is not given (default lap3d7): 3-D 7-point Laplacian\n\
                            on an n x n x n grid, or 2-D 5-point Laplacian on an n x n grid (Dirichlet, SPD)\n\
  -n <n>                    grid points per direction of the built-in matrix (default 32)\n\
  -rhs <exact,ones,random>  right-hand side: b = A*x_exact with x_exact = 1 (default, the error is\n\
                            reported), b = 1, or b random (no error reported for the last two)\n\
  -repeat <R>               timed solves per type; the minimum time is reported (default 1)\n\
  -check                    fail (nonzero exit status) if a type did not converge, its relative residual\n\
                            exceeds 10*rtol, or its iterations differ from the first type's by more than 2\n\
  -ksp_type, -pc_type, -ksp_rtol, ... the usual KSP and PC options (defaults here: cg, jacobi, 1e-8; 1e-5 in single)\n\
  -log_view_gpu_time        also report the GPU time per MatMult\n\n";

#include <petscksp.h>
#include <petsctime.h>
#include <petscdevice.h>
#include <petscgpumat.h>

#define SOLVE_MAX_TYPES 64

typedef struct {
  char               type[256];    /* as given in -types */
  char               mattype[256]; /* its matrix type */
  char               ksptype[64];  /* its own KSP type (cmrscuda:cgfused), or empty: the options' */
  PetscBool          gpu;       /* a GPU type, by its name */
  PetscBool          ran;       /* false when skipped for lack of a GPU */
  PetscInt           its;
  KSPConvergedReason reason;
  PetscReal          rtol;
  PetscReal          relres;    /* ||b - A x|| / ||b|| with the host AIJ matrix */
  PetscReal          err;       /* ||x - x_exact||_inf / ||x_exact||_inf, negative when unknown */
  PetscLogDouble     tsolve;    /* minimum over the repeats of the slowest rank's solve time (s) */
  PetscLogDouble     tfirst;    /* the first solve with its setup: conversion, device build, PC setup (s, slowest rank) */
  PetscLogDouble     mm_count;  /* MatMult calls per solve */
  PetscLogDouble     mm_ms;     /* milliseconds per MatMult call (slowest rank) */
  PetscLogDouble     mm_gpu_ms; /* GPU milliseconds per MatMult call, 0 unless -log_view_gpu_time */
} TypeResult;

static PetscErrorCode IsGPUType(const char type[], PetscBool *gpu)
{
  const char *const marks[] = {"cuda", "cusparse", "hip", "kokkos"};
  char             *found;

  PetscFunctionBeginUser;
  *gpu = PETSC_FALSE;
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(marks) && !*gpu; i++) {
    PetscCall(PetscStrstr(type, marks[i], &found));
    if (found) *gpu = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stencil of row `row` of the built-in Laplacian: lap3d7 (dim 3) or lap2d5 (dim 2) on n points per direction */
static void LaplacianRow(PetscInt dim, PetscInt n, PetscInt row, PetscInt cols[], PetscScalar vals[], PetscInt *nc)
{
  PetscInt ijk[3] = {0, 0, 0}, stride[3] = {1, n, n * n}, r = row, k = 0;

  for (PetscInt d = 0; d < dim; d++) {
    ijk[d] = r % n;
    r /= n;
  }
  cols[k]   = row;
  vals[k++] = (PetscScalar)(2 * dim);
  for (PetscInt d = 0; d < dim; d++) {
    if (ijk[d] > 0) {
      cols[k]   = row - stride[d];
      vals[k++] = -1.0;
    }
    if (ijk[d] < n - 1) {
      cols[k]   = row + stride[d];
      vals[k++] = -1.0;
    }
  }
  *nc = k;
}

/* Assembles the built-in Laplacian as MATAIJ in parallel (each rank its own rows) with exact preallocation */
static PetscErrorCode BuildLaplacian(MPI_Comm comm, PetscInt dim, PetscInt n, Mat *A)
{
  PetscInt64  N64 = 1;
  PetscInt    N, nlocal = PETSC_DECIDE, rstart, rend, *dnnz, *onnz, cols[7], nc;
  PetscScalar vals[7];

  PetscFunctionBeginUser;
  PetscCheck(n >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n must be positive, not %" PetscInt_FMT, n);
  for (PetscInt d = 0; d < dim; d++) N64 *= n;
  PetscCheck(N64 <= PETSC_INT_MAX, comm, PETSC_ERR_ARG_OUTOFRANGE, "-n %" PetscInt_FMT " gives %" PetscInt64_FMT " rows, too many for 32-bit PetscInt", n, N64);
  N = (PetscInt)N64;
  PetscCall(PetscSplitOwnership(comm, &nlocal, &N));
  PetscCallMPI(MPI_Scan(&nlocal, &rend, 1, MPIU_INT, MPI_SUM, comm));
  rstart = rend - nlocal;

  PetscCall(PetscMalloc2(nlocal, &dnnz, nlocal, &onnz));
  for (PetscInt row = rstart; row < rend; row++) {
    LaplacianRow(dim, n, row, cols, vals, &nc);
    dnnz[row - rstart] = onnz[row - rstart] = 0;
    for (PetscInt k = 0; k < nc; k++) {
      if (cols[k] >= rstart && cols[k] < rend) dnnz[row - rstart]++;
      else onnz[row - rstart]++;
    }
  }
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, nlocal, nlocal, N, N));
  PetscCall(MatSetType(*A, MATAIJ));
  PetscCall(MatSeqAIJSetPreallocation(*A, 0, dnnz));
  PetscCall(MatMPIAIJSetPreallocation(*A, 0, dnnz, 0, onnz));
  PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscFree2(dnnz, onnz));
  for (PetscInt row = rstart; row < rend; row++) {
    LaplacianRow(dim, n, row, cols, vals, &nc);
    PetscCall(MatSetValues(*A, 1, &row, nc, cols, vals, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*A, MAT_SPD, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Reads a Matrix Market file (plain or gzip, whatever its name) or a PETSc binary file into a MATAIJ */
static PetscErrorCode LoadMatrix(MPI_Comm comm, const char file[], Mat *A, PetscBool *isMM)
{
  PetscInt    M, N;
  PetscViewer viewer;

  PetscFunctionBeginUser;
  PetscCall(PetscGPUMatIsMatrixMarketFile(comm, file, isMM)); /* by content: a.MTX, b.mtx.gz, or a binary file */
  if (*isMM) {
    PetscCall(MatLoadMatrixMarket(comm, file, MATAIJ, A));
  } else {
    PetscCall(PetscViewerBinaryOpen(comm, file, FILE_MODE_READ, &viewer));
    PetscCall(MatCreate(comm, A));
    PetscCall(MatSetType(*A, MATAIJ));
    PetscCall(MatLoad(*A, viewer));
    PetscCall(PetscViewerDestroy(&viewer));
  }
  PetscCall(MatGetSize(*A, &M, &N));
  PetscCheck(M == N, comm, PETSC_ERR_ARG_SIZ, "The matrix in %s is %" PetscInt_FMT " x %" PetscInt_FMT "; a linear solve needs a square matrix", file, M, N);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Global rows, stored nonzeros and the longest row of an assembled AIJ matrix */
static PetscErrorCode MatrixStats(Mat A, PetscInt *N, PetscInt64 *nnz, PetscInt *maxrow)
{
  PetscInt rstart, rend, ncols;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(A, N, NULL));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  *nnz    = 0;
  *maxrow = 0;
  for (PetscInt row = rstart; row < rend; row++) {
    PetscCall(MatGetRow(A, row, &ncols, NULL, NULL));
    *nnz += ncols;
    *maxrow = PetscMax(*maxrow, ncols);
    PetscCall(MatRestoreRow(A, row, &ncols, NULL, NULL));
  }
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, nnz, 1, MPIU_INT64, MPI_SUM, PetscObjectComm((PetscObject)A)));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, maxrow, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Defaults of this program (cg, jacobi, rtol 1e-8; 1e-5 in single precision), then the user's options, then the
   entry's own KSP type if it names one */
static PetscErrorCode ConfigureKSP(KSP ksp, const char ksptype[])
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetTolerances(ksp, PetscDefined(USE_REAL_SINGLE) ? 1.e-5 : 1.e-8, PETSC_CURRENT, PETSC_CURRENT, PETSC_CURRENT));
  PetscCall(KSPSetFromOptions(ksp));
  if (ksptype && ksptype[0]) {
    PetscCall(KSPSetType(ksp, ksptype));
    PetscCall(KSPSetFromOptions(ksp)); /* that type's own options */
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An entry of -types: a matrix type, and after a colon a KSP type of its own (cmrscuda:cgfused) */
static PetscErrorCode SplitEntry(TypeResult *res)
{
  char *colon;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(res->mattype, res->type, sizeof(res->mattype)));
  PetscCall(PetscStrchr(res->mattype, ':', &colon));
  res->ksptype[0] = 0;
  if (colon) {
    *colon = 0;
    PetscCall(PetscStrncpy(res->ksptype, colon + 1, sizeof(res->ksptype)));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fails early, with PETSc's "Unknown Mat type" message, on a type name that is not registered */
static PetscErrorCode ValidateType(Mat A, const char type[])
{
  Mat      T;
  PetscInt m, n, M, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetLocalSize(A, &m, &n));
  PetscCall(MatGetSize(A, &M, &N));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &T));
  PetscCall(MatSetSizes(T, m, n, M, N));
  PetscCall(MatSetType(T, type));
  PetscCall(MatDestroy(&T));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A log stage named after the type, made unique if the same type is listed twice */
static PetscErrorCode RegisterStage(const char type[], PetscLogStage *stage)
{
  char          name[300];
  PetscLogStage existing;

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s", type));
  PetscCall(PetscLogStageGetId(name, &existing));
  for (int k = 2; existing >= 0; k++) {
    PetscCall(PetscSNPrintf(name, sizeof(name), "%s#%d", type, k));
    PetscCall(PetscLogStageGetId(name, &existing));
  }
  PetscCall(PetscLogStageRegister(name, stage));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device, cuSPARSE and cuBLAS initialized before any type's first solve is timed (else the first GPU type pays for them) */
static PetscErrorCode WarmUpDevice(void)
{
  Mat         W;
  Vec         x, y;
  PetscScalar dot;

  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 64, 64, 1, NULL, &W));
  for (PetscInt i = 0; i < 64; i++) PetscCall(MatSetValue(W, i, i, 1.0, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(W, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(W, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetType(W, MATAIJCUSPARSE));
  PetscCall(MatCreateVecs(W, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(W, x, y));
  PetscCall(VecDot(x, y, &dot));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&W));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Copies A into res->type, solves once timed with the setup and `repeat` times, and judges the solution on the host */
static PetscErrorCode SolveType(Mat A, Vec bh, Vec xexact, PetscInt repeat, TypeResult *res)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)A);
  Mat                B;
  Vec                x, b, xh, rh;
  KSP                ksp;
  PetscLogStage      stage;
  PetscLogEvent      ev;
  PetscLogDouble     t0, t1, t[3];
  PetscReal          bnorm, rnorm;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  /* an assembled copy converted in place by MatSetType(), as -mat_type does (MatConvert() from AIJ to
     sellcuda would take PETSc's slow generic converter) */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCallMPI(MPI_Barrier(comm));
  PetscCall(PetscTime(&t0));
  PetscCall(MatSetType(B, res->mattype));
  PetscCall(MatSetFromOptions(B)); /* the type's own options, e.g. -mat_ellr_threads_per_row */
  PetscCall(MatCreateVecs(B, &x, &b));
  PetscCall(VecCopy(bh, b));

  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(KSPSetOperators(ksp, B, B));
  PetscCall(ConfigureKSP(ksp, res->ksptype));
  PetscCall(KSPGetTolerances(ksp, &res->rtol, NULL, NULL, NULL));

  /* the first solve, timed from the conversion on: builds the device format and the preconditioner, as in a
     user's program (the vectors' copies and the solver's creation are in it too, alike for every type) */
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPSolve(ksp, b, x));
  if (res->gpu) PetscCall(PetscDeviceContextSynchronize(NULL));
  PetscCall(PetscTime(&t1));
  t[0] = t1 - t0;
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, comm));
  res->tfirst = t[0];

  PetscCall(RegisterStage(res->type, &stage));
  PetscCall(PetscLogStagePush(stage));
  res->tsolve = PETSC_MAX_REAL;
  for (PetscInt r = 0; r < repeat; r++) {
    PetscCall(VecSet(x, 0.0));
    PetscCallMPI(MPI_Barrier(comm));
    PetscCall(PetscTime(&t0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(PetscTime(&t1));
    t[0] = t1 - t0;
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, comm));
    res->tsolve = PetscMin(res->tsolve, t[0]);
  }
  PetscCall(PetscLogStagePop());
  PetscCall(KSPGetIterationNumber(ksp, &res->its));
  PetscCall(KSPGetConvergedReason(ksp, &res->reason));

  /* MatMult in this type's stage: count per solve, time per call */
  PetscCall(PetscLogEventGetId("MatMult", &ev));
  res->mm_count = res->mm_ms = res->mm_gpu_ms = -1.0;
  if (ev >= 0) {
    PetscCall(PetscLogEventGetPerfInfo(stage, ev, &info));
    t[0] = info.time;
    t[1] = 0.0;
#if defined(PETSC_HAVE_DEVICE)
    t[1] = info.GpuTime;
#endif
    t[2] = (PetscLogDouble)info.count;
    PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, comm));
    if (t[2] > 0) {
      res->mm_count  = t[2] / (PetscLogDouble)repeat;
      res->mm_ms     = 1.e3 * t[0] / t[2];
      res->mm_gpu_ms = 1.e3 * t[1] / t[2];
    }
  }

  /* judge every type the same way: copy the solution to the host and use the host AIJ matrix */
  PetscCall(VecDuplicate(bh, &xh));
  PetscCall(VecDuplicate(bh, &rh));
  PetscCall(VecCopy(x, xh));
  PetscCall(MatMult(A, xh, rh));
  PetscCall(VecAYPX(rh, -1.0, bh));
  PetscCall(VecNorm(rh, NORM_2, &rnorm));
  PetscCall(VecNorm(bh, NORM_2, &bnorm));
  res->relres = bnorm > 0 ? rnorm / bnorm : rnorm;
  res->err    = -1.0;
  if (xexact) {
    PetscReal enorm, xnorm;

    PetscCall(VecNorm(xexact, NORM_INFINITY, &xnorm));
    PetscCall(VecAXPY(xh, -1.0, xexact));
    PetscCall(VecNorm(xh, NORM_INFINITY, &enorm));
    res->err = xnorm > 0 ? enorm / xnorm : enorm;
  }
  res->ran = PETSC_TRUE;

  PetscCall(VecDestroy(&rh));
  PetscCall(VecDestroy(&xh));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Without a GPU, what can be checked of a petscgpumat type on the host: the conversion round trip
  AIJ -> type -> AIJ keeps every entry, and the device layout the first product would build.
*/
static PetscErrorCode HostCheckType(Mat A, const char type[])
{
  Mat           B;
  MatGPUMatInfo info;
  PetscBool     same;
  PetscMPIInt   size;
  PetscErrorCode (*getinfo)(Mat, MatGPUMatInfo *) = NULL;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(PetscStrInList(type, MATELLRCUDA "," MATSEQELLRCUDA "," MATCMRSCUDA "," MATSEQCMRSCUDA "," MATRGCSRCUDA "," MATSEQRGCSRCUDA "," MATCSRCUDA "," MATSEQCSRCUDA "," MATAUTOCUDA "," MATSEQAUTOCUDA, ',', &same));
  if (size > 1 || !same) PetscFunctionReturn(PETSC_SUCCESS); /* only petscgpumat's seq types convert without a device */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(MatSetType(B, type));
  PetscCall(PetscObjectQueryFunction((PetscObject)B, "MatGPUMatGetInfo_C", &getinfo));
  if (getinfo) {
    PetscReal   maxfill = 0, fill;
    PetscBool   isellr, isrgcsr;
    char        refused[160] = "";
    const char *guard;

    PetscCall(MatSetFromOptions(B));
    PetscCall(MatGPUMatGetInfo(B, &info));
    fill = info.nnz ? (PetscReal)info.stored / (PetscReal)info.nnz : 1.0;
    /* the padded formats refuse, at the device build, a layout above their padding guard: say so here too */
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQELLRCUDA, &isellr));
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQRGCSRCUDA, &isrgcsr));
    if (isellr) PetscCall(MatELLRCUDAGetMaxFill(B, &maxfill));
    if (isrgcsr) PetscCall(MatRGCSRCUDAGetMaxFill(B, &maxfill));
    guard = isellr ? "-mat_ellr_max_fill" : "-mat_rgcsr_max_fill";
    if (maxfill > 0 && fill > maxfill) PetscCall(PetscSNPrintf(refused, sizeof(refused), "; the GPU build would refuse this layout (fill above %s %g)", guard, (double)maxfill));
    {
      PetscBool autoc;
      MatType   chosen;

      PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQAUTOCUDA, &autoc));
      if (autoc) PetscCall(MatAutoCUDAGetChoice(B, &chosen));
      if (autoc) PetscCall(PetscSNPrintf(refused, sizeof(refused), "; it chooses %s for this matrix (MatView says why)", chosen));
    }
    PetscCall(MatConvert(B, MATAIJ, MAT_INPLACE_MATRIX, &B));
    PetscCall(MatEqual(A, B, &same));
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "Host check of %s: AIJ -> %s -> AIJ keeps every entry: %s; its device layout would store %" PetscCount_FMT " entries for %" PetscCount_FMT " nonzeros (fill %.3f) in %.1f MiB (32-bit CSR: %.1f MiB)%s\n", type, type, same ? "yes" : "NO",
                          info.stored, info.nnz, (double)fill, info.device_bytes / 1048576.0, info.csr_bytes / 1048576.0, refused));
    PetscCheck(same, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The %s round trip changed the matrix", type);
  }
  PetscCall(MatDestroy(&B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Prints the results as one fixed-width table, then notes on iteration counts that differ and on GPU timings */
static PetscErrorCode PrintTable(MPI_Comm comm, PetscInt ntypes, const TypeResult res[], PetscInt ref)
{
  enum {
    C_TYPE,
    C_ITS,
    C_REASON,
    C_RES,
    C_ERR,
    C_SOLVE,
    C_ITER,
    C_FIRST,
    C_MMCOUNT,
    C_MM,
    C_MMGPU,
    C_SPEEDUP,
    C_FIRSTSPEEDUP,
    NCOL
  };
  char      cell[SOLVE_MAX_TYPES + 1][NCOL][64], speedup[80], firstspeedup[96];
  size_t    width[NCOL] = {0}, len;
  PetscBool gpucol = PETSC_FALSE, gpuran = PETSC_FALSE, diff = PETSC_FALSE, show[NCOL];

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(speedup, sizeof(speedup), "speed-up vs %s", res[0].type));
  PetscCall(PetscSNPrintf(firstspeedup, sizeof(firstspeedup), "first solve speed-up vs %s", res[0].type));
  for (PetscInt i = 0; i < ntypes; i++) {
    if (res[i].ran && res[i].mm_gpu_ms > 0) gpucol = PETSC_TRUE;
    if (res[i].ran && res[i].gpu) gpuran = PETSC_TRUE;
  }
  for (PetscInt c = 0; c < NCOL; c++) show[c] = (PetscBool)(c != C_MMGPU || gpucol);

  {
    const char *head[NCOL] = {"type", "its", "reason", "rel. residual", "error", "solve (s)", "per iteration (ms)", "first solve with setup (s)", "MatMult count", "MatMult (ms) each", "MatMult GPU (ms) each", speedup, firstspeedup};

    for (PetscInt c = 0; c < NCOL; c++) PetscCall(PetscStrncpy(cell[0][c], head[c], sizeof(cell[0][c])));
  }
  for (PetscInt i = 0; i < ntypes; i++) {
    const TypeResult *r   = &res[i];
    char(*row)[64]        = cell[i + 1];
    const size_t      len = sizeof(cell[0][0]);

    for (PetscInt c = 0; c < NCOL; c++) PetscCall(PetscStrncpy(row[c], "-", len));
    if (!r->ran) continue;
    PetscCall(PetscStrncpy(row[C_TYPE], r->type, len));
    PetscCall(PetscSNPrintf(row[C_ITS], len, "%" PetscInt_FMT, r->its));
    PetscCall(PetscStrncpy(row[C_REASON], KSPConvergedReasons[r->reason], len));
    PetscCall(PetscSNPrintf(row[C_RES], len, "%.3e", (double)r->relres));
    if (r->err >= 0) PetscCall(PetscSNPrintf(row[C_ERR], len, "%.3e", (double)r->err));
    PetscCall(PetscSNPrintf(row[C_SOLVE], len, "%.4e", r->tsolve));
    if (r->its > 0) PetscCall(PetscSNPrintf(row[C_ITER], len, "%.4e", r->tsolve / (double)r->its * 1e3));
    PetscCall(PetscSNPrintf(row[C_FIRST], len, "%.4e", r->tfirst));
    if (r->mm_count >= 0) {
      PetscCall(PetscSNPrintf(row[C_MMCOUNT], len, "%.6g", r->mm_count));
      PetscCall(PetscSNPrintf(row[C_MM], len, "%.4e", r->mm_ms));
      if (r->mm_gpu_ms > 0) PetscCall(PetscSNPrintf(row[C_MMGPU], len, "%.4e", r->mm_gpu_ms));
    }
    if (res[0].ran && r->tsolve > 0) PetscCall(PetscSNPrintf(row[C_SPEEDUP], len, "%.2f", res[0].tsolve / r->tsolve));
    if (res[0].ran && r->tfirst > 0) PetscCall(PetscSNPrintf(row[C_FIRSTSPEEDUP], len, "%.2f", res[0].tfirst / r->tfirst));
  }
  for (PetscInt i = 0; i <= ntypes; i++) {
    if (i > 0 && !res[i - 1].ran) continue;
    for (PetscInt c = 0; c < NCOL; c++) {
      PetscCall(PetscStrlen(cell[i][c], &len));
      width[c] = PetscMax(width[c], len);
    }
  }
  for (PetscInt i = 0; i <= ntypes; i++) {
    PetscBool first = PETSC_TRUE;

    if (i > 0 && !res[i - 1].ran) continue;
    for (PetscInt c = 0; c < NCOL; c++) {
      if (!show[c]) continue;
      /* headers and text columns left-aligned, numbers right-aligned */
      if (i == 0 || c == C_TYPE || c == C_REASON) PetscCall(PetscPrintf(comm, "%s%-*s", first ? "" : " | ", (int)width[c], cell[i][c]));
      else PetscCall(PetscPrintf(comm, "%s%*s", first ? "" : " | ", (int)width[c], cell[i][c]));
      first = PETSC_FALSE;
    }
    PetscCall(PetscPrintf(comm, "\n"));
    if (i == 0) {
      first = PETSC_TRUE;
      for (PetscInt c = 0; c < NCOL; c++) {
        if (!show[c]) continue;
        if (!first) PetscCall(PetscPrintf(comm, "-+-"));
        for (size_t k = 0; k < width[c]; k++) PetscCall(PetscPrintf(comm, "-"));
        first = PETSC_FALSE;
      }
      PetscCall(PetscPrintf(comm, "\n"));
    }
  }

  if (ref >= 0) {
    for (PetscInt i = 0; i < ntypes; i++) {
      if (!res[i].ran || PetscAbsInt(res[i].its - res[ref].its) <= 1) continue;
      if (!diff) PetscCall(PetscPrintf(comm, "Note: iteration counts that differ from %s's (%" PetscInt_FMT ") by more than 1:", res[ref].type, res[ref].its));
      PetscCall(PetscPrintf(comm, "%s %s (%" PetscInt_FMT ")", diff ? "," : "", res[i].type, res[i].its));
      diff = PETSC_TRUE;
    }
    if (diff) PetscCall(PetscPrintf(comm, "\n"));
  }
  if (!res[0].ran) PetscCall(PetscPrintf(comm, "Note: the speed-ups are relative to %s, which was skipped, so that column shows '-'; put a type that ran first in -types.\n", res[0].type));
  if (gpuran && !gpucol) PetscCall(PetscPrintf(comm, "Note: GPU kernels run asynchronously, so the MatMult times of GPU types are host-side times; use -log_view_gpu_time for GPU times.\n"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  MPI_Comm          comm;
  const char *const problems[] = {"lap3d7", "lap2d5"};
  const char *const rhsnames[] = {"exact", "ones", "random"};
  const char *const deftypes[] = {MATAIJ, MATAIJCUSPARSE, MATSELLCUDA, MATCMRSCUDA, MATELLRCUDA, MATRGCSRCUDA, MATCSRCUDA, MATAUTOCUDA};
  char             *types[SOLVE_MAX_TYPES], file[PETSC_MAX_PATH_LEN] = "", source[PETSC_MAX_PATH_LEN + 64], reason[256] = "", gpulist[1024] = "";
  PetscInt          ntypes = SOLVE_MAX_TYPES, problem = 0, rhs = 0, n = 32, repeat = 1, N, maxrow, ref = -1, nskipped = 0, nrun = 0;
  PetscInt64        nnz;
  PetscBool         set, hasfile, isMM = PETSC_FALSE, check = PETSC_FALSE, anygpu = PETSC_FALSE, avail = PETSC_TRUE;
  PetscMPIInt       size;
  Mat               A;
  Vec               bh, xexact = NULL;
  KSP               ksp;
  PC                pc;
  KSPType           ksptype;
  PCType            pctype;
  PetscReal         rtol;
  TypeResult       *res;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscLogDefaultBegin());
  comm = PETSC_COMM_WORLD;
  PetscCallMPI(MPI_Comm_size(comm, &size));

  PetscOptionsBegin(comm, NULL, "KSP solve comparison across matrix types", NULL);
  PetscCall(PetscOptionsStringArray("-types", "Comma-separated matrix types; the first is the baseline", NULL, types, &ntypes, &set));
  if (!set) ntypes = 0;
  PetscCall(PetscOptionsString("-f", "Matrix file: Matrix Market (plain or gzip, told by its banner) or PETSc binary", NULL, file, file, sizeof(file), &hasfile));
  PetscCall(PetscOptionsEList("-problem", "Built-in matrix", NULL, problems, (PetscInt)PETSC_STATIC_ARRAY_LENGTH(problems), problems[problem], &problem, NULL));
  PetscCall(PetscOptionsInt("-n", "Grid points per direction of the built-in matrix", NULL, n, &n, NULL));
  PetscCall(PetscOptionsEList("-rhs", "Right-hand side: A*1 (error reported), ones, random", NULL, rhsnames, (PetscInt)PETSC_STATIC_ARRAY_LENGTH(rhsnames), rhsnames[rhs], &rhs, NULL));
  PetscCall(PetscOptionsInt("-repeat", "Timed solves per type (the minimum time is reported)", NULL, repeat, &repeat, NULL));
  PetscCall(PetscOptionsBool("-check", "Fail if a type does not converge, its residual exceeds 10*rtol or its iterations differ from the first type's by more than 2", NULL, check, &check, NULL));
  PetscOptionsEnd();
  PetscCheck(repeat >= 1, comm, PETSC_ERR_ARG_OUTOFRANGE, "-repeat must be at least 1, not %" PetscInt_FMT, repeat);
  if (!set) {
    ntypes = (PetscInt)PETSC_STATIC_ARRAY_LENGTH(deftypes);
    for (PetscInt i = 0; i < ntypes; i++) PetscCall(PetscStrallocpy(deftypes[i], &types[i]));
  }
  PetscCheck(ntypes >= 1, comm, PETSC_ERR_ARG_WRONG, "-types lists no matrix type");

  /* the matrix, once, as host MATAIJ */
  if (hasfile) {
    PetscCall(LoadMatrix(comm, file, &A, &isMM));
    PetscCall(PetscSNPrintf(source, sizeof(source), "%s (%s)", file, isMM ? "Matrix Market" : "PETSc binary"));
  } else {
    PetscCall(BuildLaplacian(comm, problem == 0 ? 3 : 2, n, &A));
    PetscCall(PetscSNPrintf(source, sizeof(source), "built-in %s, n = %" PetscInt_FMT " (%s Laplacian, Dirichlet)", problems[problem], n, problem == 0 ? "3-D 7-point" : "2-D 5-point"));
  }
  PetscCall(MatrixStats(A, &N, &nnz, &maxrow));

  /* right-hand side on the host */
  PetscCall(MatCreateVecs(A, NULL, &bh));
  if (rhs == 0) {
    PetscCall(VecDuplicate(bh, &xexact));
    PetscCall(VecSet(xexact, 1.0));
    PetscCall(MatMult(A, xexact, bh));
  } else if (rhs == 1) {
    PetscCall(VecSet(bh, 1.0));
  } else {
    PetscRandom rnd;

    PetscCall(PetscRandomCreate(comm, &rnd));
    PetscCall(PetscRandomSetFromOptions(rnd));
    PetscCall(VecSetRandom(bh, rnd));
    PetscCall(PetscRandomDestroy(&rnd));
  }

  /* which types run: GPU types need a usable device on every rank */
  PetscCall(PetscCalloc1(ntypes, &res));
  for (PetscInt i = 0; i < ntypes; i++) {
    PetscCall(PetscStrncpy(res[i].type, types[i], sizeof(res[i].type)));
    PetscCall(SplitEntry(&res[i]));
    PetscCall(IsGPUType(res[i].mattype, &res[i].gpu));
    anygpu = (PetscBool)(anygpu || res[i].gpu);
  }
  if (anygpu) {
    PetscBool mine;
    int       mine_i, all_i;

    PetscCall(PetscGPUMatDeviceAvailable(&mine, reason, sizeof(reason)));
    mine_i = mine ? 1 : 0;
    PetscCallMPI(MPIU_Allreduce(&mine_i, &all_i, 1, MPI_INT, MPI_MIN, comm));
    avail = all_i ? PETSC_TRUE : PETSC_FALSE;
    if (!avail && mine) PetscCall(PetscStrncpy(reason, "not every MPI process has a usable CUDA device", sizeof(reason)));
  }
  for (PetscInt i = 0; i < ntypes; i++) {
    if (res[i].gpu && !avail) {
      if (nskipped++) PetscCall(PetscStrlcat(gpulist, ", ", sizeof(gpulist)));
      PetscCall(PetscStrlcat(gpulist, res[i].type, sizeof(gpulist)));
    } else {
      PetscCall(ValidateType(A, res[i].mattype)); /* an unknown name fails here, before any solve */
      nrun++;
    }
  }

  /* the solver the options give, for the header */
  PetscCall(KSPCreate(comm, &ksp));
  PetscCall(ConfigureKSP(ksp, NULL));
  PetscCall(KSPGetType(ksp, &ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCGetType(pc, &pctype));
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, NULL));
  PetscCall(PetscPrintf(comm, "Matrix: %s: %" PetscInt_FMT " rows, %" PetscInt64_FMT " nonzeros, %.2f mean / %" PetscInt_FMT " max nonzeros per row\n", source, N, nnz, N > 0 ? (double)nnz / (double)N : 0.0, maxrow));
  PetscCall(PetscPrintf(comm, "Solver: KSP %s, PC %s, rtol %g; rhs %s; %d MPI process%s; minimum of %" PetscInt_FMT " timed solve%s per type after a first solve timed with its setup\n", ksptype, pctype, (double)rtol,
                        rhs == 0 ? "b = A*x_exact, x_exact = 1" : (rhs == 1 ? "b = 1" : "b random"), size, size > 1 ? "es" : "", repeat, repeat > 1 ? "s" : ""));
  PetscCall(KSPDestroy(&ksp));
  if (nskipped) {
    PetscCall(PetscPrintf(comm, "GPU types skipped: %s. The GPU types (%s) need an NVIDIA GPU; ", reason, gpulist));
    PetscCall(PetscPrintf(comm, "%s\n", nrun ? "results below are for the CPU types only." : "no CPU type was requested, so there is nothing to run."));
    for (PetscInt i = 0; i < ntypes; i++)
      if (res[i].gpu) PetscCall(HostCheckType(A, res[i].mattype));
  }

  if (avail && nrun > 0) {
    PetscBool anygpurun = PETSC_FALSE;

    for (PetscInt i = 0; i < ntypes; i++) anygpurun = (PetscBool)(anygpurun || res[i].gpu);
    if (anygpurun) PetscCall(WarmUpDevice());
  }
  for (PetscInt i = 0; i < ntypes; i++) {
    if (res[i].gpu && !avail) continue;
    PetscCall(SolveType(A, bh, xexact, repeat, &res[i]));
    if (ref < 0) ref = i;
  }
  PetscCall(PetscPrintf(comm, "\n"));
  if (nrun) PetscCall(PrintTable(comm, ntypes, res, ref));

  if (check) {
    for (PetscInt i = 0; i < ntypes; i++) {
      if (!res[i].ran) continue;
      PetscCheck(res[i].reason > 0, comm, PETSC_ERR_NOT_CONVERGED, "-check: %s did not converge (%s after %" PetscInt_FMT " iterations)", res[i].type, KSPConvergedReasons[res[i].reason], res[i].its);
      PetscCheck(res[i].relres <= 10 * res[i].rtol, comm, PETSC_ERR_NOT_CONVERGED, "-check: %s has relative residual %g > 10*rtol = %g", res[i].type, (double)res[i].relres, (double)(10 * res[i].rtol));
      PetscCheck(PetscAbsInt(res[i].its - res[ref].its) <= 2, comm, PETSC_ERR_NOT_CONVERGED, "-check: %s took %" PetscInt_FMT " iterations, %s took %" PetscInt_FMT "; they differ by more than 2", res[i].type, res[i].its, res[ref].type, res[ref].its);
    }
  }

  PetscCall(PetscFree(res));
  for (PetscInt i = 0; i < ntypes; i++) PetscCall(PetscFree(types[i]));
  PetscCall(VecDestroy(&xexact));
  PetscCall(VecDestroy(&bh));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}

/*TEST

   test:
      suffix: aij
      args: -types aij -n 8 -check

   test:
      suffix: aij_mpi_lap2d5
      nsize: 2
      args: -types aij -problem lap2d5 -n 16 -ksp_type gmres -repeat 2 -check

   test:
      suffix: gpu
      requires: cuda
      args: -types aij,aijcusparse,ellrcuda -n 8 -check

TEST*/
