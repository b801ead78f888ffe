static const char help[] = "The MPI types without a GPU (run on 1, 2 and 3 ranks): creation paths, blocks, options, host products.\n"
                           "  -matrices_dir <dir>  directory of the real matrices (Matrix Market, .mtx.gz)\n";

/*
  For each format's root type on the ranks of PETSC_COMM_WORLD: every creation path (MatSetType before and after
  preallocation, MatConvert of an assembled MPIAIJ, MatCreateAIJ...CUDA(), MatLoad of a binary file, DMDA and
  DMPlex with -dm_mat_type) gives our type with our seq type in both blocks; the format's options and setters reach both
  blocks, also after MPIAIJ replaces the off-diagonal block; bad option values give errors; the four products on
  host vectors, and bound to the CPU, match the float64 reference; conversion back to MPIAIJ keeps every entry.
*/
#include <petscgpumat.h>
#include <petscdmda.h>
#include <petscdmplex.h>
#include <petscfe.h>
#include <petscds.h>
#include <stdio.h>
#include <unistd.h>
#include "../common/mpiutil.h"

typedef struct {
  const char *root;      /* "ellrcuda" */
  const char *seqtype;   /* its seq type */
  const char *mpitype;   /* its MPI type */
  const char *option;    /* an integer option of the format and a value other than its default */
  const char *value;
  const char *badvalue;  /* out of range */
  PetscErrorCode (*get)(Mat, PetscInt *);
  PetscErrorCode (*set)(Mat, PetscInt);
  PetscInt setvalue;
  PetscErrorCode (*create)(MPI_Comm, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
} Format;

static const Format formats[] = {
  {MATELLRCUDA, MATSEQELLRCUDA, MATMPIELLRCUDA, "-mat_ellr_threads_per_row", "4", "3", MatELLRCUDAGetThreadsPerRow, MatELLRCUDASetThreadsPerRow, 2, MatCreateAIJELLRCUDA},
  {MATRGCSRCUDA, MATSEQRGCSRCUDA, MATMPIRGCSRCUDA, "-mat_rgcsr_group_size", "64", "0", MatRGCSRCUDAGetGroupSize, MatRGCSRCUDASetGroupSize, 32, MatCreateAIJRGCSRCUDA},
  {MATCMRSCUDA, MATSEQCMRSCUDA, MATMPICMRSCUDA, "-mat_cmrs_height", "8", "17", MatCMRSCUDAGetHeight, MatCMRSCUDASetHeight, 2, MatCreateAIJCMRSCUDA},
  {MATCSRCUDA, MATSEQCSRCUDA, MATMPICSRCUDA, "-mat_csr_spmv_alg", "2", "3", MatCSRCUDAGetSpMVAlgorithm, MatCSRCUDASetSpMVAlgorithm, 2, MatCreateAIJCSRCUDA},
  /* the choosing type, through a candidate's parameter (its candidates' setters and options act on it) */
  {MATAUTOCUDA, MATSEQAUTOCUDA, MATMPIAUTOCUDA, "-mat_cmrs_height", "8", "17", MatCMRSCUDAGetHeight, MatCMRSCUDASetHeight, 2, MatCreateAIJAutoCUDA},
};

static PetscMPIInt size;

static PetscErrorCode IsType(Mat A, MatType type, PetscBool *flg)
{
  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, type, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A is of the format's type for this communicator size, and (MPI) both blocks are of its seq type and get `param` */
static PetscErrorCode CheckType(Mat A, const Format *f, const char *path, PetscInt param)
{
  PetscBool flg, blocks = PETSC_TRUE, params = PETSC_TRUE;
  MatType   type;

  PetscFunctionBeginUser;
  PetscCall(MatGetType(A, &type));
  PetscCall(IsType(A, size > 1 ? f->mpitype : f->seqtype, &flg));
  if (size > 1 && flg) {
    Mat      Ad, Ao;
    PetscInt v;

    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
    PetscCall(IsType(Ad, f->seqtype, &blocks));
    if (blocks) PetscCall(IsType(Ao, f->seqtype, &blocks));
    if (blocks && param) {
      PetscCall(f->get(Ad, &v));
      params = (PetscBool)(v == param);
      PetscCall(f->get(Ao, &v));
      params = (PetscBool)(params && v == param);
    }
  }
  TEST_CHECK(flg && blocks && params, "%s, %d rank(s): %s gives %s%s%s", f->root, size, path, type, size > 1 ? (blocks ? " with blocks " : " with blocks NOT ") : "", size > 1 ? (params ? f->seqtype : "of the right parameters") : "");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every creation path, each checked by its type and its products on host vectors */
static PetscErrorCode TestCreationPaths(const Format *f, Mat S, const char *mname)
{
  MPI_Comm comm = PETSC_COMM_WORLD;
  Mat      A, B;
  char     label[256];
  PetscInt M, N;

  PetscFunctionBeginUser;
  PetscCall(MatGetSize(S, &M, &N));
  /* MatSetType() before preallocation, by root name */
  PetscCall(TestDistribute(comm, S, f->root, &A));
  PetscCall(CheckType(A, f, "MatSetType() before preallocation", 0));
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s (type set first)", f->root, mname));
  PetscCall(TestMPIProducts(A, S, VECSTANDARD, 1, label));
  PetscCall(MatDestroy(&A));
  /* MatSetType() on an assembled AIJ matrix: in-place conversion */
  PetscCall(TestDistribute(comm, S, NULL, &A));
  PetscCall(MatSetType(A, f->root));
  PetscCall(CheckType(A, f, "MatSetType() after assembly", 0));
  PetscCall(MatDestroy(&A));
  /* MatConvert(), MAT_INITIAL_MATRIX and MAT_INPLACE_MATRIX, and back to AIJ with every entry */
  PetscCall(TestDistribute(comm, S, NULL, &A));
  PetscCall(MatConvert(A, f->root, MAT_INITIAL_MATRIX, &B));
  PetscCall(CheckType(B, f, "MatConvert(MAT_INITIAL_MATRIX)", 0));
  {
    Mat       C;
    PetscBool eq, isaij;
    MatType   type;

    PetscCall(MatConvert(B, MATAIJ, MAT_INITIAL_MATRIX, &C));
    PetscCall(MatGetType(C, &type));
    PetscCall(MatEqual(A, C, &eq));
    PetscCall(IsType(C, size > 1 ? MATMPIAIJ : MATSEQAIJ, &isaij));
    TEST_CHECK(eq && isaij, "%s %s, %d rank(s): MatConvert back to AIJ gives %s with every entry", f->root, mname, size, type);
    PetscCall(MatDestroy(&C));
  }
  PetscCall(MatDestroy(&B));
  PetscCall(MatConvert(A, f->root, MAT_INPLACE_MATRIX, &A));
  PetscCall(CheckType(A, f, "MatConvert(MAT_INPLACE_MATRIX)", 0));
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s (converted in place)", f->root, mname));
  PetscCall(TestMPIProducts(A, S, VECSTANDARD, 2, label));
  /* bound to the CPU: the blocks follow, the products stay right */
  PetscCall(MatBindToCPU(A, PETSC_TRUE));
  if (size > 1) {
    Mat       Ad, Ao;
    PetscBool bd, bo;

    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
    PetscCall(MatBoundToCPU(Ad, &bd));
    PetscCall(MatBoundToCPU(Ao, &bo));
    TEST_CHECK(bd && bo, "%s, %d ranks: MatBindToCPU() binds both blocks", f->root, size);
  }
  PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s (bound to the CPU)", f->root, mname));
  PetscCall(TestMPIProducts(A, S, VECSTANDARD, 3, label));
  PetscCall(MatBindToCPU(A, PETSC_FALSE));
  /* duplicate: same type, same products */
  PetscCall(MatDuplicate(A, MAT_COPY_VALUES, &B));
  PetscCall(CheckType(B, f, "MatDuplicate()", 0));
  PetscCall(MatDestroy(&B));
  PetscCall(MatDestroy(&A));
  /* the convenience constructor, preallocated like MatCreateAIJ() */
  {
    PetscCall(f->create(comm, PETSC_DECIDE, PETSC_DECIDE, M, N, 5, NULL, 5, NULL, &A));
    PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
    PetscCall(CheckType(A, f, "MatCreateAIJ...CUDA()", 0));
    PetscCall(MatDestroy(&A));
  }
  /* MatLoad() of a PETSc binary file into our type */
  {
    PetscViewer v;
    char        tmp[PETSC_MAX_PATH_LEN], path[PETSC_MAX_PATH_LEN], info[PETSC_MAX_PATH_LEN + 8];
    int         pid = (int)getpid();
    PetscMPIInt rank;

    /* a file of this run's own (rank 0's process id): with a fixed name, two runs at once on one machine (another
       checkout's tests, another CI job) read each other's file half written ("Read past end of file") */
    PetscCallMPI(MPI_Bcast(&pid, 1, MPI_INT, 0, comm));
    PetscCallMPI(MPI_Comm_rank(comm, &rank));
    PetscCall(PetscGetTmp(comm, tmp, sizeof(tmp)));
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/petscgpumat-mpi-load-%d.bin", tmp, pid));
    PetscCall(PetscSNPrintf(info, sizeof(info), "%s.info", path));
    PetscCall(TestDistribute(comm, S, NULL, &B));
    PetscCall(PetscViewerBinaryOpen(comm, path, FILE_MODE_WRITE, &v));
    PetscCall(MatView(B, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCall(MatDestroy(&B));
    PetscCall(MatCreate(comm, &A));
    PetscCall(MatSetType(A, f->root));
    PetscCall(PetscViewerBinaryOpen(comm, path, FILE_MODE_READ, &v));
    PetscCall(MatLoad(A, v));
    PetscCall(PetscViewerDestroy(&v));
    PetscCallMPI(MPI_Barrier(comm)); /* every rank has read it */
    if (rank == 0) {
      (void)remove(path);
      (void)remove(info);
    }
    PetscCall(CheckType(A, f, "MatLoad()", 0));
    PetscCall(PetscSNPrintf(label, sizeof(label), "%s %s (MatLoad)", f->root, mname));
    PetscCall(TestMPIProducts(A, S, VECSTANDARD, 4, label));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The format's option and setter reach both blocks, also a block MPIAIJ creates after assembly; bad values are errors */
static PetscErrorCode TestOptions(const Format *f)
{
  MPI_Comm       comm = PETSC_COMM_WORLD;
  Mat            S, A;
  PetscInt       v, rstart, rend, N;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(2, 20, &S));
  PetscCall(MatGetSize(S, NULL, &N));
  /* options given before assembly go to the blocks created at assembly */
  PetscCall(PetscOptionsSetValue(NULL, f->option, f->value));
  PetscCall(MatCreate(comm, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, N, N));
  PetscCall(MatSetType(A, f->root));
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, f->option));
  PetscCall(MatXAIJSetPreallocation(A, 1, NULL, NULL, NULL, NULL));
  PetscCall(MatSetOption(A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  for (PetscInt i = rstart; i < rend; i++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           nc;

    PetscCall(MatGetRow(S, i, &nc, &cols, &vals));
    PetscCall(MatSetValues(A, 1, &i, nc, cols, vals, INSERT_VALUES));
    PetscCall(MatRestoreRow(S, i, &nc, &cols, &vals));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckType(A, f, "an option set before assembly", atoi(f->value)));
  /* a setter on the parallel matrix reaches both blocks and its getter answers */
  PetscCall(f->set(A, f->setvalue));
  PetscCall(CheckType(A, f, "a setter after assembly", f->setvalue));
  PetscCall(f->get(A, &v));
  TEST_CHECK(v == f->setvalue, "%s, %d rank(s): the getter of the parallel matrix answers %" PetscInt_FMT " (set %" PetscInt_FMT ")", f->root, size, v, f->setvalue);
  /* a new off-process column (the last rank couples to column 0): MPIAIJ builds a new off-diagonal block */
  if (rend == N && size > 1) {
    PetscInt    row = N - 1, col = 0;
    PetscScalar one = 1;

    PetscCall(MatSetValues(A, 1, &row, 1, &col, &one, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(CheckType(A, f, "a new nonzero after assembly (new off-diagonal block)", f->setvalue));
  if (size > 1) { /* the same entry in the reference */
    PetscInt    row = N - 1, col = 0;
    PetscScalar one = 1;

    PetscCall(MatDestroy(&S));
    PetscCall(TestCreateLaplacian(2, 20, &S));
    PetscCall(MatSetOption(S, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
    PetscCall(MatSetValues(S, 1, &row, 1, &col, &one, INSERT_VALUES));
    PetscCall(MatAssemblyBegin(S, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(S, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(TestMPIProducts(A, S, VECSTANDARD, 5, "after a new off-process nonzero"));
  /* an out-of-range option value is an error */
  PetscCall(PetscOptionsSetValue(NULL, f->option, f->badvalue));
  TEST_EXPECT_ERROR(&ierr, MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, f->option));
  TEST_CHECK(ierr == PETSC_ERR_ARG_OUTOFRANGE, "%s, %d rank(s): %s %s is an out-of-range error (%d)", f->root, size, f->option, f->badvalue, (int)ierr);
  /* MatView shows the local blocks' storage */
  if (size > 1) {
    char text[8192];

    Mat  Ao;

    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    TEST_CHECK(strstr(text, "GPU storage of the local blocks") != NULL, "%s: MatView (ascii_info) of the parallel matrix reports its blocks", f->root);
    PetscCall(MatMPIAIJGetSeqAIJ(A, NULL, &Ao, NULL));
    PetscCall(TestViewInfoText(Ao, text, sizeof(text)));
    TEST_CHECK(strstr(text, "compressed rows") != NULL, "%s: the off-diagonal block keeps only its nonempty rows on the device", f->root);
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatMult of A (our type) equals that of R (MPIAIJ, same entries) on host vectors: one TEST_CHECK */
static PetscErrorCode CheckSameMult(Mat R, Mat A, PetscInt seed, const char *what)
{
  Vec       x, y[2];
  PetscReal diff, norm;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(R, &x, &y[0]));
  PetscCall(TestFillVec(x, seed));
  PetscCall(VecDuplicate(y[0], &y[1]));
  PetscCall(VecSet(y[1], NAN));
  PetscCall(MatMult(R, x, y[0]));
  PetscCall(MatMult(A, x, y[1]));
  PetscCall(VecAXPY(y[1], -1.0, y[0]));
  PetscCall(VecNorm(y[1], NORM_INFINITY, &diff));
  PetscCall(VecNorm(y[0], NORM_INFINITY, &norm));
  TEST_CHECK(diff <= TestTolerance() * norm, "%s, %d rank(s): MatMult equals MPIAIJ's (difference %.2e)", what, size, (double)diff);
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y[0]));
  PetscCall(VecDestroy(&y[1]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* DMDA with -dm_mat_type <root>: our type, the stencil assembled through it gives MPIAIJ's products */
static PetscErrorCode TestDMDA(const Format *f)
{
  DM   da;
  Mat  A[2];
  char what[128];

  PetscFunctionBeginUser;
  for (PetscInt t = 0; t < 2; t++) { /* the same grid twice: -dm_mat_type aij, then the format's root type */
    DMDALocalInfo info;

    if (t) PetscCall(DMDestroy(&da));
    PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DMDA_STENCIL_STAR, 9, 8, 7, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1, 1, NULL, NULL, NULL, &da));
    PetscCall(PetscOptionsSetValue(NULL, "-dm_mat_type", t ? f->root : MATAIJ));
    PetscCall(DMSetFromOptions(da));
    PetscCall(PetscOptionsClearValue(NULL, "-dm_mat_type"));
    PetscCall(DMSetUp(da));
    PetscCall(DMCreateMatrix(da, &A[t]));
    PetscCall(DMDAGetLocalInfo(da, &info));
    for (PetscInt k = info.zs; k < info.zs + info.zm; k++)
      for (PetscInt j = info.ys; j < info.ys + info.ym; j++)
        for (PetscInt i = info.xs; i < info.xs + info.xm; i++) {
          MatStencil  row = {.k = k, .j = j, .i = i}, col[7];
          PetscScalar v[7];
          PetscInt    c = 0;

          col[c] = row, v[c++] = 6.0 + 0.01 * i;
          if (i > 0) col[c] = row, col[c].i = i - 1, v[c++] = -1.0 - 0.001 * j;
          if (i < info.mx - 1) col[c] = row, col[c].i = i + 1, v[c++] = -1.0;
          if (j > 0) col[c] = row, col[c].j = j - 1, v[c++] = -1.0 + 0.002 * k;
          if (j < info.my - 1) col[c] = row, col[c].j = j + 1, v[c++] = -1.0;
          if (k > 0) col[c] = row, col[c].k = k - 1, v[c++] = -0.5;
          if (k < info.mz - 1) col[c] = row, col[c].k = k + 1, v[c++] = -1.5;
          PetscCall(MatSetValuesStencil(A[t], 1, &row, c, col, v, INSERT_VALUES));
        }
    PetscCall(MatAssemblyBegin(A[t], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(CheckType(A[1], f, "DMCreateMatrix() with -dm_mat_type", 0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s DMDA 9x8x7", f->root));
  PetscCall(CheckSameMult(A[0], A[1], 11, what));
  PetscCall(MatDestroy(&A[0]));
  PetscCall(MatDestroy(&A[1]));
  PetscCall(DMDestroy(&da));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  DMPlex with DMSetMatType(<root>) (what -dm_mat_type sets): a distributed 2-D quadrilateral mesh with one unknown per vertex; an element matrix
  (a stiffness-like pattern with values depending on the cell) assembled through DMPlexMatSetClosure() into AIJ
  and into our type gives the same products.
*/
static PetscErrorCode TestDMPlex(const Format *f)
{
  DM       dm, dist = NULL;
  Mat      A[2];
  PetscInt faces[2] = {7, 5}, cStart, cEnd;
  char     what[128];

  PetscFunctionBeginUser;
  PetscCall(DMPlexCreateBoxMesh(PETSC_COMM_WORLD, 2, PETSC_FALSE, faces, NULL, NULL, NULL, PETSC_TRUE, 0, PETSC_FALSE, &dm));
  PetscCall(DMPlexDistribute(dm, 0, NULL, &dist));
  if (dist) {
    PetscCall(DMDestroy(&dm));
    dm = dist;
  }
  PetscCall(DMPlexGetHeightStratum(dm, 0, &cStart, &cEnd));
  {
    PetscFE fe; /* Q1 Lagrange: one unknown per vertex */

    PetscCall(PetscFECreateLagrange(PETSC_COMM_SELF, 2, 1, PETSC_FALSE, 1, PETSC_DETERMINE, &fe));
    PetscCall(DMSetField(dm, 0, NULL, (PetscObject)fe));
    PetscCall(DMCreateDS(dm));
    PetscCall(PetscFEDestroy(&fe));
  }
  for (PetscInt t = 0; t < 2; t++) {
    PetscCall(DMSetMatType(dm, t ? f->root : MATAIJ)); /* what -dm_mat_type sets (the DMDA test goes through the option) */
    PetscCall(DMCreateMatrix(dm, &A[t]));
    for (PetscInt c = cStart; c < cEnd; c++) {
      PetscScalar e[16];

      for (PetscInt i = 0; i < 4; i++)
        for (PetscInt j = 0; j < 4; j++) e[4 * i + j] = i == j ? 3.0 + 0.01 * (PetscReal)c : -1.0 + 0.001 * (PetscReal)(i + 4 * j);
      PetscCall(DMPlexMatSetClosure(dm, NULL, NULL, A[t], c, e, ADD_VALUES));
    }
    PetscCall(MatAssemblyBegin(A[t], MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(A[t], MAT_FINAL_ASSEMBLY));
  }
  PetscCall(CheckType(A[1], f, "DMPlex DMCreateMatrix() with DMSetMatType()", 0));
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s DMPlex 2-D quadrilateral mesh", f->root));
  PetscCall(CheckSameMult(A[0], A[1], 13, what));
  PetscCall(MatDestroy(&A[0]));
  PetscCall(MatDestroy(&A[1]));
  PetscCall(DMDestroy(&dm));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The explicit MPI type name works on any number of ranks, one included */
static PetscErrorCode TestExplicitMPIType(const Format *f)
{
  Mat       S, A;
  PetscBool flg;

  PetscFunctionBeginUser;
  PetscCall(TestCreateRandom(300, 250, 6, "emptyrows", 21, &S));
  PetscCall(TestDistribute(PETSC_COMM_WORLD, S, f->mpitype, &A));
  PetscCall(IsType(A, f->mpitype, &flg));
  TEST_CHECK(flg, "%s, %d rank(s): MatSetType(%s) gives that type", f->root, size, f->mpitype);
  PetscCall(TestMPIProducts(A, S, VECSTANDARD, 6, f->mpitype));
  /* forward products through PETSc's VecScatter instead of the staged exchange */
  PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_halo_vecscatter", "1"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_vecscatter"));
  PetscCall(TestMPIProducts(A, S, VECSTANDARD, 7, "with -mat_gpumat_halo_vecscatter"));
  if (size > 1) {
    char text[8192];

    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    TEST_CHECK(strstr(text, "halo exchange of forward products: PETSc VecScatter") != NULL, "%s: MatView names the VecScatter halo exchange", f->mpitype);
    PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_halo_vecscatter", "0"));
    PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_halo_ipc", "0"));
    PetscCall(MatSetFromOptions(A));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_vecscatter"));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_ipc"));
    PetscCall(TestMPIProducts(A, S, VECSTANDARD, 8, "with -mat_gpumat_halo_ipc 0"));
    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    TEST_CHECK(strstr(text, "halo exchange of forward products: staged through pinned host buffers") != NULL, "%s: MatView names the staged halo exchange after -mat_gpumat_halo_ipc 0", f->mpitype);
    PetscCall(PetscOptionsSetValue(NULL, "-mat_gpumat_halo_ipc", "1"));
    PetscCall(MatSetFromOptions(A));
    PetscCall(PetscOptionsClearValue(NULL, "-mat_gpumat_halo_ipc"));
    PetscCall(TestMPIProducts(A, S, VECSTANDARD, 9, "with -mat_gpumat_halo_ipc 1"));
    PetscCall(TestViewInfoText(A, text, sizeof(text)));
    TEST_CHECK(strstr(text, "CUDA IPC where every neighbour is on this node") != NULL, "%s: MatView says CUDA IPC is decided at the first device product", f->mpitype);
  }
  PetscCall(MatDestroy(&A));
  PetscCall(MatDestroy(&S));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char dir[PETSC_MAX_PATH_LEN] = "";

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-matrices_dir", dir, sizeof(dir), NULL));
  for (size_t fi = 0; fi < PETSC_STATIC_ARRAY_LENGTH(formats); fi++) {
    const Format *f = &formats[fi];

    /* the generated edge cases: rows split unevenly, empty rows, rectangular both ways, one rank without rows */
    for (PetscInt idx = 0;; idx++) {
      Mat       S;
      char      name[128];
      PetscBool more;

      if (idx == 14 || idx == 15) continue; /* dense and long-row cases: covered by the GPU test */
      PetscCall(TestCreateGenerated(idx, name, sizeof(name), &S, &more));
      if (!more) break;
      PetscCall(TestCreationPaths(f, S, name));
      PetscCall(MatDestroy(&S));
    }
    if (dir[0]) { /* a real matrix, loaded on every rank as the reference */
      Mat       S;
      char      path[PETSC_MAX_PATH_LEN];
      PetscBool found;

      PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s.mtx.gz", dir, "sherman1"));
      PetscCall(PetscTestFile(path, 'r', &found));
      if (!found) PetscCall(TestSkip("the real matrix sherman1", "not found (a checkout without ../shared/matrices beside it: set PETSCGPUMAT_MATRICES)"));
      else {
        PetscCall(MatLoadMatrixMarket(PETSC_COMM_SELF, path, MATSEQAIJ, &S));
        PetscCall(TestCreationPaths(f, S, "sherman1"));
        PetscCall(MatDestroy(&S));
      }
    }
    PetscCall(TestOptions(f));
    PetscCall(TestDMDA(f));
    PetscCall(TestDMPlex(f));
    PetscCall(TestExplicitMPIType(f));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
