/*
  ILU(0) and ICC(0) in the natural ordering, factored and solved on the device from the device CSR the matrix
  already has: cuSPARSE's csrilu02/csric02 on a copy of its entries, then SpSV triangular solves (what aijcusparse
  does on its own device CSR). The copy comes device to device from the format's layout where it gives the entries
  back in CSR order (CMRS, ELLPACK-R, RgCSR, cuSPARSE CSR), else from the matrix's aijcusparse shadow (MatGPUMatCopyDeviceCSR()): a matrix
  multiplied before it is factored is not uploaded a second time, and one factored first is uploaded once, by the
  format's build. A numeric factorization with new values (Newton, time stepping) copies the values again and keeps
  the analyses (cusparseSpSV_updateMatrix()).

  The factor is the one cuSPARSE's factory made (gpumat_factor.c), with its symbolic and numeric phases and its
  solves replaced; what this file keeps for it lives in a container composed on it. Zero pivots are reported as
  PETSc's host factorizations report them: a missing diagonal entry is an error at the symbolic phase, a zero pivot
  sets the factor's error (MatFactorGetError(), the PC's failure) at the numeric one. PETSc's pivot shifts are not
  applied (neither does aijcusparse's ILU(0)/ICC(0)).
*/
/* cuSPARSE marks csrilu02/csric02 deprecated and has no generic-API replacement yet; aijcusparse's ILU(0)/ICC(0)
   call them too */
#define DISABLE_CUSPARSE_DEPRECATED
#include <petscgpumat/private/gpumatcusparse.h>

#if defined(PETSC_USE_REAL_SINGLE)
  #define GPUMAT_CSRILU02_BUFFERSIZE cusparseScsrilu02_bufferSize
  #define GPUMAT_CSRILU02_ANALYSIS   cusparseScsrilu02_analysis
  #define GPUMAT_CSRILU02            cusparseScsrilu02
  #define GPUMAT_CSRIC02_BUFFERSIZE  cusparseScsric02_bufferSize
  #define GPUMAT_CSRIC02_ANALYSIS    cusparseScsric02_analysis
  #define GPUMAT_CSRIC02             cusparseScsric02
#else
  #define GPUMAT_CSRILU02_BUFFERSIZE cusparseDcsrilu02_bufferSize
  #define GPUMAT_CSRILU02_ANALYSIS   cusparseDcsrilu02_analysis
  #define GPUMAT_CSRILU02            cusparseDcsrilu02
  #define GPUMAT_CSRIC02_BUFFERSIZE  cusparseDcsric02_bufferSize
  #define GPUMAT_CSRIC02_ANALYSIS    cusparseDcsric02_analysis
  #define GPUMAT_CSRIC02             cusparseDcsric02
#endif

PetscBool MatGPUMatDeviceFactorOn = PETSC_TRUE; /* -mat_gpumat_device_factor */

/* The triangular solves: with L and U of ILU(0) (or L of ICC(0), then its transpose), and their transposes */
typedef enum {
  SOLVE_L,  /* L y = b */
  SOLVE_U,  /* ILU: U x = y; ICC: L^T x = y */
  SOLVE_UT, /* ILU transposed: U^T y = b */
  SOLVE_LT, /* ILU transposed: L^T x = y */
  NSOLVES
} MatGPUMatTriSolveKind;

