/*
  Factorizations of the seq petscgpumat types (LU, ILU, Cholesky, ICC), for PCLU/PCILU/PCICC/PCCHOLESKY and the
  blocks of PCBJACOBI and PCASM:
  - MATSOLVERCUSPARSE (-pc_factor_mat_solver_type cusparse, and the default where a device is usable and the
    solves are faster there: gpumat_trisolve.c): the factor of PETSc's aijcusparse. ILU(0)/ICC(0) in the natural
    ordering factor on the device from the device CSR the matrix already holds (gpumat_factor_device.c); the others
    factor on the host through a MATSEQAIJCUSPARSE shadow over the matrix's host arrays (gpumat_shadow.c) that the
    base keeps and whose device values follow ours at each numeric factorization. The triangular solves run on
    the device, but those of LU and ILU factors where aijcusparse's -mat_cusparse_use_cpu_solve (read for our
    matrix) or -pc_factor_mat_solve_on_host asks for the host, as aijcusparse honours the first.
  - MATSOLVERCUDA (-pc_factor_mat_solver_type cuda, and the default for LU of -mat_gpumat_dense_lu_min to
    -mat_gpumat_dense_lu_max rows where a device is usable): LU with row pivoting on the device, kept as the explicit
    inverse, so that each solve is one dense product (gpumat_factor_dense.cu).
  - MATSOLVERPETSC: PETSc's own host factorization, as for MATSEQAIJ (the default without a usable device, or
    where the host solves faster): gpumat_factor_host.c.
  Also: the default chooser, the in-place factorizations, the registration.
*/
#include <petscgpumat/private/gpumatimpl.h>

