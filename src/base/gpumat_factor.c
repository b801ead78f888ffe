/*
  PETSc's own (host) factorizations of the seq petscgpumat types: LU, ILU, Cholesky and ICC through SeqAIJ's
  factory, registered under MATSOLVERPETSC for each of our seq types, so that PCLU/PCILU/PCICC/PCCHOLESKY
  (and the blocks of PCBJACOBI and PCASM) find them as PETSc's default solver.

  Why not simply let MatGetFactor() find SeqAIJ's factory by type-name prefix: SeqAIJ's symbolic factorization
  copies the source matrix's composed functions into the factor (MatDuplicateNoCreate_SeqAIJ), so the factor,
  a plain MATSEQAIJ, would carry our type's functions to its grave (-checkfunctionlist reports them). Ours
  calls SeqAIJ's and removes them from the factor after the symbolic factorization.
*/
#include <petscgpumat/private/gpumatimpl.h>

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

static PetscErrorCode MatLUFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_lusymbolic)(F, A, r, c, info));
  PetscCall(MatGPUMatFactorForget_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatILUFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, IS c, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_ilusymbolic)(F, A, r, c, info));
  PetscCall(MatGPUMatFactorForget_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCholeskyFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_choleskysymbolic)(F, A, r, info));
  PetscCall(MatGPUMatFactorForget_Private(F, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatICCFactorSymbolic_GPUMatHost(Mat F, Mat A, IS r, const MatFactorInfo *info)
{
  PetscFunctionBegin;
  PetscCall((*host_iccsymbolic)(F, A, r, info));
  PetscCall(MatGPUMatFactorForget_Private(F, A));
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

static PetscErrorCode MatGetFactor_GPUMat_Petsc(Mat A, MatFactorType ftype, Mat *F)
{
  PetscErrorCode (*seqaij)(Mat, MatFactorType, Mat *) = NULL;

  PetscFunctionBegin;
  PetscCall(MatSolverTypeGet(MATSOLVERPETSC, MATSEQAIJ, ftype, NULL, NULL, &seqaij));
  PetscCheck(seqaij, PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "PETSc has no %s factorization of MATSEQAIJ", MatFactorTypes[ftype]);
  PetscCall((*seqaij)(A, ftype, F));
  if (!*F) PetscFunctionReturn(PETSC_SUCCESS);
  GPUMAT_WRAP_SYMBOLIC(*F, lufactorsymbolic, host_lusymbolic, MatLUFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_SYMBOLIC(*F, ilufactorsymbolic, host_ilusymbolic, MatILUFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_SYMBOLIC(*F, choleskyfactorsymbolic, host_choleskysymbolic, MatCholeskyFactorSymbolic_GPUMatHost);
  GPUMAT_WRAP_SYMBOLIC(*F, iccfactorsymbolic, host_iccsymbolic, MatICCFactorSymbolic_GPUMatHost);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Registers the host factorizations for the seq type of a format (called once per format at registration) */
PetscErrorCode MatGPUMatRegisterHostFactors(const char seqtype[])
{
  PetscFunctionBegin;
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, seqtype, MAT_FACTOR_LU, MatGetFactor_GPUMat_Petsc));
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, seqtype, MAT_FACTOR_ILU, MatGetFactor_GPUMat_Petsc));
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, seqtype, MAT_FACTOR_CHOLESKY, MatGetFactor_GPUMat_Petsc));
  PetscCall(MatSolverTypeRegister(MATSOLVERPETSC, seqtype, MAT_FACTOR_ICC, MatGetFactor_GPUMat_Petsc));
  PetscFunctionReturn(PETSC_SUCCESS);
}