typedef struct {
  MatFactorType ftype; /* MAT_FACTOR_ILU or MAT_FACTOR_ICC */
  PetscInt      m;
  PetscCount    nnz;
  PetscInt     *d_ai, *d_aj; /* the pattern, the factor's own copy (32-bit: PetscInt is int where this factor runs) */
  PetscScalar  *d_val;       /* the matrix's values, factored in place: unit L and U (ILU), or L (ICC) */
  PetscScalar  *d_x, *d_y;   /* d_y: the intermediate vector of the two solves; d_x: with it, the vectors of the solves' analyses */

  cusparseMatDescr_t   descr;
  csrilu02Info_t       ilu;
  csric02Info_t        ic;
  void                *fbuf; /* the factorization's work space */
  cusparseSpMatDescr_t L, U; /* over the same arrays: lower (unit diagonal for ILU) and upper */
  cusparseDnVecDescr_t vx, vy;
  cusparseSpSVDescr_t  sv[NSOLVES]; /* made at the first solve that needs one */
  void                *svbuf[NSOLVES];
  PetscBool            analysed[NSOLVES], stale[NSOLVES];

  PetscLogDouble  flops; /* of a numeric factorization (aijcusparse's estimate) */
  MatGPUMatShadow other; /* the shadow of a matrix not ours given to the numeric phase */
  PetscErrorCode (*getinfo)(Mat, MatInfoType, MatInfo *);
} MatGPUMatDeviceFactor;

static const char device_factor_key[] = "MatGPUMatDeviceFactor";

static PetscErrorCode MatGPUMatDeviceFactorReset_Private(MatGPUMatDeviceFactor *f)
{
  PetscFunctionBegin;
  for (int k = 0; k < NSOLVES; k++) {
    if (f->sv[k]) PetscCallCUSPARSE(cusparseSpSV_destroyDescr(f->sv[k]));
    PetscCall(MatGPUMatDeviceFree(&f->svbuf[k]));
    f->sv[k]       = NULL;
    f->analysed[k] = f->stale[k] = PETSC_FALSE;
  }
  if (f->vx) PetscCallCUSPARSE(cusparseDestroyDnVec(f->vx));
  if (f->vy) PetscCallCUSPARSE(cusparseDestroyDnVec(f->vy));
  if (f->L) PetscCallCUSPARSE(cusparseDestroySpMat(f->L));
  if (f->U) PetscCallCUSPARSE(cusparseDestroySpMat(f->U));
  if (f->ilu) PetscCallCUSPARSE(cusparseDestroyCsrilu02Info(f->ilu));
  if (f->ic) PetscCallCUSPARSE(cusparseDestroyCsric02Info(f->ic));
  if (f->descr) PetscCallCUSPARSE(cusparseDestroyMatDescr(f->descr));
  f->vx = f->vy = NULL, f->L = f->U = NULL, f->ilu = NULL, f->ic = NULL, f->descr = NULL;
  PetscCall(MatGPUMatDeviceFree(&f->fbuf));
  PetscCall(MatGPUMatDeviceFree((void **)&f->d_ai));
  PetscCall(MatGPUMatDeviceFree((void **)&f->d_aj));
  PetscCall(MatGPUMatDeviceFree((void **)&f->d_val));
  PetscCall(MatGPUMatDeviceFree((void **)&f->d_x));
  PetscCall(MatGPUMatDeviceFree((void **)&f->d_y));
  PetscCall(MatGPUMatShadowReset(&f->other));
  f->m = 0, f->nnz = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatDeviceFactorDestroy_Private(PetscGPUMatCtxArg ctx)
{
  MatGPUMatDeviceFactor *f = (MatGPUMatDeviceFactor *)PetscGPUMatCtxOf(ctx);

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorReset_Private(f));
  PetscCall(PetscFree(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatDeviceFactorGet_Private(Mat F, PetscBool create, MatGPUMatDeviceFactor **f)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)F, device_factor_key, (void **)f));
  if (!*f && create) {
    PetscCall(PetscNew(f));
    PetscCall(PetscObjectContainerCompose((PetscObject)F, device_factor_key, *f, MatGPUMatDeviceFactorDestroy_Private));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cuSPARSE handle on the stream of PETSc's current device context, which the factor's work runs on */
static PetscErrorCode MatGPUMatDeviceFactorHandle_Private(void **stream, cusparseHandle_t *handle)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatGetStream(stream));
  PetscCall(MatGPUMatGetCUSPARSEHandle(*stream, handle));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The factor holds A's pattern: MatGetInfo() says so (the factor's SeqAIJ part, which cuSPARSE's factory leaves empty, does not) */
