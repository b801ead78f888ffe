/*
  Row-grouped CSR built on the GPU from the uploaded CSR (the host layout of tests/reference/rgcsr_layout.c is
  the tests' oracle), in two steps:
  - groups: the row lengths, the optional reordering by decreasing length inside windows of W rows (CUB's stable
    segmented sort: equal lengths keep the row order, as on the host), each group's longest row (CUB segmented
    max), its slots (the longest row rounded up to T, times its rows) and their offsets (CUB scan). Only the
    stored size and the longest row come back to the host, which checks the padding guard and the free memory
    before the column and value arrays are allocated;
  - fill: one thread per stored row and lane writes its slots (MatRowGroupFillThread(), shared with the host
    emulation); with structure false it refreshes the values only.
  And its inverse, the gather back to CSR order through the permutation (MatRowGroupGatherThread()), for what reads the
  device CSR besides the products (the device ILU(0)/ICC(0) factor).
*/
#include <petscgpumat/private/rgcsrimpl.h>
#include <petscgpumat/private/rowgroupcuda.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

namespace
{
constexpr int kBlock = 256;

unsigned int blocks_for(long long n)
{
  return (unsigned int)((n + kBlock - 1) / kBlock);
}

/* len[i] = ai[i + 1] - ai[i]; idx[i] = i, the values the sort carries (idx NULL: no reordering) */
__global__ void __launch_bounds__(kBlock) row_lengths(int m, const PetscInt *__restrict__ ai, int *__restrict__ len, int *__restrict__ idx)
{
  const int i = (int)((long long)blockIdx.x * kBlock + threadIdx.x);

  if (i >= m) return;
  len[i] = (int)(ai[i + 1] - ai[i]);
  if (idx) idx[i] = i;
}

/* the first row of segment s (windows, groups) of `width` rows, clipped to m */
struct SegmentStart {
  long long width, m;
  __host__ __device__ long long operator()(long long s) const { return s * width < m ? s * width : m; }
};

/* gp[g] = the slots of group g; gp[ngroups] = 0, so that an exclusive scan turns gp into offsets */
__global__ void __launch_bounds__(kBlock) group_slots(int ngroups, int m, int G, int T, const int *__restrict__ K, PetscCount *__restrict__ gp)
{
  const int g = (int)((long long)blockIdx.x * kBlock + threadIdx.x);

  if (g < ngroups) gp[g] = (PetscCount)((K[g] + T - 1) / T * T) * min(G, m - g * G);
  else if (g == ngroups) gp[g] = 0;
}

/* the work arrays of the groups step (freed whatever happens) */
struct GroupsWork {
  int   *len = nullptr, *idx = nullptr, *K = nullptr, *maxK = nullptr;
  void  *tmp = nullptr;
  size_t tmpbytes = 0;
};

PetscErrorCode BuildGroups(Mat A, cudaStream_t stream, int m, int G, int T, long long W, const PetscInt *ai, int *rl, int *perm, PetscCount *gp, GroupsWork *w, PetscInt *maxlen, PetscCount *stored)
{
  const int  ngroups = (m + G - 1) / G;
  const auto windows = thrust::make_transform_iterator(thrust::make_counting_iterator<long long>(0), SegmentStart{W, m});
  const auto groups  = thrust::make_transform_iterator(thrust::make_counting_iterator<long long>(0), SegmentStart{G, m});
  const long long nwindows = perm ? (m + W - 1) / W : 0;
  size_t     b;
  int        longest = 0;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)ngroups * sizeof(int), (void **)&w->K));
  PetscCall(MatGPUMatDeviceMalloc(A, sizeof(int), (void **)&w->maxK));
  if (perm) { /* sort (length, row) pairs by decreasing length inside each window */
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)m * sizeof(int), (void **)&w->len));
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)m * sizeof(int), (void **)&w->idx));
    PetscCallCUDA(cub::DeviceSegmentedSort::StableSortPairsDescending(nullptr, b, w->len, rl, w->idx, perm, m, nwindows, windows, windows + 1, stream));
    w->tmpbytes = PetscMax(w->tmpbytes, b);
  }
  if (ngroups) {
    PetscCallCUDA(cub::DeviceSegmentedReduce::Max(nullptr, b, rl, w->K, ngroups, groups, groups + 1, stream));
    w->tmpbytes = PetscMax(w->tmpbytes, b);
    PetscCallCUDA(cub::DeviceReduce::Max(nullptr, b, w->K, w->maxK, ngroups, stream));
    w->tmpbytes = PetscMax(w->tmpbytes, b);
  }
  PetscCallCUDA(cub::DeviceScan::ExclusiveSum(nullptr, b, gp, gp, ngroups + 1, stream));
  w->tmpbytes = PetscMax(w->tmpbytes, b);
  PetscCall(MatGPUMatDeviceMalloc(A, w->tmpbytes, &w->tmp));

  if (m) row_lengths<<<blocks_for(m), kBlock, 0, stream>>>(m, ai, perm ? w->len : rl, perm ? w->idx : nullptr);
  PetscCall(MatGPUMatCheckLaunch(stream));
  if (perm) PetscCallCUDA(cub::DeviceSegmentedSort::StableSortPairsDescending(w->tmp, w->tmpbytes, w->len, rl, w->idx, perm, m, nwindows, windows, windows + 1, stream));
  if (ngroups) {
    PetscCallCUDA(cub::DeviceSegmentedReduce::Max(w->tmp, w->tmpbytes, rl, w->K, ngroups, groups, groups + 1, stream));
    PetscCallCUDA(cub::DeviceReduce::Max(w->tmp, w->tmpbytes, w->K, w->maxK, ngroups, stream));
  }
  group_slots<<<blocks_for(ngroups + 1), kBlock, 0, stream>>>(ngroups, m, G, T, w->K, gp);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscCallCUDA(cub::DeviceScan::ExclusiveSum(w->tmp, w->tmpbytes, gp, gp, ngroups + 1, stream));
  if (ngroups) PetscCall(MatGPUMatCopyToHost(&longest, w->maxK, sizeof(int), stream)); /* the host sizes the layout with them */
  PetscCall(MatGPUMatCopyToHost(stored, gp + ngroups, sizeof(PetscCount), stream));
  *maxlen = longest;
  PetscFunctionReturn(PETSC_SUCCESS);
}
} // namespace

