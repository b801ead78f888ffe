/*
  Y += a X (MatAXPY, MatAYPX) on our seq types where X is host AIJ with a pattern inside Y's. GAMG needs it on
  every level: the prolongator smoothing (agg.c: MatAYPX(A P0 D^-1, alpha, P0, SUBSET_NONZERO_PATTERN)) and the
  graph's symmetrization (MatCreateGraph: MatAXPY(G, 1, G^T, DIFFERENT_NONZERO_PATTERN) unless G is known to be
  structurally symmetric). SeqAIJ answers both with a MatSetValues() per row (MatAXPY_Basic), the second into a new
  matrix. Here, as aijcusparse does on the device, equal patterns are found whatever the flag says and take the
  BLAS axpy; a pattern inside Y's is added row by row with a merge of the sorted columns. Either way Y keeps its
  pattern, so its device copy gets a value refresh (on the GPU for every format), not a rebuild. Anything else
  (X not host AIJ, or entries outside Y's pattern) is SeqAIJ's. From 2^20 entries on, the pattern checks, the merge
  and the axpy run on host threads, by ranges of rows (gpumat_host_values.c). The cuSPARSE results of our products
  have this slot too, so that MatAXPY() reaches it with an X of ours: they go to MatAXPY_GPUMatProductResult().
*/
#include <petscgpumat/private/gpumatimpl.h>

/* whether every entry of X in rows [begin, end) has a place in Y (both assembled: sorted columns in each row) */
static PetscBool MatGPUMatPatternInside(PetscInt begin, PetscInt end, const PetscInt *xi, const PetscInt *xj, const PetscInt *yi, const PetscInt *yj)
{
  for (PetscInt i = begin; i < end; i++) {
    PetscInt ky = yi[i];

    for (PetscInt kx = xi[i]; kx < xi[i + 1]; kx++, ky++) {
      while (ky < yi[i + 1] && yj[ky] < xj[kx]) ky++;
      if (ky == yi[i + 1] || yj[ky] != xj[kx]) return PETSC_FALSE;
    }
  }
  return PETSC_TRUE;
}

/* The row loops of MatAXPY(), over ranges of rows on host threads (MatGPUMatHostForRows()) */
typedef struct {
  const PetscInt    *xi, *xj, *yi, *yj;
  const PetscScalar *xv;
  PetscScalar       *yv, a;
  PetscBool          ok[MATGPUMAT_HOST_THREADS_MAX]; /* per range: the property holds there */
} AXPYRows;

static void SameColumnsRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  AXPYRows *c = (AXPYRows *)arg;

  c->ok[t] = (PetscBool)!memcmp(c->xj + c->xi[begin], c->yj + c->yi[begin], (size_t)(c->xi[end] - c->xi[begin]) * sizeof(PetscInt));
}

static void InsideRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  AXPYRows *c = (AXPYRows *)arg;

  c->ok[t] = MatGPUMatPatternInside(begin, end, c->xi, c->xj, c->yi, c->yj);
}

static void MergeRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  AXPYRows *c = (AXPYRows *)arg;

  (void)t;
  for (PetscInt i = begin; i < end; i++) {
    PetscInt ky = c->yi[i];

    for (PetscInt kx = c->xi[i]; kx < c->xi[i + 1]; kx++, ky++) {
      while (c->yj[ky] < c->xj[kx]) ky++;
      c->yv[ky] += c->a * c->xv[kx];
    }
  }
}

/* a loop, not BLAS by range: a threaded BLAS would start its own threads inside each (rounding as BLAS's to the last
   bit only where the compiler contracts to the same fused multiply-adds) */
static void SameAXPYRows(void *arg, PetscInt t, PetscInt begin, PetscInt end)
{
  AXPYRows *c = (AXPYRows *)arg;

  (void)t;
  for (PetscInt k = c->yi[begin]; k < c->yi[end]; k++) c->yv[k] += c->a * c->xv[k];
}

