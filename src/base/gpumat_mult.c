/*
  The device side of the shared base: keeping the device copy current, device memory, vector access,
  and the four products (the formats only launch kernels).
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>

PetscLogEvent MAT_GPUMatBuild, MAT_GPUMatCopyValues, MAT_GPUMatHostFallback, MAT_GPUMatHaloSetUp, MAT_GPUMatTranspose;
PetscBool     MatGPUMatHostFallbackIsError = PETSC_FALSE;

/* A failed allocation's error: out of device memory is the user's to handle (a clear message, the matrix still usable on
   the host); anything else is CUDA's */
static PetscErrorCode MatGPUMatAllocationError_Private(Mat A, size_t bytes, cudaError_t err, void **ptr)
{
  PetscFunctionBegin;
  if (err == cudaErrorMemoryAllocation) {
    size_t avail = 0, total = 0;

    (void)cudaGetLastError(); /* clear the sticky-free error so later calls work */
    *ptr = NULL;
    (void)cudaMemGetInfo(&avail, &total);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "%s: cannot allocate %zu bytes of device memory (%zu of %zu free). The matrix stays usable on the host: MatBindToCPU() or a host type", ((PetscObject)A)->type_name, bytes, avail, total);
  }
  PetscCallCUDA(err);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatDeviceMalloc(Mat A, size_t bytes, void **ptr)
{
  PetscFunctionBegin;
  *ptr = NULL;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatAllocationError_Private(A, bytes, cudaMalloc(ptr, bytes), ptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device memory from the stream's pool, in stream order (no wait for the device, as cudaMalloc has); release it with
   cudaFreeAsync() on that stream, after its readers */
PetscErrorCode MatGPUMatStreamMalloc(Mat A, size_t bytes, void *stream, void **ptr)
{
  PetscFunctionBegin;
  *ptr = NULL;
  if (!bytes) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatAllocationError_Private(A, bytes, cudaMallocAsync(ptr, bytes, (cudaStream_t)stream), ptr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatDeviceFree(void **ptr)
{
  PetscFunctionBegin;
  if (*ptr) PetscCallCUDA(cudaFree(*ptr));
  *ptr = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The cudaStream_t of the current PetscDeviceContext: the library's launches and copies, builds and products, go on it */
PetscErrorCode MatGPUMatGetStream(void **stream)
{
  PetscDeviceContext dctx;
  void              *handle;

  PetscFunctionBegin;
  PetscCall(PetscDeviceContextGetCurrentContext(&dctx));
  PetscCall(PetscDeviceContextGetStreamHandle(dctx, &handle));
  *stream = handle ? (void *)*(cudaStream_t *)handle : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Device to device on `stream` (a cudaStream_t); nothing where dst is NULL (not wanted) */
PetscErrorCode MatGPUMatCopyOnStream(void *dst, const void *src, size_t bytes, void *stream)
{
  PetscFunctionBegin;
  if (dst && bytes) PetscCallCUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Fail early, with the sizes, when a build would not fit in the free device memory. */
PetscErrorCode MatGPUMatCheckDeviceMemory(Mat A, size_t bytes, const char *what)
{
  size_t avail = 0, total = 0;

  PetscFunctionBegin;
  PetscCallCUDA(cudaMemGetInfo(&avail, &total));
  PetscCheck(bytes <= avail, PETSC_COMM_SELF, PETSC_ERR_MEM, "%s (%s) needs %zu bytes of device memory, only %zu of %zu are free. The matrix stays usable on the host: MatBindToCPU() or a host type", what, ((PetscObject)A)->type_name, bytes, avail, total);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The padding guard of a padded layout (ELLPACK-R, RgCSR): a clear error, naming the fill, before anything is
  allocated, instead of exhausting memory on a few long rows. `layout` names it, `option` is its -mat_..._max_fill
  (maxfill: largest stored / max(nnz, m) accepted; 0: no limit) and `advice` what the user may do instead.
*/
PetscErrorCode MatGPUMatCheckPadding(const char *layout, const char *option, const char *advice, PetscInt m, PetscCount nnz, PetscInt maxlen, PetscCount stored, PetscReal maxfill)
{
  PetscFunctionBegin;
  PetscCheck(maxfill == 0 || (PetscReal)stored <= maxfill * (PetscReal)PetscMax(nnz, m), PETSC_COMM_SELF, PETSC_ERR_SUP,
             "%s would store %" PetscCount_FMT " entries for %" PetscCount_FMT " nonzeros (artificial zeros %.0f%% of nnz, fill %.2f > %s %g); the longest row has %" PetscInt_FMT " entries, the mean is %.2f. %s, or raise %s (0: no limit)", layout, stored, nnz,
             nnz ? 100.0 * (double)(stored - nnz) / (double)nnz : 0.0, (double)stored / (double)PetscMax(nnz, 1), option, (double)maxfill, maxlen, m ? (double)nnz / (double)m : 0.0, advice, option);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatFreeDevice_Private(Mat A)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  if (g->format->freedevice) PetscCall(g->format->freedevice(A));
  PetscCall(MatGPUMatDeviceFree((void **)&g->d_rows));
  PetscCall(MatGPUMatDeviceFree((void **)&g->d_work));
  PetscCall(MatGPUMatDeviceFree((void **)&g->d_cai));
  PetscCall(MatGPUMatDeviceFree((void **)&g->d_ai));
  PetscCall(MatGPUMatDeviceFree((void **)&g->d_diagpos));
  PetscCall(PetscFree(g->cai));
  if (g->written) PetscCallCUDA(cudaEventDestroy((cudaEvent_t)g->written));
  g->written     = NULL;
  g->built       = PETSC_FALSE;
  A->offloadmask = PETSC_OFFLOAD_UNALLOCATED;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Compressed rows: row pointers of the nonempty rows, on the host and the device (a CSR of their own: the empty rows
  hold no entries, so the column and value arrays are shared), and on the device their row numbers and a work vector.
*/
static PetscErrorCode MatGPUMatCompressRows_Private(Mat A, const PetscInt *ai, PetscInt nzrows, void *stream)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  PetscInt   *rows, k = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(nzrows + 1, &g->cai));
  PetscCall(PetscMalloc1(nzrows, &rows));
  g->cai[0] = 0;
  for (PetscInt i = 0; i < A->rmap->n; i++)
    if (ai[i + 1] > ai[i]) {
      rows[k]     = i;
      g->cai[++k] = ai[i + 1];
    }
  ierr = MatGPUMatDeviceMalloc(A, (size_t)nzrows * sizeof(PetscInt), (void **)&g->d_rows);
  if (!ierr) ierr = MatGPUMatDeviceMalloc(A, (size_t)nzrows * sizeof(PetscScalar), (void **)&g->d_work);
  if (!ierr) ierr = MatGPUMatDeviceMalloc(A, (size_t)(nzrows + 1) * sizeof(PetscInt), (void **)&g->d_cai);
  if (!ierr) ierr = MatGPUMatCopyToDevice(g->d_rows, rows, (size_t)nzrows * sizeof(PetscInt), stream);
  if (!ierr) ierr = MatGPUMatCopyToDevice(g->d_cai, g->cai, (size_t)(nzrows + 1) * sizeof(PetscInt), stream);
  PetscCall(PetscFree(rows));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A's host row offsets (all m + 1 of them) to the device on `stream`, kept in g->d_ai, unless they are there already */
PetscErrorCode MatGPUMatUploadRowOffsets(Mat A, const PetscInt *ai, void *stream)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  if (!g->d_ai) {
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)(A->rmap->n + 1) * sizeof(PetscInt), (void **)&g->d_ai));
    PetscCall(MatGPUMatCopyToDevice(g->d_ai, ai, (size_t)(A->rmap->n + 1) * sizeof(PetscInt), stream));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device CSR a format reads during one build or refresh, and what the base made for it */
typedef struct {
  MatGPUMatCSR csr;       /* own_aj, own_aa: the temporaries of the base's own upload, unless the format took them */
  Mat          shadow;    /* the arrays are this shadow's (else the base's own) */
  PetscScalar *pooled_aa; /* a value refresh's values: from the stream's pool, never taken by a format */
} MatGPUMatCSRHold;

/*
  The device CSR of A's m device rows (all, or the nonempty ones: g->cai), current, with its host counterpart.
  Where A has its MATSEQAIJCUSPARSE shadow (made by a cuSPARSE factorization or product of A: gpumat_shadow.c), the
  shadow's arrays, brought up to date through it: one upload serves the format and cuSPARSE. Otherwise uploaded
  here: the entries into temporaries (which a format may keep), the row offsets kept (g->d_ai) for value refreshes.
  (A shadow is not made for the format alone: its host-side setup made the build 1.2-1.9x slower, a cost a matrix
  that is only multiplied need not pay.) Release it with MatGPUMatRestoreCSR_Private(), also after an error.
*/
static PetscErrorCode MatGPUMatGetCSR_Private(Mat A, PetscBool structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa, void *stream, MatGPUMatCSRHold *h)
{
  Mat_GPUMat   *g   = (Mat_GPUMat *)A->spptr;
  MatGPUMatCSR *csr = &h->csr;

  PetscFunctionBegin;
  csr->stream = stream;
  csr->m      = g->mdev;
  csr->ai     = g->cai ? g->cai : ai;
  csr->aj     = aj;
  csr->aa     = aa;
  csr->nnz    = csr->m ? csr->ai[csr->m] : 0;
  if (g->csr.mat && PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT) {
    const PetscInt *d_ai = NULL, *d_aj = NULL;

    PetscCall(MatGPUMatShadowSync(A, &g->csr));
    PetscCall(MatGPUMatDeviceFree((void **)&g->d_ai)); /* the shadow's row offsets serve from now on */
    h->shadow = g->csr.mat;
    PetscCall(PetscGPUMatSeqAIJCUSPARSEGetIJ(h->shadow, PETSC_FALSE, &d_ai, &d_aj));
    PetscCall(MatSeqAIJCUSPARSEGetArrayRead(h->shadow, &csr->d_aa));
    csr->d_ai = g->cai ? g->d_cai : d_ai;
    csr->d_aj = d_aj;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!g->cai) PetscCall(MatGPUMatUploadRowOffsets(A, ai, stream));
  if (structure) {
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)csr->nnz * sizeof(PetscScalar), (void **)&csr->own_aa));
    PetscCall(MatGPUMatCopyToDevice(csr->own_aa, aa, (size_t)csr->nnz * sizeof(PetscScalar), stream));
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)csr->nnz * sizeof(PetscInt), (void **)&csr->own_aj));
    PetscCall(MatGPUMatCopyToDevice(csr->own_aj, aj, (size_t)csr->nnz * sizeof(PetscInt), stream));
  } else {
    /* a value refresh: the values only live until the format has scattered them, so they come from the stream's pool
       and go back to it in stream order (MatGPUMatRestoreCSR_Private()), where cudaMalloc and cudaFree would each wait
       for the device; the format copies from them (own_aa stays NULL) */
    PetscCall(MatGPUMatStreamMalloc(A, (size_t)csr->nnz * sizeof(PetscScalar), stream, (void **)&h->pooled_aa));
    PetscCall(MatGPUMatCopyToDevice(h->pooled_aa, aa, (size_t)csr->nnz * sizeof(PetscScalar), stream));
  }
  csr->d_ai = g->cai ? g->d_cai : g->d_ai;
  csr->d_aj = csr->own_aj;
  csr->d_aa = structure ? csr->own_aa : h->pooled_aa;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatRestoreCSR_Private(MatGPUMatCSRHold *h)
{
  PetscFunctionBegin;
  if (h->shadow) PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(h->shadow, &h->csr.d_aa));
  PetscCall(MatGPUMatDeviceFree((void **)&h->csr.own_aj)); /* cudaFree() waits for the format's kernels */
  PetscCall(MatGPUMatDeviceFree((void **)&h->csr.own_aa));
  if (h->pooled_aa) PetscCallCUDA(cudaFreeAsync(h->pooled_aa, (cudaStream_t)h->csr.stream)); /* after the format's kernels read it */
  PetscCall(PetscMemzero(h, sizeof(*h)));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Make the device copy match the host AIJ matrix: nothing if the object state is the one we uploaded,
  values only if the nonzero pattern (nonzero state) and the format's parameters are unchanged,
  otherwise a full rebuild. Either way the format reads the device CSR the base provides (MatGPUMatGetCSR_Private()).
  A failed build leaves no device memory behind (but a shadow made before it) and the host matrix intact.
*/
PetscErrorCode MatGPUMatSyncDevice(Mat A)
{
  Mat_GPUMat      *g = (Mat_GPUMat *)A->spptr;
  PetscObjectState state;
  const PetscInt  *ai, *aj;
  PetscScalar     *aa;
  PetscMemType     mtype;
  PetscInt         m = A->rmap->n;
  PetscBool        same_structure, host_changed;
  MatGPUMatCSRHold csr;
  void            *stream;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&csr, sizeof(csr)));
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  same_structure = (PetscBool)(g->built && !g->rebuild && g->nonzerostate == A->nonzerostate);
  host_changed   = (PetscBool)(state != g->state || A->offloadmask == PETSC_OFFLOAD_CPU || A->offloadmask == PETSC_OFFLOAD_UNALLOCATED);
  if (g->written) {
    /* the device copy was written on g->stream: another stream (another PetscDeviceContext made current) waits for
       that write on the device, once; from then on its own order keeps them apart. No host wait, and an event (not
       the stream, whose context may be gone) */
    PetscCall(MatGPUMatGetStream(&stream));
    if (stream != g->stream) {
      PetscCallCUDA(cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)g->written, 0));
      g->stream = stream;
    }
  }
  if (same_structure && !g->planned.valid) PetscCall(MatGPUMatPlan(A)); /* a launch parameter changed: plan again, the layout stays */
  if (same_structure && !host_changed) PetscFunctionReturn(PETSC_SUCCESS);

  PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
  PetscCall(MatGPUMatGetStream(&stream));
  g->stream = stream; /* the build or refresh goes on the current device context's stream, as the products do */
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
  PetscCheck(PetscMemTypeHost(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Expected the host CSR arrays");
  if (same_structure) {
    PetscErrorCode ierr;
    PetscScalar   *d_val = NULL;
    PetscCount     nval  = 0;

    PetscCall(PetscLogEventBegin(MAT_GPUMatCopyValues, A, 0, 0, 0));
    /* where the layout holds the CSR's values in order and no shadow shares the upload: straight into the layout, as
       aijcusparse does (no temporary, no device copy from it) */
    if (!g->csr.mat && g->format->valuearray) PetscCall(g->format->valuearray(A, &d_val, &nval));
    if (d_val && nval == (m ? ai[m] : 0)) ierr = MatGPUMatCopyToDevice(d_val, aa, (size_t)nval * sizeof(PetscScalar), stream);
    else {
      ierr = MatGPUMatGetCSR_Private(A, PETSC_FALSE, ai, aj, aa, stream, &csr);
      if (!ierr) ierr = g->format->copyvalues(A, &csr.csr);
    }
    PetscCall(MatGPUMatRestoreCSR_Private(&csr));
    PetscCall(PetscLogEventEnd(MAT_GPUMatCopyValues, A, 0, 0, 0)); /* also on an error: a caller may catch it, and -log_view stays balanced */
    PetscCall(ierr);
  } else {
    PetscErrorCode           ierr = PETSC_SUCCESS;
    const MatGPUMatRowStats *stats;
    PetscInt                 nzrows;

    PetscCall(MatGPUMatFreeDevice_Private(A));
    PetscCall(MatGPUMatGetRowStatsForBuild(A, &stats));
    PetscCall(MatGPUMatPlan(A)); /* from those statistics */
    nzrows = stats->nzrows;
    PetscCall(PetscLogEventBegin(MAT_GPUMatBuild, A, 0, 0, 0));
    if (stats->compressed) ierr = MatGPUMatCompressRows_Private(A, ai, nzrows, stream);
    g->mdev = g->cai ? nzrows : m;
    if (!ierr) ierr = MatGPUMatGetCSR_Private(A, PETSC_TRUE, ai, aj, aa, stream, &csr);
    if (!ierr) ierr = g->format->build(A, &csr.csr);
    PetscCall(MatGPUMatRestoreCSR_Private(&csr));
    if (ierr) PetscCall(MatGPUMatFreeDevice_Private(A)); /* nothing half-built stays on the device */
    PetscCall(PetscLogEventEnd(MAT_GPUMatBuild, A, 0, 0, 0)); /* also on a refusal, which a caller may catch (autocuda, the device factor) */
    PetscCall(ierr);
    g->nzrows       = nzrows;
    g->nnz          = m ? ai[m] : 0;
    g->built        = PETSC_TRUE;
    g->rebuild      = PETSC_FALSE;
    g->nonzerostate = A->nonzerostate;
  }
  if (!g->written) {
    cudaEvent_t ev;

    PetscCallCUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    g->written = (void *)ev;
  }
  PetscCallCUDA(cudaEventRecord((cudaEvent_t)g->written, (cudaStream_t)stream));
  g->state       = state;
  A->offloadmask = PETSC_OFFLOAD_BOTH;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* whether v is a CUDA vector not bound to the CPU: its device array is the one to read and write */
PetscErrorCode MatGPUMatVecIsOnDevice(Vec v, PetscBool *ondevice)
{
  PetscBool iscuda, bound;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)v, &iscuda, VECSEQCUDA, VECMPICUDA, ""));
  PetscCall(VecBoundToCPU(v, &bound));
  *ondevice = (PetscBool)(iscuda && !bound);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  MatGPUMatDeviceSolve - x = solve(F, b) for a factor whose solve reads and writes device arrays (cuSPARSE's
  triangular solves, aijcusparse's and ours, the dense LU's product): b and x that are not on the device (MatGPUMatVecIsOnDevice()) go
  through CUDA copies. PETSc's optimized build does not check a vector's type before taking its device array, so a host vector (KSP
  ex10's VecLoad()ed right-hand side, the reduced spaces of SNES's VI solvers) gave a wrong solution without an error
  (H100: a relative residual of 9.75).
