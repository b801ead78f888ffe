/*
  Where the triangular solves of a factor of our seq types run when the user named no solver type
  (MatGetFactor_GPUMat_Default, gpumat_factor.c): on the device (cuSPARSE, through aijcusparse's factor) or on the
  host (SeqAIJ's factor, the vectors moved to the host and back at each solve).

  A triangular solve proceeds by level sets (rows whose dependencies are all solved): the device pays a
  synchronisation per level and little per nonzero, the host pays per row and per nonzero, and for moving two
  vectors. The rule predicts both times of one forward and backward solve from the level sets of the matrix's
  triangles (the pattern of the ILU(0)/ICC(0) factors in the natural ordering, the one cuSPARSE's factor uses),
  its rows and nonzeros, with linear models fitted on H100 measurements of ILU(0) solves with device vectors
  (examples/bench_trisolve.c; docs/performance.md, "Triangular solves: device or host"), and takes the faster.
  ILU(k > 0), LU and Cholesky (whose fill the pattern does not show) stay on the device, as aijcusparse has them.

  A host choice made here is a decision, not a fallback: the event GPUMatHostFallback does not count it.
*/
#include <petscgpumat/private/gpumatimpl.h>

const char *const MatGPUMatTriSolveModes[] = {"auto", "device", "host", "MatGPUMatTriSolveMode", "MATGPUMAT_TRISOLVE_", NULL};

MatGPUMatTriSolveMode MatGPUMatTriSolve        = MATGPUMAT_TRISOLVE_AUTO;
PetscReal             MatGPUMatTriSolveLevelUs = 1.54; /* device microseconds per level set (H100, CUDA 13 cuSPARSE SpSV) */

/* The fitted models, in microseconds per forward and backward solve (H100 and its host, 2026-11-25; fitted on 47
   Laplacians, checked on 23 real matrices: the faster side for 65 of the 70, time 1.011x the better side's on
   average, 1.42x at worst: a 5 k-row power grid solved in 91 us on the host against 64 us on the device) */
#define TRISOLVE_DEVICE_US(levels, nnz) (13.0 + MatGPUMatTriSolveLevelUs * (levels) + 3.2e-5 * (nnz))
#define TRISOLVE_HOST_US(rows, nnz)     (8.3e-3 * (rows) + 7.9e-4 * (nnz))

