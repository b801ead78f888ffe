/*
  Compressed rows: a matrix whose device copy holds only its nonempty rows (the MPI types' off-diagonal
  blocks, where most rows are empty). The format computes the products of those rows into a short work
  vector; these kernels move entries between it and the full-length vectors. MatGetDiagonal() gathers with one of
  them too (gpumat_diagonal.c).
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscgpumat/private/gpumatcuda.h>

namespace
{
constexpr int kBlock = 256;

/* z[rows[k]] += w[k]: each row appears once, so no atomics are needed and the order is fixed */
__global__ void __launch_bounds__(kBlock) scatter_add_rows(PetscInt n, const PetscInt *__restrict__ rows, const PetscScalar *__restrict__ w, PetscScalar *z)
{
  const PetscInt k = (PetscInt)blockIdx.x * kBlock + threadIdx.x;

  if (k < n) z[rows[k]] += w[k];
}

/* z[rows[k]] = w[k] */
__global__ void __launch_bounds__(kBlock) scatter_rows(PetscInt n, const PetscInt *__restrict__ rows, const PetscScalar *__restrict__ w, PetscScalar *z)
{
  const PetscInt k = (PetscInt)blockIdx.x * kBlock + threadIdx.x;

  if (k < n) z[rows[k]] = w[k];
}

/* w[k] = x[rows[k]] */
__global__ void __launch_bounds__(kBlock) gather_rows(PetscInt n, const PetscInt *__restrict__ rows, const PetscScalar *__restrict__ x, PetscScalar *w)
{
  const PetscInt k = (PetscInt)blockIdx.x * kBlock + threadIdx.x;

  if (k < n) w[k] = x[rows[k]];
}
/* w[k] = x[pos[k]], or 0 where pos[k] < 0 (a row without the entry sought: MatGetDiagonal()'s missing diagonal) */
__global__ void __launch_bounds__(kBlock) gather_or_zero(PetscInt n, const PetscInt *__restrict__ pos, const PetscScalar *__restrict__ x, PetscScalar *w)
{
  const PetscInt k = (PetscInt)blockIdx.x * kBlock + threadIdx.x;

  if (k < n) w[k] = pos[k] >= 0 ? x[pos[k]] : (PetscScalar)0;
}
} // namespace

PetscErrorCode MatGPUMatLaunchScatterAddRows(void *s, PetscInt n, const PetscInt *rows, const PetscScalar *w, PetscScalar *z)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  scatter_add_rows<<<(unsigned int)((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(n, rows, w, z);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatLaunchGatherRows(void *s, PetscInt n, const PetscInt *rows, const PetscScalar *x, PetscScalar *w)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  gather_rows<<<(unsigned int)((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(n, rows, x, w);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatLaunchScatterRows(void *s, PetscInt n, const PetscInt *rows, const PetscScalar *w, PetscScalar *z)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  scatter_rows<<<(unsigned int)((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(n, rows, w, z);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatLaunchGatherOrZero(void *s, PetscInt n, const PetscInt *pos, const PetscScalar *x, PetscScalar *w)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  gather_or_zero<<<(unsigned int)((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(n, pos, x, w);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
