/*
  LU of a small matrix of our seq types as its explicit inverse on the device: the matrix made dense from its device
  CSR (cuSPARSE), factored with partial pivoting (cuSOLVER getrf) and inverted (getrs on the identity); each solve is
  then one dense product (cuBLAS gemv, or gemm for a block of right-hand sides) that reads the n^2 entries once at the
  memory bandwidth.

  Why: a sparse LU of a 3-D grid fills in until its triangular solves have nearly one level set per row, so cuSPARSE's
  solves are a chain of small steps (PCMG's coarse grid of 17^3 = 4913 rows on the H100: 1.5 ms per solve, half of the
  whole KSPSolve of KSP ex45 at 129^3), and PETSc's symbolic and numeric factorizations run on the host (125 ms
  there). A dense triangular solve (cuSOLVER getrs) is no faster: it is as sequential. The explicit inverse reads
  193 MB in one product.

  Taken by default (MatGetFactor() with no solver type, a usable device, -mat_gpumat_trisolve auto) for LU of square
  matrices of -mat_gpumat_dense_lu_min to -mat_gpumat_dense_lu_max rows that fill in like a 3-D grid (the rule:
  MatGPUMatDenseLUTakes()) and whose two n x n arrays fit in half the free device memory; by name with
  -pc_factor_mat_solver_type cuda (MATSOLVERCUDA: PETSc's name for cuSOLVER's dense LU). Pivoting by rows makes
  PETSc's pivot shifts needless: they are not applied; a matrix singular to working precision (a zero pivot in getrf)
  sets the factor's MAT_FACTOR_NUMERIC_ZEROPIVOT as PETSc's own factorizations do. The inverse's rounding differs from
  a triangular solve's (a forward error of the order of cond(A) eps, as LU's): iterations of a preconditioned solve
  do not change, the last digits of a direct solve may.
*/
#include <petscgpumat/private/gpumatcusparse.h>
#include <petscgpumat/private/gpumatcuda.h>
#include <petscgpumat/private/gpumatdenselu.h>

PetscInt MatGPUMatDenseLUMin = 2048; /* -mat_gpumat_dense_lu_min */
PetscInt MatGPUMatDenseLUMax = 8192; /* -mat_gpumat_dense_lu_max (0: never) */

/* What the factor keeps beside its dense array (the inverse), in a container composed on it */
typedef struct {
  PetscInt        n;
  PetscLogDouble  nnz;      /* of the matrix last factored: the fill ratio is n^2 / nnz */
  PetscReal       fill;     /* the fill the PC gave (for MatGetInfo()) */
  MatGPUMatShadow other;    /* the shadow of a matrix that is not ours given to the numeric phase */
  PetscErrorCode (*view)(Mat, PetscViewer);
  PetscErrorCode (*destroy)(Mat);
} MatGPUMatDenseLU;

static const char dense_lu_key[] = "MatGPUMatDenseLU";

static PetscErrorCode MatGPUMatDenseLUDestroy_Private(PetscGPUMatCtxArg ctx)
{
  MatGPUMatDenseLU *d = (MatGPUMatDenseLU *)PetscGPUMatCtxOf(ctx);

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowReset(&d->other));
  PetscCall(PetscFree(d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatDenseLUGet_Private(Mat F, MatGPUMatDenseLU **d)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)F, dense_lu_key, (void **)d));
  PetscCheck(*d, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Dense LU factor without its data");
  PetscFunctionReturn(PETSC_SUCCESS);
}

__global__ static void MatGPUMatDenseSetIdentity_Kernel(int n, PetscScalar *a)
{
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) a[(size_t)i * n + i] = 1.0;
}