static PetscErrorCode MatGetInfo_GPUMatDeviceFactor(Mat F, MatInfoType flag, MatInfo *info)
{
  MatGPUMatDeviceFactor *f;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorGet_Private(F, PETSC_FALSE, &f));
  PetscCheck(f && f->getinfo, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Device factor without its data");
  PetscCall((*f->getinfo)(F, flag, info));
  info->nz_used = info->nz_allocated = (PetscLogDouble)f->nnz;
  info->nz_unneeded                  = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The triangle and operation of solve k */
static void MatGPUMatTriSolveOf_Private(const MatGPUMatDeviceFactor *f, MatGPUMatTriSolveKind k, cusparseSpMatDescr_t *T, cusparseOperation_t *op)
{
  const PetscBool ilu = (PetscBool)(f->ftype == MAT_FACTOR_ILU);

  *T  = (k == SOLVE_L || k == SOLVE_LT || !ilu) ? f->L : f->U;
  *op = (k == SOLVE_L || (k == SOLVE_U && ilu)) ? CUSPARSE_OPERATION_NON_TRANSPOSE : CUSPARSE_OPERATION_TRANSPOSE;
}

/*
  Solve k made ready: its descriptor made and analysed at its first use (with the vectors f->vx and f->vy point at),
  brought up to date after a numeric factorization
*/
static PetscErrorCode MatGPUMatDeviceFactorTriSolveReady_Private(Mat F, MatGPUMatDeviceFactor *f, cusparseHandle_t handle, MatGPUMatTriSolveKind k)
{
  const PetscScalar    one = 1.0;
  cusparseSpMatDescr_t T;
  cusparseOperation_t  op;

  PetscFunctionBegin;
  MatGPUMatTriSolveOf_Private(f, k, &T, &op);
  if (!f->sv[k]) {
    size_t bytes = 0;

    PetscCallCUSPARSE(cusparseSpSV_createDescr(&f->sv[k]));
    PetscCallCUSPARSE(cusparseSpSV_bufferSize(handle, op, &one, T, f->vx, f->vy, MATGPUMAT_CUDA_SCALAR, CUSPARSE_SPSV_ALG_DEFAULT, f->sv[k], &bytes));
    PetscCall(MatGPUMatDeviceMalloc(F, bytes, &f->svbuf[k]));
  }
#if CUDART_VERSION >= 12020 /* cuSPARSE takes new values of the same pattern without a new analysis */
  if (f->analysed[k] && f->stale[k]) PetscCallCUSPARSE(cusparseSpSV_updateMatrix(handle, f->sv[k], f->d_val, CUSPARSE_SPSV_UPDATE_GENERAL));
#else
  if (f->stale[k]) f->analysed[k] = PETSC_FALSE;
#endif
  f->stale[k] = PETSC_FALSE;
  if (!f->analysed[k]) { /* numeric: it reads the factored values */
    PetscCallCUSPARSE(cusparseSpSV_analysis(handle, op, &one, T, f->vx, f->vy, MATGPUMAT_CUDA_SCALAR, CUSPARSE_SPSV_ALG_DEFAULT, f->sv[k], f->svbuf[k]));
    f->analysed[k] = PETSC_TRUE;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Solve k from the vector f->vx points at into the one f->vy points at */
static PetscErrorCode MatGPUMatDeviceFactorTriSolve_Private(Mat F, MatGPUMatDeviceFactor *f, cusparseHandle_t handle, MatGPUMatTriSolveKind k)
{
  const PetscScalar    one = 1.0;
  cusparseSpMatDescr_t T;
  cusparseOperation_t  op;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorTriSolveReady_Private(F, f, handle, k));
  MatGPUMatTriSolveOf_Private(f, k, &T, &op);
  PetscCallCUSPARSE(cusparseSpSV_solve(handle, op, &one, T, f->vx, f->vy, MATGPUMAT_CUDA_SCALAR, CUSPARSE_SPSV_ALG_DEFAULT, f->sv[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x = (LU)^-1 b or (LU)^-T b (ILU), (L L^T)^-1 b (ICC, either way): b into f->d_y, f->d_y into x */
static PetscErrorCode MatGPUMatDeviceFactorSolve_Private(Mat F, Vec b, Vec x, PetscBool transpose)
{
  const PetscBool             ilut = (PetscBool)(transpose && F->factortype == MAT_FACTOR_ILU);
  MatGPUMatDeviceFactor      *f;
  const PetscScalar          *barray;
  PetscScalar                *xarray;
  cusparseHandle_t            handle;
  void                       *stream;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorGet_Private(F, PETSC_FALSE, &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Device factor without its data");
  if (!f->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatDeviceFactorHandle_Private(&stream, &handle));
  PetscCall(VecCUDAGetArrayRead(b, &barray));
  PetscCall(VecCUDAGetArrayWrite(x, &xarray));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCallCUSPARSE(cusparseDnVecSetValues(f->vx, (void *)barray));
  PetscCallCUSPARSE(cusparseDnVecSetValues(f->vy, f->d_y));
  PetscCall(MatGPUMatDeviceFactorTriSolve_Private(F, f, handle, ilut ? SOLVE_UT : SOLVE_L));
  PetscCallCUSPARSE(cusparseDnVecSetValues(f->vx, f->d_y));
  PetscCallCUSPARSE(cusparseDnVecSetValues(f->vy, xarray));
  PetscCall(MatGPUMatDeviceFactorTriSolve_Private(F, f, handle, ilut ? SOLVE_LT : SOLVE_U));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayWrite(x, &xarray));
  PetscCall(VecCUDARestoreArrayRead(b, &barray));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)f->nnz - (PetscLogDouble)f->m));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveCUDA_GPUMatDeviceFactor(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorSolve_Private(F, b, x, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveTransposeCUDA_GPUMatDeviceFactor(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorSolve_Private(F, b, x, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Vectors of any type: host ones through CUDA copies (MatGPUMatDeviceSolve()) */
static PetscErrorCode MatSolve_GPUMatDeviceFactor(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceSolve(F, b, x, MatSolveCUDA_GPUMatDeviceFactor));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveTranspose_GPUMatDeviceFactor(Mat F, Vec b, Vec x)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceSolve(F, b, x, MatSolveTransposeCUDA_GPUMatDeviceFactor));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The entries of A (its pattern: the one of the symbolic phase) into the factor, factored in place */
static PetscErrorCode MatFactorNumeric_GPUMatDevice(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatDeviceFactor *f;
  cusparseHandle_t       handle;
  cusparseStatus_t       status;
  void                  *stream;
  MatInfo                ainfo;
  int                    zero = -1;

  PetscFunctionBegin;
  (void)info; /* no pivot shifts: as aijcusparse's ILU(0)/ICC(0) */
  PetscCall(MatGPUMatDeviceFactorGet_Private(F, PETSC_FALSE, &f));
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Device factor without its data");
  PetscCall(MatGetInfo(A, MAT_LOCAL, &ainfo));
  PetscCheck(A->rmap->n == f->m && (PetscCount)ainfo.nz_used == f->nnz, PETSC_COMM_SELF, PETSC_ERR_ARG_INCOMP, "The numeric factorization is given a matrix of %" PetscInt_FMT " rows and %.0f entries; the symbolic one had %" PetscInt_FMT " and %" PetscCount_FMT, A->rmap->n, ainfo.nz_used, f->m, f->nnz);
  F->factorerrortype = MAT_FACTOR_NOERROR;
  if (!f->m) {
    F->assembled = PETSC_TRUE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUMatDeviceFactorHandle_Private(&stream, &handle));
  PetscCall(MatGPUMatCopyDeviceCSR(A, &f->other, stream, NULL, NULL, f->d_val));
  PetscCall(PetscLogGpuTimeBegin());
  if (f->ftype == MAT_FACTOR_ILU) {
    PetscCallCUSPARSE(GPUMAT_CSRILU02(handle, (int)f->m, (int)f->nnz, f->descr, f->d_val, f->d_ai, f->d_aj, f->ilu, CUSPARSE_SOLVE_POLICY_USE_LEVEL, f->fbuf));
    status = cusparseXcsrilu02_zeroPivot(handle, f->ilu, &zero); /* waits for the factorization */
  } else {
    PetscCallCUSPARSE(GPUMAT_CSRIC02(handle, (int)f->m, (int)f->nnz, f->descr, f->d_val, f->d_ai, f->d_aj, f->ic, CUSPARSE_SOLVE_POLICY_USE_LEVEL, f->fbuf));
    status = cusparseXcsric02_zeroPivot(handle, f->ic, &zero);
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(PetscLogGpuFlops(f->flops));
  if (status == CUSPARSE_STATUS_ZERO_PIVOT) { /* as SeqAIJ's host factorization reports it: the PC fails, KSP says why */
    F->factorerrortype             = MAT_FACTOR_NUMERIC_ZEROPIVOT;
    F->factorerror_zeropivot_row   = zero;
    F->factorerror_zeropivot_value = 0.0;
    PetscCall(PetscInfo(F, "Zero pivot in row %d of the device %s(0) factorization\n", zero, MatFactorTypes[f->ftype]));
  } else PetscCallCUSPARSE(status);
  for (int k = 0; k < NSOLVES; k++) f->stale[k] = f->analysed[k];
  if (!F->factorerrortype) { /* the solves' analyses belong to the factorization (the transposed ones come at their first use) */
    PetscCall(PetscLogGpuTimeBegin());
    PetscCallCUSPARSE(cusparseDnVecSetValues(f->vx, f->d_x));
    PetscCallCUSPARSE(cusparseDnVecSetValues(f->vy, f->d_y));
    PetscCall(MatGPUMatDeviceFactorTriSolveReady_Private(F, f, handle, SOLVE_L));
    PetscCall(MatGPUMatDeviceFactorTriSolveReady_Private(F, f, handle, SOLVE_U));
    PetscCall(PetscLogGpuTimeEnd());
  }
  F->ops->solve             = MatSolve_GPUMatDeviceFactor;
  F->ops->solvetranspose    = MatSolveTranspose_GPUMatDeviceFactor;
  F->ops->matsolve          = NULL; /* MatMatSolve() then solves column by column */
  F->ops->matsolvetranspose = NULL;
  F->assembled              = PETSC_TRUE;
  F->offloadmask            = PETSC_OFFLOAD_GPU;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* aijcusparse's estimate of a numeric factorization's flops, from the host row lengths */
static PetscErrorCode MatGPUMatDeviceFactorFlops_Private(Mat A, PetscLogDouble *flops)
{
  const PetscInt *ai;
  PetscMemType    mtype;

  PetscFunctionBegin;
  *flops = 0.0;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, &mtype));
  if (!PetscMemTypeHost(mtype)) PetscFunctionReturn(PETSC_SUCCESS);
  for (PetscInt i = 0; i < A->rmap->n; i++) {
    const PetscInt len = ai[i + 1] - ai[i], left = (len - 1) / 2;

    if (len > 1) *flops += left * (2.0 * len - left + 1);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Whether the device factor takes this ILU/ICC factorization: ILU(0)/ICC(0) in the natural ordering of a square matrix
  with 32-bit indices, not asked to factor on the host, and not turned off (-mat_gpumat_device_factor 0)
*/
PetscErrorCode MatGPUMatDeviceFactorTakes(Mat A, IS row, IS col, const MatFactorInfo *info, PetscBool *takes)
{
  PetscBool rid = PETSC_TRUE, cid = PETSC_TRUE;

  PetscFunctionBegin;
  *takes = PETSC_FALSE;
  if (!MatGPUMatDeviceFactorOn || sizeof(PetscInt) != sizeof(int) || !PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT) PetscFunctionReturn(PETSC_SUCCESS);
  if ((PetscInt)info->levels != 0 || PetscGPUMatFactorOnHost(info) || A->rmap->n != A->cmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  if (row) PetscCall(ISIdentity(row, &rid));
  if (col) PetscCall(ISIdentity(col, &cid));
  *takes = (PetscBool)(rid && cid);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The symbolic phase: the pattern copied from A's device CSR, cuSPARSE's descriptors and the factorization's analysis
  (which finds a missing diagonal entry: an error, as in SeqAIJ's ILU(0)). The solves' analyses need the factored
  values: they come with the numeric phase.
*/
PetscErrorCode MatGPUMatDeviceFactorSymbolic(Mat F, Mat A, MatFactorType ftype, const MatFactorInfo *info)
{
  cusparseFillMode_t       lower = CUSPARSE_FILL_MODE_LOWER, upper = CUSPARSE_FILL_MODE_UPPER;
  cusparseDiagType_t       unit = CUSPARSE_DIAG_TYPE_UNIT, nonunit = CUSPARSE_DIAG_TYPE_NON_UNIT;
  MatGPUMatDeviceFactor   *f;
  cusparseHandle_t         handle;
  cusparseStatus_t         status;
  void                    *stream;
  MatInfo                  ainfo;
  int                      bytes = 0, zero = -1;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorGet_Private(F, PETSC_TRUE, &f));
  PetscCall(MatGPUMatDeviceFactorReset_Private(f));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &ainfo));
  f->ftype = ftype;
  f->m     = A->rmap->n;
  f->nnz   = (PetscCount)ainfo.nz_used;
  PetscCheck(f->nnz <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "cuSPARSE's ILU(0)/ICC(0) take at most 2^31 - 1 entries, not %" PetscCount_FMT, f->nnz);
  PetscCall(MatGPUMatDeviceFactorHandle_Private(&stream, &handle));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)(f->m + 1) * sizeof(PetscInt), (void **)&f->d_ai));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)f->nnz * sizeof(PetscInt), (void **)&f->d_aj));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)f->nnz * sizeof(PetscScalar), (void **)&f->d_val));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)f->m * sizeof(PetscScalar), (void **)&f->d_x));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)f->m * sizeof(PetscScalar), (void **)&f->d_y));
  if (f->m) {
    PetscCall(MatGPUMatCopyDeviceCSR(A, &f->other, stream, f->d_ai, f->d_aj, NULL));
    PetscCallCUSPARSE(cusparseCreateMatDescr(&f->descr));
    PetscCallCUSPARSE(cusparseSetMatIndexBase(f->descr, CUSPARSE_INDEX_BASE_ZERO));
    PetscCallCUSPARSE(cusparseSetMatType(f->descr, CUSPARSE_MATRIX_TYPE_GENERAL));
    PetscCallCUSPARSE(cusparseCreateCsr(&f->L, f->m, f->m, f->nnz, f->d_ai, f->d_aj, f->d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, MATGPUMAT_CUDA_SCALAR));
    PetscCallCUSPARSE(cusparseSpMatSetAttribute(f->L, CUSPARSE_SPMAT_FILL_MODE, &lower, sizeof(lower)));
    PetscCallCUSPARSE(cusparseSpMatSetAttribute(f->L, CUSPARSE_SPMAT_DIAG_TYPE, ftype == MAT_FACTOR_ILU ? &unit : &nonunit, sizeof(unit)));
    if (ftype == MAT_FACTOR_ILU) {
      PetscCallCUSPARSE(cusparseCreateCsr(&f->U, f->m, f->m, f->nnz, f->d_ai, f->d_aj, f->d_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, MATGPUMAT_CUDA_SCALAR));
      PetscCallCUSPARSE(cusparseSpMatSetAttribute(f->U, CUSPARSE_SPMAT_FILL_MODE, &upper, sizeof(upper)));
      PetscCallCUSPARSE(cusparseSpMatSetAttribute(f->U, CUSPARSE_SPMAT_DIAG_TYPE, &nonunit, sizeof(nonunit)));
    }
    PetscCallCUSPARSE(cusparseCreateDnVec(&f->vx, f->m, f->d_x, MATGPUMAT_CUDA_SCALAR));
    PetscCallCUSPARSE(cusparseCreateDnVec(&f->vy, f->m, f->d_y, MATGPUMAT_CUDA_SCALAR));
    if (ftype == MAT_FACTOR_ILU) {
      PetscCallCUSPARSE(cusparseCreateCsrilu02Info(&f->ilu));
      PetscCallCUSPARSE(GPUMAT_CSRILU02_BUFFERSIZE(handle, (int)f->m, (int)f->nnz, f->descr, f->d_val, f->d_ai, f->d_aj, f->ilu, &bytes));
      PetscCall(MatGPUMatDeviceMalloc(A, (size_t)bytes, &f->fbuf));
      PetscCallCUSPARSE(GPUMAT_CSRILU02_ANALYSIS(handle, (int)f->m, (int)f->nnz, f->descr, f->d_val, f->d_ai, f->d_aj, f->ilu, CUSPARSE_SOLVE_POLICY_USE_LEVEL, f->fbuf));
      status = cusparseXcsrilu02_zeroPivot(handle, f->ilu, &zero);
    } else {
      PetscCallCUSPARSE(cusparseCreateCsric02Info(&f->ic));
      PetscCallCUSPARSE(GPUMAT_CSRIC02_BUFFERSIZE(handle, (int)f->m, (int)f->nnz, f->descr, f->d_val, f->d_ai, f->d_aj, f->ic, &bytes));
      PetscCall(MatGPUMatDeviceMalloc(A, (size_t)bytes, &f->fbuf));
      PetscCallCUSPARSE(GPUMAT_CSRIC02_ANALYSIS(handle, (int)f->m, (int)f->nnz, f->descr, f->d_val, f->d_ai, f->d_aj, f->ic, CUSPARSE_SOLVE_POLICY_USE_LEVEL, f->fbuf));
      status = cusparseXcsric02_zeroPivot(handle, f->ic, &zero);
    }
    PetscCheck(status != CUSPARSE_STATUS_ZERO_PIVOT, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "Matrix is missing diagonal entry %d: no %s(0) factorization", zero, MatFactorTypes[ftype]);
    PetscCallCUSPARSE(status);
  }
  PetscCall(MatGPUMatDeviceFactorFlops_Private(A, &f->flops));
  F->factortype             = ftype;
  F->info.factor_mallocs    = 0;
  F->info.fill_ratio_given  = info->fill;
  F->info.fill_ratio_needed = 1.0;
  if (ftype == MAT_FACTOR_ILU) F->ops->lufactornumeric = MatFactorNumeric_GPUMatDevice;
  else F->ops->choleskyfactornumeric = MatFactorNumeric_GPUMatDevice;
  if (F->ops->getinfo != MatGetInfo_GPUMatDeviceFactor) {
    f->getinfo      = F->ops->getinfo;
    F->ops->getinfo = MatGetInfo_GPUMatDeviceFactor;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The factor leaves the device path (a symbolic phase of another kind on the same factor): its device data go */
PetscErrorCode MatGPUMatDeviceFactorRelease(Mat F)
{
  MatGPUMatDeviceFactor *f;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorGet_Private(F, PETSC_FALSE, &f));
  if (!f) PetscFunctionReturn(PETSC_SUCCESS);
  if (F->ops->getinfo == MatGetInfo_GPUMatDeviceFactor) F->ops->getinfo = f->getinfo;
  PetscCall(PetscObjectCompose((PetscObject)F, device_factor_key, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}
