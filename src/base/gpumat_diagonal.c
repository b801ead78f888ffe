/*
  MatGetDiagonal() of the seq types into a vector on the device.

  SeqAIJ's op writes the vector's host array, which leaves a CUDA vector valid only on the host: PCJACOBI's
  VecReciprocal() then ran on the host and its first PCApply() copied the vector back, and so did every level of GAMG
  (its smoothers' Jacobi and its prolongator smoothing) and of PCMG with Chebyshev/Jacobi smoothers. Here the diagonal
  is taken from the host master copy, which our types keep current, into a host buffer and uploaded into the
  vector's device array: m values, the bytes aijcusparse's device kernel writes, and the vector stays on the device.
  Host vectors (every vector where no device is usable) and a matrix bound to the CPU: SeqAIJ's op.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>

PetscErrorCode MatGetDiagonal_GPUMat(Mat A, Vec v)
{
  Mat_GPUMat  *g = (Mat_GPUMat *)A->spptr;
  PetscBool    ondevice;
  PetscInt     n;
  PetscScalar *buf, *d_v;
  Vec          h;
  void        *stream;

  PetscFunctionBegin;
  PetscCall(MatGPUMatVecIsOnDevice(v, &ondevice));
  if (!ondevice || A->boundtocpu) { /* a CUDA vector means a usable device */
    PetscCall((*g->hostops.getdiagonal)(A, v));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(VecGetLocalSize(v, &n));
  PetscCheck(n == A->rmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Vector of local size %" PetscInt_FMT " for the diagonal of a matrix of %" PetscInt_FMT " rows", n, A->rmap->n);
  PetscCall(PetscMalloc1(n, &buf)); /* not zeroed: SeqAIJ's op writes every row */
  PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, n, buf, &h));
  PetscCall((*g->hostops.getdiagonal)(A, h));
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(VecCUDAGetArrayWrite(v, &d_v));
  /* from pageable memory: cudaMemcpyAsync() returns once the source is staged, so buf can go right after */
  PetscCall(MatGPUMatCopyToDevice(d_v, buf, (size_t)n * sizeof(PetscScalar), stream));
  PetscCall(VecCUDARestoreArrayWrite(v, &d_v));
  PetscCall(VecDestroy(&h));
  PetscCall(PetscFree(buf));
  PetscFunctionReturn(PETSC_SUCCESS);
}
