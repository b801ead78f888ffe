/*
  Transposed products of a rectangular matrix (prolongators and restrictions, MPI off-diagonal blocks) through its
  transpose formed on the device from the matrix's device CSR (the format's own entries copied back in CSR order, or
  its shadow's arrays where it has one; else, and for an off-diagonal block, whose device offsets are those of its
  nonempty rows, the entries from the host: no shadow is made for it): CUB's stable radix sort of the entries by
  column gives the permutation into the transpose's CSR order, Thrust's binary searches its row offsets and column
  indices, a gather its values (again, through the permutation kept, when only the values change). The product is a
  forward CSR product of the transpose in which a fixed group of lanes sums each row in a fixed order: the same bits
  at every run, which the format's transposed kernels (atomics into the shorter vector) do not give. Made at the first
  transposed product, formed again when the values change, made anew for a new nonzero pattern, freed with the matrix
  (not with the format's device copy, which forming the transpose may rebuild).

  Why not cuSPARSE (cusparseCsr2cscEx2 and cusparseSpMV), tried first: in PCMG's set-up the first restriction is the
  process's first cuSPARSE call, and forming the 2.1 M-row interpolation's transpose took 36-42 ms of host time there
  (H100), against 11-12 ms for a shadow's SeqAIJ assembly plus 6-8 ms for cuSPARSE's transpose in aijcusparse.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscgpumat/private/gpumatcuda.h>
#include <cub/device/device_radix_sort.cuh>
#include <thrust/binary_search.h>
#include <thrust/gather.h>
#include <thrust/sequence.h>
#include <thrust/transform.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

struct _MatGPUMatDeviceTranspose {
  PetscInt         rows, cols;  /* of the transpose: A's columns and rows */
  PetscCount       nnz;
  void            *mem;         /* one allocation holding the four arrays below */
  PetscInt        *d_ti, *d_tj; /* the transpose's CSR: [rows + 1], [nnz] */
  PetscScalar     *d_ta;        /* [nnz] */
  PetscInt        *d_perm;      /* [nnz]: entry k of the transpose is entry d_perm[k] of A */
  PetscInt         lanes;       /* per row of the transpose in the product */
  const char      *source;      /* where the last forming read A's entries (MatView) */
  PetscBool        formed;
  PetscObjectState state, nonzerostate; /* A's when last formed */
  /* while forming: one allocation from the stream's pool (neither it nor its release waits for the device), held here
     so that an error leaves nothing behind (MatGPUMatDeviceTransposeDestroy() frees it) */
  void        *scratch;
  PetscInt    *d_ai, *d_aj; /* A's device CSR */
  PetscScalar *d_aa;
  PetscInt    *seq, *sorted; /* 0, 1, ..., nnz - 1 (the sort's values); the sorted column indices */
  void        *sort;        /* CUB's temporary storage */
};

/* Carves consecutive pieces of `bytes` each, 256-byte aligned, out of a base pointer (NULL: only adds up the size) */
static void *MatGPUMatCarve(char *base, size_t *offset, size_t bytes)
{
  void *p = base ? base + *offset : NULL;

  *offset += (bytes + 255) / 256 * 256;
  return bytes ? p : NULL;
}

namespace
{
constexpr int kBlock = 256;

/* z[r] = (y[r] +) the sum of row r of the transpose: L lanes per row, each lane's terms in order, then the lanes
   halving; every lane of the grid reaches the shuffles. Each product and sum rounded apart (no FMA), as the host
   emulation (tests/reference/transpose_emulate.c) rounds them */
template <int L>
__global__ void __launch_bounds__(kBlock) transpose_mult(PetscInt rows, const PetscInt *__restrict__ ti, const PetscInt *__restrict__ tj, const PetscScalar *__restrict__ ta, const PetscScalar *__restrict__ x, const PetscScalar *y, PetscScalar *z)
{
  const PetscInt r    = ((PetscInt)blockIdx.x * kBlock + threadIdx.x) / L;
  const int      lane = threadIdx.x % L;
  PetscScalar    sum  = 0;

  if (r < rows)
    for (PetscInt k = ti[r] + lane; k < ti[r + 1]; k += L) sum = MatGPUMatAddRN(sum, MatGPUMatMulRN(ta[k], x[tj[k]]));
#pragma unroll
  for (int offset = L / 2; offset > 0; offset /= 2) sum = MatGPUMatAddRN(sum, __shfl_down_sync(0xffffffffu, sum, offset, L));
  if (r < rows && lane == 0) z[r] = y ? MatGPUMatAddRN(y[r], sum) : sum;
}
} // namespace