/*
  The cuSPARSE factor through a MATSEQAIJCUSPARSE shadow (gpumat_shadow.c). The shadow and the factor's own numeric
  functions are kept in a container composed on the factor (destroyed with it).
*/
typedef struct {
  MatGPUMatShadow shadow; /* of the matrix last factored, if it is not ours (numeric phases may be given another one) */
  PetscErrorCode (*lunumeric)(Mat, Mat, const MatFactorInfo *);
  PetscErrorCode (*choleskynumeric)(Mat, Mat, const MatFactorInfo *);
  PetscBool cpu_solve; /* the host (I)LU solves aijcusparse's -mat_cusparse_use_cpu_solve asks for (factors made on the host) */
  PetscBool device_solves; /* the solves of the last numeric phase run on the device (host vectors go through CUDA copies) */
  PetscErrorCode (*solve)(Mat, Vec, Vec);
  PetscErrorCode (*solvetranspose)(Mat, Vec, Vec);
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
  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)F, shadow_key, (void **)s));
  PetscCheck(*s, PetscObjectComm((PetscObject)F), PETSC_ERR_PLIB, "Factor without its petscgpumat shadow matrix");
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* aijcusparse's solves of a factor made through the shadow, given vectors of any type */
static PetscErrorCode MatSolve_GPUMatShadow(Mat F, Vec b, Vec x)
{
  MatGPUMatFactorShadow *s;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowGet_Private(F, &s));
  if (s->device_solves) PetscCall(MatGPUMatDeviceSolve(F, b, x, s->solve));
  else PetscCall((*s->solve)(F, b, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSolveTranspose_GPUMatShadow(Mat F, Vec b, Vec x)
{
  MatGPUMatFactorShadow *s;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowGet_Private(F, &s));
  if (s->device_solves) PetscCall(MatGPUMatDeviceSolve(F, b, x, s->solvetranspose));
  else PetscCall((*s->solvetranspose)(F, b, x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After aijcusparse's numeric phase (which installs its solves): ours in front of them */
static PetscErrorCode MatGPUMatShadowWrapSolves_Private(Mat F, MatGPUMatFactorShadow *s, PetscBool device)
{
  PetscFunctionBegin;
  s->device_solves = device;
  GPUMAT_WRAP_FACTOR_SLOT(F, solve, s->solve, MatSolve_GPUMatShadow);
  GPUMAT_WRAP_FACTOR_SLOT(F, solvetranspose, s->solvetranspose, MatSolveTranspose_GPUMatShadow);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactorNumeric_GPUMatShadow(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatFactorShadow *s;
  Mat                    S;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowGet_Private(F, &s));
  PetscCall(MatGPUMatShadowOf(A, &s->shadow, &S));
  PetscCall(MatCUSPARSESetUseCPUSolve(S, s->cpu_solve)); /* what aijcusparse's numeric phase reads, from the matrix it factors */
  PetscCall((*s->lunumeric)(F, S, info));
  PetscCall(MatGPUMatShadowWrapSolves_Private(F, s, (PetscBool)!s->cpu_solve));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactorNumeric_GPUMatShadow(Mat F, Mat A, const MatFactorInfo *info)
{
  MatGPUMatFactorShadow *s;
  Mat                    S;

  PetscFunctionBegin;
  PetscCall(MatGPUMatShadowGet_Private(F, &s));
  PetscCall(MatGPUMatShadowOf(A, &s->shadow, &S));
  PetscCall((*s->choleskynumeric)(F, S, info));
  PetscCall(MatGPUMatShadowWrapSolves_Private(F, s, PETSC_TRUE)); /* aijcusparse's Cholesky and ICC solve on the device whatever use_cpu_solve says */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* After cuSPARSE's symbolic factorization (on the shadow): our numeric functions in front of its own */
static PetscErrorCode MatGPUMatShadowWrapNumeric_Private(Mat F, MatGPUMatFactorShadow *s)
{
  PetscFunctionBegin;
  GPUMAT_WRAP_FACTOR_SLOT(F, lufactornumeric, s->lunumeric, MatLUFactorNumeric_GPUMatShadow);
  GPUMAT_WRAP_FACTOR_SLOT(F, choleskyfactornumeric, s->choleskynumeric, MatCholeskyFactorNumeric_GPUMatShadow);
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
    Mat                    S; \
    PetscCall(MatGPUMatShadowGet_Private(F, &s)); \
    PetscCall(MatGPUMatShadowOf(A, &s->shadow, &S)); \
    PetscCall(MatGPUMatCPUSolve_Private(A, info, &s->cpu_solve)); \
    PetscCall((*cusp)(F, S, __VA_ARGS__)); \
    PetscCall(MatGPUMatShadowWrapNumeric_Private(F, s)); \
  } while (0)

/*
  Whether the triangular solves of an LU or ILU factor run on the host (the factor made there too), as asked for by
  aijcusparse's -mat_cusparse_use_cpu_solve on the matrix (read by ours: Mat_GPUMat.cpu_solve) or
  -pc_factor_mat_solve_on_host
*/
static PetscErrorCode MatGPUMatCPUSolve_Private(Mat A, const MatFactorInfo *info, PetscBool *cpu)
{
  PetscFunctionBegin;
  (void)info; /* PETSc before 3.24 has no solveonhost */
  *cpu = PetscGPUMatSolveOnHost(info);
  if (!*cpu && MatGPUMatIsOurs(A)) *cpu = ((Mat_GPUMat *)A->spptr)->cpu_solve;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatLUFactorSymbolic_GPUMatShadow(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  GPUMAT_SHADOW_SYMBOLIC(LU, cusp_lusymbolic, r, c, info);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* ILU(0)/ICC(0) in the natural ordering: factored on the device from A's device CSR (gpumat_factor_device.c) */
static PetscErrorCode MatILUFactorSymbolic_GPUMatShadow(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscBool device, cpu;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorTakes(A, r, c, info, &device));
  PetscCall(MatGPUMatCPUSolve_Private(A, info, &cpu));
  if (device && !cpu) PetscCall(MatGPUMatDeviceFactorSymbolic(F, A, MAT_FACTOR_ILU, info));
  else {
    MatFactorInfo host = *info;

    if (cpu) PetscGPUMatSetFactorOnHost(&host); /* aijcusparse factors ILU(0) on the device whatever use_cpu_solve says, unless asked to factor on the host */
    PetscCall(MatGPUMatDeviceFactorRelease(F));
    GPUMAT_SHADOW_SYMBOLIC(ILU, cusp_ilusymbolic, r, c, &host);
  }
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
  PetscBool device;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFactorTakes(A, r, r, info, &device)); /* host solves are asked for (I)LU only: aijcusparse's Cholesky and ICC always solve on the device */
  if (device) PetscCall(MatGPUMatDeviceFactorSymbolic(F, A, MAT_FACTOR_ICC, info));
  else {
    PetscCall(MatGPUMatDeviceFactorRelease(F));
    GPUMAT_SHADOW_SYMBOLIC(ICC, cusp_iccsymbolic, r, info);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGetFactor_GPUMat_CUSPARSE(Mat A, MatFactorType ftype, Mat *F)
{
  PetscErrorCode (*cusp)(Mat, MatFactorType, Mat *) = NULL;
  MatGPUMatFactorShadow *s;

  PetscFunctionBegin;
  PetscCall(MatSolverTypeGet(MATSOLVERCUSPARSE, MATSEQAIJCUSPARSE, ftype, NULL, NULL, &cusp));
  PetscCheck(cusp, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "This PETSc has no cuSPARSE %s factorization", MatFactorTypes[ftype]);
  /* aijcusparse's factory reads only A's sizes, block sizes and binding: the shadow comes at the symbolic
     factorization (A need not be assembled yet: PCFactorSetDefaultOrdering() asks for a factor to learn its ordering) */
  PetscCall((*cusp)(A, ftype, F));
  PetscCall(PetscNew(&s));
  PetscCall(PetscObjectContainerCompose((PetscObject)*F, shadow_key, s, MatGPUMatShadowDestroy_Private));
  GPUMAT_WRAP_FACTOR_SLOT(*F, lufactorsymbolic, cusp_lusymbolic, MatLUFactorSymbolic_GPUMatShadow);
  GPUMAT_WRAP_FACTOR_SLOT(*F, ilufactorsymbolic, cusp_ilusymbolic, MatILUFactorSymbolic_GPUMatShadow);
  GPUMAT_WRAP_FACTOR_SLOT(*F, choleskyfactorsymbolic, cusp_choleskysymbolic, MatCholeskyFactorSymbolic_GPUMatShadow);
  GPUMAT_WRAP_FACTOR_SLOT(*F, iccfactorsymbolic, cusp_iccsymbolic, MatICCFactorSymbolic_GPUMatShadow);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  PETSc's default (no solver type named): where a device is usable and A is not bound to the CPU, the dense LU on the
  device for an LU of a size it takes (gpumat_factor_dense.cu), else the cuSPARSE factor or the host one, whichever
  solves faster for A (gpumat_trisolve.c); without a device the host factor
*/
static PetscErrorCode MatGetFactor_GPUMat_Default(Mat A, MatFactorType ftype, Mat *F)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  VecType     vtype;
  PetscBool   device = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDefaultVecType(&vtype));
  g->trisolve_device = PETSC_FALSE;
  if (g->cpu_solve && (ftype == MAT_FACTOR_LU || ftype == MAT_FACTOR_ILU)) PetscCall(PetscStrncpy(g->trisolve_why, "-mat_cusparse_use_cpu_solve", sizeof(g->trisolve_why)));
  else if (!A->boundtocpu && !strcmp(vtype, VECCUDA)) {
    PetscBool dense;

    PetscCall(MatGPUMatDenseLUTakes(A, ftype, &dense));
    if (dense) {
      g->trisolve_device = PETSC_TRUE;
      PetscCall(PetscSNPrintf(g->trisolve_why, sizeof(g->trisolve_why), "dense LU on the device, solved by its explicit inverse (%" PetscInt_FMT " rows: -mat_gpumat_dense_lu_min %" PetscInt_FMT ", -mat_gpumat_dense_lu_max %" PetscInt_FMT ")", A->rmap->n, MatGPUMatDenseLUMin, MatGPUMatDenseLUMax));
      PetscCall(PetscInfo(A, "LU factor of %s: %s\n", ((PetscObject)A)->type_name, g->trisolve_why));
      PetscCall(MatGetFactor_GPUMat_DenseLU(A, ftype, F));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
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
  PetscCall(MatSolverTypeRegister(MATSOLVERCUDA, seqtype, MAT_FACTOR_LU, MatGetFactor_GPUMat_DenseLU));
  PetscFunctionReturn(PETSC_SUCCESS);
}
