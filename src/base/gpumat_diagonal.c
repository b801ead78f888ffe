/*
  MatGetDiagonal() of the seq types into a vector on the device.

  SeqAIJ's op writes the vector's host array, which leaves a CUDA vector valid only on the host: PCJACOBI's
  VecReciprocal() then ran on the host and its first PCApply() copied the vector back, and so did every level of GAMG
  (its smoothers' Jacobi and its prolongator smoothing) and of PCMG with Chebyshev/Jacobi smoothers.
  - Where the format's layout, built for the current pattern, holds the values in the CSR's order on the device (its
    valuearray: CMRS, CSR) the diagonal is gathered there: the positions of the diagonal entries, found on the host
    once per nonzero pattern (on host threads for large matrices) and kept on the device, and one gather kernel per
    call. On KSP ex45's GAMG at 129^3 (one H200) the host path below took ~12 ms a call at 2.1 M rows, three calls
    and more per set-up and solve, against aijcusparse's device kernel.
  - Where the layout keeps the values in an order of its own but can find its diagonal (its diagonal op: ELLPACK-R and
    RgCSR, whose rows keep their column indices), the format reads it from the layout in one kernel: no positions.
  - Otherwise from the host master copy, which our types keep current, into a host buffer that is uploaded into the
    vector's device array: m values, the bytes aijcusparse's kernel writes, and the vector stays on the device.
  Host vectors (every vector where no device is usable) and a matrix bound to the CPU: SeqAIJ's op.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>

typedef struct {
  const PetscInt *ai, *aj;
  PetscInt        n, *pos;
} DiagonalRows;

/* pos[i]: the entry of column i in row i (columns sorted), -1 where the row has none */
static void FindDiagonalRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  DiagonalRows *c = (DiagonalRows *)arg;

  (void)t;
  for (PetscInt i = begin; i < end; i++) {
    const PetscInt k = MatGPUMatLowerBound(c->aj, c->ai[i], c->ai[i + 1], i);

    c->pos[i] = i < c->n && k < c->ai[i + 1] && c->aj[k] == i ? k : -1;
  }
}

/* g->d_diagpos for A's current pattern */
static PetscErrorCode MatGPUMatDiagonalPositions(Mat A, void *stream)
{
  Mat_GPUMat    *g = (Mat_GPUMat *)A->spptr;
  DiagonalRows   c;
  PetscInt       m = A->rmap->n;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  if (g->d_diagpos && g->diagpos_nonzerostate == A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatDeviceFree((void **)&g->d_diagpos));
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &c.ai, &c.aj, NULL, NULL));
  c.n = A->cmap->n;
  PetscCall(PetscMalloc1(m, &c.pos));
  PetscCall(MatGPUMatHostForRows(m, c.ai, MatGPUMatHostThreadCount(c.ai[m]), FindDiagonalRows, &c));
  ierr = MatGPUMatDeviceMalloc(A, (size_t)m * sizeof(PetscInt), (void **)&g->d_diagpos);
  if (!ierr) ierr = MatGPUMatCopyToDevice(g->d_diagpos, c.pos, (size_t)m * sizeof(PetscInt), stream);
  PetscCall(PetscFree(c.pos));
  if (ierr) PetscCall(MatGPUMatDeviceFree((void **)&g->d_diagpos));
  PetscCall(ierr);
  g->diagpos_nonzerostate = A->nonzerostate;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatView()'s words for where a MatGetDiagonal() into a device vector read the diagonal */
static const char DiagonalFromPositions[] = "gathered on the device from the layout's values in CSR order";
static const char DiagonalFromLayout[]    = "read on the device from the layout's rows";
static const char DiagonalFromHost[]      = "from the host master copy, uploaded";

/* The diagonal read on the device from the built layout, where it can give it; *done false: it cannot */
static PetscErrorCode MatGPUMatGetDiagonalFromLayout(Mat A, Vec v, PetscBool *done)
{
  Mat_GPUMat  *g = (Mat_GPUMat *)A->spptr;
  PetscScalar *d_val = NULL, *d_v;
  PetscCount   nval  = 0;
  PetscBool    own   = PETSC_FALSE;
  void        *stream;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  /* only a layout built for this pattern: a matrix that is not multiplied (GAMG's graph) is not built for its diagonal
     (15 ms for the graph at 129^3) */
  if ((!g->format->valuearray && !g->format->diagonal) || g->compress_rows || !A->rmap->n || !g->built || g->rebuild || g->nonzerostate != A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatSyncDevice(A)); /* the values current on the device: at most a refresh, which the next product needs too */
  if (!g->built) PetscFunctionReturn(PETSC_SUCCESS);
  if (g->cai) PetscFunctionReturn(PETSC_SUCCESS); /* its device rows are the nonempty ones */
  if (g->format->diagonal) PetscCall(g->format->diagonal(A, NULL, NULL, &own));
  if (!own && g->format->valuearray) PetscCall(g->format->valuearray(A, &d_val, &nval));
  if (!own && (!d_val || nval != g->nnz)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatGetStream(&stream));
  if (!own) PetscCall(MatGPUMatDiagonalPositions(A, stream));
  PetscCall(VecCUDAGetArrayWrite(v, &d_v));
  PetscCall(PetscLogGpuTimeBegin());
  if (own) PetscCall(g->format->diagonal(A, stream, d_v, &own));
  else PetscCall(MatGPUMatLaunchGatherOrZero(stream, A->rmap->n, g->d_diagpos, d_val, d_v));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(VecCUDARestoreArrayWrite(v, &d_v));
  g->diagonal_from = own ? DiagonalFromLayout : DiagonalFromPositions;
  *done            = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatView()'s line on where MatGetDiagonal() into a device vector takes the diagonal from */
PetscErrorCode MatGPUMatDiagonalView(Mat A, PetscViewer viewer)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  if (g->compress_rows) PetscCall(PetscViewerASCIIPrintf(viewer, "MatGetDiagonal into device vectors: from the host master copy, uploaded (compressed rows)\n"));
  else if (g->format->valuearray || g->format->diagonal) PetscCall(PetscViewerASCIIPrintf(viewer, "MatGetDiagonal into device vectors: read on the device from the layout once it is built (from its rows, or from its values in CSR order at positions kept per pattern), else from the host master copy\n"));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "MatGetDiagonal into device vectors: from the host master copy, uploaded (the layout cannot give it)\n"));
  if (g->diagonal_from) PetscCall(PetscViewerASCIIPrintf(viewer, "the last MatGetDiagonal into a device vector: %s%s\n", g->diagonal_from, g->diagonal_from == DiagonalFromPositions && g->d_diagpos ? " (positions kept)" : ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGetDiagonal_GPUMat(Mat A, Vec v)
{
  Mat_GPUMat  *g = (Mat_GPUMat *)A->spptr;
  PetscBool    ondevice, done;
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
  PetscCall(MatGPUMatGetDiagonalFromLayout(A, v, &done));
  if (done) PetscFunctionReturn(PETSC_SUCCESS);
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
  g->diagonal_from = DiagonalFromHost;
  PetscFunctionReturn(PETSC_SUCCESS);
}