/*
  The level sets of A's triangles, in one pass over the CSR: a forward solve's level of row i is one more than the
  highest level among the rows its lower entries refer to (pulled from rows already done); the backward solve's
  number of levels is the longest chain of upper entries, which the pass also finds going forward: each row
  pushes (its longest chain ending there) + 1 to the rows its upper entries refer to. The pass stops once
  lower + upper exceeds `cap` (both are then lower bounds).
*/
static PetscErrorCode MatGPUMatTriangularLevels_Private(Mat A, PetscInt cap, PetscInt *lower, PetscInt *upper)
{
  const PetscInt *ai, *aj;
  PetscInt        n, *level, *chain, lmax = 0, umax = 0;
  PetscBool       done, set, sym = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCheck(A->rmap->n == A->cmap->n, PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Triangular levels of a square matrix, not %" PetscInt_FMT " x %" PetscInt_FMT, A->rmap->n, A->cmap->n);
  PetscCall(MatIsStructurallySymmetricKnown(A, &set, &sym));
  if (!(set && sym)) PetscCall(MatIsSymmetricKnown(A, &set, &sym));
  sym = (PetscBool)(set && sym);
  PetscCall(MatGetRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "Triangular levels need the CSR structure of %s", ((PetscObject)A)->type_name);
  PetscCall(PetscMalloc1(n, &level));
  PetscCall(PetscCalloc1(n, &chain)); /* rows on the longest chain of upper entries ending before row i */
  if (sym) { /* the upper triangle is the lower one's transpose: the backward solve's chains are the forward one's reversed (half the pass) */
    for (PetscInt i = 0; i < n && 2 * lmax <= cap; i++) {
      PetscInt l = 0;

      for (PetscInt k = ai[i]; k < ai[i + 1] && aj[k] < i; k++) l = PetscMax(l, level[aj[k]]);
      level[i] = l + 1;
      lmax     = PetscMax(lmax, level[i]);
    }
    umax = lmax;
  }
  for (PetscInt i = 0; i < n && !sym && lmax + umax <= cap; i++) {
    const PetscInt end = ai[i + 1];
    PetscInt       l = 0, k = ai[i], c = chain[i] + 1;

    for (; k < end && aj[k] < i; k++) l = PetscMax(l, level[aj[k]]); /* columns are sorted */
    level[i] = l + 1;
    lmax     = PetscMax(lmax, level[i]);
    umax     = PetscMax(umax, c);
    if (k < end && aj[k] == i) k++; /* the diagonal */
    for (; k < end; k++) chain[aj[k]] = PetscMax(chain[aj[k]], c);
  }
  PetscCall(PetscFree(level));
  PetscCall(PetscFree(chain));
  PetscCall(MatRestoreRowIJ(A, 0, PETSC_FALSE, PETSC_FALSE, &n, &ai, &aj, &done));
  *lower = lmax;
  *upper = umax;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatGPUMatGetTriangularLevels - The number of level sets of the lower and of the upper triangle of a square
  sequential AIJ matrix's nonzero pattern: the depth of the triangular solves with its ILU(0) or ICC(0) factors in
  the natural ordering

  Not Collective

  Input Parameter:
. A - a `MATSEQAIJ` matrix or a subclass (`MATSEQCMRSCUDA`, `MATSEQELLRCUDA`, `MATSEQRGCSRCUDA`, ...), assembled

  Output Parameters:
+ lower - level sets of the lower triangle: a row is in the level after the highest of the rows its entries left
          of the diagonal refer to (a forward solve needs that many steps)
- upper - the same for the upper triangle, from the last row up (the backward solve)

  Level: advanced

  Note:
  One pass over the host CSR (over its lower triangle only where A is known to be structurally symmetric, or
  symmetric: `MatSetOption()`). The level sets bound the parallelism of a triangular solve: a
  tridiagonal matrix has as many as rows, the 2-D 5-point Laplacian on an n x n grid 2n - 1.

.seealso: `MatGetFactor()`, `MATSOLVERCUSPARSE`, `MATSEQCMRSCUDA`
@*/
PetscErrorCode MatGPUMatGetTriangularLevels(Mat A, PetscInt *lower, PetscInt *upper)
{
  PetscInt l, u;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscCall(MatGPUMatTriangularLevels_Private(A, PETSC_INT_MAX, &l, &u));
  if (lower) *lower = l;
  if (upper) *upper = u;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The level sets of A's triangles, counted once per nonzero pattern: a PC that factors asks twice (PCSetFromOptions()
  gets a factor to learn its ordering, PCSetUp() the one it keeps), and each pass reads the whole CSR (lap3d27 100^3:
  ~17 ms). A count stopped at a cap serves a later question with a cap no larger.
*/
static PetscErrorCode MatGPUMatTriangularLevelsCached_Private(Mat A, PetscInt cap, PetscInt *lower, PetscInt *upper)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  if (!(g->levels_counted && g->levels_nonzerostate == A->nonzerostate && (cap <= g->levels_cap || g->levels[0] + g->levels[1] <= g->levels_cap))) {
    PetscCall(MatGPUMatTriangularLevels_Private(A, cap, &g->levels[0], &g->levels[1]));
    g->levels_counted      = PETSC_TRUE;
    g->levels_nonzerostate = A->nonzerostate;
    g->levels_cap          = cap;
  }
  *lower = g->levels[0];
  *upper = g->levels[1];
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Whether the factor of `ftype` of A (assembled or not) solves on the device; `why` says why, for PetscInfo and
  MatView. Called only where a device is usable and A is not bound to the CPU.
*/
PetscErrorCode MatGPUMatTriSolveOnDevice(Mat A, MatFactorType ftype, PetscBool *device, char why[], size_t len)
{
  PetscInt lower = 0, upper = 0;

  PetscFunctionBegin;
  *device = PETSC_TRUE;
  if (MatGPUMatTriSolve != MATGPUMAT_TRISOLVE_AUTO) {
    *device = (PetscBool)(MatGPUMatTriSolve == MATGPUMAT_TRISOLVE_DEVICE);
    PetscCall(PetscSNPrintf(why, len, "-mat_gpumat_trisolve %s", MatGPUMatTriSolveModes[MatGPUMatTriSolve]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (ftype != MAT_FACTOR_ILU && ftype != MAT_FACTOR_ICC) {
    PetscCall(PetscSNPrintf(why, len, "%s factors stay on the device", MatFactorTypes[ftype]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (!A->assembled) { /* PCFactorSetDefaultOrdering() asks an unassembled matrix for a factor only to learn its ordering */
    PetscCall(PetscSNPrintf(why, len, "not assembled yet"));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  {
    const PetscInt *ai;
    PetscReal       nnz, tdev, thost, cap;

    PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
    nnz   = (PetscReal)(A->rmap->n ? ai[A->rmap->n] : 0);
    thost = TRISOLVE_HOST_US((PetscReal)A->rmap->n, nnz);
    /* the most level sets with which the device can still win: the pass stops beyond them (a host choice costs less) */
    cap = (thost - TRISOLVE_DEVICE_US(0.0, nnz)) / MatGPUMatTriSolveLevelUs;
    PetscCall(MatGPUMatTriangularLevelsCached_Private(A, (PetscInt)PetscMin(PetscMax(cap, 0.0), (PetscReal)PETSC_INT_MAX / 2), &lower, &upper));
    tdev    = TRISOLVE_DEVICE_US((PetscReal)(lower + upper), nnz);
    *device = (PetscBool)(tdev <= thost);
    PetscCall(PetscSNPrintf(why, len, "a solve predicted %.3g us there against %s%.3g us on the %s (%s%" PetscInt_FMT " level sets, %.0f nonzeros)", (double)(*device ? tdev : thost), *device ? "" : "at least ", (double)(*device ? thost : tdev), *device ? "host" : "device", *device ? "" : "at least ", lower + upper, (double)nnz));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
