/* MATMPICSRCUDA: cuSPARSE CSR in the MPI types' local blocks (the composition is src/base/gpumat_mpi.c) */
#include <petscgpumat/private/gpumatimpl.h>

/*MC
   MATMPICSRCUDA - MATMPICSRCUDA = "mpiaijcsrcuda" - A parallel sparse matrix whose local diagonal and off-diagonal
   blocks are `MATSEQCSRCUDA` matrices: its products run on the GPU of each rank with cuSPARSE CSR SpMV.

   It is a `MATMPIAIJ`: preallocation, `MatSetValues()`, assembly, `MatLoad()` and the host operations are
   MPIAIJ's. At assembly both blocks become `MATSEQCSRCUDA` with the matrix's parameters; the
   off-diagonal block keeps only its nonempty rows on the device. `MatMult()` exchanges the ghost values of x
   (on the device for `VECMPICUDA` vectors) while the diagonal block multiplies, then adds the off-diagonal
   block's product.

   Users usually give the root type `MATCSRCUDA` ("csrcuda"), which is this type on more than one process.

   Options Database Keys:
+  -mat_type csrcuda - the root type
-  -mat_csr_spmv_alg <alg> - the option of `MATSEQCSRCUDA`, applied to both blocks

   Level: beginner

   Notes:
   Creation: `MatSetType()` before or after preallocation, `MatConvert()` of an assembled `MATMPIAIJ` (also
   `MAT_INPLACE_MATRIX`), `MatCreateAIJCSRCUDA()`, `MatLoad()`, and `DMCreateMatrix()` with `-dm_mat_type csrcuda`.
   With several GPUs per node, PETSc gives rank r the device r modulo the number of visible devices.
   PETSc's MPI is not CUDA-aware on every system: then run with `-use_gpu_aware_mpi 0`.

.seealso: `MATSEQCSRCUDA`, `MatCreateAIJCSRCUDA()`, `MatCSRCUDASetSpMVAlgorithm()`, `MATMPIAIJCUSPARSE`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_MPIAIJCSRCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIGPUMat(B, MATSEQCSRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateAIJCSRCUDA - Creates a `MATCSRCUDA` matrix (`MATSEQCSRCUDA` on one process, `MATMPICSRCUDA` on
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

.seealso: `MATMPICSRCUDA`, `MATSEQCSRCUDA`, `MatCreateAIJ()`, `MatCreateAIJCUSPARSE()`
@*/
PetscErrorCode MatCreateAIJCSRCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt M, PetscInt N, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateMPI_GPUMat(comm, MATCSRCUDA, m, n, M, N, d_nz, d_nnz, o_nz, o_nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
