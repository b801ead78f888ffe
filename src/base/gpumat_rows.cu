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

/* One thread per entry k < n: `op(k)` (a functor below) */
template <class Op>
__global__ void __launch_bounds__(kBlock) per_entry(PetscInt n, Op op)
{
  const PetscInt k = (PetscInt)blockIdx.x * kBlock + threadIdx.x;

  if (k < n) op(k);
}

/* z[rows[k]] += w[k]: each row appears once, so no atomics are needed and the order is fixed */
struct ScatterAddRows {
  const PetscInt *__restrict__ rows;
  const PetscScalar *__restrict__ w;
  PetscScalar *z;
  __device__ void operator()(PetscInt k) const { z[rows[k]] += w[k]; }
};

/* z[rows[k]] = w[k] */
struct ScatterRows {
  const PetscInt *__restrict__ rows;
  const PetscScalar *__restrict__ w;
  PetscScalar *z;
  __device__ void operator()(PetscInt k) const { z[rows[k]] = w[k]; }
};

/* w[k] = x[rows[k]] */
struct GatherRows {
  const PetscInt *__restrict__ rows;
  const PetscScalar *__restrict__ x;
  PetscScalar *w;
  __device__ void operator()(PetscInt k) const { w[k] = x[rows[k]]; }
};

/* w[k] = x[pos[k]], or 0 where pos[k] < 0 (a row without the entry sought: MatGetDiagonal()'s missing diagonal) */
struct GatherOrZero {
  const PetscInt *__restrict__ pos;
  const PetscScalar *__restrict__ x;
  PetscScalar *w;
  __device__ void operator()(PetscInt k) const { w[k] = pos[k] >= 0 ? x[pos[k]] : (PetscScalar)0; }
};

template <class Op>
PetscErrorCode LaunchPerEntry(void *s, PetscInt n, Op op)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!n) PetscFunctionReturn(PETSC_SUCCESS);
  per_entry<<<(unsigned int)((n + kBlock - 1) / kBlock), kBlock, 0, stream>>>(n, op);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

PetscErrorCode MatGPUMatLaunchScatterAddRows(void *s, PetscInt n, const PetscInt *rows, const PetscScalar *w, PetscScalar *z)
{
  return LaunchPerEntry(s, n, ScatterAddRows{rows, w, z});
}

PetscErrorCode MatGPUMatLaunchGatherRows(void *s, PetscInt n, const PetscInt *rows, const PetscScalar *x, PetscScalar *w)
{
  return LaunchPerEntry(s, n, GatherRows{rows, x, w});
}

PetscErrorCode MatGPUMatLaunchScatterRows(void *s, PetscInt n, const PetscInt *rows, const PetscScalar *w, PetscScalar *z)
{
  return LaunchPerEntry(s, n, ScatterRows{rows, w, z});
}

PetscErrorCode MatGPUMatLaunchGatherOrZero(void *s, PetscInt n, const PetscInt *pos, const PetscScalar *x, PetscScalar *w)
{
  return LaunchPerEntry(s, n, GatherOrZero{pos, x, w});
}
