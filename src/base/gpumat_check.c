/*
  -mat_gpumat_check_products: every device product of a petscgpumat matrix (seq types and MPI types) is
  repeated on the host with the parent's (SeqAIJ's, MPIAIJ's) operation and the two results compared; the
  first product that differs stops the program with what it was (matrix, sizes, product, first differing
  row). A debugging aid: it copies every vector to the host, so it is slow.
*/
#include <petscgpumat/private/gpumatimpl.h>

PetscBool MatGPUMatCheckProductsOn = PETSC_FALSE;

/* The options that hold for every petscgpumat matrix of the program (read at initialization too), listed by -help with each type's options */
PetscErrorCode MatGPUMatProgramOptions(PetscGPUMatOptionItems PetscOptionsObject)
{
  PetscFunctionBegin;
  PetscCall(PetscOptionsBool("-mat_gpumat_host_fallback_error", "Error (instead of a count in the event GPUMatHostFallback) when a product of a petscgpumat type runs on the host", "", MatGPUMatHostFallbackIsError, &MatGPUMatHostFallbackIsError, NULL));
  PetscCall(PetscOptionsBool("-mat_gpumat_block_kernel", "Products with dense blocks of at most 8 vectors run the format's own block kernel where its layout has one (else, or with 0: cuSPARSE SpMM on an aijcusparse copy)", "", MatGPUMatBlockKernelOn, &MatGPUMatBlockKernelOn, NULL));
  {
    PetscInt nthreads = MatGPUMatUploadThreads; /* the process's setting changes only to a valid value */

    PetscCall(PetscOptionsInt("-mat_gpumat_upload_threads", "Host threads that copy an upload or a download of 16 MB or more (a build's CSR, a refresh's values, a sparse product's values) through pinned buffers (0: automatic, up to 4 by the CPUs the process may run on and the node's ranks; 1: CUDA's own pageable copy)", "", nthreads, &nthreads, NULL));
    PetscCall(MatGPUMatSetUploadThreads(nthreads));
  }
  {
    PetscInt nthreads = MatGPUMatHostThreads;

    PetscCall(PetscOptionsInt("-mat_gpumat_host_threads", "Host threads for MatScale, MatDiagonalScale and MatAXPY on the host master copy of a matrix of 2^20 entries or more (0: automatic, up to 8 by the CPUs the process may run on; 1: SeqAIJ's own code)", "", nthreads, &nthreads, NULL));
    PetscCall(MatGPUMatSetHostThreads(nthreads));
  }
  PetscCall(PetscOptionsBool("-mat_gpumat_check_products", "Repeat every device product on the host and stop at the first that differs (debugging; slow)", "", MatGPUMatCheckProductsOn, &MatGPUMatCheckProductsOn, NULL));
  PetscCall(PetscOptionsEnum("-mat_gpumat_trisolve", "Where the triangular solves of factors made with no solver type named run: auto (the faster by a model of both), device, host", "MatGetFactor", MatGPUMatTriSolveModes, (PetscEnum)MatGPUMatTriSolve, (PetscEnum *)&MatGPUMatTriSolve, NULL));
  PetscCall(PetscOptionsBool("-mat_gpumat_device_factor", "cuSPARSE's ILU(0)/ICC(0) of our types factored from the device CSR the matrix holds (0: through an aijcusparse copy, uploaded)", "MatGetFactor", MatGPUMatDeviceFactorOn, &MatGPUMatDeviceFactorOn, NULL));
  PetscCall(PetscOptionsInt("-mat_gpumat_dense_lu_min", "auto: LU of at least this many rows (and at most -mat_gpumat_dense_lu_max) is a dense LU on the device, solved by its explicit inverse", "MatGetFactor", MatGPUMatDenseLUMin, &MatGPUMatDenseLUMin, NULL));
  PetscCall(PetscOptionsBool("-mat_gpumat_dense_lu_warmup", "Set cuSOLVER up for the dense LU in a host thread when the first matrix of ours initializes the device (a process's first factorization otherwise costs 50-130 ms more)", "MatGPUMatDenseLUWarmupWait", MatGPUMatDenseLUWarmupOn, &MatGPUMatDenseLUWarmupOn, NULL));
  PetscCall(PetscOptionsInt("-mat_gpumat_dense_lu_max", "auto: the largest LU made dense on the device (0: never; else cuSPARSE's sparse LU)", "MatGetFactor", MatGPUMatDenseLUMax, &MatGPUMatDenseLUMax, NULL));
  PetscCall(PetscOptionsReal("-mat_gpumat_trisolve_level_us", "auto: the device's cost of one level set of a triangular solve, in microseconds (the GPU-dependent term of the rule)", "MatGPUMatGetTriangularLevels", MatGPUMatTriSolveLevelUs, &MatGPUMatTriSolveLevelUs, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A host vector with v's layout and values */
static PetscErrorCode MatGPUMatCheckHostCopy(Vec v, Vec *h)
{
  const PetscScalar *a;
  PetscScalar       *b;
  PetscInt           n, N;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(v, &n));
  PetscCall(VecGetSize(v, &N));
  PetscCall(VecCreate(PetscObjectComm((PetscObject)v), h));
  PetscCall(VecSetSizes(*h, n, N));
  PetscCall(VecSetType(*h, VECSTANDARD));
  PetscCall(VecGetArrayRead(v, &a));
  PetscCall(VecGetArrayWrite(*h, &b));
  PetscCall(PetscArraycpy(b, a, n));
  PetscCall(VecRestoreArrayWrite(*h, &b));
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Before a product z = op(A) x + y with y == z: keep y, which the product overwrites */
PetscErrorCode MatGPUMatCheckProductBegin(Vec y, Vec z, Vec *ysave)
{
  PetscFunctionBegin;
  *ysave = NULL;
  if (MatGPUMatCheckProductsOn && y && y == z) PetscCall(MatGPUMatCheckHostCopy(y, ysave));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  After the product: the same product on the host with `hostops` (the parent's), compared entry by entry with z.
  An entry differs when it is not finite where the host's is, or when it is off by more than
  1e-10 (|host entry| + max |host entries|).
*/
PetscErrorCode MatGPUMatCheckProductEnd(Mat A, const struct _MatOps *hostops, Vec x, Vec y, Vec ysave, Vec z, PetscBool trans)
{
  Vec                xh, yh = NULL, zh, rh;
  const PetscScalar *zd, *rd;
  PetscInt           n, bad = -1;
  PetscReal          scale  = 0.0;
  PetscBool          stop   = MatGPUMatHostFallbackIsError;

  PetscFunctionBegin;
  if (!MatGPUMatCheckProductsOn) PetscFunctionReturn(PETSC_SUCCESS);
  MatGPUMatHostFallbackIsError = PETSC_FALSE; /* the reference product runs on the host on purpose */
  PetscCall(MatGPUMatCheckHostCopy(x, &xh));
  if (y) {
    if (ysave) PetscCall(PetscObjectReference((PetscObject)ysave));
    else PetscCall(MatGPUMatCheckHostCopy(y, &ysave));
    yh = ysave;
  }
  PetscCall(MatGPUMatCheckHostCopy(z, &zh));
  PetscCall(VecDuplicate(zh, &rh));
  if (!trans) {
    if (yh) PetscCall((*hostops->multadd)(A, xh, yh, rh));
    else PetscCall((*hostops->mult)(A, xh, rh));
  } else {
    if (yh) PetscCall((*hostops->multtransposeadd)(A, xh, yh, rh));
    else PetscCall((*hostops->multtranspose)(A, xh, rh));
  }
  MatGPUMatHostFallbackIsError = stop;
  PetscCall(VecGetLocalSize(rh, &n));
  PetscCall(VecGetArrayRead(zh, &zd));
  PetscCall(VecGetArrayRead(rh, &rd));
  for (PetscInt i = 0; i < n; i++) scale = PetscMax(scale, PetscAbsScalar(rd[i]));
  for (PetscInt i = 0; i < n && bad < 0; i++) {
    PetscReal d = PetscAbsScalar(zd[i] - rd[i]);

    if ((PetscIsInfOrNanScalar(zd[i]) && !PetscIsInfOrNanScalar(rd[i])) || d > 1e-10 * (PetscAbsScalar(rd[i]) + scale)) bad = i;
  }
  if (bad >= 0) {
    PetscInt m, nn, M, N;

    PetscCall(MatGetLocalSize(A, &m, &nn));
    PetscCall(MatGetSize(A, &M, &N));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "-mat_gpumat_check_products: %s%s of %s %s (%" PetscInt_FMT " x %" PetscInt_FMT ", local %" PetscInt_FMT " x %" PetscInt_FMT ") on the device differs from the host: entry %" PetscInt_FMT " of %" PetscInt_FMT " is %g, the host's %g", trans ? "MatMultTranspose" : "MatMult", y ? "Add" : "",
            ((PetscObject)A)->type_name, ((PetscObject)A)->name ? ((PetscObject)A)->name : "(unnamed)", M, N, m, nn, bad, n, (double)PetscRealPart(zd[bad]), (double)PetscRealPart(rd[bad]));
  }
  PetscCall(VecRestoreArrayRead(zh, &zd));
  PetscCall(VecRestoreArrayRead(rh, &rd));
  PetscCall(VecDestroy(&xh));
  PetscCall(VecDestroy(&yh));
  PetscCall(VecDestroy(&zh));
  PetscCall(VecDestroy(&rh));
  PetscFunctionReturn(PETSC_SUCCESS);
}