/* Solves of the inverse: x = op(inv) b for a block of nrhs columns (leading dimensions ldb, ldx), all on the device */
static PetscErrorCode MatGPUMatDenseLUApply_Private(Mat F, PetscBool transpose, PetscInt nrhs, const PetscScalar *b, PetscInt ldb, PetscScalar *x, PetscInt ldx)
{
  const PetscScalar   one = 1.0, zero = 0.0;
  const PetscScalar  *inv;
  const int           n  = (int)F->rmap->n;
  cublasOperation_t   op = transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasHandle_t      handle;
  cublasPointerMode_t mode;

  PetscFunctionBegin;
  PetscCall(PetscCUBLASGetHandle(&handle));
  PetscCall(MatDenseCUDAGetArrayRead(F, &inv));
  PetscCallCUBLAS(cublasGetPointerMode(handle, &mode));
  PetscCallCUBLAS(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  PetscCall(PetscLogGpuTimeBegin());
  if (nrhs == 1) PetscCallCUBLAS(GPUMAT_GEMV(handle, op, n, n, &one, inv, n, b, 1, &zero, x, 1));
  else PetscCallCUBLAS(GPUMAT_GEMM(handle, op, CUBLAS_OP_N, n, (int)nrhs, n, &one, inv, n, b, (int)ldb, &zero, x, (int)ldx));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCallCUBLAS(cublasSetPointerMode(handle, mode));
  PetscCall(MatDenseCUDARestoreArrayRead(F, &inv));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)n * (PetscLogDouble)n * (PetscLogDouble)nrhs));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = inv b (or inv^T b) for CUDA vectors */
