/*
  The host factorizations of the seq petscgpumat types (MATSOLVERPETSC, and MatGetFactor()'s choice where no device
  is usable or the host solves faster: gpumat_trisolve.c): SeqAIJ's own, with three things in front of it.
  - The factor calls itself MATSOLVERPETSCGPUMAT, so that a PC factoring again (a new nonzero pattern) comes back
    here: "petsc" with our type name finds MATSEQAIJ's factory by prefix, whose symbolic factorization copies the
    source matrix's composed functions into the factor (MatDuplicateNoCreate_SeqAIJ), so the factor, a plain
    MATSEQAIJ, would carry our type's functions to its grave (-checkfunctionlist reports them). Ours removes them
    after the symbolic factorization.
  - Blocks of right-hand sides (PCMatApply(), KSPMatSolve(): MatMatSolve()): SeqAIJ's takes only host MATSEQDENSE
    blocks, while with device vectors the blocks are MATSEQDENSECUDA (which cuSPARSE's factor takes): SeqAIJ's for
    host blocks, else one MatSolve() per column.
  - A solution in a CUDA vector goes back to the device at once (see MatGPUMatHostSolutionToDevice_Private).
  What SeqAIJ's numeric phase and solves were, per factor, lives in a container composed on it.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>

/* SeqAIJ's symbolic factorizations, as its factory installs them (the same for every factor) */
static PetscErrorCode (*host_lusymbolic)(Mat, Mat, IS, IS, const MatFactorInfo *);
static PetscErrorCode (*host_ilusymbolic)(Mat, Mat, IS, IS, const MatFactorInfo *);
static PetscErrorCode (*host_choleskysymbolic)(Mat, Mat, IS, const MatFactorInfo *);
static PetscErrorCode (*host_iccsymbolic)(Mat, Mat, IS, const MatFactorInfo *);