*/
PetscErrorCode MatGPUMatDeviceSolve(Mat F, Vec b, Vec x, PetscErrorCode (*solve)(Mat, Vec, Vec))
{
  PetscBool          bdev, xdev;
  Vec                bc = b, xc = x;
  const PetscScalar *from;
  PetscScalar       *to;
  PetscInt           n;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(MatGPUMatVecIsOnDevice(b, &bdev));
  PetscCall(MatGPUMatVecIsOnDevice(x, &xdev));
  if (bdev && xdev) {
    PetscCall((*solve)(F, b, x));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecGetLocalSize(x, &n));
  PetscCall(MatGPUMatGetStream(&stream));
  if (!bdev) {
    PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, n, &bc));
    PetscCall(VecGetArrayRead(b, &from));
    PetscCall(VecCUDAGetArrayWrite(bc, &to));
    PetscCall(MatGPUMatCopyToDevice(to, from, (size_t)n * sizeof(PetscScalar), stream));
    PetscCall(VecCUDARestoreArrayWrite(bc, &to));
    PetscCall(VecRestoreArrayRead(b, &from));
  }
  if (!xdev) PetscCall(VecCreateSeqCUDA(PETSC_COMM_SELF, n, &xc));
  PetscCall((*solve)(F, bc, xc));
  if (!xdev) {
    PetscCall(VecCUDAGetArrayRead(xc, &from));
    PetscCall(VecGetArrayWrite(x, &to));
    PetscCall(MatGPUMatCopyToHost(to, from, (size_t)n * sizeof(PetscScalar), stream));
    PetscCall(VecRestoreArrayWrite(x, &to));
    PetscCall(VecCUDARestoreArrayRead(xc, &from));
    PetscCall(VecDestroy(&xc));
  }
  if (!bdev) PetscCall(VecDestroy(&bc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  A product of a matrix that is not bound to the CPU, run on the host because a vector is a host vector (or
  no device is usable): counted in the event GPUMatHostFallback, explained once per matrix with PetscInfo,
  and an error with -mat_gpumat_host_fallback_error. A matrix bound to the CPU never gets here.
*/
static PetscErrorCode MatGPUMatHostProduct_Private(Mat A, Vec xx, Vec yy, Vec zz, PetscBool trans)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  Vec         host = xx;
  VecType     want;
  PetscBool   dev;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDefaultVecType(&want));
  PetscCall(MatGPUMatVecIsOnDevice(xx, &dev)); /* the first host vector of x, y, z names the cause */
  if (dev && yy) {
    PetscCall(MatGPUMatVecIsOnDevice(yy, &dev));
    host = yy;
  }
  if (dev) host = zz;
  PetscCheck(!MatGPUMatHostFallbackIsError, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "%s %s runs on the host: %s (-mat_gpumat_host_fallback_error)", ((PetscObject)A)->type_name, trans ? "MatMultTranspose" : "MatMult",
             strcmp(want, VECCUDA) ? "no usable CUDA device" : ((PetscObject)host)->type_name);
  if (!g->fallback_reported) {
    g->fallback_reported = PETSC_TRUE;
    if (strcmp(want, VECCUDA)) PetscCall(PetscInfo(A, "No usable CUDA device: products of %s run on the host (counted in GPUMatHostFallback)\n", ((PetscObject)A)->type_name));
    else PetscCall(PetscInfo(A, "A %s vector: products of %s run on the host (counted in GPUMatHostFallback; MatCreateVecs() gives device vectors)\n", ((PetscObject)host)->type_name, ((PetscObject)A)->type_name));
  }
  PetscCall(PetscLogEventBegin(MAT_GPUMatHostFallback, A, xx, zz, 0));
  if (!trans) {
    if (yy) PetscCall((*g->hostops.multadd)(A, xx, yy, zz));
    else PetscCall((*g->hostops.mult)(A, xx, zz));
  } else {
    if (yy) PetscCall((*g->hostops.multtransposeadd)(A, xx, yy, zz));
    else PetscCall((*g->hostops.multtranspose)(A, xx, zz));
  }
  PetscCall(PetscLogEventEnd(MAT_GPUMatHostFallback, A, xx, zz, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatProduct_Private(Mat, Vec, Vec, Vec, PetscBool);

MatGPUMatTransposeWay MatGPUMatGetTransposeWay(Mat A)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  if (g->explicit_transpose_set) return g->explicit_transpose ? GPUMAT_TRANSPOSE_EXPLICIT : GPUMAT_TRANSPOSE_KERNELS;
  return A->rmap->n != A->cmap->n ? GPUMAT_TRANSPOSE_DEVICE : GPUMAT_TRANSPOSE_KERNELS;
}

/*
  z = A^T x (+ y) as a forward product of the explicit transpose, made (host MatTranspose, then its device copy)
  at the first transposed product and refreshed when A changes: the forward kernels read each row once and write
  each entry once, where the transposed kernels scatter with atomics into a vector of another length. A transpose
  the format refuses (its padding guard: a few long columns of A) or that does not fit on the device is dropped,
  said once with PetscInfo, and A's own transposed kernels run (*done = PETSC_FALSE).
*/
static PetscErrorCode MatGPUMatTransposeProduct_Private(Mat A, Vec xx, Vec yy, Vec zz, PetscBool *done)
{
  Mat_GPUMat      *g = (Mat_GPUMat *)A->spptr;
  PetscObjectState state;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (g->transpose && g->transpose_nonzerostate == A->nonzerostate) {
    if (state != g->transpose_state) PetscCall(MatTranspose(A, MAT_REUSE_MATRIX, &g->transpose));
  } else {
    PetscCall(MatDestroy(&g->transpose));
    PetscCall(MatTranspose(A, MAT_INITIAL_MATRIX, &g->transpose)); /* of A's type (SeqAIJ's transpose takes its name) */
    PetscCall(g->format->copyparameters(A, g->transpose));
    PetscCall(MatGPUMatInvalidateStructure(g->transpose));
    ((Mat_GPUMat *)g->transpose->spptr)->explicit_transpose     = PETSC_FALSE; /* its own transposed products: A's kernels */
    ((Mat_GPUMat *)g->transpose->spptr)->explicit_transpose_set = PETSC_TRUE;
    g->transpose_nonzerostate                                   = A->nonzerostate;
  }
  g->transpose_state = state;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MatGPUMatSyncDevice(g->transpose);
  PetscCall(PetscPopErrorHandler());
  if (MatGPUMatBuildRefused(ierr)) {
    PetscCall(PetscInfo(A, "No explicit transpose on the device (error %d in its build): transposed products use the transposed kernels\n", (int)ierr));
    PetscCall(MatDestroy(&g->transpose));
    g->explicit_transpose     = PETSC_FALSE;
    g->explicit_transpose_set = PETSC_TRUE;
    *done                     = PETSC_FALSE;
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(ierr);
  PetscCall(MatGPUMatProduct_Private(g->transpose, xx, yy, zz, PETSC_FALSE));
  *done = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = op(A) x (+ y) on the device. op(A) = A or A^T. Vectors that are not CUDA vectors (PETSc's optimized
  build does not check this) take the host path instead of being misread as device pointers.
*/
static PetscErrorCode MatGPUMatProduct_Private(Mat A, Vec xx, Vec yy, Vec zz, PetscBool trans)
{
  Mat_GPUMat        *g = (Mat_GPUMat *)A->spptr;
  PetscBool          xdev, ydev = PETSC_TRUE, zdev;
  MatGPUMultArgs     args;
  PetscMemType       mt;
  PetscInt           nout = trans ? A->cmap->n : A->rmap->n;
  PetscBool          device_transpose = PETSC_FALSE;
  PetscCount         nnz              = 0;
  Vec                ysave;

  PetscFunctionBegin;
  PetscCall(MatGPUMatVecIsOnDevice(xx, &xdev));
  PetscCall(MatGPUMatVecIsOnDevice(zz, &zdev));
  if (yy) PetscCall(MatGPUMatVecIsOnDevice(yy, &ydev));
  if (!xdev || !ydev || !zdev) {
    PetscCall(MatGPUMatHostProduct_Private(A, xx, yy, zz, trans));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (trans) {
    const MatGPUMatTransposeWay way  = MatGPUMatGetTransposeWay(A);
    PetscBool                   done = PETSC_FALSE;

    if (way == GPUMAT_TRANSPOSE_EXPLICIT) PetscCall(MatGPUMatTransposeProduct_Private(A, xx, yy, zz, &done));
    if (done) PetscFunctionReturn(PETSC_SUCCESS); /* else the format's transposed kernels, below */
    device_transpose = (PetscBool)(way == GPUMAT_TRANSPOSE_DEVICE);
  }
  /* the device transpose syncs what it reads itself (a format that refuses A leaves it the shadow's CSR) */
  if (!device_transpose) PetscCall(MatGPUMatSyncDevice(A));
  PetscCall(MatGPUMatCheckProductBegin(yy, zz, &ysave));
  PetscCall(MatGPUMatGetStream(&args.stream));
  PetscCall(VecGetArrayReadAndMemType(xx, &args.x, &mt));
  if (yy == zz) {
    PetscCall(VecGetArrayAndMemType(zz, &args.z, &mt));
    args.y = args.z;
  } else {
    args.y = NULL;
    if (yy) PetscCall(VecGetArrayReadAndMemType(yy, &args.y, &mt));
    PetscCall(VecGetArrayWriteAndMemType(zz, &args.z, &mt));
  }
  PetscCall(PetscLogGpuTimeBegin());
  if (device_transpose) {
    /*
      A rectangular A (prolongators, off-diagonal blocks): a forward product of its transpose, formed on the device
      from A's device CSR (src/base/gpumat_transpose.cu). The format's transposed kernels scatter with atomics, so
      their sums vary from run to run. Measured in PETSc's ex45 (H100, 2026-11-27, docs/clients.md): PCMG's 2.1 M-row
      interpolation, whose transposed product through a cuSPARSE shadow cost its SeqAIJ assembly on the host
      (11-12 ms) and cuSPARSE's transpose (6-8 ms); GAMG's prolongators, whose first transposed products through
      their shadows (made by MatPtAP) took 7.2 ms against 2.1 ms this way. (Before the shadow, an explicit transpose
      of our type made by the host's MatTranspose and uploaded: a 3.4 M x 0.42 M prolongator's first transposed
      product 123 ms against 62 ms.)
    */
    PetscCall(MatGPUMatDeviceTransposeMult(A, &g->dtranspose, args.stream, args.x, args.y, args.z, &nnz));
  } else if (!trans && !g->cai) {
    if (nout) PetscCall(g->format->mult(A, &args));
  } else if (nout) {
    /* z = y, or 0; then the format adds its part: A^T x, or (compressed rows) A x at the nonempty rows */
    if (!args.y) PetscCallCUDA(cudaMemsetAsync(args.z, 0, (size_t)nout * sizeof(PetscScalar), (cudaStream_t)args.stream));
    else if (args.y != args.z) PetscCallCUDA(cudaMemcpyAsync(args.z, args.y, (size_t)nout * sizeof(PetscScalar), cudaMemcpyDeviceToDevice, (cudaStream_t)args.stream));
    if (!g->cai) {
      if (A->rmap->n) PetscCall(g->format->multtranspose(A, &args));
    } else if (g->mdev) {
      MatGPUMultArgs c = args;

      c.y = NULL;
      if (!trans) {
        c.z = g->d_work;
        PetscCall(g->format->mult(A, &c));
        PetscCall(MatGPUMatLaunchScatterAddRows(args.stream, g->mdev, g->d_rows, g->d_work, args.z));
      } else {
        c.x = g->d_work;
        PetscCall(MatGPUMatLaunchGatherRows(args.stream, g->mdev, g->d_rows, args.x, g->d_work));
        PetscCall(g->format->multtranspose(A, &c));
      }
    }
  }
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecRestoreArrayReadAndMemType(xx, &args.x));
  if (yy == zz) PetscCall(VecRestoreArrayAndMemType(zz, &args.z));
  else {
    if (yy) PetscCall(VecRestoreArrayReadAndMemType(yy, &args.y));
    PetscCall(VecRestoreArrayWriteAndMemType(zz, &args.z));
  }
  if (!device_transpose) nnz = g->nnz; /* else what the transpose holds: A may have no build of its own */
  PetscCall(PetscLogGpuFlops(yy || trans ? 2.0 * (PetscLogDouble)nnz : 2.0 * (PetscLogDouble)nnz - (PetscLogDouble)g->nzrows));
  PetscCall(MatGPUMatCheckProductEnd(A, &g->hostops, xx, yy, ysave, zz, trans));
  PetscCall(VecDestroy(&ysave));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatMult_GPUMat(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatProduct_Private(A, xx, NULL, yy, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatGPUMatMultDot - z = A x and the partial sums of x'z in one pass of the format's kernel (the fused CG's p'Ap), and
  their sum where asked

  Not Collective

  Input Parameters:
+ A    - the matrix
. xx   - x, a CUDA vector
. zz   - z, a CUDA vector
- sums - device space: `partial` for `MATGPUMAT_MAX_DOT_PARTIALS` sums; with `ticket` (a counter at 0, left at 0), also
         their sum in `*sum`, added by the kernel's last block to finish in a fixed order (`MatGPUMatDotSums`)

  Output Parameter:
. npartial - how many partial sums were written (their sum is x'z, the same bits every time); 0 where nothing was done

  Level: developer

  Note:
  Done, and logged as a `MatMult()`, where `A` is one of our sequential matrices whose layout has such a product
  (`MATSEQELLRCUDA`, `MATSEQRGCSRCUDA`; `MATSEQCMRSCUDA` where its scan kernel runs and splits no long rows),
  square, with all its rows on the device, and products are not checked on the host (`-mat_gpumat_check_products`);
  `z` is then bitwise `MatMult()`'s. Elsewhere the caller multiplies and forms the dot itself.

.seealso: `KSPCGFUSED`, `MatMult()`
@*/
PetscErrorCode MatGPUMatMultDot(Mat A, Vec xx, Vec zz, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  Mat_GPUMat    *g;
  PetscBool      xdev, zdev;
  MatGPUMultArgs args;
  PetscMemType   mt;

  PetscFunctionBegin;
  PetscCheck(xx != zz, PETSC_COMM_SELF, PETSC_ERR_ARG_IDN, "x and z must be different vectors");
  PetscCheck(sums->partial && (!sums->ticket || sums->sum), PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "The partial sums need device space, and a ticket a place for their sum");
  *npartial = 0;
  if (A->ops->mult != MatMult_GPUMat || A->rmap->n != A->cmap->n || MatGPUMatCheckProductsOn) PetscFunctionReturn(PETSC_SUCCESS);
  g = (Mat_GPUMat *)A->spptr;
  if (!g->format->multdot || !A->rmap->n) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatVecIsOnDevice(xx, &xdev));
  PetscCall(MatGPUMatVecIsOnDevice(zz, &zdev));
  if (!xdev || !zdev) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatSyncDevice(A));
  if (g->cai) PetscFunctionReturn(PETSC_SUCCESS); /* compressed rows: the empty rows' zeros are the base's to write */
  PetscCall(g->format->multdot(A, NULL, NULL, npartial)); /* whether the layout just built can */
  if (!*npartial) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_Mult, A, xx, zz, 0));
  PetscCall(PetscMemzero(&args, sizeof(args)));
  PetscCall(MatGPUMatGetStream(&args.stream));
  PetscCall(VecGetArrayReadAndMemType(xx, &args.x, &mt));
  PetscCall(VecGetArrayWriteAndMemType(zz, &args.z, &mt));
  PetscCall(PetscLogGpuTimeBegin());
  PetscCall(g->format->multdot(A, &args, sums, npartial));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecRestoreArrayReadAndMemType(xx, &args.x));
  PetscCall(VecRestoreArrayWriteAndMemType(zz, &args.z));
  PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)g->nnz - (PetscLogDouble)g->nzrows + 2.0 * (PetscLogDouble)A->rmap->n));
  PetscCall(PetscLogEventEnd(MAT_Mult, A, xx, zz, 0));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatMultAdd_GPUMat(Mat A, Vec xx, Vec yy, Vec zz)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatProduct_Private(A, xx, yy, zz, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatMultTranspose_GPUMat(Mat A, Vec xx, Vec yy)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatProduct_Private(A, xx, NULL, yy, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatMultTransposeAdd_GPUMat(Mat A, Vec xx, Vec yy, Vec zz)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatProduct_Private(A, xx, yy, zz, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscGPUMatDeviceAvailable - Whether a usable CUDA device is present, and if not, why

  Not Collective

  Input Parameter:
. len - size of `reason`

  Output Parameters:
+ avail  - `PETSC_TRUE` if a CUDA device can be used
- reason - when not available, a one-line reason (may be `NULL`)

  Level: beginner

  Note:
  Does not initialize PETSc's device; safe to call on machines without an NVIDIA driver, where the
  GPU types cannot run but their host-side parts (conversion, layouts, `MatBindToCPU()`) can.

.seealso: `PetscGPUMatInitializePackage()`, `MATSEQELLRCUDA`
@*/
PetscErrorCode PetscGPUMatDeviceAvailable(PetscBool *avail, char reason[], size_t len)
{
  int         count = 0;
  cudaError_t err;

  PetscFunctionBegin;
  PetscAssertPointer(avail, 1);
  err    = cudaGetDeviceCount(&count);
  *avail = (PetscBool)(err == cudaSuccess && count > 0);
  if (reason && len) {
    if (err != cudaSuccess) PetscCall(PetscSNPrintf(reason, len, "no usable CUDA device: cudaGetDeviceCount() returned %s (%s)", cudaGetErrorName(err), cudaGetErrorString(err)));
    else if (!count) PetscCall(PetscSNPrintf(reason, len, "no CUDA device found"));
    else reason[0] = 0;
  }
  if (err != cudaSuccess) (void)cudaGetLastError();
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The default vector type of our matrices (MatCreateVecs()): VECCUDA, or VECSTANDARD where no CUDA device can be
  used, so that programs (and MPIAIJ's own work vectors) run on the host there instead of failing in VecSetType().
*/
PetscErrorCode MatGPUMatDefaultVecType(VecType *type)
{
  static PetscBool checked = PETSC_FALSE, avail = PETSC_FALSE;

  PetscFunctionBegin;
  if (!checked) {
    PetscCall(PetscGPUMatDeviceAvailable(&avail, NULL, 0));
    checked = PETSC_TRUE;
    if (!avail) PetscCall(PetscInfo(NULL, "No usable CUDA device: petscgpumat matrices create host vectors\n"));
  }
  *type = avail ? VECCUDA : VECSTANDARD;
  PetscFunctionReturn(PETSC_SUCCESS);
}
