/* MATMPICMRSCUDA: the compressed multi-row storage (CMRS) format in the MPI types' local blocks (the composition is src/base/gpumat_mpi.c) */
#include <petscgpumat/private/gpumatimpl.h>

/*MC
   MATMPICMRSCUDA - MATMPICMRSCUDA = "mpiaijcmrscuda" - A parallel sparse matrix whose local diagonal and off-diagonal
   blocks are `MATSEQCMRSCUDA` matrices: its products run on the GPU of each rank in the compressed multi-row storage (CMRS) format.

   It is a `MATMPIAIJ`: preallocation, `MatSetValues()`, assembly, `MatLoad()` and the host operations are
   MPIAIJ's. At assembly both blocks become `MATSEQCMRSCUDA` with the matrix's compressed multi-row storage (CMRS) parameters; the
   off-diagonal block keeps only its nonempty rows on the device. `MatMult()` exchanges the ghost values of x
   (on the device for `VECMPICUDA` vectors) while the diagonal block multiplies, then adds the off-diagonal
   block's product.

   Users usually give the root type `MATCMRSCUDA` ("cmrscuda"), which is this type on more than one process.

   Options Database Keys:
+  -mat_type cmrscuda - the root type
-  -mat_cmrs_height <value> - and the other options of `MATSEQCMRSCUDA`, applied to both blocks

   Level: beginner

   Notes:
   Creation: `MatSetType()` before or after preallocation, `MatConvert()` of an assembled `MATMPIAIJ` (also
   `MAT_INPLACE_MATRIX`), `MatCreateAIJCMRSCUDA()`, `MatLoad()`, and `DMCreateMatrix()` with `-dm_mat_type cmrscuda`.
   With several GPUs per node, PETSc gives rank r the device r modulo the number of visible devices.
   PETSc's MPI is not CUDA-aware on every system: then run with `-use_gpu_aware_mpi 0`.

.seealso: `MATSEQCMRSCUDA`, `MatCreateAIJCMRSCUDA()`, `MatCMRSCUDASetHeight()`, `MATMPIAIJCUSPARSE`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_MPIAIJCMRSCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIGPUMat(B, MATSEQCMRSCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateAIJCMRSCUDA - Creates a `MATCMRSCUDA` matrix (`MATSEQCMRSCUDA` on one process, `MATMPICMRSCUDA` on
  several) with the preallocation of `MatCreateAIJ()`

  Collective

  Input Parameters:
+ comm  - MPI communicator
. m     - local rows (or `PETSC_DECIDE`)
. n     - local columns (or `PETSC_DECIDE`)
. M     - global rows (or `PETSC_DETERMINE`)
. N     - global columns (or `PETSC_DETERMINE`)
. d_nz  - nonzeros per row of the diagonal block (or an estimate)
. d_nnz - nonzeros in each local row of the diagonal block, or `NULL`
. o_nz  - nonzeros per row of the off-diagonal block
- o_nnz - nonzeros in each local row of the off-diagonal block, or `NULL`

  Output Parameter:
. A - the matrix

  Level: intermediate

.seealso: `MATMPICMRSCUDA`, `MATSEQCMRSCUDA`, `MatCreateAIJ()`, `MatCreateAIJCUSPARSE()`
@*/
PetscErrorCode MatCreateAIJCMRSCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt M, PetscInt N, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateMPI_GPUMat(comm, MATCMRSCUDA, m, n, M, N, d_nz, d_nnz, o_nz, o_nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
