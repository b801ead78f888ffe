/*
  Transposed products of a rectangular matrix (prolongators and restrictions, MPI off-diagonal blocks) through its
  transpose formed on the device: the matrix's device CSR (the format's own entries copied back in CSR order, or its
  shadow's arrays where it has one) transposed by cuSPARSE (cusparseCsr2cscEx2) and multiplied forward by
  cusparseSpMV, as aijcusparse does with MAT_FORM_EXPLICIT_TRANSPOSE but with CUSPARSE_SPMV_CSR_ALG2, which cuSPARSE
  promises bitwise reproducible (ALG1, aijcusparse's, it does not; the transposes' rows are short). Made at
  the first transposed product, formed again when the values change, made anew for a new nonzero pattern, freed
  with the matrix (not with the format's device copy, which forming the transpose may rebuild).

  Why not aijcusparse on a shadow, as before: the shadow's SeqAIJ assembly on the host (11-12 ms for PCMG's
  2.1 M-row interpolation, H100) and its second upload are not needed when the format's device copy holds the CSR
  already. Why not the format's transposed kernels: they scatter with atomics into the shorter vector, so their sums
  change from run to run.
*/
#include <petscgpumat/private/gpumatcusparse.h>

#define MATGPUMAT_CUSPARSE_INDEX (sizeof(PetscInt) == 8 ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I)

struct _MatGPUMatDeviceTranspose {
  PetscInt             rows, cols;   /* of the transpose: A's columns and rows */
  PetscCount           nnz;
  PetscInt            *d_ti, *d_tj;  /* the transpose's CSR: [rows + 1], [nnz] */
  PetscScalar         *d_ta;         /* [nnz] */
  PetscInt            *d_ai, *d_aj;  /* scratch while forming: A's CSR (held here so that an error frees them with the rest) */
  PetscScalar         *d_aa;
  void                *work;         /* scratch of cusparseCsr2cscEx2 */
  cusparseSpMatDescr_t descr;
  cusparseDnVecDescr_t vx, vz;
  void                *buffer;       /* cusparseSpMV's work space, sized at the first product */
  size_t               bufsize;
  PetscBool            sized, formed;
  PetscObjectState     state, nonzerostate; /* A's when last formed */
};

/* Scratch from the stream's memory pool: neither its allocation nor its release waits for the device (cudaFree()
   would, for all the work queued before it: the first V-cycle's, where the first restriction forms the transpose) */
