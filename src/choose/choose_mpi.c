/* MATMPIAUTOCUDA: the format chosen per block, in the MPI types' local blocks (the composition is src/base/gpumat_mpi.c) */
#include "chooseimpl.h"

/*MC
   MATMPIAUTOCUDA - MATMPIAUTOCUDA = "mpiaijautocuda" - A parallel sparse matrix whose local diagonal and off-diagonal
   blocks are `MATSEQAUTOCUDA` matrices: each block's products run on the GPU of its rank in the format chosen for
   that block's rows

   It is a `MATMPIAIJ`: preallocation, `MatSetValues()`, assembly, `MatLoad()` and the host operations are MPIAIJ's.
   The two blocks choose separately: the off-diagonal block keeps only its nonempty rows on the device, and its
   statistics (and so its format) are those of these rows, which are often few and short. `MatView()` says what each
   block of rank 0 chose.

   Users usually give the root type `MATAUTOCUDA` ("autocuda"), which is this type on more than one process.

   Options Database Keys:
+  -mat_type autocuda - the root type
-  -mat_auto_timed - the option of `MATSEQAUTOCUDA`, applied to both blocks (and the candidates' options likewise)

   Level: beginner

   Note:
   PETSc's MPI is not CUDA-aware on every system: then run with `-use_gpu_aware_mpi 0`.

.seealso: `MATSEQAUTOCUDA`, `MatCreateAIJAutoCUDA()`, `MatAutoCUDAGetChoice()`, `MATMPIAIJCUSPARSE`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_MPIAIJAutoCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_MPIGPUMat(B, MATSEQAUTOCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateAIJAutoCUDA - Creates a `MATAUTOCUDA` matrix (`MATSEQAUTOCUDA` on one process, `MATMPIAUTOCUDA` on
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

.seealso: `MATMPIAUTOCUDA`, `MATSEQAUTOCUDA`, `MatCreateAIJ()`, `MatCreateAIJCUSPARSE()`
@*/
PetscErrorCode MatCreateAIJAutoCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt M, PetscInt N, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateMPI_GPUMat(comm, MATAUTOCUDA, m, n, M, N, d_nz, d_nnz, o_nz, o_nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}