PetscErrorCode MatGPUMatDeviceTransposeDestroy(MatGPUMatDeviceTranspose *t)
{
  PetscFunctionBegin;
  if (!*t) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatDeviceFree(&(*t)->scratch)); /* what an error left (cudaFree() takes pool memory too) */
  PetscCall(MatGPUMatDeviceFree(&(*t)->mem));
  PetscCall(PetscFree(*t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The scratch of one forming: A's CSR (its column indices, the sort's arrays and storage only for a new pattern) */
static PetscErrorCode MatGPUMatDeviceTransposeScratch_Private(Mat A, MatGPUMatDeviceTranspose t, PetscBool pattern, int bits, cudaStream_t stream)
{
  size_t      sortbytes = 0, bytes = 0;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFree(&t->scratch)); /* what an earlier forming's error left, if any */
  if (pattern) PetscCallCUDA(cub::DeviceRadixSort::SortPairs(nullptr, sortbytes, (const PetscInt *)NULL, (PetscInt *)NULL, (const PetscInt *)NULL, (PetscInt *)NULL, t->nnz, 0, bits, stream));
  for (int pass = 0; pass < 2; pass++) {
    char *base = (char *)t->scratch;

    bytes   = 0;
    t->d_ai = (PetscInt *)MatGPUMatCarve(base, &bytes, (size_t)(t->cols + 1) * sizeof(PetscInt));
    t->d_aa = (PetscScalar *)MatGPUMatCarve(base, &bytes, (size_t)t->nnz * sizeof(PetscScalar));
    t->d_aj = (PetscInt *)MatGPUMatCarve(base, &bytes, pattern ? (size_t)t->nnz * sizeof(PetscInt) : 0);
    t->seq  = (PetscInt *)MatGPUMatCarve(base, &bytes, pattern ? (size_t)t->nnz * sizeof(PetscInt) : 0);
    t->sorted = (PetscInt *)MatGPUMatCarve(base, &bytes, pattern ? (size_t)t->nnz * sizeof(PetscInt) : 0);
    t->sort = MatGPUMatCarve(base, &bytes, sortbytes);
    if (pass) break;
    PetscCall(MatGPUMatStreamMalloc(A, bytes, (void *)stream, &t->scratch));
  }
  t->sort = sortbytes ? t->sort : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

namespace
{
/* the row of A of each device row of a compressed A */
struct RowOfDeviceRow {
  const PetscInt *rows;
  __device__ PetscInt operator()(PetscInt k) const { return rows[k]; }
};
} // namespace

/* The permutation and structure of a new pattern, from A's device CSR in the scratch; rows: the row of A of each row
   of that CSR (a compressed A: its nonempty rows), or NULL (all rows) */
static PetscErrorCode MatGPUMatDeviceTransposeStructure_Private(MatGPUMatDeviceTranspose t, const PetscInt *rows, int bits, cudaStream_t stream)
{
  const auto policy = thrust::cuda::par_nosync.on(stream);
  size_t     bytes  = 0;

  PetscFunctionBegin;
  thrust::sequence(policy, t->seq, t->seq + t->nnz);
  PetscCallCUDA(cub::DeviceRadixSort::SortPairs(nullptr, bytes, t->d_aj, t->sorted, t->seq, t->d_perm, t->nnz, 0, bits, stream));
  PetscCallCUDA(cub::DeviceRadixSort::SortPairs(t->sort, bytes, t->d_aj, t->sorted, t->seq, t->d_perm, t->nnz, 0, bits, stream)); /* stable: rows ascend within a column */
  /* row offsets: where each column begins among the sorted ones; column indices: the row of each entry of A */
  thrust::lower_bound(policy, t->sorted, t->sorted + t->nnz, thrust::make_counting_iterator<PetscInt>(0), thrust::make_counting_iterator<PetscInt>(t->rows + 1), t->d_ti);
  thrust::upper_bound(policy, t->d_ai + 1, t->d_ai + 1 + t->cols, t->d_perm, t->d_perm + t->nnz, t->d_tj);
  if (rows) thrust::transform(policy, t->d_tj, t->d_tj + t->nnz, t->d_tj, RowOfDeviceRow{rows});
  PetscCallCUDA(cudaGetLastError());
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* t's transpose of A's current values, made (new pattern, first use) or formed again (new values) */
static PetscErrorCode MatGPUMatDeviceTransposeForm_Private(Mat A, MatGPUMatDeviceTranspose t, cudaStream_t stream)
{
  Mat_GPUMat      *g = (Mat_GPUMat *)A->spptr;
  PetscObjectState state;
  MatInfo          info;
  PetscBool        pattern = (PetscBool)(!t->formed || t->nonzerostate != A->nonzerostate), compressed, held;
  int              bits    = 1;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  if (!pattern && state == t->state) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscLogEventBegin(MAT_GPUMatTranspose, A, 0, 0, 0));
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info));
  if (g->compress_rows) PetscCall(MatGPUMatSyncDevice(A)); /* whether the rows are compressed is decided by the build */
  compressed = (PetscBool)(g->cai != NULL); /* its device offsets g->d_cai; g->d_rows is NULL where no row has an entry */
  if (pattern) {
    size_t bytes = 0;

    PetscCall(MatGPUMatDeviceFree(&t->mem));
    t->formed = PETSC_FALSE;
    t->rows   = A->cmap->n;
    t->cols   = compressed ? g->mdev : A->rmap->n; /* rows of A's device CSR */
    t->nnz    = (PetscCount)info.nz_used;
    t->lanes  = MatGPUMatTransposeLanes(t->rows, t->nnz);
    for (int pass = 0; pass < 2; pass++) {
      char *base = (char *)t->mem;

      bytes     = 0;
      t->d_ti   = (PetscInt *)MatGPUMatCarve(base, &bytes, (size_t)(t->rows + 1) * sizeof(PetscInt));
      t->d_ta   = (PetscScalar *)MatGPUMatCarve(base, &bytes, (size_t)t->nnz * sizeof(PetscScalar));
      t->d_tj   = (PetscInt *)MatGPUMatCarve(base, &bytes, (size_t)t->nnz * sizeof(PetscInt));
      t->d_perm = (PetscInt *)MatGPUMatCarve(base, &bytes, (size_t)t->nnz * sizeof(PetscInt));
      if (!pass) PetscCall(MatGPUMatDeviceMalloc(A, bytes, &t->mem));
    }
  }
  PetscCheck((PetscCount)info.nz_used == t->nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The same nonzero state with %" PetscCount_FMT " entries, not %" PetscCount_FMT, (PetscCount)info.nz_used, t->nnz);
  while (bits < 8 * (int)sizeof(PetscInt) - 1 && ((PetscInt)1 << bits) <= t->rows) bits++; /* the column indices' significant bits */
  PetscCall(MatGPUMatDeviceTransposeScratch_Private(A, t, (PetscBool)(pattern && t->nnz), bits, stream));
  held = PETSC_FALSE;
  if (!compressed) PetscCall(MatGPUMatCopyHeldDeviceCSR(A, (void *)stream, t->d_ai, t->d_aj, t->d_aa, &held)); /* the format's entries or the shadow's */
  if (held) t->source = g->csr.mat ? "the device CSR of its aijcusparse shadow" : "its layout's entries, copied back on the device";
  else {
    /* from the host: an MPI off-diagonal block (its layout holds only the nonempty rows, whose device offsets serve),
       or a matrix whose layout does not give its entries back. A shadow would assemble all the rows on the host first
       (7.5 ms for the empty off-diagonal block of a 1 M-row interpolation: KSP ex45, 2 ranks) */
    const PetscInt *ai, *aj;
    PetscScalar    *aa;
    PetscMemType    mtype;

    t->source = compressed ? "its host entries and the device offsets of its nonempty rows" : "its host entries (its layout does not give them back)";
    PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, &aa, &mtype));
    PetscCheck(PetscMemTypeHost(mtype), PETSC_COMM_SELF, PETSC_ERR_PLIB, "Expected the host CSR arrays");
    if (pattern) {
      if (compressed) PetscCall(MatGPUMatCopyOnStream(t->d_ai, g->d_cai, (size_t)(t->cols + 1) * sizeof(PetscInt), stream));
      else PetscCall(MatGPUMatCopyToDevice(t->d_ai, ai, (size_t)(t->cols + 1) * sizeof(PetscInt), stream));
      PetscCall(MatGPUMatCopyToDevice(t->d_aj, aj, (size_t)t->nnz * sizeof(PetscInt), stream));
    }
    PetscCall(MatGPUMatCopyToDevice(t->d_aa, aa, (size_t)t->nnz * sizeof(PetscScalar), stream));
  }
  if (pattern && t->nnz) PetscCall(MatGPUMatDeviceTransposeStructure_Private(t, compressed ? g->d_rows : NULL, bits, stream));
  if (pattern && !t->nnz) PetscCallCUDA(cudaMemsetAsync(t->d_ti, 0, (size_t)(t->rows + 1) * sizeof(PetscInt), stream));
  if (t->nnz) {
    thrust::gather(thrust::cuda::par_nosync.on(stream), t->d_perm, t->d_perm + t->nnz, t->d_aa, t->d_ta);
    PetscCallCUDA(cudaGetLastError());
  }
  if (t->scratch) PetscCallCUDA(cudaFreeAsync(t->scratch, stream)); /* in stream order, after its readers */
  t->scratch = NULL;
  PetscCall(PetscLogEventEnd(MAT_GPUMatTranspose, A, 0, 0, 0));
  t->nonzerostate = A->nonzerostate;
  t->state        = state;
  t->formed       = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = A^T x (+ y) with device arrays x [A's rows], y, z [A's columns] (y NULL: none; y may be z) on `stream`, through
  *t (made here at the first call); *nnz: the entries multiplied (flop counts)