static PetscErrorCode MatGPUMatDeviceTransposeScratch_Private(Mat A, size_t bytes, void *stream, void **ptr)
{
  cudaError_t err;

  PetscFunctionBegin;
  *ptr = NULL;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  err = cudaMallocAsync(ptr, bytes, (cudaStream_t)stream);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    *ptr = NULL;
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "%s: cannot allocate %zu bytes of device memory to form its transpose. The matrix stays usable on the host: MatBindToCPU() or a host type", ((PetscObject)A)->type_name, bytes);
  }
  PetscCallCUDA(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* stream NULL: at once (an error left them behind; cudaFree() takes pool memory too) */
static PetscErrorCode MatGPUMatDeviceTransposeFreeScratch_Private(MatGPUMatDeviceTranspose t, void *stream)
{
  void **scratch[] = {(void **)&t->d_ai, (void **)&t->d_aj, (void **)&t->d_aa, &t->work};

  PetscFunctionBegin;
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(scratch); k++) {
    if (stream && *scratch[k]) PetscCallCUDA(cudaFreeAsync(*scratch[k], (cudaStream_t)stream));
    else PetscCall(MatGPUMatDeviceFree(scratch[k]));
    *scratch[k] = NULL;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatDeviceTransposeDestroy(MatGPUMatDeviceTranspose *t)
{
  PetscFunctionBegin;
  if (!*t) PetscFunctionReturn(PETSC_SUCCESS);
  if ((*t)->descr) PetscCallCUSPARSE(cusparseDestroySpMat((*t)->descr));
  if ((*t)->vx) PetscCallCUSPARSE(cusparseDestroyDnVec((*t)->vx));
  if ((*t)->vz) PetscCallCUSPARSE(cusparseDestroyDnVec((*t)->vz));
  PetscCall(MatGPUMatDeviceTransposeFreeScratch_Private(*t, NULL));
  PetscCall(MatGPUMatDeviceFree((void **)&(*t)->d_ti));
  PetscCall(MatGPUMatDeviceFree((void **)&(*t)->d_tj));
  PetscCall(MatGPUMatDeviceFree((void **)&(*t)->d_ta));
  PetscCall(MatGPUMatDeviceFree(&(*t)->buffer));
  PetscCall(PetscFree(*t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether A's transposed products can take this way: cuSPARSE's conversion has 32-bit indices only */
PetscBool MatGPUMatDeviceTransposeCan(Mat A)
{
  (void)A;
  return (PetscBool)(sizeof(PetscInt) == sizeof(int) && PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT);
}

/* t's transpose of A's current values, made (new pattern, first use) or formed again (new values) */
static PetscErrorCode MatGPUMatDeviceTransposeForm_Private(Mat A, MatGPUMatDeviceTranspose t, void *stream)
{
  PetscObjectState state;
  MatInfo          info;
  MatGPUMatShadow  none;
  cusparseHandle_t handle;
  size_t           worksize = 0;
  PetscBool        pattern  = (PetscBool)(!t->formed || t->nonzerostate != A->nonzerostate);

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!pattern && state == t->state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_GPUMatTranspose, A, 0, 0, 0));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  if (pattern) {
    if (t->descr) PetscCallCUSPARSE(cusparseDestroySpMat(t->descr));
    t->descr = NULL;
    PetscCall(MatGPUMatDeviceFree((void **)&t->d_ti));
    PetscCall(MatGPUMatDeviceFree((void **)&t->d_tj));
    PetscCall(MatGPUMatDeviceFree((void **)&t->d_ta));
    PetscCall(MatGPUMatDeviceFree(&t->buffer));
    t->sized  = PETSC_FALSE;
    t->formed = PETSC_FALSE;
    t->rows   = A->cmap->n;
    t->cols  = A->rmap->n;
    t->nnz   = (PetscCount)info.nz_used;
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)(t->rows + 1) * sizeof(PetscInt), (void **)&t->d_ti));
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)t->nnz * sizeof(PetscInt), (void **)&t->d_tj));
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)t->nnz * sizeof(PetscScalar), (void **)&t->d_ta));
  }
  PetscCheck((PetscCount)info.nz_used == t->nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The same nonzero state with %" PetscCount_FMT " entries, not %" PetscCount_FMT, (PetscCount)info.nz_used, t->nnz);
  /* A's device CSR: the format's layout copied back (its build is the only upload), or the shadow's arrays */
  PetscCall(MatGPUMatDeviceTransposeScratch_Private(A, (size_t)(t->cols + 1) * sizeof(PetscInt), stream, (void **)&t->d_ai));
  PetscCall(MatGPUMatDeviceTransposeScratch_Private(A, (size_t)t->nnz * sizeof(PetscInt), stream, (void **)&t->d_aj));
  PetscCall(MatGPUMatDeviceTransposeScratch_Private(A, (size_t)t->nnz * sizeof(PetscScalar), stream, (void **)&t->d_aa));
  PetscCall(PetscMemzero(&none, sizeof(none)));
  PetscCall(MatGPUMatCopyDeviceCSR(A, &none, stream, t->d_ai, t->d_aj, t->d_aa));
  PetscCall(MatGPUMatShadowReset(&none)); /* A is ours: its shadow, if it took one, is the base's (g->csr) */
  if (t->nnz) {
    PetscCall(MatGPUMatGetCUSPARSEHandle(stream, &handle));
    PetscCallCUSPARSE(cusparseCsr2cscEx2_bufferSize(handle, (int)t->cols, (int)t->rows, (int)t->nnz, t->d_aa, (const int *)t->d_ai, (const int *)t->d_aj, t->d_ta, (int *)t->d_ti, (int *)t->d_tj, MATGPUMAT_CUDA_SCALAR, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &worksize));
    PetscCall(MatGPUMatDeviceTransposeScratch_Private(A, worksize, stream, &t->work));
    PetscCallCUSPARSE(cusparseCsr2cscEx2(handle, (int)t->cols, (int)t->rows, (int)t->nnz, t->d_aa, (const int *)t->d_ai, (const int *)t->d_aj, t->d_ta, (int *)t->d_ti, (int *)t->d_tj, MATGPUMAT_CUDA_SCALAR, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, t->work));
  } else PetscCallCUDA(cudaMemsetAsync(t->d_ti, 0, (size_t)(t->rows + 1) * sizeof(PetscInt), (cudaStream_t)stream));
  PetscCall(MatGPUMatDeviceTransposeFreeScratch_Private(t, stream)); /* after the conversion, in stream order */
  if (!t->descr && t->nnz) PetscCallCUSPARSE(cusparseCreateCsr(&t->descr, t->rows, t->cols, (int64_t)t->nnz, t->d_ti, t->d_tj, t->d_ta, MATGPUMAT_CUSPARSE_INDEX, MATGPUMAT_CUSPARSE_INDEX, CUSPARSE_INDEX_BASE_ZERO, MATGPUMAT_CUDA_SCALAR));
  t->nonzerostate = A->nonzerostate;
  t->state        = state;
  t->formed       = PETSC_TRUE;
  PetscCall(PetscLogEventEnd(MAT_GPUMatTranspose, A, 0, 0, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = A^T x (+ y) with device arrays x [A's rows], y, z [A's columns] (y NULL: none; y may be z) on `stream`, through
  *t (made here at the first call); *nnz: the entries multiplied (flop counts)
*/
PetscErrorCode MatGPUMatDeviceTransposeMult(Mat A, MatGPUMatDeviceTranspose *t, void *stream, const PetscScalar *x, const PetscScalar *y, PetscScalar *z, PetscCount *nnz)
{
  MatGPUMatDeviceTranspose dt;
  cusparseHandle_t         handle;
  const PetscScalar        one = 1.0, beta = y ? 1.0 : 0.0;

  PetscFunctionBegin;
  if (!*t) PetscCall(PetscNew(t));
  dt = *t;
  PetscCall(MatGPUMatDeviceTransposeForm_Private(A, dt, stream));
  *nnz = dt->nnz;
  if (!dt->rows) PetscFunctionReturn(PETSC_SUCCESS);
  if (y && y != z) PetscCallCUDA(cudaMemcpyAsync(z, y, (size_t)dt->rows * sizeof(PetscScalar), cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
  if (!dt->nnz || !dt->cols) {
    if (!y) PetscCallCUDA(cudaMemsetAsync(z, 0, (size_t)dt->rows * sizeof(PetscScalar), (cudaStream_t)stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(MatGPUMatGetCUSPARSEHandle(stream, &handle));
  if (!dt->vx) {
    PetscCallCUSPARSE(cusparseCreateDnVec(&dt->vx, dt->cols, (void *)x, MATGPUMAT_CUDA_SCALAR));
    PetscCallCUSPARSE(cusparseCreateDnVec(&dt->vz, dt->rows, z, MATGPUMAT_CUDA_SCALAR));
  } else {
    PetscCallCUSPARSE(cusparseDnVecSetValues(dt->vx, (void *)x));
    PetscCallCUSPARSE(cusparseDnVecSetValues(dt->vz, z));
  }
  if (!dt->sized) {
    PetscCallCUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, dt->descr, dt->vx, &beta, dt->vz, MATGPUMAT_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, &dt->bufsize));
    PetscCall(MatGPUMatDeviceMalloc(A, dt->bufsize, &dt->buffer));
    dt->sized = PETSC_TRUE;
  }
  PetscCallCUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, dt->descr, dt->vx, &beta, dt->vz, MATGPUMAT_CUDA_SCALAR, CUSPARSE_SPMV_CSR_ALG2, dt->buffer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device bytes the transpose holds (MatView) */
size_t MatGPUMatDeviceTransposeBytes(MatGPUMatDeviceTranspose t)
{
  return t ? (size_t)(t->rows + 1) * sizeof(PetscInt) + (size_t)t->nnz * (sizeof(PetscInt) + sizeof(PetscScalar)) + t->bufsize : 0;
}
