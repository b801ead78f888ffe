/*
  The row statistics of a device CSR, reduced on the GPU from its row offsets (the device half of
  gpumat_rowstats.c): one pass of CUB's reduction where the host's loop over millions of rows costs
  milliseconds before each build (2.4 ms for a 2.1 M-row DMDA interpolation on the H100's host).
  Every term is an integer, so the sums are exact in any order: the statistics equal the host's bit for bit.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscgpumat/private/gpumatcuda.h>
#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace
{
struct RowSums {
  long long nzrows, maxlen, heavy;
  double    sumsq;
};

struct RowOf {
  const PetscInt *ai;
  PetscInt        light; /* the longest row that is not heavy */
  __host__ __device__ RowSums operator()(PetscInt i) const
  {
    const long long len = (long long)(ai[i + 1] - ai[i]);

    return RowSums{len > 0, len, len > light ? len : 0, (double)len * (double)len};
  }
};

struct AddRows {
  __host__ __device__ RowSums operator()(const RowSums &a, const RowSums &b) const { return RowSums{a.nzrows + b.nzrows, a.maxlen > b.maxlen ? a.maxlen : b.maxlen, a.heavy + b.heavy, a.sumsq + b.sumsq}; }
};
} // namespace

/*@C
  MatGPUMatRowStatsOnDevice - the nonempty rows, the longest row, the sum of the squared row lengths and the entries
  of the rows longer than a given length of a CSR whose m + 1 row offsets are in device memory

  Not Collective; the host waits for `stream` (it reads the sums)

  Input Parameters:
+ m      - rows
. d_ai   - the row offsets, on the device
. light  - the longest row not counted in `heavy`
- stream - the cudaStream_t to reduce on (that of the current `PetscDeviceContext`: `MatGPUMatGetStream()`)

  Output Parameters:
+ nzrows - rows with at least one entry
. maxlen - the longest row
. sumsq  - the sum of the squared row lengths
- heavy  - the entries of the rows longer than `light`

  Level: developer

.seealso: `MatGPUMatGetRowStats()`
@*/
PetscErrorCode MatGPUMatRowStatsOnDevice(PetscInt m, const PetscInt *d_ai, PetscInt light, void *stream, PetscInt *nzrows, PetscInt *maxlen, PetscReal *sumsq, PetscCount *heavy)
{
  auto    rows  = thrust::make_transform_iterator(thrust::counting_iterator<PetscInt>(0), RowOf{d_ai, light});
  RowSums zero  = {0, 0, 0, 0.0}, sums = zero;
  size_t  bytes = 0;
  char   *work  = NULL;

  PetscFunctionBegin;
  if (m > 0) {
    size_t      at;
    cudaError_t err;

    PetscCallCUDA(cub::DeviceReduce::Reduce(nullptr, bytes, rows, (RowSums *)nullptr, m, AddRows{}, zero, (cudaStream_t)stream));
    at  = (bytes + 255) / 256 * 256; /* CUB's temporaries, then the sums */
    err = cudaMalloc((void **)&work, at + sizeof(RowSums));
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "Cannot allocate %zu bytes of device memory for the row statistics", at + sizeof(RowSums));
    }
    PetscCallCUDA(err);
    err = cub::DeviceReduce::Reduce(work, bytes, rows, (RowSums *)(work + at), m, AddRows{}, zero, (cudaStream_t)stream);
    if (err == cudaSuccess) err = cudaMemcpyAsync(&sums, work + at, sizeof(RowSums), cudaMemcpyDeviceToHost, (cudaStream_t)stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)stream);
    PetscCallCUDA(cudaFree(work)); /* also after an error */
    PetscCallCUDA(err);
  }
  *nzrows = (PetscInt)sums.nzrows;
  *maxlen = (PetscInt)sums.maxlen;
  *sumsq  = (PetscReal)sums.sumsq;
  *heavy  = (PetscCount)sums.heavy;
  PetscFunctionReturn(PETSC_SUCCESS);
}
