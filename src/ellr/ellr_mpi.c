/* MATMPIELLRCUDA: the ELLPACK-R format in the MPI types' local blocks (the composition is src/base/gpumat_mpi.c) */
#include <petscgpumat/private/gpumatimpl.h>

/*MC
   MATMPIELLRCUDA - MATMPIELLRCUDA = "mpiaijellrcuda" - A parallel sparse matrix whose local diagonal and off-diagonal
   blocks are `MATSEQELLRCUDA` matrices: its products run on the GPU of each rank in the ELLPACK-R format.

   It is a `MATMPIAIJ`: preallocation, `MatSetValues()`, assembly, `MatLoad()` and the host operations are
   MPIAIJ's. At assembly both blocks become `MATSEQELLRCUDA` with the matrix's ELLPACK-R parameters; the
   off-diagonal block keeps only its nonempty rows on the device. `MatMult()` exchanges the ghost values of x
   (on the device for `VECMPICUDA` vectors) while the diagonal block multiplies, then adds the off-diagonal
   block's product.

   Users usually give the root type `MATELLRCUDA` ("ellrcuda"), which is this type on more than one process.

   Options Database Keys:
+  -mat_type ellrcuda - the root type
-  -mat_ellr_threads_per_row <value> - and the other options of `MATSEQELLRCUDA`, applied to both blocks

   Level: beginner

   Notes:
   Creation: `MatSetType()` before or after preallocation, `MatConvert()` of an assembled `MATMPIAIJ` (also
   `MAT_INPLACE_MATRIX`), `MatCreateAIJELLRCUDA()`, `MatLoad()`, and `DMCreateMatrix()` with `-dm_mat_type ellrcuda`.
   With several GPUs per node, PETSc gives rank r the device r modulo the number of visible devices.
   PETSc's MPI is not CUDA-aware on every system: then run with `-use_gpu_aware_mpi 0`.

.seealso: `MATSEQELLRCUDA`, `MatCreateAIJELLRCUDA()`, `MatELLRCUDASetThreadsPerRow()`, `MATMPIAIJCUSPARSE`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_MPIAIJELLRCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIGPUMat(B, MATSEQELLRCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateAIJELLRCUDA - Creates a `MATELLRCUDA` matrix (`MATSEQELLRCUDA` on one process, `MATMPIELLRCUDA` on
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

.seealso: `MATMPIELLRCUDA`, `MATSEQELLRCUDA`, `MatCreateAIJ()`, `MatCreateAIJCUSPARSE()`
@*/
PetscErrorCode MatCreateAIJELLRCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt M, PetscInt N, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateMPI_GPUMat(comm, MATELLRCUDA, m, n, M, N, d_nz, d_nnz, o_nz, o_nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
