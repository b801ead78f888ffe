static const char help[] = "The MPI types on the GPU (any number of ranks, sharing one GPU or one GPU each).\n"
                           "  -types ellrcuda,...     root types to test\n"
                           "  -matrices_dir <dir>     directory of the real matrices (Matrix Market, .mtx.gz)\n"
                           "  -matrices a,b,...       real matrices to use\n"
                           "  -ksp_k <k>              grid side of the KSP Laplacian (k^3 rows; default 40)\n"
                           "  -expect_ipc             check that the halo exchange uses CUDA IPC (all ranks on one node)\n"
                           "  -quick                  defaults and -mat_gpumat_halo_ipc 0 only, no KSP (for compute-sanitizer)\n";

/*
  For every root type, variant and matrix (generated edge cases and real ones) distributed over the ranks: the
  four products on CUDA vectors, outputs poisoned, against the float64 reference of the whole matrix; forward
  products bitwise identical over 10 runs (with each halo exchange: CUDA IPC, staged, VecScatter); KSP CG (3-D Laplacian) and GMRES (convection-diffusion) take the
  iterations of mpiaijcusparse and reach its solution; each rank reports its device.
*/
#include <petscksp.h>
#include <petscdmda.h>
#include <petscdevice_cuda.h>
#include <petscgpumat.h>
#include "../common/mpiutil.h"

/* The variants each root type runs with: options applied to the parallel matrix (they reach both blocks) */
static const char *const variants_ellr[]  = {"", "-mat_ellr_threads_per_row 1", "-mat_ellr_threads_per_row 4", "-mat_gpumat_halo_vecscatter", "-mat_gpumat_halo_ipc 0"};
static const char *const variants_rgcsr[] = {"", "-mat_rgcsr_sort_window 1000000000 -mat_rgcsr_sort_min_saving 0", "-mat_rgcsr_group_size 32 -mat_rgcsr_threads_per_row 2", "-mat_gpumat_halo_vecscatter", "-mat_gpumat_halo_ipc 0"};
static const char *const variants_csr[]   = {"", "-mat_csr_spmv_alg 1", "-mat_csr_spmv_alg 2", "-mat_gpumat_halo_vecscatter", "-mat_gpumat_halo_ipc 0"};
static const char *const variants_cmrs[]  = {"", "-mat_cmrs_variant basic", "-mat_cmrs_variant padded", "-mat_gpumat_halo_vecscatter", "-mat_gpumat_halo_ipc 0"};
#define NVARIANTS 5

static PetscBool quick = PETSC_FALSE;