*/
PetscErrorCode MatGPUMatDeviceTransposeMult(Mat A, MatGPUMatDeviceTranspose *t, void *s, const PetscScalar *x, const PetscScalar *y, PetscScalar *z, PetscCount *nnz)
{
  cudaStream_t             stream = (cudaStream_t)s;
  MatGPUMatDeviceTranspose dt;
  unsigned int             grid;

  PetscFunctionBegin;
  if (!*t) PetscCall(PetscNew(t));
  dt = *t;
  PetscCall(MatGPUMatDeviceTransposeForm_Private(A, dt, stream));
  *nnz = dt->nnz;
  if (!dt->rows) PetscFunctionReturn(PETSC_SUCCESS);
  grid = (unsigned int)(((size_t)dt->rows * (size_t)dt->lanes + kBlock - 1) / kBlock);
  PetscCall(MatGPUMatWithConstant<4, 8, 32>(dt->lanes, "lanes per row of a transpose", [&](auto L) { transpose_mult<decltype(L)::value><<<grid, kBlock, 0, stream>>>(dt->rows, dt->d_ti, dt->d_tj, dt->d_ta, x, y, z); }));
  PetscCall(MatGPUMatCheckLaunch(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Where the transpose's last forming read A's entries (MatView) */
const char *MatGPUMatDeviceTransposeSource(MatGPUMatDeviceTranspose t)
{
  return t && t->source ? t->source : "nothing yet";
}

/* Device bytes the transpose holds (MatView) */
size_t MatGPUMatDeviceTransposeBytes(MatGPUMatDeviceTranspose t)
{
  return t ? (size_t)(t->rows + 1) * sizeof(PetscInt) + (size_t)t->nnz * (2 * sizeof(PetscInt) + sizeof(PetscScalar)) : 0;
}