static PetscErrorCode MatGPUMatDenseLUSolveCUDA_Private(Mat F, Vec b, Vec x, PetscBool transpose)
{
  const PetscScalar *barray;
  PetscScalar       *xarray;

  PetscFunctionBegin;
  if (!F->rmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecCUDAGetArrayRead(b, &barray));
  PetscCall(VecCUDAGetArrayWrite(x, &xarray));
  PetscCall(MatGPUMatDenseLUApply_Private(F, transpose, 1, barray, F->rmap->n, xarray, F->rmap->n));
  PetscCall(VecCUDARestoreArrayWrite(x, &xarray));
  PetscCall(VecCUDARestoreArrayRead(b, &barray));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveCUDA_GPUMatDenseLU(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUSolveCUDA_Private(F, b, x, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveTransposeCUDA_GPUMatDenseLU(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUSolveCUDA_Private(F, b, x, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Vectors of any type: host ones through CUDA copies (MatGPUMatDeviceSolve()) */
static PetscErrorCode MatSolve_GPUMatDenseLU(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceSolve(F, b, x, MatSolveCUDA_GPUMatDenseLU));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveTranspose_GPUMatDenseLU(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceSolve(F, b, x, MatSolveTransposeCUDA_GPUMatDenseLU));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* X = inv B for dense blocks: one gemm where both are on the device, else column by column */
static PetscErrorCode MatGPUMatDenseLUMatSolve_Private(Mat F, Mat B, Mat X, PetscBool transpose)
{
  const PetscScalar *barray;
  PetscScalar       *xarray;
  PetscMemType       bmt, xmt;
  PetscInt           nrhs, ldb, ldx;

  PetscFunctionBegin;
  PetscCall(MatGetSize(B, NULL, &nrhs));
  PetscCall(MatDenseGetLDA(B, &ldb));
  PetscCall(MatDenseGetLDA(X, &ldx));
  PetscCall(MatDenseGetArrayReadAndMemType(B, &barray, &bmt));
  PetscCall(MatDenseGetArrayWriteAndMemType(X, &xarray, &xmt));
  if (PetscMemTypeDevice(bmt) && PetscMemTypeDevice(xmt)) PetscCall(MatGPUMatDenseLUApply_Private(F, transpose, nrhs, barray, ldb, xarray, ldx));
  PetscCall(MatDenseRestoreArrayWriteAndMemType(X, &xarray));
  PetscCall(MatDenseRestoreArrayReadAndMemType(B, &barray));
  if (!(PetscMemTypeDevice(bmt) && PetscMemTypeDevice(xmt))) {
    for (PetscInt j = 0; j < nrhs; j++) {
      Vec b, x;

      PetscCall(MatDenseGetColumnVecRead(B, j, &b));
      PetscCall(MatDenseGetColumnVecWrite(X, j, &x));
      PetscCall(transpose ? MatSolveTranspose_GPUMatDenseLU(F, b, x) : MatSolve_GPUMatDenseLU(F, b, x));
      PetscCall(MatDenseRestoreColumnVecWrite(X, j, &x));
      PetscCall(MatDenseRestoreColumnVecRead(B, j, &b));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMatSolve_GPUMatDenseLU(Mat F, Mat B, Mat X)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUMatSolve_Private(F, B, X, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMatSolveTranspose_GPUMatDenseLU(Mat F, Mat B, Mat X)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUMatSolve_Private(F, B, X, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numeric phase's temporaries on the device, freed after it whatever happened */
typedef struct {
  PetscInt            *d_ai, *d_aj;
  PetscScalar         *d_aa, *lu, *work;
  int                 *ipiv; /* n pivots, then getrf's info */
  void                *buffer;
  cusparseSpMatDescr_t csr;
  cusparseDnMatDescr_t dense;
} MatGPUMatDenseLUWork;

static PetscErrorCode MatGPUMatDenseLUWorkFree_Private(MatGPUMatDenseLUWork *w)
{
  PetscFunctionBegin;
  if (w->dense) PetscCallCUSPARSE(cusparseDestroyDnMat(w->dense));
  if (w->csr) PetscCallCUSPARSE(cusparseDestroySpMat(w->csr));
  PetscCall(MatGPUMatDeviceFree(&w->buffer)); /* cudaFree() waits for the work that used them */
  PetscCall(MatGPUMatDeviceFree((void **)&w->work));
  PetscCall(MatGPUMatDeviceFree((void **)&w->ipiv));
  PetscCall(MatGPUMatDeviceFree((void **)&w->lu));
  PetscCall(MatGPUMatDeviceFree((void **)&w->d_aa));
  PetscCall(MatGPUMatDeviceFree((void **)&w->d_aj));
  PetscCall(MatGPUMatDeviceFree((void **)&w->d_ai));
  PetscCall(PetscMemzero(w, sizeof(*w)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A (n > 0 rows, nnz entries) made dense in a temporary array from its device CSR, factored there (getrf), and the
  factor's own array (zeroed by its preallocation, then the identity) overwritten with the inverse (getrs). Peak
  device memory: two n x n arrays and A's CSR, checked first.
*/
static PetscErrorCode MatGPUMatDenseLUFactor_Private(Mat F, Mat A, MatGPUMatDenseLU *d, PetscCount nnz, MatGPUMatDenseLUWork *w)
{
  const int          n = (int)A->rmap->n;
  cusolverDnHandle_t solver;
  cusparseHandle_t   sparse;
  PetscScalar       *inv;
  int                h_info = 0, lwork = 0;
  size_t             bytes  = 0;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(MatGPUMatCheckDeviceMemory(F, 2 * (size_t)n * (size_t)n * sizeof(PetscScalar) + (size_t)nnz * (sizeof(PetscInt) + sizeof(PetscScalar)), "The dense LU on the device"));
  PetscCall(MatDenseCUDASetPreallocation(F, NULL)); /* zeroed */
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(MatGPUMatGetCUSPARSEHandle(stream, &sparse));
  PetscCall(PetscCUSOLVERDnGetHandle(&solver));
  PetscCall(MatGPUMatDeviceMalloc(F, (size_t)(n + 1) * sizeof(PetscInt), (void **)&w->d_ai));
  PetscCall(MatGPUMatDeviceMalloc(F, (size_t)nnz * sizeof(PetscInt), (void **)&w->d_aj));
  PetscCall(MatGPUMatDeviceMalloc(F, (size_t)nnz * sizeof(PetscScalar), (void **)&w->d_aa));
  PetscCall(MatGPUMatDeviceMalloc(F, (size_t)n * n * sizeof(PetscScalar), (void **)&w->lu));
  PetscCall(MatGPUMatDeviceMalloc(F, (size_t)(n + 1) * sizeof(int), (void **)&w->ipiv));
  PetscCall(MatGPUMatCopyDeviceCSR(A, &d->other, stream, w->d_ai, w->d_aj, w->d_aa));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUSPARSE(cusparseCreateCsr(&w->csr, n, n, (int64_t)nnz, w->d_ai, w->d_aj, w->d_aa, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, MATGPUMAT_CUDA_SCALAR));
  PetscCallCUSPARSE(cusparseCreateDnMat(&w->dense, n, n, n, w->lu, MATGPUMAT_CUDA_SCALAR, CUSPARSE_ORDER_COL));
  PetscCallCUSPARSE(cusparseSparseToDense_bufferSize(sparse, w->csr, w->dense, CUSPARSE_SPARSETODENSE_ALG_DEFAULT, &bytes));
  PetscCall(MatGPUMatDeviceMalloc(F, bytes, &w->buffer));
  PetscCallCUSPARSE(cusparseSparseToDense(sparse, w->csr, w->dense, CUSPARSE_SPARSETODENSE_ALG_DEFAULT, w->buffer));
  PetscCallCUSOLVER(GPUMAT_GETRF_BUFFERSIZE(solver, n, n, w->lu, n, &lwork));
  PetscCall(MatGPUMatDeviceMalloc(F, (size_t)lwork * sizeof(PetscScalar), (void **)&w->work));
  PetscCallCUSOLVER(GPUMAT_GETRF(solver, n, n, w->lu, n, w->work, w->ipiv, w->ipiv + n));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(MatGPUMatCopyToHost(&h_info, w->ipiv + n, sizeof(int), stream));
  PetscCheck(h_info >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "cuSOLVER getrf: argument %d is wrong", -h_info);
  if (h_info > 0) { /* U(i, i) = 0: as PETSc's factorizations report a zero pivot, the PC fails and KSP says why */
    F->factorerrortype             = MAT_FACTOR_NUMERIC_ZEROPIVOT;
    F->factorerror_zeropivot_row   = h_info - 1;
    F->factorerror_zeropivot_value = 0.0;
    PetscCall(PetscInfo(F, "Zero pivot in row %d of the dense LU on the device: the matrix is singular to working precision\n", h_info - 1));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatDenseCUDAGetArray(F, &inv));
  PetscCall(PetscLogGpuTimeBegin());
  MatGPUMatDenseSetIdentity_Kernel<<<(n + 255) / 256, 256, 0, (cudaStream_t)stream>>>(n, inv);
  PetscCall(MatGPUMatCheckLaunch((cudaStream_t)stream));
  PetscCallCUSOLVER(GPUMAT_GETRS(solver, CUBLAS_OP_N, n, n, w->lu, n, w->ipiv, inv, n, w->ipiv + n));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(MatDenseCUDARestoreArray(F, &inv));
  PetscCall(PetscLogGpuFlops(2.0 / 3.0 * (PetscLogDouble)n * n * n + 2.0 * (PetscLogDouble)n * n * n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The numeric phase: the inverse of A in the factor's array; the temporaries freed also after an error (out of memory) */
static PetscErrorCode MatLUFactorNumeric_GPUMatDenseLU(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatDenseLU    *d;
  MatGPUMatDenseLUWork w;
  MatInfo              ainfo;
  PetscErrorCode       ierr = PETSC_SUCCESS;

  PetscFunctionBegin;
  (void)info; /* row pivoting: no pivot shifts */
  PetscCall(MatGPUMatDenseLUGet_Private(F, &d));
  PetscCall(MatGPUMatDenseLUWarmupWait(NULL, NULL)); /* cuSOLVER's set-up, begun with the first matrix of ours */
  PetscCheck(A->rmap->n == d->n && A->cmap->n == d->n, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The numeric factorization is given a %" PetscInt_FMT " x %" PetscInt_FMT " matrix; the factor is %" PetscInt_FMT " x %" PetscInt_FMT, A->rmap->n, A->cmap->n, d->n, d->n);
  F->factorerrortype = MAT_FACTOR_NOERROR;
  PetscCall(MatGetInfo(A, MAT_LOCAL, &ainfo));
  d->nnz = ainfo.nz_used;
  PetscCall(PetscMemzero(&w, sizeof(w)));
  if (d->n) ierr = MatGPUMatDenseLUFactor_Private(F, A, d, (PetscCount)ainfo.nz_used, &w);
  PetscCall(MatGPUMatDenseLUWorkFree_Private(&w));
  PetscCall(ierr);
  F->ops->solve             = MatSolve_GPUMatDenseLU;
  F->ops->solvetranspose    = MatSolveTranspose_GPUMatDenseLU;
  F->ops->matsolve          = MatMatSolve_GPUMatDenseLU;
  F->ops->matsolvetranspose = MatMatSolveTranspose_GPUMatDenseLU;
  F->ops->solveadd          = NULL; /* MatSolveAdd(): a solve and an AXPY */
  F->ops->solvetransposeadd = NULL;
  F->assembled              = PETSC_TRUE;
  F->preallocated           = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Nothing to analyse: the numeric phase takes any pattern of A's size */
static PetscErrorCode MatLUFactorSymbolic_GPUMatDenseLU(Mat F, Mat A, IS row, IS col, const MatFactorInfo *info)
{
  MatGPUMatDenseLU *d;

  PetscFunctionBegin;
  (void)row, (void)col; /* the pivoting chooses the order */
  PetscCall(MatGPUMatDenseLUGet_Private(F, &d));
  PetscCheck(A->rmap->n == d->n && A->cmap->n == d->n, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "A %" PetscInt_FMT " x %" PetscInt_FMT " matrix for a %" PetscInt_FMT " x %" PetscInt_FMT " factor", A->rmap->n, A->cmap->n, d->n, d->n);
  d->fill                  = info->fill;
  F->ops->lufactornumeric  = MatLUFactorNumeric_GPUMatDenseLU;
  F->info.factor_mallocs   = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The dense array's entries, and the fill against A's (what -ksp_view prints for a factor) */
static PetscErrorCode MatGetInfo_GPUMatDenseLU(Mat F, MatInfoType flag, MatInfo *info)
{
  MatGPUMatDenseLU *d;
  const PetscLogDouble N = (PetscLogDouble)F->rmap->n * (PetscLogDouble)F->cmap->n;

  PetscFunctionBegin;
  (void)flag;
  PetscCall(MatGPUMatDenseLUGet_Private(F, &d));
  PetscCall(PetscMemzero(info, sizeof(*info)));
  info->block_size        = 1.0;
  info->nz_allocated      = N;
  info->nz_used           = N;
  info->assemblies        = (PetscLogDouble)F->num_ass;
  info->fill_ratio_given  = d->fill;
  info->fill_ratio_needed = d->nnz > 0 ? N / d->nnz : 0.0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_GPUMatDenseLU(Mat F, PetscViewer viewer)
{
  MatGPUMatDenseLU *d;
  PetscBool         ascii;
  PetscViewerFormat format;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUGet_Private(F, &d));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  PetscCall(PetscViewerGetFormat(viewer, &format));
  if (ascii && (format == PETSC_VIEWER_ASCII_INFO || format == PETSC_VIEWER_ASCII_INFO_DETAIL)) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "petscgpumat: LU with row pivoting on the device (cuSOLVER), kept as the explicit inverse: each solve is one dense product\n"));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  (%" PetscInt_FMT " rows, within -mat_gpumat_dense_lu_min %" PetscInt_FMT " and -mat_gpumat_dense_lu_max %" PetscInt_FMT ", or named: -pc_factor_mat_solver_type cuda)\n", d->n, MatGPUMatDenseLUMin, MatGPUMatDenseLUMax));
    {
      PetscBool warm;
      PetscReal ms;

      PetscCall(MatGPUMatDenseLUWarmupWait(&warm, &ms));
      if (warm) PetscCall(PetscViewerASCIIPrintf(viewer, "  cuSOLVER's one-time set-up in this process ran in a host thread beside the host's work (%.0f ms, -mat_gpumat_dense_lu_warmup)\n", (double)ms));
      else PetscCall(PetscViewerASCIIPrintf(viewer, "  cuSOLVER's one-time set-up in this process was the first factorization's (-mat_gpumat_dense_lu_warmup off, or its thread did not run: -info)\n"));
    }
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (d->view) PetscCall((*d->view)(F, viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The dense matrix's destroy, after the function this file composed (-checkfunctionlist) */
static PetscErrorCode MatDestroy_GPUMatDenseLU(Mat F)
{
  MatGPUMatDenseLU *d;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDenseLUGet_Private(F, &d));
  PetscCall(PetscObjectComposeFunction((PetscObject)F, "MatFactorGetSolverType_C", NULL));
  PetscCall((*d->destroy)(F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatFactorGetSolverType_GPUMatDenseLU(Mat F, MatSolverType *type)
{
  PetscFunctionBegin;
  (void)F;
  *type = MATSOLVERCUDA;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Whether the LU factor of A made with no solver type named is the dense one: a square, assembled A of min to max rows
  with real scalars, -mat_gpumat_trisolve auto, a bandwidth in its own ordering of at least n / 25, and two n x n
  arrays within half the free device memory (else cuSPARSE's sparse LU). Called only where a device is usable and A
  is not bound to the CPU.

  The bandwidth tells a grid of three dimensions (whose sparse LU fills in: its host factorization costs more than
  the dense one on the device, its solves run one level set after another) from one of two, where the host's sparse
  factorization is cheaper than even the first use of cuSOLVER in a process (60-90 ms: CUDA's lazy loading of its
  kernels). Measured on one H100 (2026-11-27, docs/performance.md "Dense LU"), PCLU set-up and one solve, each size in
  a fresh process, dense / sparse: 3-D 7-point 17^3 120-200 / 123-126 ms and 0.33 / 1.06 ms, 20^3 132-159 / 261-277 ms
  and 0.4 / 1.8 ms, 27-point 13^3 84-106 / 131-150 ms and 0.25 / 1.23 ms; 2-D 5-point 64^2 82-110 / 52-57 ms and 0.3 /
  0.43 ms (bandwidth n / 64: sparse). The DMDA orderings give 3-D grids a bandwidth of n^(2/3), 2-D ones n^(1/2).
*/
PetscErrorCode MatGPUMatDenseLUTakes(Mat A, MatFactorType ftype, PetscBool *takes)
{
  const PetscInt  n = A->rmap->n;
  const PetscInt *ai, *aj;
  PetscInt        bw = 0;
  PetscMemType    mtype;
  size_t          avail = 0, total = 0;

  PetscFunctionBegin;
  *takes = PETSC_FALSE;
  if (PetscDefined(USE_COMPLEX) || sizeof(PetscInt) != sizeof(int) || ftype != MAT_FACTOR_LU || MatGPUMatTriSolve != MATGPUMAT_TRISOLVE_AUTO || n != A->cmap->n || !A->assembled) PetscFunctionReturn(PETSC_SUCCESS);
  if (n < MatGPUMatDenseLUMin || n > MatGPUMatDenseLUMax || n > 46340) PetscFunctionReturn(PETSC_SUCCESS); /* n^2 within int */
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, NULL, &mtype));
  if (!PetscMemTypeHost(mtype)) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < n; i++) /* columns sorted */
    if (ai[i + 1] > ai[i]) bw = PetscMax(bw, PetscMax(i - aj[ai[i]], aj[ai[i + 1] - 1] - i));
  if (25 * bw < n) {
    PetscCall(PetscInfo(A, "LU of %" PetscInt_FMT " rows of bandwidth %" PetscInt_FMT " (< n / 25): cuSPARSE's sparse LU\n", n, bw));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCallCUDA(cudaMemGetInfo(&avail, &total));
  *takes = (PetscBool)(4 * (size_t)n * (size_t)n * sizeof(PetscScalar) <= avail);
  if (!*takes) PetscCall(PetscInfo(A, "LU of %" PetscInt_FMT " rows: the dense LU's two arrays (%zu bytes) exceed half the free device memory (%zu bytes): cuSPARSE's\n", n, 2 * (size_t)n * (size_t)n * sizeof(PetscScalar), avail));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The factory (MATSOLVERCUDA for our seq types, and the default's choice): a MATSEQDENSECUDA matrix of A's size whose
  device array will hold the inverse; nothing is allocated before the numeric phase
*/
PetscErrorCode MatGetFactor_GPUMat_DenseLU(Mat A, MatFactorType ftype, Mat *F)
{
  MatGPUMatDenseLU *d;
  Mat               B;

  PetscFunctionBegin;
  *F = NULL;
  PetscCheck(!PetscDefined(USE_COMPLEX), PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The dense LU on the device of petscgpumat's types takes real scalars");
  PetscCheck(ftype == MAT_FACTOR_LU, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "petscgpumat's dense factor on the device is an LU, not %s", MatFactorTypes[ftype]);
  PetscCheck(A->rmap->n == A->cmap->n, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_SIZ, "LU of a square matrix, not %" PetscInt_FMT " x %" PetscInt_FMT, A->rmap->n, A->cmap->n);
  PetscCheck(sizeof(PetscInt) == sizeof(int), PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The dense LU on the device reads the device CSR with 32-bit indices: not with 64-bit PetscInt");
  PetscCheck(A->rmap->n <= 46340, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "The dense LU on the device takes at most 46340 rows (n^2 within a 32-bit int), not %" PetscInt_FMT, A->rmap->n);
  PetscCall(MatCreate(PetscObjectComm((PetscObject)A), &B));
  PetscCall(MatSetSizes(B, A->rmap->n, A->cmap->n, A->rmap->n, A->cmap->n));
  PetscCall(MatSetType(B, MATSEQDENSECUDA));
  PetscCall(PetscNew(&d));
  d->n    = A->rmap->n;
  d->view    = B->ops->view;
  d->destroy = B->ops->destroy;
  PetscCall(PetscObjectContainerCompose((PetscObject)B, dense_lu_key, d, MatGPUMatDenseLUDestroy_Private));
  B->factortype            = MAT_FACTOR_LU;
  B->trivialsymbolic       = PETSC_TRUE;  /* as PETSc's dense factors: -log_view counts the numeric phase as MatLUFactor */
  B->canuseordering        = PETSC_FALSE; /* the numeric phase's pivoting orders the rows: PCLU computes no ordering */
  B->ops->lufactorsymbolic = MatLUFactorSymbolic_GPUMatDenseLU;
  B->ops->getinfo          = MatGetInfo_GPUMatDenseLU;
  B->ops->view             = MatView_GPUMatDenseLU;
  B->ops->destroy          = MatDestroy_GPUMatDenseLU;
  PetscCall(PetscFree(B->solvertype));
  PetscCall(PetscStrallocpy(MATSOLVERCUDA, &B->solvertype));
  PetscCall(PetscObjectComposeFunction((PetscObject)B, "MatFactorGetSolverType_C", MatFactorGetSolverType_GPUMatDenseLU));
  PetscCall(PetscStrallocpy(MATORDERINGEXTERNAL, (char **)&B->preferredordering[MAT_FACTOR_LU]));
  *F = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}
