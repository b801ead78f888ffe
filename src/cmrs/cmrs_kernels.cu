/* CMRS SpMV kernels (Algorithm 1 of Koza et al.): the layout is described in include/petscgpumat/private/cmrsimpl.h */
#include <petscgpumat/private/cmrsimpl.h>
#include <petscgpumat/private/gpumatcuda.h>

namespace
{
constexpr int kWarp = 32;
constexpr int kPad  = kWarp + 1; /* a row of the buffer: 32 partial sums and one pad word against bank conflicts */

/*
  One warp per strip of H rows. Lane l takes the strip's entries l, l+32, ... and adds each product to its own
  partial sum of the entry's row: buf[row-in-strip][l], a per-warp shared buffer of H x 32 sums (the cyclic
  lane mapping of Algorithm 1). Then the 32 partial sums of each row are added with a fixed butterfly of
  shuffles, and lanes 0..H-1 write the strip's H results. No atomics: bitwise reproducible.
  Strips of 64 entries or more start at the 32-aligned entry before them (the papers' aligned access), so
  every load of Val and ColInd is a full aligned segment; the lanes before the strip start stay idle once.
*/
template <int H, bool PACKED>
__global__ void __launch_bounds__(1024) cmrs_mult(int strips, int m, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z)
{
  extern __shared__ unsigned char cmrs_smem[];
  PetscScalar *buf   = reinterpret_cast<PetscScalar *>(cmrs_smem) + (threadIdx.x / kWarp) * H * kPad;
  const int    lane  = threadIdx.x % kWarp;
  const int    strip = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;

  if (strip >= strips) return; /* the whole warp leaves together */
#pragma unroll
  for (int r = 0; r < H; r++) buf[r * kPad + lane] = 0;
  {
    const long long start = sp[strip], end = sp[strip + 1];
    long long       j     = (end - start >= 2 * kWarp ? (start & ~(long long)(kWarp - 1)) : start) + lane;

    for (; j < end; j += kWarp) {
      if (j < start) continue;
      const unsigned int c = col[j];
      const int          r = PACKED ? (int)(c >> CMRS_COL_BITS) : (int)ris[j];
      const unsigned int k = PACKED ? (c & CMRS_COL_MASK) : c;

      buf[r * kPad + lane] += val[j] * __ldg(x + k); /* each lane touches only its own column of buf */
    }
  }
  PetscScalar mine = 0;
#pragma unroll
  for (int r = 0; r < H; r++) {
    PetscScalar s = buf[r * kPad + lane];
#pragma unroll
    for (int off = kWarp / 2; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (lane == r) mine = s;
  }
  const int row = strip * H + lane;
  if (lane < H && row < m) z[row] = y ? y[row] + mine : mine;
}

/*
  The padded variant (section 6.7 of the 2014 paper): strips padded to whole passes of 32 items, arranged so
  that in a pass no two lanes with the same lane mod M hold items of the same row; lane l then adds into cell
  (l mod M, row) of a per-warp buffer of M x H sums, M times smaller than Algorithm 1's, which allows H = 16.
  Every load is a full aligned 32-item segment. The M partial sums of row r are added by lane r, in order.
*/
template <int H, int M, bool PACKED>
__global__ void __launch_bounds__(1024) cmrs_mult_padded(int strips, int m, int h, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z)
{
  extern __shared__ unsigned char cmrs_smem[];
  PetscScalar *buf   = reinterpret_cast<PetscScalar *>(cmrs_smem) + (threadIdx.x / kWarp) * M * H;
  const int    lane  = threadIdx.x % kWarp;
  const int    strip = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;

  if (strip >= strips) return;
  for (int c = lane; c < M * H; c += kWarp) buf[c] = 0;
  __syncwarp();
  for (long long j = sp[strip] + lane; j < sp[strip + 1]; j += kWarp) { /* the strip holds whole passes */
    const unsigned int c = col[j];
    const int          r = PACKED ? (int)(c >> CMRS_COL_BITS) : (int)ris[j];
    const unsigned int k = PACKED ? (c & CMRS_COL_MASK) : c;

    if (k != (PACKED ? CMRS_PAD_PACKED : CMRS_PAD_UNPACKED)) buf[(lane % M) * H + r] += val[j] * __ldg(x + k); /* distinct cells in a pass */
    __syncwarp(); /* the next pass may use the same cells from other lanes */
  }
  if (lane < h) {
    const int   row = strip * h + lane;
    PetscScalar s   = 0;

#pragma unroll
    for (int q = 0; q < M; q++) s += buf[q * H + lane];
    if (row < m) z[row] = y ? y[row] + s : s;
  }
}

/* z += A^T x: each entry scatters val * x[its row] into z[its column], with atomics */
template <bool PACKED>
__global__ void __launch_bounds__(256) cmrs_mult_transpose(int strips, int m, int H, bool padded, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, PetscScalar *z)
{
  const int lane  = threadIdx.x % kWarp;
  const int strip = blockIdx.x * (blockDim.x / kWarp) + threadIdx.x / kWarp;

  if (strip >= strips) return;
  for (long long j = sp[strip] + lane; j < sp[strip + 1]; j += kWarp) {
    const unsigned int c = col[j];
    const int          r = PACKED ? (int)(c >> CMRS_COL_BITS) : (int)ris[j];
    const unsigned int k = PACKED ? (c & CMRS_COL_MASK) : c;

    if (!padded || k != (PACKED ? CMRS_PAD_PACKED : CMRS_PAD_UNPACKED)) atomicAdd(z + k, val[j] * x[strip * H + r]); /* not the padding */
  }
}

/*
  Z[:, k] = A X[:, k] for NV columns of dense column-major blocks (leading dimensions ldx, ldz), one thread per row,
  on unsorted strips without padding, where a row's entries are contiguous: the thread finds them by two binary
  searches on RowInStrip and reads each entry once for all NV vectors (KSPMatSolve, block Krylov methods).
*/
template <int NV, bool PACKED>
__global__ void __launch_bounds__(256) cmrs_mult_block(int m, int H, const PetscCount *__restrict__ sp, const unsigned int *__restrict__ col, const unsigned char *__restrict__ ris, const PetscScalar *__restrict__ val, const PetscScalar *__restrict__ x, int ldx, PetscScalar *__restrict__ z, int ldz)
{
  const int   i = (int)((long long)blockIdx.x * blockDim.x + threadIdx.x);
  PetscScalar acc[NV];

  if (i >= m) return;
  const int  strip = i / H, r = i - strip * H;
  long long  lo = sp[strip], hi = sp[strip + 1];
  const auto row_of = [&](long long j) { return PACKED ? (int)(col[j] >> CMRS_COL_BITS) : (int)ris[j]; };

  for (long long e = hi; lo < e;) { /* the first entry of row r */
    const long long mid = (lo + e) / 2;
    if (row_of(mid) < r) lo = mid + 1;
    else e = mid;
  }
  for (long long b = lo; b < hi;) { /* one past its last */
    const long long mid = (b + hi) / 2;
    if (row_of(mid) <= r) b = mid + 1;
    else hi = mid;
  }
#pragma unroll
  for (int k = 0; k < NV; k++) acc[k] = 0;
  for (long long j = lo; j < hi; j++) {
    const PetscScalar  v = val[j];
    const unsigned int c = PACKED ? (col[j] & CMRS_COL_MASK) : col[j];
#pragma unroll
    for (int k = 0; k < NV; k++) acc[k] += v * __ldg(x + c + (long long)k * ldx);
  }
#pragma unroll
  for (int k = 0; k < NV; k++) z[i + (long long)k * ldz] = acc[k];
}

template <int H>
void launch_mult(const Mat_SeqCMRSCUDA *c, cudaStream_t stream, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  const int          warps  = (int)c->plan.block / kWarp;
  const unsigned int blocks = (unsigned int)((c->strips + warps - 1) / warps);
  const size_t       shmem  = (size_t)warps * H * kPad * sizeof(PetscScalar);

  /* more than the default 48 KB of dynamic shared memory must be asked for (H100: up to 227 KB per block) */
  if (shmem > 48 * 1024) {
    if (c->packed) (void)cudaFuncSetAttribute(cmrs_mult<H, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    else (void)cudaFuncSetAttribute(cmrs_mult<H, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
  }
  if (c->packed) cmrs_mult<H, true><<<blocks, (unsigned int)c->plan.block, shmem, stream>>>((int)c->strips, (int)c->m, c->d_sp, c->d_col, c->d_ris, c->d_val, x, y, z);
  else cmrs_mult<H, false><<<blocks, (unsigned int)c->plan.block, shmem, stream>>>((int)c->strips, (int)c->m, c->d_sp, c->d_col, c->d_ris, c->d_val, x, y, z);
}
template <int M>
void launch_mult_padded(const Mat_SeqCMRSCUDA *c, cudaStream_t stream, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  constexpr int      H      = CMRS_MAX_HEIGHT; /* heights below 16 use the H = 16 kernel: the buffer rows are indexed by r */
  const int          warps  = (int)c->plan.block / kWarp;
  const unsigned int blocks = (unsigned int)((c->strips + warps - 1) / warps);
  const size_t       shmem  = (size_t)warps * M * H * sizeof(PetscScalar);

  if (shmem > 48 * 1024) { /* e.g. 1024 threads with M = 16: ask for more than the default dynamic shared memory */
    if (c->packed) (void)cudaFuncSetAttribute(cmrs_mult_padded<H, M, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    else (void)cudaFuncSetAttribute(cmrs_mult_padded<H, M, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
  }
  if (c->packed) cmrs_mult_padded<H, M, true><<<blocks, (unsigned int)c->plan.block, shmem, stream>>>((int)c->strips, (int)c->m, (int)c->height, c->d_sp, c->d_col, c->d_ris, c->d_val, x, y, z);
  else cmrs_mult_padded<H, M, false><<<blocks, (unsigned int)c->plan.block, shmem, stream>>>((int)c->strips, (int)c->m, (int)c->height, c->d_sp, c->d_col, c->d_ris, c->d_val, x, y, z);
}
} // namespace

PetscErrorCode MatCMRSCUDALaunchMult(void *s, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  cudaStream_t stream = (cudaStream_t)s;

  PetscFunctionBegin;
  if (!c->strips) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->M) {
    PetscCheck(c->height <= CMRS_MAX_HEIGHT, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported CMRS height %" PetscInt_FMT, c->height);
    switch (c->M) {
    case 2: launch_mult_padded<2>(c, stream, x, y, z); break;
    case 4: launch_mult_padded<4>(c, stream, x, y, z); break;
    case 8: launch_mult_padded<8>(c, stream, x, y, z); break;
    case 16: launch_mult_padded<16>(c, stream, x, y, z); break;
    default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported CMRS buffer columns %" PetscInt_FMT, c->M);
    }
    PetscCall(MatGPUMatCheckLaunch(stream));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  switch (c->height) {
  case 1: launch_mult<1>(c, stream, x, y, z); break;
  case 2: launch_mult<2>(c, stream, x, y, z); break;
  case 3: launch_mult<3>(c, stream, x, y, z); break;
  case 4: launch_mult<4>(c, stream, x, y, z); break;
  case 5: launch_mult<5>(c, stream, x, y, z); break;
  case 6: launch_mult<6>(c, stream, x, y, z); break;
  case 7: launch_mult<7>(c, stream, x, y, z); break;
  case 8: launch_mult<8>(c, stream, x, y, z); break;
  case 9: launch_mult<9>(c, stream, x, y, z); break;
  case 10: launch_mult<10>(c, stream, x, y, z); break;
  case 11: launch_mult<11>(c, stream, x, y, z); break;
  case 12: launch_mult<12>(c, stream, x, y, z); break;
  case 13: launch_mult<13>(c, stream, x, y, z); break;
  case 14: launch_mult<14>(c, stream, x, y, z); break;
  case 15: launch_mult<15>(c, stream, x, y, z); break;
  case 16: launch_mult<16>(c, stream, x, y, z); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_PLIB, "Unsupported CMRS height %" PetscInt_FMT, c->height);
  }
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSCUDALaunchMultTranspose(void *s, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, PetscScalar *z)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int blocks = (unsigned int)((c->strips + 7) / 8);

  PetscFunctionBegin;
  if (!c->strips) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->packed) cmrs_mult_transpose<true><<<blocks, 256, 0, stream>>>((int)c->strips, (int)c->m, (int)c->height, c->M > 0, c->d_sp, c->d_col, c->d_ris, c->d_val, x, z);
  else cmrs_mult_transpose<false><<<blocks, 256, 0, stream>>>((int)c->strips, (int)c->m, (int)c->height, c->M > 0, c->d_sp, c->d_col, c->d_ris, c->d_val, x, z);
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatCMRSCUDALaunchMultBlock(void *s, const Mat_SeqCMRSCUDA *c, PetscInt nv, const PetscScalar *x, PetscInt ldx, PetscScalar *z, PetscInt ldz)
{
  cudaStream_t       stream = (cudaStream_t)s;
  const unsigned int blocks = (unsigned int)((c->m + 255) / 256);

  PetscFunctionBegin;
  PetscCheck(!c->sorted && !c->M, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The block kernel needs unsorted strips without padding");
  if (!c->m) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatLaunchBlockWidth(nv, stream, [&](auto w) {
    constexpr int NV = decltype(w)::value;
    if (c->packed) cmrs_mult_block<NV, true><<<blocks, 256, 0, stream>>>((int)c->m, (int)c->height, c->d_sp, c->d_col, c->d_ris, c->d_val, x, (int)ldx, z, (int)ldz);
    else cmrs_mult_block<NV, false><<<blocks, 256, 0, stream>>>((int)c->m, (int)c->height, c->d_sp, c->d_col, c->d_ris, c->d_val, x, (int)ldx, z, (int)ldz);
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}
