/*
  Factorizations of the seq petscgpumat types (LU, ILU, Cholesky, ICC), for PCLU/PCILU/PCICC/PCCHOLESKY and the
  blocks of PCBJACOBI and PCASM:
  - MATSOLVERCUSPARSE (-pc_factor_mat_solver_type cusparse, and the default where a device is usable and the
    solves are faster there: gpumat_trisolve.c): the factor of PETSc's aijcusparse, made from a MATSEQAIJCUSPARSE
    shadow over the matrix's host arrays (gpumat_shadow.c) whose device values follow ours at each numeric
    factorization. ILU(0)/ICC(0) factor on the device, the others on the host; the triangular solves run on the
    device. The shadow is a second device copy of the matrix: PETSc's cusparse factor code reads its input's
    cuSPARSE structure, which our types do not have.
  - MATSOLVERPETSC: PETSc's own host factorization, as for MATSEQAIJ (the default without a usable device, or
    where the host solves faster); the factor calls itself MATSOLVERPETSCGPUMAT, so that a PC factoring again (a
    new nonzero pattern) comes back here: "petsc" with our type name finds MATSEQAIJ's factory by prefix, whose
    symbolic factorization would copy our composed functions into the factor without our clean-up
    (-checkfunctionlist).

  Why not simply let MatGetFactor() find SeqAIJ's factory by type-name prefix: SeqAIJ's symbolic factorization
  copies the source matrix's composed functions into the factor (MatDuplicateNoCreate_SeqAIJ), so the factor,
  a plain MATSEQAIJ, would carry our type's functions to its grave (-checkfunctionlist reports them). Ours
  calls SeqAIJ's and removes them from the factor after the symbolic factorization.
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

/*
  Blocks of right-hand sides with the host factor (PCMatApply(), KSPMatSolve(): MatMatSolve()): SeqAIJ's
  MatMatSolve takes only host MATSEQDENSE blocks, while with device vectors the blocks are MATSEQDENSECUDA (which
  cuSPARSE's factor takes). The numeric factorization sets SeqAIJ's; ours stands in front of it: SeqAIJ's for host
  blocks, else one MatSolve() per column. What SeqAIJ's numeric phase and block solves were, per factor, lives in
  a container composed on it.
*/
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
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)F, host_factor_key, (PetscObject *)&c));
  if (!c) {
    PetscCall(PetscNew(h));
    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
    PetscCall(PetscContainerSetPointer(c, *h));
    PetscCall(PetscGPUMatContainerSetCtxDestroy(c, MatGPUMatHostFactorDestroy_Private));
    PetscCall(PetscObjectCompose((PetscObject)F, host_factor_key, (PetscObject)c));
    PetscCall(PetscContainerDestroy(&c));
  } else PetscCall(PetscContainerGetPointer(c, (void **)h));
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
  PetscBool          cuda;
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &cuda, VECSEQCUDA, VECMPICUDA, ""));
  if (cuda) {
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
  if (F->ops->solve && F->ops->solve != MatSolve_GPUMatHost) {
    h->solve      = F->ops->solve;
    F->ops->solve = MatSolve_GPUMatHost;
  }
  if (F->ops->solvetranspose && F->ops->solvetranspose != MatSolveTranspose_GPUMatHost) {
    h->solvetranspose      = F->ops->solvetranspose;
    F->ops->solvetranspose = MatSolveTranspose_GPUMatHost;
  }
  if (F->ops->matsolve != MatMatSolve_GPUMatHost) {
    h->matsolve      = F->ops->matsolve;
    F->ops->matsolve = MatMatSolve_GPUMatHost;
  }
  if (F->ops->matsolvetranspose != MatMatSolveTranspose_GPUMatHost) {
    h->matsolvetranspose      = F->ops->matsolvetranspose;
    F->ops->matsolvetranspose = MatMatSolveTranspose_GPUMatHost;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactorNumeric_GPUMatHost(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatHostFactor *h;

  PetscFunctionBegin;
  PetscCall(MatGPUMatHostFactorGet_Private(F, &h));
  PetscCall((*h->lunumeric)(F, A, info));
  PetscCall(MatGPUMatHostFactorWrapSolves_Private(F, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactorNumeric_GPUMatHost(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatHostFactor *h;

  PetscFunctionBegin;
  PetscCall(MatGPUMatHostFactorGet_Private(F, &h));
  PetscCall((*h->choleskynumeric)(F, A, info));
  PetscCall(MatGPUMatHostFactorWrapSolves_Private(F, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After SeqAIJ's symbolic factorization: forget what the base composed on A, and wrap the numeric phase */
static PetscErrorCode MatGPUMatHostFactorSymbolicDone_Private(Mat F, Mat A)
{
  MatGPUMatHostFactor *h;

  PetscFunctionBegin;
  PetscCall(MatGPUMatFactorForget_Private(F, A));
  PetscCall(MatGPUMatHostFactorGet_Private(F, &h));
  if (F->ops->lufactornumeric && F->ops->lufactornumeric != MatLUFactorNumeric_GPUMatHost) {
    h->lunumeric              = F->ops->lufactornumeric;
    F->ops->lufactornumeric = MatLUFactorNumeric_GPUMatHost;
  }
  if (F->ops->choleskyfactornumeric && F->ops->choleskyfactornumeric != MatCholeskyFactorNumeric_GPUMatHost) {
    h->choleskynumeric              = F->ops->choleskyfactornumeric;
    F->ops->choleskyfactornumeric = MatCholeskyFactorNumeric_GPUMatHost;
  }
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

/* Wrap slot `op` of F with `ours`, remembering SeqAIJ's function in `host` */
#define GPUMAT_WRAP_SYMBOLIC(F, op, host, ours) \
  do { \
    if ((F)->ops->op && (F)->ops->op != (ours)) { \
      (host)          = (F)->ops->op; \
      (F)->ops->op = (ours); \
    } \
  } while (0)

static PetscErrorCode MatFactorGetSolverType_GPUMatPetsc(Mat F, MatSolverType *type)
{
  PetscFunctionBegin;
  *type = MATSOLVERPETSCGPUMAT;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetFactor_GPUMat_Petsc(Mat A, MatFactorType ftype, Mat *F)
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
  GPUMAT_WRAP_SYMBOLIC(*F, lufactorsymbolic, host_lusymbolic, MatLUFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_SYMBOLIC(*F, ilufactorsymbolic, host_ilusymbolic, MatILUFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_SYMBOLIC(*F, choleskyfactorsymbolic, host_choleskysymbolic, MatCholeskyFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_SYMBOLIC(*F, iccfactorsymbolic, host_iccsymbolic, MatICCFactorSymbolic_GPUMatHost);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The cuSPARSE factor through a MATSEQAIJCUSPARSE shadow (gpumat_shadow.c). The shadow and the factor's own numeric
  functions are kept in a container composed on the factor (destroyed with it).
*/
typedef struct {
  MatGPUMatShadow shadow; /* of the matrix last factored (numeric phases may be given another one) */
  PetscErrorCode (*lunumeric)(Mat, Mat, const MatFactorInfo *);
  PetscErrorCode (*choleskynumeric)(Mat, Mat, const MatFactorInfo *);
} MatGPUMatFactorShadow;

static const char shadow_key[] = "MatGPUMatFactorShadow";

static PetscErrorCode MatGPUMatShadowDestroy_Private(PetscGPUMatCtxArg ctx)
{
  MatGPUMatFactorShadow *s = (MatGPUMatFactorShadow *)PetscGPUMatCtxOf(ctx);

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowReset(&s->shadow));
  PetscCall(PetscFree(s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatShadowGet_Private(Mat F, MatGPUMatFactorShadow **s)
{
  PetscContainer c;

  PetscFunctionBegin;
  PetscCall(PetscObjectQuery((PetscObject)F, shadow_key, (PetscObject *)&c));
  PetscCheck(c, PetscObjectComm((PetscObject)F), PETSC_ERR_PLIB, "Factor without its petscgpumat shadow matrix");
  PetscCall(PetscContainerGetPointer(c, (void **)s));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactorNumeric_GPUMatShadow(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatFactorShadow *s;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowGet_Private(F, &s));
  PetscCall(MatGPUMatShadowSync(A, &s->shadow));
  PetscCall((*s->lunumeric)(F, s->shadow.mat, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactorNumeric_GPUMatShadow(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatFactorShadow *s;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowGet_Private(F, &s));
  PetscCall(MatGPUMatShadowSync(A, &s->shadow));
  PetscCall((*s->choleskynumeric)(F, s->shadow.mat, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After cuSPARSE's symbolic factorization (on the shadow): our numeric functions in front of its own */
static PetscErrorCode MatGPUMatShadowWrapNumeric_Private(Mat F, MatGPUMatFactorShadow *s)
{
  PetscFunctionBegin;
  if (F->ops->lufactornumeric && F->ops->lufactornumeric != MatLUFactorNumeric_GPUMatShadow) {
    s->lunumeric              = F->ops->lufactornumeric;
    F->ops->lufactornumeric = MatLUFactorNumeric_GPUMatShadow;
  }
  if (F->ops->choleskyfactornumeric && F->ops->choleskyfactornumeric != MatCholeskyFactorNumeric_GPUMatShadow) {
    s->choleskynumeric              = F->ops->choleskyfactornumeric;
    F->ops->choleskyfactornumeric = MatCholeskyFactorNumeric_GPUMatShadow;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* cuSPARSE's symbolic factorizations, as its factory installs them */
static PetscErrorCode (*cusp_lusymbolic)(Mat, Mat, IS, IS, const MatFactorInfo *);
static PetscErrorCode (*cusp_ilusymbolic)(Mat, Mat, IS, IS, const MatFactorInfo *);
static PetscErrorCode (*cusp_choleskysymbolic)(Mat, Mat, IS, const MatFactorInfo *);
static PetscErrorCode (*cusp_iccsymbolic)(Mat, Mat, IS, const MatFactorInfo *);

#define GPUMAT_SHADOW_SYMBOLIC(Name, cusp, ...) \
  do { \
    MatGPUMatFactorShadow *s; \
    PetscCall(MatGPUMatShadowGet_Private(F, &s)); \
    PetscCall(MatGPUMatShadowSync(A, &s->shadow)); \
    PetscCall((*cusp)(F, s->shadow.mat, __VA_ARGS__)); \
    PetscCall(MatGPUMatShadowWrapNumeric_Private(F, s)); \
  } while (0)

static PetscErrorCode MatLUFactorSymbolic_GPUMatShadow(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  GPUMAT_SHADOW_SYMBOLIC(LU, cusp_lusymbolic, r, c, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatILUFactorSymbolic_GPUMatShadow(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  GPUMAT_SHADOW_SYMBOLIC(ILU, cusp_ilusymbolic, r, c, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactorSymbolic_GPUMatShadow(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  GPUMAT_SHADOW_SYMBOLIC(Cholesky, cusp_choleskysymbolic, r, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatICCFactorSymbolic_GPUMatShadow(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  GPUMAT_SHADOW_SYMBOLIC(ICC, cusp_iccsymbolic, r, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetFactor_GPUMat_CUSPARSE(Mat A, MatFactorType ftype, Mat *F)
{
  PetscErrorCode (*cusp)(Mat, MatFactorType, Mat *) = NULL;
  MatGPUMatFactorShadow *s;
  PetscContainer   c;

  PetscFunctionBegin;
  PetscCall(MatSolverTypeGet(MATSOLVERCUSPARSE, MATSEQAIJCUSPARSE, ftype, NULL, NULL, &cusp));
  PetscCheck(cusp, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "This PETSc has no cuSPARSE %s factorization", MatFactorTypes[ftype]);
  /* aijcusparse's factory reads only A's sizes, block sizes and binding: the shadow comes at the symbolic
     factorization (A need not be assembled yet: PCFactorSetDefaultOrdering() asks for a factor to learn its ordering) */
  PetscCall((*cusp)(A, ftype, F));
  PetscCall(PetscNew(&s));
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, s));
  PetscCall(PetscGPUMatContainerSetCtxDestroy(c, MatGPUMatShadowDestroy_Private));
  PetscCall(PetscObjectCompose((PetscObject)*F, shadow_key, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  GPUMAT_WRAP_SYMBOLIC(*F, lufactorsymbolic, cusp_lusymbolic, MatLUFactorSymbolic_GPUMatShadow);
  GPUMAT_WRAP_SYMBOLIC(*F, ilufactorsymbolic, cusp_ilusymbolic, MatILUFactorSymbolic_GPUMatShadow);
  GPUMAT_WRAP_SYMBOLIC(*F, choleskyfactorsymbolic, cusp_choleskysymbolic, MatCholeskyFactorSymbolic_GPUMatShadow);
  GPUMAT_WRAP_SYMBOLIC(*F, iccfactorsymbolic, cusp_iccsymbolic, MatICCFactorSymbolic_GPUMatShadow);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PETSc's default (no solver type named): where a device is usable and A is not bound to the CPU, the cuSPARSE
  factor or the host one, whichever solves faster for A (gpumat_trisolve.c); else the host factor
*/
static PetscErrorCode MatGetFactor_GPUMat_Default(Mat A, MatFactorType ftype, Mat *F)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  VecType     vtype;
  PetscBool   device = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDefaultVecType(&vtype));
  if (!A->boundtocpu && !strcmp(vtype, VECCUDA)) {
    PetscCall(MatGPUMatTriSolveOnDevice(A, ftype, &device, g->trisolve_why, sizeof(g->trisolve_why)));
    g->trisolve_device = device;
    PetscCall(PetscInfo(A, "%s factor of %s: triangular solves on the %s (%s)\n", MatFactorTypes[ftype], ((PetscObject)A)->type_name, device ? "device" : "host", g->trisolve_why));
  }
  if (device) PetscCall(MatGetFactor_GPUMat_CUSPARSE(A, ftype, F));
  else PetscCall(MatGetFactor_GPUMat_Petsc(A, ftype, F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  In-place factorizations (MatLUFactor(), MatCholeskyFactor()): A becomes its factor, header and all, as if it had
  been made by MatGetFactor() with the default solver. SeqAIJ's MatLUFactor_SeqAIJ() merges the factor's data into
  A but keeps A's operations, so our destroy would meet SeqAIJ factor data it does not own (a leak); SeqAIJ has no
  in-place Cholesky at all.
*/
PetscErrorCode MatLUFactor_GPUMat(Mat A, IS row, IS col, const MatFactorInfo *info)
{
  Mat F = NULL;

  PetscFunctionBegin;
  PetscCall(MatGetFactor_GPUMat_Default(A, MAT_FACTOR_LU, &F));
  PetscCheck(F, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "No LU factorization for %s", ((PetscObject)A)->type_name);
  PetscCall(MatLUFactorSymbolic(F, A, row, col, info));
  PetscCall(MatLUFactorNumeric(F, A, info));
  PetscCall(MatHeaderReplace(A, &F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCholeskyFactor_GPUMat(Mat A, IS perm, const MatFactorInfo *info)
{
  Mat F = NULL;

  PetscFunctionBegin;
  PetscCall(MatGetFactor_GPUMat_Default(A, MAT_FACTOR_CHOLESKY, &F));
  PetscCheck(F, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "No Cholesky factorization for %s", ((PetscObject)A)->type_name);
  PetscCall(MatCholeskyFactorSymbolic(F, A, perm, info));
  PetscCall(MatCholeskyFactorNumeric(F, A, info));
  PetscCall(MatHeaderReplace(A, &F));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Registers the factorizations for the seq type of a format (once per format). MatGetFactor() with no solver
  type takes the first exact type match over the solver packages, which is the entry under MATSOLVERPETSC
  (registered first): ours, the default chooser. A named "petsc" matches MATSEQAIJ's entry by prefix first.
*/
PetscErrorCode MatGPUMatRegisterFactors(const char seqtype[])
{
  const MatFactorType ftypes[] = {MAT_FACTOR_LU, MAT_FACTOR_ILU, MAT_FACTOR_CHOLESKY, MAT_FACTOR_ICC};

  PetscFunctionBegin;
  for (size_t i = 0; i < PETSC_STATIC_ARRAY_LENGTH(ftypes); i++) {
    PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, seqtype, ftypes[i], MatGetFactor_GPUMat_Default));
    PetscCall(MatSolverTypeRegister(MATSOLVERPETSCGPUMAT, seqtype, ftypes[i], MatGetFactor_GPUMat_Petsc));
    PetscCall(MatSolverTypeRegister(MATSOLVERCUSPARSE, seqtype, ftypes[i], MatGetFactor_GPUMat_CUSPARSE));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