/*
  The groups step for group size G, T threads per row and sort window W (0: no reordering) of an m-row CSR whose
  row offsets d_ai are on the device: allocates and fills *d_rl (row lengths, stored order), *d_perm (the matrix
  row of each stored row; NULL without reordering) and *d_gp (group offsets); returns the longest row and the
  stored slots. On failure nothing stays allocated.
*/
PetscErrorCode MatRgCSRCUDABuildGroups(Mat A, void *stream, PetscInt m, PetscInt G, PetscInt T, PetscInt W, const PetscInt *d_ai, int **d_rl, int **d_perm, PetscCount **d_gp, PetscInt *maxlen, PetscCount *stored)
{
  const PetscInt ngroups = (m + G - 1) / G;
  const bool     reorder = W > 0 && m > 1; /* as MatRgCSRLayoutCreate(): a single row is never reordered */
  GroupsWork     w;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  *d_rl   = NULL;
  *d_perm = NULL;
  *d_gp   = NULL;
  ierr    = MatGPUMatDeviceMalloc(A, (size_t)(ngroups + 1) * sizeof(PetscCount), (void **)d_gp);
  if (!ierr) ierr = MatGPUMatDeviceMalloc(A, (size_t)m * sizeof(int), (void **)d_rl);
  if (!ierr && reorder) ierr = MatGPUMatDeviceMalloc(A, (size_t)m * sizeof(int), (void **)d_perm);
  if (!ierr) ierr = BuildGroups(A, (cudaStream_t)stream, (int)m, (int)G, (int)T, (long long)W, d_ai, *d_rl, *d_perm, *d_gp, &w, maxlen, stored);
  PetscCall(MatGPUMatDeviceFree((void **)&w.len));
  PetscCall(MatGPUMatDeviceFree((void **)&w.idx));
  PetscCall(MatGPUMatDeviceFree((void **)&w.K));
  PetscCall(MatGPUMatDeviceFree((void **)&w.maxK));
  PetscCall(MatGPUMatDeviceFree(&w.tmp));
  if (ierr) {
    PetscCall(MatGPUMatDeviceFree((void **)d_gp));
    PetscCall(MatGPUMatDeviceFree((void **)d_rl));
    PetscCall(MatGPUMatDeviceFree((void **)d_perm));
  }
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The fill step: structure (col and val) or values only, from the CSR column indices and values on the device */
PetscErrorCode MatRgCSRCUDALaunchFill(void *s, const Mat_SeqRGCSRCUDA *r, PetscBool structure, const PetscInt *ai, const PetscInt *aj, const PetscScalar *aa)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchFill((cudaStream_t)s, r->m, r->G, r->T, 0, r->d_gp, r->d_perm, structure, ai, aj, aa, NULL, r->d_col, r->d_val));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatRgCSRCUDALaunchGather(void *s, const Mat_SeqRGCSRCUDA *r, const PetscInt *ai, PetscInt *aj, PetscScalar *aa)
{
  PetscFunctionBegin;
  PetscCall(MatRowGroupLaunchGather((cudaStream_t)s, r->m, r->G, r->T, r->d_gp, r->d_perm, ai, r->d_rl, r->d_col, r->d_val, aj, aa));
  PetscFunctionReturn(PETSC_SUCCESS);
}