static PetscErrorCode ApplyVariant(Mat A, const char *opts)
{
  PetscFunctionBeginUser;
  if (!opts[0]) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscOptionsInsertString(NULL, opts));
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_variant"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_vecscatter"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_ipc"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_ellr_threads_per_row"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_sort_window"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_sort_min_saving"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_group_size"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_rgcsr_threads_per_row"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_csr_spmv_alg"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 10 forward products bitwise identical */
static PetscErrorCode CheckReproducible(Mat A, const char *label)
{
  Vec                x, z0, z;
  const PetscScalar *a, *b;
  PetscInt           n;
  int                same = 1, all;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &z0));
  PetscCall(VecDuplicate(z0, &z));
  PetscCall(TestFillVec(x, 99));
  PetscCall(MatMult(A, x, z0));
  for (PetscInt r = 0; r < 10; r++) {
    PetscCall(VecSet(z, NAN));
    PetscCall(MatMult(A, x, z));
    PetscCall(VecGetLocalSize(z, &n));
    PetscCall(VecGetArrayRead(z0, &a));
    PetscCall(VecGetArrayRead(z, &b));
    for (PetscInt i = 0; i < n; i++) same = same && !memcmp(&a[i], &b[i], sizeof(PetscScalar));
    PetscCall(VecRestoreArrayRead(z0, &a));
    PetscCall(VecRestoreArrayRead(z, &b));
  }
  PetscCallMPI(MPIU_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, PetscObjectComm((PetscObject)A)));
  TEST_CHECK(all, "%s: 10 MatMult bitwise identical", label);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z0));
  PetscCall(VecDestroy(&z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestMatrix(const char *root, Mat S, const char *mname)
{
  const char *const *variants;
  PetscInt           nv = NVARIANTS;
  PetscBool          isellr, isrgcsr, iscsr, isauto;

  PetscFunctionBeginUser;
  PetscCall(PetscStrcmp(root, MATELLRCUDA, &isellr));
  PetscCall(PetscStrcmp(root, MATRGCSRCUDA, &isrgcsr));
  PetscCall(PetscStrcmp(root, MATCSRCUDA, &iscsr));
  PetscCall(PetscStrcmp(root, MATAUTOCUDA, &isauto));
  variants = isellr ? variants_ellr : isrgcsr ? variants_rgcsr : iscsr ? variants_csr : variants_cmrs;
  for (PetscInt v = 0; v < nv; v++) {
    Mat  A;
    char label[512];

    if (quick && v && v != NVARIANTS - 1) continue; /* the defaults (CUDA IPC) and the staged exchange */
    PetscCall(TestDistribute(PETSC_COMM_WORLD, S, NULL, &A));
    PetscCall(MatConvert(A, root, MAT_INPLACE_MATRIX, &A));
    if (isellr) PetscCall(MatELLRCUDASetMaxFill(A, 0)); /* correctness on every shape: no padding guard */
    if (isrgcsr) PetscCall(MatRGCSRCUDASetMaxFill(A, 0));
    PetscCall(ApplyVariant(A, variants[v]));
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s [%s] %s", root, variants[v][0] ? variants[v] : "defaults", mname));
    PetscCall(TestMPIProducts(A, S, VECCUDA, 31 + v, label));
    if (iscsr || isauto) PetscCall(MatCSRCUDASetSpMVAlgorithm(A, 2)); /* cuSPARSE promises reproducible products of ALG2 only */
    if (!v || v >= 3) PetscCall(CheckReproducible(A, label)); /* defaults and each other halo exchange */
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* 3-D 7-point Laplacian (CG) or 2-D convection-diffusion (GMRES) on a DMDA, assembled as `type` */
static PetscErrorCode CreateProblem(PetscBool cd, PetscInt k, MatType type, DM *da, Mat *A)
{
  DMDALocalInfo info;

  PetscFunctionBeginUser;
  if (cd) PetscCall(DMDACreate2d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, k, k, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, da));
  else PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, k, k, k, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, da));
  PetscCall(DMSetUp(*da));
  PetscCall(DMSetMatType(*da, type));
  PetscCall(DMCreateMatrix(*da, A));
  PetscCall(DMDAGetLocalInfo(*da, &info));
  for (PetscInt kk = info.zs; kk < info.zs + info.zm; kk++)
    for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
      for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
        MatStencil  row = {.k = kk, .j = j, .i = i}, col[7];
        PetscScalar v[7];
        PetscInt    c = 0;

        col[c] = row, v[c++] = cd ? 4.0 + 1.3 : 6.0;
        if (i > 0) col[c] = row, col[c].i = i - 1, v[c++] = cd ? -1.8 : -1.0; /* upwind convection in x */
        if (i < info.mx - 1) col[c] = row, col[c].i = i + 1, v[c++] = -1.0;
        if (j > 0) col[c] = row, col[c].j = j - 1, v[c++] = -1.0;
        if (j < info.my - 1) col[c] = row, col[c].j = j + 1, v[c++] = -1.0;
        if (!cd && kk > 0) col[c] = row, col[c].k = kk - 1, v[c++] = -1.0;
        if (!cd && kk < info.mz - 1) col[c] = row, col[c].k = kk + 1, v[c++] = -1.0;
        PetscCall(MatSetValuesStencil(*A, 1, &row, c, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Solve(PetscBool cd, PetscInt k, MatType type, PetscInt *its, Vec *sol)
{
  DM  da;
  Mat A;
  Vec b, x;
  KSP ksp;

  PetscFunctionBeginUser;
  PetscCall(CreateProblem(cd, k, type, &da, &A));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(TestFillVec(b, 5));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, cd ? KSPGMRES : KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  {
    PC pc;

    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
  }
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(VecDuplicate(x, sol));
  PetscCall(VecCopy(x, *sol));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ||X - Y||_F / ||Y||_F of two parallel matrices of the same layout (Y converted to X's type for the difference) */
static PetscErrorCode RelativeDifference(Mat X, Mat Y, PetscReal *d)
{
  Mat       D;
  PetscReal ny;

  PetscFunctionBeginUser;
  PetscCall(MatConvert(X, MATMPIAIJ, MAT_INITIAL_MATRIX, &D));
  PetscCall(MatAXPY(D, -1.0, Y, DIFFERENT_NONZERO_PATTERN));
  PetscCall(MatNorm(D, NORM_FROBENIUS, d));
  PetscCall(MatNorm(Y, NORM_FROBENIUS, &ny));
  *d /= PetscMax(ny, PETSC_SMALL);
  PetscCall(MatDestroy(&D));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Sparse products of the MPI types (A the 3-D Laplacian, P the DMDA interpolation from a coarser grid, both of
  `root`) with -mat_gpumat_mpi_device_products: AB, AtB, PtAP with MPIAIJ's backend algorithm (the local products
  on the device), of our type, equal to
  MPIAIJ's products of host copies; again after new values of A (the numeric phase); and -matptap_via scalable
  keeps MPIAIJ's own algorithm.
*/
static PetscErrorCode CheckSparseProducts(const char *root)
{
  DM          daf, dac;
  Mat         A, P, Ah, Ph, C[3], Ch[3];
  const char *names[3] = {"AB", "AtB", "PtAP"};
  PetscReal   d;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_mpi_device_products", "1")); /* read when the matrices are made */
  PetscCall(CreateProblem(PETSC_FALSE, 17, root, &daf, &A));
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 9, 9, 9, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &dac));
  PetscCall(DMSetUp(dac));
  PetscCall(DMCreateInterpolation(dac, daf, &P, NULL));
  PetscCall(MatConvert(P, root, MAT_INPLACE_MATRIX, &P));
  PetscCall(MatConvert(A, MATMPIAIJ, MAT_INITIAL_MATRIX, &Ah));
  PetscCall(MatConvert(P, MATMPIAIJ, MAT_INITIAL_MATRIX, &Ph));
  for (PetscInt pass = 0; pass < 2; pass++) {
    MatReuse reuse = pass ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX;

    PetscCall(MatMatMult(A, P, reuse, PETSC_DETERMINE, &C[0]));
    PetscCall(MatTransposeMatMult(P, A, reuse, PETSC_DETERMINE, &C[1]));
    PetscCall(MatPtAP(A, P, reuse, PETSC_DETERMINE, &C[2]));
    PetscCall(MatMatMult(Ah, Ph, reuse, PETSC_DETERMINE, &Ch[0]));
    PetscCall(MatTransposeMatMult(Ph, Ah, reuse, PETSC_DETERMINE, &Ch[1]));
    PetscCall(MatPtAP(Ah, Ph, reuse, PETSC_DETERMINE, &Ch[2]));
    for (PetscInt i = 0; i < 3; i++) {
      MatProductAlgorithm alg = NULL;
      MatType             atype, ctype;
      PetscBool           backend = PETSC_FALSE, ours;

      PetscCall(RelativeDifference(C[i], Ch[i], &d));
      PetscCall(MatGetType(A, &atype));
      PetscCall(MatGetType(C[i], &ctype));
      PetscCall(PetscStrcmp(atype, ctype, &ours));
      PetscCall(MatProductGetAlgorithm(C[i], &alg));
      if (alg) PetscCall(PetscStrcmp(alg, "backend", &backend));
      TEST_CHECK(d < 1e-13, "%s MPI %s%s equals MPIAIJ's (difference %.2e)", root, names[i], pass ? " again, new values of A" : "", (double)d);
      TEST_CHECK(ours, "%s MPI %s: the result is a %s (got %s)", root, names[i], atype, ctype);
      TEST_CHECK(backend, "%s MPI %s: MPIAIJ's backend algorithm (local products on the device; got %s)", root, names[i], alg ? alg : "no product data");
    }
    PetscCall(MatScale(A, 1.5));
    PetscCall(MatScale(Ah, 1.5));
  }
  { /* the user's algorithm wins */
    Mat                 S;
    MatProductAlgorithm alg = NULL;
    PetscBool           scalable = PETSC_FALSE;

    PetscCall(MatPtAP(Ah, Ph, MAT_REUSE_MATRIX, PETSC_DETERMINE, &Ch[2])); /* A's latest values */
    PetscCall(PetscOptionsSetValue(NULL, "-matptap_via", "scalable"));
    PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DETERMINE, &S));
    PetscCall(PetscOptionsClearValue(NULL, "-matptap_via"));
    PetscCall(MatProductGetAlgorithm(S, &alg));
    if (alg) PetscCall(PetscStrcmp(alg, "scalable", &scalable));
    PetscCall(RelativeDifference(S, Ch[2], &d));
    TEST_CHECK(scalable && d < 1e-13, "%s MPI PtAP with -matptap_via scalable: MPIAIJ's scalable algorithm (got %s), difference %.2e", root, alg ? alg : "no product data", (double)d);
    PetscCall(MatDestroy(&S));
  }
  for (PetscInt i = 0; i < 3; i++) {
    PetscCall(MatDestroy(&C[i]));
    PetscCall(MatDestroy(&Ch[i]));
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Ah));
  PetscCall(MatDestroy(&Ph));
  PetscCall(DMDestroy(&daf));
  PetscCall(DMDestroy(&dac));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_mpi_device_products"));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The halo exchange a 3-D Laplacian's MPI matrix uses after a product on CUDA vectors, as MatView() says it;
  with -expect_ipc (every rank on one node, the GPU machines) it must be CUDA IPC. A DMDA's matrix views itself in the
  natural ordering (PETSc's MatView_MPI_DA), which prints nothing of the type in the info formats, so the matrix
  viewed is a copy made through MPIAIJ
*/
static PetscErrorCode CheckHaloExchange(const char *root, PetscBool expect_ipc)
{
  DM   da;
  Mat  D, A;
  Vec  x, y;
  char text[8192], *line;
  int  ipc, all;

  PetscFunctionBeginUser;
  PetscCall(CreateProblem(PETSC_FALSE, 12, root, &da, &D));
  PetscCall(MatConvert(D, MATMPIAIJ, MAT_INITIAL_MATRIX, &A));
  PetscCall(MatConvert(A, root, MAT_INPLACE_MATRIX, &A));
  PetscCall(MatDestroy(&D));
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  PetscCall(MatMult(A, x, y));
  PetscCall(TestViewInfoText(A, text, sizeof(text)));
  line = strstr(text, "halo exchange");
  if (line) line[strcspn(line, "\n")] = 0;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %s: %s\n", root, line ? line : "(MatView names no halo exchange)"));
  TEST_CHECK(line != NULL, "%s: MatView of an MPI matrix names its halo exchange after a product", root);
  ipc = line && strstr(line, "CUDA IPC: device to device");
  PetscCallMPI(MPIU_Allreduce(&ipc, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  if (expect_ipc) TEST_CHECK(all, "%s: the halo exchange of a product on CUDA vectors uses CUDA IPC (all ranks on one node)", root);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatGetDiagonal() of an MPI matrix of ours into its CUDA vector (MPIAIJ's op asks the diagonal block, ours) leaves the
  vector on the device, and equals MPIAIJ's; a diagonal that varies by row, the output poisoned first
*/
static PetscErrorCode CheckDiagonalOnDevice(const char *root)
{
  DM        da;
  Mat       D, A;
  Vec       d, v;
  PetscInt  lo, hi, up[2], moved, allmoved;
  PetscReal diff;

  PetscFunctionBeginUser;
  PetscCall(PetscLogDefaultBegin());
  PetscCall(CreateProblem(PETSC_FALSE, 12, MATMPIAIJ, &da, &D));
  PetscCall(MatCreateVecs(D, NULL, &d));
  PetscCall(VecGetOwnershipRange(d, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(d, i, 0.25 * (i % 17), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(d));
  PetscCall(VecAssemblyEnd(d));
  PetscCall(MatDiagonalSet(D, d, ADD_VALUES));
  PetscCall(MatConvert(D, root, MAT_INITIAL_MATRIX, &A));
  PetscCall(MatCreateVecs(A, NULL, &v));
  PetscCall(VecSet(v, PETSC_MAX_REAL));
  PetscCall(TestEventCount("VecCUDACopyTo", &up[0]));
  PetscCall(MatGetDiagonal(A, v));
  PetscCall(VecShift(v, 1.0)); /* device ops: with v valid only on the host the first copies it up */
  PetscCall(VecNorm(v, NORM_2, &diff));
  PetscCall(TestEventCount("VecCUDACopyTo", &up[1]));
  moved = up[1] - up[0];
  PetscCallMPI(MPIU_Allreduce(&moved, &allmoved, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCall(MatGetDiagonal(D, d));
  PetscCall(VecShift(d, 1.0));
  PetscCall(VecAXPY(d, -1.0, v));
  PetscCall(VecNorm(d, NORM_INFINITY, &diff));
  TEST_CHECK(allmoved == 0 && diff == 0, "%s: MatGetDiagonal into an MPI CUDA vector leaves it on the device (%" PetscInt_FMT " host-to-device copies on a rank after) and equals MPIAIJ's (difference %g)", root, allmoved, (double)diff);
  PetscCall(VecDestroy(&d));
  PetscCall(VecDestroy(&v));
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&D));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The first product of a new MPI matrix while odd ranks' GPUs are still busy (about 40 ms of memsets queued on the
  legacy stream): with CUDA IPC, a receiver's buffer must be ready before its senders write into it. The product
  must be finite and equal, bitwise, to a second one made when the device is idle (issue #13: a receiver's
  poisoning memset, queued behind GAMG's work, once ran after its sender's values had arrived).
*/
static PetscErrorCode CheckFirstProductBehindBusyDevice(const char *root)
{
  DM                 da;
  Mat                A;
  Vec                x, y0, y1;
  void              *busy = NULL;
  const size_t       bytes = (size_t)1 << 30;
  PetscMPIInt        rank;
  const PetscScalar *a, *b;
  PetscInt           n;
  int                ok = 1, all;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(CreateProblem(PETSC_FALSE, 24, root, &da, &A));
  PetscCall(MatCreateVecs(A, &x, &y0));
  PetscCall(VecDuplicate(y0, &y1));
  PetscCall(TestFillVec(x, 5));
  PetscCall(VecSet(y0, 0.0));
  PetscCall(VecSet(y1, 0.0));
  PetscCallCUDA(cudaDeviceSynchronize());
  if (rank % 2) {
    PetscCallCUDA(cudaMalloc(&busy, bytes));
    for (int r = 0; r < 100; r++) PetscCallCUDA(cudaMemsetAsync(busy, r, bytes, 0));
  }
  PetscCall(MatMult(A, x, y0));
  PetscCallCUDA(cudaDeviceSynchronize());
  PetscCall(MatMult(A, x, y1));
  PetscCall(VecGetLocalSize(y0, &n));
  PetscCall(VecGetArrayRead(y0, &a));
  PetscCall(VecGetArrayRead(y1, &b));
  for (PetscInt i = 0; i < n; i++) ok = ok && !PetscIsInfOrNanScalar(a[i]) && !memcmp(&a[i], &b[i], sizeof(PetscScalar));
  PetscCall(VecRestoreArrayRead(y0, &a));
  PetscCall(VecRestoreArrayRead(y1, &b));
  PetscCallMPI(MPIU_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  TEST_CHECK(all, "%s: the first product of a new matrix, odd ranks' GPUs busy, is finite and equals the next one", root);
  if (busy) PetscCallCUDA(cudaFree(busy));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y0));
  PetscCall(VecDestroy(&y1));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode CompareKSP(const char *root, PetscInt k)
{
  PetscFunctionBeginUser;
  for (PetscInt p = 0; p < 2; p++) {
    const PetscBool cd   = (PetscBool)(p == 1);
    const PetscInt  side = cd ? 5 * k : k;
    PetscInt        its[2];
    Vec             x[2];
    PetscReal       diff, norm;

    PetscCall(Solve(cd, side, MATAIJCUSPARSE, &its[0], &x[0]));
    PetscCall(Solve(cd, side, root, &its[1], &x[1]));
    PetscCall(VecAXPY(x[1], -1.0, x[0]));
    PetscCall(VecNorm(x[1], NORM_INFINITY, &diff));
    PetscCall(VecNorm(x[0], NORM_INFINITY, &norm));
    TEST_CHECK(TestSameKSP(its[1], its[0], diff / norm, 1e-8), "%s: KSP %s on %s %" PetscInt_FMT "^%d: %" PetscInt_FMT " iterations (aijcusparse %" PetscInt_FMT "), solutions differ by %.2e", root, cd ? "GMRES" : "CG", cd ? "convection-diffusion" : "3-D Laplacian", side, cd ? 2 : 3, its[1], its[0], (double)(diff / norm));
    PetscCall(VecDestroy(&x[0]));
    PetscCall(VecDestroy(&x[1]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char       *types[8], *names[64], dir[PETSC_MAX_PATH_LEN] = "", reason[256];
  PetscInt    ntypes = 8, nnames = 64, k = 40;
  PetscBool   gpu, flg, expect_ipc = PETSC_FALSE;
  PetscMPIInt rank, size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
  if (!gpu) {
    PetscCall(TestSkip("MPI types on the GPU (test_gpu_mpi)", reason));
    PetscCall(PetscFinalize());
    return 0;
  }
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
  if (!flg) {
    PetscCall(PetscStrallocpy(MATELLRCUDA, &types[0]));
    ntypes = 1;
  }
  PetscCall(PetscOptionsGetString(NULL, NULL, "-matrices_dir", dir, sizeof(dir), NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-matrices", names, &nnames, &flg));
  if (!flg) nnames = 0;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-ksp_k", &k, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-expect_ipc", &expect_ipc, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-quick", &quick, NULL));
  {
    /* the device of each rank: PETSc gives rank r the device r modulo the visible devices */
    int ndev, cur, distinct = 1, alld;

    PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
    PetscCallCUDA(cudaGetDeviceCount(&ndev));
    PetscCallCUDA(cudaGetDevice(&cur));
    PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "# rank %d of %d: CUDA device %d of %d\n", rank, size, cur, ndev));
    PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
    if (ndev > 1) distinct = (cur == rank % ndev);
    PetscCallMPI(MPIU_Allreduce(&distinct, &alld, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
    TEST_CHECK(alld, "%d rank(s) on %d visible GPU(s): rank r uses device r mod %d", size, ndev, ndev);
  }
  for (PetscInt t = 0; t < ntypes; t++) {
    if (size > 1) PetscCall(CheckHaloExchange(types[t], expect_ipc));
    if (size > 1) PetscCall(CheckFirstProductBehindBusyDevice(types[t]));
    if (size > 1) PetscCall(CheckSparseProducts(types[t]));
    PetscCall(CheckDiagonalOnDevice(types[t]));
    for (PetscInt idx = 0;; idx++) {
      Mat       S;
      char      name[128];
      PetscBool more;

      PetscCall(TestCreateGenerated(idx, name, sizeof(name), &S, &more));
      if (!more) break;
      PetscCall(TestMatrix(types[t], S, name));
      PetscCall(MatDestroy(&S));
    }
    for (PetscInt f = 0; f < nnames && dir[0]; f++) {
      Mat  S;
      char path[PETSC_MAX_PATH_LEN];

      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s.mtx.gz", dir, names[f]));
      PetscCall(MatLoadMatrixMarket(PETSC_COMM_SELF, path, MATSEQAIJ, &S));
      PetscCall(TestMatrix(types[t], S, names[f]));
      PetscCall(MatDestroy(&S));
    }
    if (!quick) PetscCall(CompareKSP(types[t], k));
  }
  for (PetscInt t = 0; t < ntypes; t++) PetscCall(PetscFree(types[t]));
  for (PetscInt f = 0; f < nnames; f++) PetscCall(PetscFree(names[f]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