/* Whether `fn` holds on every range of the m rows */
static PetscErrorCode MatGPUMatAllRows(PetscInt m, const PetscInt *ai, PetscInt nthreads, MatGPUMatRowsFn fn, AXPYRows *c, PetscBool *all)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatHostForRows(m, ai, nthreads, fn, c));
  *all = PETSC_TRUE;
  for (PetscInt t = 0; t < nthreads; t++) *all = (PetscBool)(*all && c->ok[t]);
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatAXPY_GPUMat(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  Mat_GPUMat     *g = NULL;
  const PetscInt *xi, *xj, *yi, *yj;
  PetscScalar    *xa, *ya;
  PetscMemType    xmt = PETSC_MEMTYPE_DEVICE, ymt = PETSC_MEMTYPE_DEVICE;
  PetscBool       aij = PETSC_FALSE, same = PETSC_FALSE, inside = PETSC_FALSE;
  PetscInt        m = Y->rmap->n, nthreads = 1;
  AXPYRows        c;

  PetscFunctionBegin;
  if (!MatGPUMatIsOurs(Y)) { /* Y is the cuSPARSE result of one of our products, which has this slot so that MatAXPY() comes here */
    PetscCall(MatAXPY_GPUMatProductResult(Y, a, X, str));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  g = (Mat_GPUMat *)Y->spptr;
  PetscCheck(g->hostops.axpy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No host MatAXPY to fall back to");
  if (str != SAME_NONZERO_PATTERN && X != Y && X->assembled && Y->assembled && X->rmap->n == m && X->cmap->n == Y->cmap->n) {
    PetscErrorCode (*prealloc)(Mat, PetscInt, const PetscInt[]) = NULL;

    PetscCall(PetscObjectQueryFunction((PetscObject)X, "MatSeqAIJSetPreallocation_C", &prealloc)); /* SeqAIJ or a subclass */
    if (prealloc) {
      PetscCall(MatSeqAIJGetCSRAndMemType(X, &xi, &xj, &xa, &xmt));
      PetscCall(MatSeqAIJGetCSRAndMemType(Y, &yi, &yj, &ya, &ymt));
      aij = (PetscBool)(!PetscMemTypeDevice(xmt) && !PetscMemTypeDevice(ymt));
    }
  }
  if (aij) { /* host threads from 2^20 entries on (gpumat_host_values.c) */
    c.xi     = xi;
    c.xj     = xj;
    c.yi     = yi;
    c.yj     = yj;
    c.a      = a;
    nthreads = MatGPUMatHostThreadCount(yi[m]); /* at most MATGPUMAT_HOST_THREADS_MAX */
    PetscCall(PetscArraycmp(xi, yi, m + 1, &same));
    if (same) PetscCall(MatGPUMatAllRows(m, yi, nthreads, SameColumnsRows, &c, &same));
    if (!same) PetscCall(MatGPUMatAllRows(m, yi, nthreads, InsideRows, &c, &inside));
  }
  if (same) { /* the same pattern, whatever the flag said: BLAS axpy of the value arrays */
    PetscCall(PetscInfo(Y, "MatAXPY: equal patterns, taken as SAME_NONZERO_PATTERN\n"));
    if (nthreads < 2) PetscCall((*g->hostops.axpy)(Y, a, X, SAME_NONZERO_PATTERN));
    else {
      PetscCall(MatSeqAIJGetArrayRead(X, &c.xv));
      PetscCall(MatSeqAIJGetArray(Y, &c.yv));
      PetscCall(MatGPUMatHostForRows(m, yi, nthreads, SameAXPYRows, &c));
      PetscCall(MatSeqAIJRestoreArray(Y, &c.yv));
      PetscCall(MatSeqAIJRestoreArrayRead(X, &c.xv));
      PetscCall(PetscLogFlops(2.0 * yi[m]));
    }
  } else if (inside) {
    PetscCall(PetscInfo(Y, "MatAXPY: X's pattern is inside Y's: row merge, Y keeps its pattern\n"));
    PetscCall(MatSeqAIJGetArrayRead(X, &c.xv));
    PetscCall(MatSeqAIJGetArray(Y, &c.yv)); /* marks Y's values changed: its device copy refreshes them */
    PetscCall(MatGPUMatHostForRows(m, yi, nthreads, MergeRows, &c));
    PetscCall(MatSeqAIJRestoreArray(Y, &c.yv));
    PetscCall(MatSeqAIJRestoreArrayRead(X, &c.xv));
    PetscCall(PetscLogFlops(2.0 * xi[m]));
  } else PetscCall((*g->hostops.axpy)(Y, a, X, str));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The preallocation of Y + a X in a new matrix of Y's type, for MatAXPY() with an X of another type (plain SeqAIJ,
  BAIJ...: PETSc then calls MatAXPY_Basic(), not Y's slot) and a pattern other than Y's: each row's union of columns,
  counted exactly as SeqAIJ's own MatAXPY() does. Without it PETSc's general preallocator reserves whole blocks where
  the block size is above 1 (52 entries for 28 in PETSc's mat test ex37 with -mat_block_size 2, where AIJ has 28).
  Composed as "MatAXPYGetPreallocation_C", which MatAXPY_Basic_Preallocate() looks for.
*/
PetscErrorCode MatAXPYGetPreallocation_GPUMat(Mat Y, Mat X, Mat *B)
{
  PetscInt        m = Y->rmap->n, n = Y->cmap->n, *nnz, *seen;
  const PetscInt *cols;
  PetscInt        ncols;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(m, &nnz));
  PetscCall(PetscCalloc1(n, &seen)); /* seen[c] = 1 + the last row that counted column c: no order of columns assumed */
  PetscCall(MatGetRowUpperTriangular(Y));
  PetscCall(MatGetRowUpperTriangular(X));
  for (PetscInt r = 0; r < m; r++) {
    Mat M[2] = {Y, X};

    nnz[r] = 0;
    for (PetscInt k = 0; k < 2; k++) {
      PetscCall(MatGetRow(M[k], r, &ncols, &cols, NULL));
      for (PetscInt j = 0; j < ncols; j++) {
        if (seen[cols[j]] == r + 1) continue;
        seen[cols[j]] = r + 1;
        nnz[r]++;
      }
      PetscCall(MatRestoreRow(M[k], r, &ncols, &cols, NULL));
    }
  }
  PetscCall(MatRestoreRowUpperTriangular(Y));
  PetscCall(MatRestoreRowUpperTriangular(X));
  PetscCall(MatCreate(PetscObjectComm((PetscObject)Y), B));
  PetscCall(MatSetLayouts(*B, Y->rmap, Y->cmap));
  PetscCall(MatSetType(*B, ((PetscObject)Y)->type_name));
  PetscCall(MatSetOption(*B, MAT_STRUCTURE_ONLY, Y->structure_only));
  PetscCall(MatSeqAIJSetPreallocation(*B, 0, nnz));
  PetscCall(PetscFree(seen));
  PetscCall(PetscFree(nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}