/* The factor of A must not keep what the base composed on A */
static PetscErrorCode MatGPUMatFactorForget_Private(Mat F, Mat A)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatComposeAll(F, ((Mat_GPUMat *)A->spptr)->format, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

typedef struct {
  PetscErrorCode (*lunumeric)(Mat, Mat, const MatFactorInfo *);
  PetscErrorCode (*choleskynumeric)(Mat, Mat, const MatFactorInfo *);
  PetscErrorCode (*matsolve)(Mat, Mat, Mat);
  PetscErrorCode (*matsolvetranspose)(Mat, Mat, Mat);
  PetscErrorCode (*solve)(Mat, Vec, Vec);
  PetscErrorCode (*solvetranspose)(Mat, Vec, Vec);
} MatGPUMatHostFactor;

static const char host_factor_key[] = "MatGPUMatHostFactor";

static PetscErrorCode MatGPUMatHostFactorDestroy_Private(PetscGPUMatCtxArg ctx)
{
  void *h = PetscGPUMatCtxOf(ctx);

  PetscFunctionBegin;
  PetscCall(PetscFree(h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatHostFactorGet_Private(Mat F, MatGPUMatHostFactor **h)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)F, host_factor_key, (void **)h));
  if (!*h) {
    PetscCall(PetscNew(h));
    PetscCall(PetscObjectContainerCompose((PetscObject)F, host_factor_key, *h, MatGPUMatHostFactorDestroy_Private));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMatSolveColumns_GPUMatHost(Mat F, Mat B, Mat X, PetscBool trans)
{
  Mat      Bc = B;
  PetscInt n;

  PetscFunctionBegin;
  if (B == X) PetscCall(MatDuplicate(B, MAT_COPY_VALUES, &Bc)); /* MatSolve() wants distinct vectors */
  PetscCall(MatGetSize(Bc, NULL, &n));
  for (PetscInt k = 0; k < n; k++) {
    Vec b, x;

    PetscCall(MatDenseGetColumnVecRead(Bc, k, &b));
    PetscCall(MatDenseGetColumnVecWrite(X, k, &x));
    if (trans) PetscCall(MatSolveTranspose(F, b, x));
    else PetscCall(MatSolve(F, b, x));
    PetscCall(MatDenseRestoreColumnVecWrite(X, k, &x));
    PetscCall(MatDenseRestoreColumnVecRead(Bc, k, &b));
  }
  if (Bc != B) PetscCall(MatDestroy(&Bc));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define GPUMAT_HOST_MATSOLVE(Name, slot, trans) \
  static PetscErrorCode Name(Mat F, Mat B, Mat X) \
  { \
    MatGPUMatHostFactor *h; \
    PetscBool            bhost, xhost; \
\
    PetscFunctionBegin; \
    PetscCall(MatGPUMatHostFactorGet_Private(F, &h)); \
    PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSE, &bhost)); \
    PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQDENSE, &xhost)); \
    if (bhost && xhost && h->slot) PetscCall((*h->slot)(F, B, X)); \
    else PetscCall(MatMatSolveColumns_GPUMatHost(F, B, X, trans)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
GPUMAT_HOST_MATSOLVE(MatMatSolve_GPUMatHost, matsolve, PETSC_FALSE)
GPUMAT_HOST_MATSOLVE(MatMatSolveTranspose_GPUMatHost, matsolvetranspose, PETSC_TRUE)

/*
  A solution in a CUDA vector goes back to the device at once: PETSc's CUDA VecPointwiseMult(w, x, y) with w == y
  takes w's device array for writing before reading y's, so a y whose values are on the host reads as stale (PCASM
  weighted: VecPointwiseMult(y, scaling, y) after the block solve gave zeros, KSP tutorials ex8_weighted). The copy
  is the one the next device use of x would make.
*/
static PetscErrorCode MatGPUMatHostSolutionToDevice_Private(Vec x)
{
  PetscBool          cuda, bound = PETSC_FALSE;
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &cuda, VECSEQCUDA, VECMPICUDA, ""));
  if (cuda) PetscCall(VecBoundToCPU(x, &bound));
  if (cuda && !bound) {
    PetscCall(VecCUDAGetArrayRead(x, &a));
    PetscCall(VecCUDARestoreArrayRead(x, &a));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define GPUMAT_HOST_SOLVE(Name, slot) \
  static PetscErrorCode Name(Mat F, Vec b, Vec x) \
  { \
    MatGPUMatHostFactor *h; \
\
    PetscFunctionBegin; \
    PetscCall(MatGPUMatHostFactorGet_Private(F, &h)); \
    PetscCall((*h->slot)(F, b, x)); \
    PetscCall(MatGPUMatHostSolutionToDevice_Private(x)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
GPUMAT_HOST_SOLVE(MatSolve_GPUMatHost, solve)
GPUMAT_HOST_SOLVE(MatSolveTranspose_GPUMatHost, solvetranspose)

/* After SeqAIJ's numeric factorization: ours in front of the solves it installed */
static PetscErrorCode MatGPUMatHostFactorWrapSolves_Private(Mat F, MatGPUMatHostFactor *h)
{
  PetscFunctionBegin;
  GPUMAT_WRAP_FACTOR_SLOT(F, solve, h->solve, MatSolve_GPUMatHost);
  GPUMAT_WRAP_FACTOR_SLOT(F, solvetranspose, h->solvetranspose, MatSolveTranspose_GPUMatHost);
  /* SeqAIJ's factors may have no block solve (PETSc's column loop then runs, and does not take CUDA blocks either) */
  GPUMAT_PUT_IN_FRONT(F, matsolve, h->matsolve, MatMatSolve_GPUMatHost);
  GPUMAT_PUT_IN_FRONT(F, matsolvetranspose, h->matsolvetranspose, MatMatSolveTranspose_GPUMatHost);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* SeqAIJ's numeric factorization, then ours in front of the solves it installed */
#define GPUMAT_HOST_NUMERIC(Name, slot) \
  static PetscErrorCode Name(Mat F, Mat A, const MatFactorInfo *info) \
  { \
    MatGPUMatHostFactor *h; \
\
    PetscFunctionBegin; \
    PetscCall(MatGPUMatHostFactorGet_Private(F, &h)); \
    PetscCall((*h->slot)(F, A, info)); \
    PetscCall(MatGPUMatHostFactorWrapSolves_Private(F, h)); \
    PetscFunctionReturn(PETSC_SUCCESS); \
  }
GPUMAT_HOST_NUMERIC(MatLUFactorNumeric_GPUMatHost, lunumeric)
GPUMAT_HOST_NUMERIC(MatCholeskyFactorNumeric_GPUMatHost, choleskynumeric)

/* After SeqAIJ's symbolic factorization: forget what the base composed on A, and wrap the numeric phase */
static PetscErrorCode MatGPUMatHostFactorSymbolicDone_Private(Mat F, Mat A)
{
  MatGPUMatHostFactor *h;

  PetscFunctionBegin;
  PetscCall(MatGPUMatFactorForget_Private(F, A));
  PetscCall(MatGPUMatHostFactorGet_Private(F, &h));
  GPUMAT_WRAP_FACTOR_SLOT(F, lufactornumeric, h->lunumeric, MatLUFactorNumeric_GPUMatHost);
  GPUMAT_WRAP_FACTOR_SLOT(F, choleskyfactornumeric, h->choleskynumeric, MatCholeskyFactorNumeric_GPUMatHost);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_lusymbolic)(F, A, r, c, info));
  PetscCall(MatGPUMatHostFactorSymbolicDone_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatILUFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_ilusymbolic)(F, A, r, c, info));
  PetscCall(MatGPUMatHostFactorSymbolicDone_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_choleskysymbolic)(F, A, r, info));
  PetscCall(MatGPUMatHostFactorSymbolicDone_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatICCFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_iccsymbolic)(F, A, r, info));
  PetscCall(MatGPUMatHostFactorSymbolicDone_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatFactorGetSolverType_GPUMatPetsc(Mat F, MatSolverType *type)
{
  PetscFunctionBegin;
  (void)F;
  *type = MATSOLVERPETSCGPUMAT;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGetFactor_GPUMat_Petsc(Mat A, MatFactorType ftype, Mat *F)
{
  PetscErrorCode (*seqaij)(Mat, MatFactorType, Mat *) = NULL;

  PetscFunctionBegin;
  PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ftype, NULL, NULL, &seqaij));
  PetscCheck(seqaij, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "PETSc has no %s factorization of MATSEQAIJ", MatFactorTypes[ftype]);
  PetscCall((*seqaij)(A, ftype, F));
  if (!*F) PetscFunctionReturn(PETSC_SUCCESS);
  /* the PC that made F asks for MATSOLVERPETSCGPUMAT when it factors again (a new pattern): ours again, not SeqAIJ's */
  PetscCall(PetscFree((*F)->solvertype));
  PetscCall(PetscStrallocpy(MATSOLVERPETSCGPUMAT, &(*F)->solvertype));
  PetscCall(PetscObjectComposeFunction((PetscObject)*F, "MatFactorGetSolverType_C", MatFactorGetSolverType_GPUMatPetsc));
  GPUMAT_WRAP_FACTOR_SLOT(*F, lufactorsymbolic, host_lusymbolic, MatLUFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_FACTOR_SLOT(*F, ilufactorsymbolic, host_ilusymbolic, MatILUFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_FACTOR_SLOT(*F, choleskyfactorsymbolic, host_choleskysymbolic, MatCholeskyFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_FACTOR_SLOT(*F, iccfactorsymbolic, host_iccsymbolic, MatICCFactorSymbolic_GPUMatHost);
  PetscFunctionReturn(PETSC_SUCCESS);
}
