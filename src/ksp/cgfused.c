/*
  KSPCGFUSED: PETSc's KSPCG, whose object it is (KSPCreate_CG() makes it; options, view, eigenvalue estimates, trust
  region and single reduction stay PETSc's), with one solve of its own: when the fast path applies (below), each
  iteration is the product, p'w, one update kernel (r, z and the next sums), the direction (which also takes x's step)
  and one host synchronisation (on several ranks two, each with one MPI reduction); else PETSc's own solve runs.
  Design and reasons: docs/design.md, "The fused CG".
*/
#include <petscgpuksp.h>
#include <petsc/private/kspimpl.h>
#include <petsc/private/pcimpl.h>
#include <petscdevice_cuda.h>
#include <petscgpumat/private/cgfusedimpl.h>
#include <petscgpumat/private/gpumatimpl.h>
#include <petscgpumat/private/petsccompat.h>

PETSC_EXTERN PetscErrorCode KSPCreate_CG(KSP); /* exported by libpetsc (itregis.c declares it), not in its headers */

typedef PetscErrorCode (*KSPCGFusedSetReal)(KSP, PetscReal);
typedef PetscErrorCode (*KSPCGFusedSetBool)(KSP, PetscBool);

/* What the wrapper adds to PETSc's KSP_CG (which it cannot see: cgimpl.h is not installed), composed on the KSP */
typedef struct {
  PetscErrorCode (*solve_cg)(KSP);   /* the solve KSPCG installed (KSPSolve_CG or its single-reduction variant) */
  PetscErrorCode (*destroy_cg)(KSP); /* KSPDestroy_CG */
  PetscErrorCode (*setfromoptions_cg)(KSP, PetscGPUMatOptionItems);
  PetscErrorCode (*view_cg)(KSP, PetscViewer);
  PetscErrorCode (*buildsolution_cg)(KSP, Vec, Vec *);
  KSPCGFusedSetReal set_radius, set_objective; /* KSPCG's, forwarded to after recording */
  KSPCGFusedSetBool use_single_reduction;
  PetscReal         radius, objective; /* as recorded: the fast path has neither trust region nor objective target */
  PetscBool         single_reduction;
  PetscBool         fast;      /* -ksp_cgfused_fast */
  PetscBool         lookahead; /* -ksp_cgfused_lookahead: one rank queues the next direction and product before its wait */
  PetscInt          solves;    /* KSPView: how many solves, and whether the last one was fused */
  PetscBool         last_fast;
  PetscBool         last_dot;   /* the last fused solve took p'Ap from the product's pass (MatGPUMatMultDot()) */
  PetscBool         last_ahead; /* the last fused solve queued each next direction and product before its wait */
  Vec               dinv; /* PCJacobi's inverse diagonal, kept so that no early return of a solve leaks it */
  KSPCGFusedWork    work;
  KSPCGFusedStep    step;     /* the last update's step of x ... */
  PetscBool         pending;  /* ... not yet applied to x: KSPBuildSolution() gives x + a p meanwhile */
  Vec               solution; /* where it does (a fused solve's monitors and convergence test) */
} KSP_CGFused;

static const char KSPCGFusedContext[] = "KSPCGFused_ctx";

static PetscErrorCode KSPCGFusedGetContext(KSP ksp, KSP_CGFused **f)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)ksp, KSPCGFusedContext, (void **)f));
  PetscCheck(*f, PetscObjectComm((PetscObject)ksp), PETSC_ERR_PLIB, "KSP of type %s has no cgfused context", ((PetscObject)ksp)->type_name);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGFusedContextDestroy(PetscGPUMatCtxArg arg)
{
  KSP_CGFused *f = (KSP_CGFused *)PetscGPUMatCtxOf(arg);

  PetscFunctionBegin;
  PetscCall(KSPCGFusedWorkDestroy(&f->work));
  PetscCall(VecDestroy(&f->dinv));
  PetscCall(VecDestroy(&f->solution));
  PetscCall(PetscFree(f));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the composed setters of KSPCG, recorded then forwarded; the single-reduction one also reinstalls this solve */
static PetscErrorCode KSPSolve_CGFused(KSP);

static PetscErrorCode KSPCGSetRadius_CGFused(KSP ksp, PetscReal radius)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  f->radius = radius;
  PetscCall(f->set_radius(ksp, radius));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGSetObjectiveTarget_CGFused(KSP ksp, PetscReal obj)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  f->objective = obj;
  PetscCall(f->set_objective(ksp, obj));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPCGUseSingleReduction_CGFused(KSP ksp, PetscBool flg)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  f->single_reduction = flg;
  PetscCall(f->use_single_reduction(ksp, flg));
  f->solve_cg      = ksp->ops->solve; /* KSPCG picked its solve for flg */
  ksp->ops->solve  = KSPSolve_CGFused;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSetFromOptions_CGFused(KSP ksp, PetscGPUMatOptionItems PetscOptionsObject)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  PetscCall(f->setfromoptions_cg(ksp, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, "KSP CG fused options");
  PetscCall(PetscOptionsBool("-ksp_cgfused_fast", "Fused GPU iterations where they apply (CUDA vectors, PC none or jacobi, no trust region); else PETSc's CG", "KSPCGFUSED", f->fast, &f->fast, NULL));
  PetscCall(PetscOptionsBool("-ksp_cgfused_lookahead", "On one rank, queue the next direction and product before waiting for the convergence test (same bits either way)", "KSPCGFUSED", f->lookahead, &f->lookahead, NULL));
  PetscOptionsHeadEnd();
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPView_CGFused(KSP ksp, PetscViewer viewer)
{
  KSP_CGFused *f;
  PetscBool    ascii, string;
  char         last[64];

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  if (f->view_cg) PetscCall(f->view_cg(ksp, viewer));
  if (!f->solves || !f->last_fast) PetscCall(PetscStrncpy(last, !f->solves ? "none yet" : "PETSc's CG", sizeof(last)));
  else PetscCall(PetscSNPrintf(last, sizeof(last), "fused%s%s", f->last_dot ? ", p'Ap in the product" : "", f->last_ahead ? ", look-ahead" : ""));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERSTRING, &string));
  if (ascii) PetscCall(PetscViewerASCIIPrintf(viewer, "  fused GPU iterations: %s (look-ahead on one rank: %s); last solve: %s\n", f->fast ? "where they apply" : "off (-ksp_cgfused_fast 0)", f->lookahead ? "on" : "off", last));
  if (string) PetscCall(PetscViewerStringSPrintf(viewer, " last solve: %s", last)); /* KSPView()'s one-line form */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPDestroy_CGFused(KSP ksp)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  PetscCall(f->destroy_cg(ksp)); /* clears KSPCG's composed functions, ours among them */
  PetscCall(PetscObjectCompose((PetscObject)ksp, KSPCGFusedContext, NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether this solve takes the fast path: the conditions under which it is KSPSolve_CG() step for step */
static PetscErrorCode KSPCGFusedApplies(KSP ksp, KSP_CGFused *f, PetscBool *fast, PetscBool *jacobi, PetscBool *parallel)
{
  PetscBool   cuda = PETSC_TRUE, none = PETSC_FALSE;
  Vec         v[]  = {ksp->vec_sol, ksp->vec_rhs, ksp->work[0], ksp->work[1], ksp->work[2]};
  PetscMPIInt size;

  PetscFunctionBegin;
  *fast = *jacobi = *parallel = PETSC_FALSE;
  if (PetscDefined(USE_COMPLEX) || !f->fast || f->radius != 0.0 || f->objective < 0.0 || f->single_reduction || ksp->calc_sings) PetscFunctionReturn(PETSC_SUCCESS);
  if (ksp->normtype != KSP_NORM_PRECONDITIONED && ksp->normtype != KSP_NORM_UNPRECONDITIONED && ksp->normtype != KSP_NORM_NATURAL) PetscFunctionReturn(PETSC_SUCCESS);
  if (ksp->chknorm >= 2 || ksp->pc_side != PC_LEFT) PetscFunctionReturn(PETSC_SUCCESS);
  /* CUDA vectors: VECSEQCUDA, or VECMPICUDA, whose local parts the kernels update and whose sums are then reduced */
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(v); k++) {
    PetscBool is;

    PetscCall(PetscObjectTypeCompareAny((PetscObject)v[k], &is, VECSEQCUDA, VECMPICUDA, ""));
    cuda = (PetscBool)(cuda && is);
  }
  if (!cuda) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)ksp->vec_sol), &size));
  *parallel = (PetscBool)(size > 1);
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCNONE, &none));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp->pc, PCJACOBI, jacobi));
  *fast = (PetscBool)(none || *jacobi);
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define KSPCGFusedDot(x, y, a) VecTDot(x, y, a) /* KSPCG's VecXDot for KSP_CG_SYMMETRIC: real scalars only here */

/*
  On several ranks, p'w (this rank's part in scalars[0]) summed over the ranks before the update reads it: to the host,
  one MPI reduction, back to the device. KSPCG's dependency chain (p'w before the update, z'r before the next
  direction) leaves two reductions an iteration; one would need a reformulated CG (KSPCG's single reduction), which
  rounds differently.
*/
static PetscErrorCode KSPCGFusedReduceDot(MPI_Comm comm, PetscDeviceContext dctx, void *stream, KSPCGFusedWork *work)
{
  PetscFunctionBegin;
  PetscCall(KSPCGFusedCopyScalar(stream, work, PETSC_TRUE));
  PetscCall(PetscDeviceContextSynchronize(dctx));
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, work->host, 1, MPIU_SCALAR, MPIU_SUM, comm));
  PetscCall(KSPCGFusedCopyScalar(stream, work, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Iteration i's direction (p <- z, or p <- z + b p with b from the host, or with bdevice from the z'r the update kernels
  left on the device; from the second on, x takes the last update's step in the same pass) and product w <- A p, with
  p'w summed in the product's pass where the operator has one (*np partial sums; 0: p'w is summed apart)
*/
static PetscErrorCode KSPCGFusedDirectionProduct(KSP ksp, KSP_CGFused *f, Mat Amat, void *stream, PetscInt n, PetscInt i, PetscScalar b, PetscBool bdevice, Vec Z, Vec P, Vec W, Vec X, PetscInt *np)
{
  PetscFunctionBegin;
  if (!i) PetscCall(VecCopy(Z, P));
  else {
    PetscScalar       *p, *x = NULL;
    const PetscScalar *z;

    PetscCall(VecCUDAGetArray(P, &p));
    if (f->pending) PetscCall(VecCUDAGetArray(X, &x));
    PetscCall(VecCUDAGetArrayRead(Z, &z));
    PetscCall(KSPCGFusedLaunchDirection(stream, n, b, bdevice, &f->step, z, p, x, &f->work)); /* x <- x + a p, p <- z + b p */
    PetscCall(VecCUDARestoreArrayRead(Z, &z));
    if (f->pending) PetscCall(VecCUDARestoreArray(X, &x));
    PetscCall(VecCUDARestoreArray(P, &p));
    f->pending = PETSC_FALSE;
  }
  /* w <- A p, and p'w in the same pass where the format has that product (MatGPUMatMultDot(): its last block sums the
     partial sums into dpi) */
  *np = 0;
  if (!ksp->transpose_solve) {
    const MatGPUMatDotSums sums = {f->work.partial, f->work.ticket + 1, f->work.scalars};

    PetscCall(MatGPUMatMultDot(Amat, P, W, &sums, np));
  }
  if (!*np) PetscCall(KSP_MatMult(ksp, Amat, P, W));
  f->last_dot = (PetscBool)(*np > 0);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the stream of the current device context, which PETSc's CUDA vectors use */
static PetscErrorCode KSPCGFusedStream(PetscDeviceContext *dctx, void **stream)
{
  void *handle;

  PetscFunctionBegin;
  PetscCall(PetscDeviceContextGetCurrentContext(dctx));
  PetscCall(PetscDeviceContextGetStreamHandle(*dctx, &handle));
  *stream = handle ? *(void **)handle : NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* out <- x + a p with the last update's step, as the next direction kernel will form it (out may be x itself) */
static PetscErrorCode KSPCGFusedFormSolution(KSP ksp, KSP_CGFused *f, Vec out)
{
  PetscScalar       *o;
  const PetscScalar *x, *p;
  PetscInt           n;
  PetscDeviceContext dctx;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedStream(&dctx, &stream));
  PetscCall(VecGetLocalSize(ksp->vec_sol, &n));
  PetscCall(VecCUDAGetArrayRead(ksp->work[2], &p));
  if (out == ksp->vec_sol) {
    PetscCall(VecCUDAGetArray(out, &o));
    PetscCall(KSPCGFusedLaunchSolution(stream, n, &f->step, o, p, o, &f->work));
    PetscCall(VecCUDARestoreArray(out, &o));
  } else {
    PetscCall(VecCUDAGetArrayRead(ksp->vec_sol, &x));
    PetscCall(VecCUDAGetArrayWrite(out, &o));
    PetscCall(KSPCGFusedLaunchSolution(stream, n, &f->step, x, p, o, &f->work));
    PetscCall(VecCUDARestoreArrayWrite(out, &o));
    PetscCall(VecCUDARestoreArrayRead(ksp->vec_sol, &x));
  }
  PetscCall(VecCUDARestoreArrayRead(ksp->work[2], &p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* x takes the last update's step where no direction kernel will: at a stop, or before an error leaves the solve */
static PetscErrorCode KSPCGFusedApplyPending(KSP ksp, KSP_CGFused *f)
{
  PetscFunctionBegin;
  if (!f->pending) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(KSPCGFusedFormSolution(ksp, f, ksp->vec_sol));
  f->pending = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* KSPSolve_CG() (PETSc 3.22-3.26) with no trust region, objective or eigenvalue work, its vector work fused; x may
   lag one step at its return (KSPCheckDot() and KSPCheckNorm() return from it too): see KSPSolve_CGFusedFast() */
static PetscErrorCode KSPSolve_CGFusedIterate(KSP ksp, KSP_CGFused *f, PetscBool jacobi, PetscBool parallel)
{
  MPI_Comm           comm = PetscObjectComm((PetscObject)ksp->vec_sol);
  PetscInt           i, n;
  PetscScalar        dpi = 0.0, beta = 0.0, betaold = 1.0, dpiold;
  PetscReal          dp = 0.0;
  Vec                X = ksp->vec_sol, B = ksp->vec_rhs, R = ksp->work[0], Z = ksp->work[1], P = ksp->work[2], W = Z, Dinv = NULL;
  PetscInt           nd = -1, np = 0;
  PetscBool          ahead, queued = PETSC_FALSE; /* one rank: the next direction and product are queued before the wait; queued: they are */
  PetscBool          breakdown; /* dpi is zero or changed sign: KSPSolve_CG() stops before the step */
  Mat                Amat, Pmat;
  PetscDeviceContext dctx;
  void              *stream;
  KSPCGFusedNormSum  sum = ksp->normtype == KSP_NORM_PRECONDITIONED ? KSPCGFUSED_SUM_ZZ : ksp->normtype == KSP_NORM_UNPRECONDITIONED ? KSPCGFUSED_SUM_RR : KSPCGFUSED_SUM_NONE;

  PetscFunctionBegin;
  PetscCall(PCGetOperators(ksp->pc, &Amat, &Pmat));
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(KSPCGFusedWorkCreate(&f->work));
  /* the start, with PETSc's calls as KSPSolve_CG() makes them */
  ksp->its = 0;
  if (!ksp->guess_zero) {
    PetscCall(KSP_MatMult(ksp, Amat, X, R));
    PetscCall(VecAYPX(R, -1.0, B));
  } else PetscCall(VecCopy(B, R));
  PetscCall(VecFlag(R, ksp->reason == KSP_DIVERGED_PC_FAILED));
  switch (ksp->normtype) {
  case KSP_NORM_PRECONDITIONED:
    PetscCall(KSP_PCApply(ksp, R, Z));
    PetscCall(VecNorm(Z, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
    break;
  case KSP_NORM_UNPRECONDITIONED:
    PetscCall(VecNorm(R, NORM_2, &dp));
    KSPCheckNorm(ksp, dp);
    break;
  default: /* natural */
    PetscCall(KSP_PCApply(ksp, R, Z));
    PetscCall(KSPCGFusedDot(Z, R, &beta));
    KSPCheckDot(ksp, beta);
    dp = PetscSqrtReal(PetscAbsScalar(beta));
  }
  PetscCall(KSPLogResidualHistory(ksp, dp));
  PetscCall(KSPMonitor(ksp, ksp->its, dp));
  ksp->rnorm = dp;
  PetscCall((*ksp->converged)(ksp, ksp->its, dp, &ksp->reason, ksp->cnvP));
  if (ksp->reason) PetscFunctionReturn(PETSC_SUCCESS);
  if (ksp->normtype == KSP_NORM_UNPRECONDITIONED) PetscCall(KSP_PCApply(ksp, R, Z));
  if (ksp->normtype != KSP_NORM_NATURAL) {
    PetscCall(KSPCGFusedDot(Z, R, &beta));
    KSPCheckDot(ksp, beta);
  }
  if (jacobi) { /* PCJacobi's own inverse diagonal (made by the PCApply above): z = dinv .* r is its PCApply to the bit */
    if (f->dinv) PetscCall(VecGetLocalSize(f->dinv, &nd));
    if (nd != n) {
      PetscCall(VecDestroy(&f->dinv));
      PetscCall(VecDuplicate(R, &f->dinv));
    }
    PetscCall(PCJacobiGetDiagonal(ksp->pc, f->dinv, NULL));
    Dinv = f->dinv;
  }
  PetscCall(KSPCGFusedStream(&dctx, &stream));

  /* On one rank the next iteration's direction and product are queued before the host waits for this one's sums: they
     change only p and w (z's array), which a stop leaves unused, and the direction reads z'r on the device, so the GPU
     does not idle while the host tests convergence. On several ranks p'w must be reduced on the host between the product
     and the update, so each iteration waits as before */
  ahead         = (PetscBool)(!parallel && f->lookahead);
  f->last_ahead = ahead;
  if (ahead) PetscCall(KSPCGFusedSetZR(stream, &f->work, beta));
  i = 0;
  do {
    PetscScalar       *r, *z;
    const PetscScalar *d = NULL;

    ksp->its = i + 1;
    if (beta == 0.0) {
      ksp->reason = KSP_CONVERGED_ATOL;
      PetscCall(PetscInfo(ksp, "converged due to beta = 0\n"));
      break;
    } else if (i > 0 && PetscRealPart(beta * betaold) < 0.0) {
      PetscCall(KSPCGFusedApplyPending(ksp, f));
      PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Diverged due to indefinite preconditioner, beta %g, betaold %g", (double)PetscRealPart(beta), (double)PetscRealPart(betaold));
      ksp->reason = KSP_DIVERGED_INDEFINITE_PC;
      PetscCall(PetscInfo(ksp, "diverging due to indefinite preconditioner\n"));
      break;
    }
    if (!queued) PetscCall(KSPCGFusedDirectionProduct(ksp, f, Amat, stream, n, i, beta / betaold, PETSC_FALSE, Z, P, W, X, &np));
    dpiold  = dpi;
    betaold = beta;
    PetscCall(VecCUDAGetArray(R, &r));
    PetscCall(VecCUDAGetArray(W, &z)); /* w, then z in its place */
    if (Dinv) PetscCall(VecCUDAGetArrayRead(Dinv, &d));
    if (!np) { /* else the product's pass left dpi = p'w */
      const PetscScalar *p;

      PetscCall(VecCUDAGetArrayRead(P, &p));
      PetscCall(KSPCGFusedLaunchDot(stream, n, p, z, &f->work)); /* dpi <- p'w */
      PetscCall(VecCUDARestoreArrayRead(P, &p));
    }
    if (parallel) PetscCall(KSPCGFusedReduceDot(comm, dctx, stream, &f->work));
    f->step.beta      = betaold;
    f->step.dpiold    = dpiold;
    f->step.checksign = i > 0;
    PetscCall(KSPCGFusedLaunchUpdate(stream, n, &f->step, sum, r, z, d, &f->work)); /* r and z; x takes the step later */
    f->pending = PETSC_TRUE;
    if (Dinv) PetscCall(VecCUDARestoreArrayRead(Dinv, &d));
    PetscCall(VecCUDARestoreArray(W, &z));
    PetscCall(VecCUDARestoreArray(R, &r));
    if (ahead) {
      PetscCall(KSPCGFusedRecordDone(stream, &f->work));
      queued = (PetscBool)(i + 1 < ksp->max_it);
      if (queued) PetscCall(KSPCGFusedDirectionProduct(ksp, f, Amat, stream, n, i + 1, 0.0, PETSC_TRUE, Z, P, W, X, &np));
      PetscCall(KSPCGFusedWaitDone(&f->work)); /* the iteration's one wait: dpi, the norm and z'r on the host */
    } else PetscCall(PetscDeviceContextSynchronize(dctx)); /* the iteration's one wait (two on several ranks) */
    /* the norm and z'r over the ranks, on every rank before any test can stop it (dpi is the same on all) */
    if (parallel) PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, f->work.host + 1, 2, MPIU_SCALAR, MPIU_SUM, comm));
    dpi       = f->work.host[0];
    breakdown = (PetscBool)(dpi == 0.0 || (i > 0 && PetscSign(PetscRealPart(dpi)) * PetscSign(PetscRealPart(dpiold)) < 0.0));
    if (breakdown || PetscIsInfOrNanScalar(dpi)) f->pending = PETSC_FALSE; /* the kernels took no step: x is as it was */
    KSPCheckDot(ksp, dpi); /* the update kernel changed nothing then, as KSPSolve_CG() stops before it */
    if (breakdown) {
      if (ksp->converged_neg_curve) {
        PetscCall(PetscInfo(ksp, "converged due to negative curvature: %g\n", (double)PetscRealPart(dpi)));
        ksp->reason = KSP_CONVERGED_NEG_CURVE;
      } else {
        PetscCheck(!ksp->errorifnotconverged, PetscObjectComm((PetscObject)ksp), PETSC_ERR_NOT_CONVERGED, "Diverged due to indefinite matrix, dpi %g, dpiold %g", (double)PetscRealPart(dpi), (double)PetscRealPart(dpiold));
        ksp->reason = KSP_DIVERGED_INDEFINITE_MAT;
        PetscCall(PetscInfo(ksp, "diverging due to indefinite matrix\n"));
      }
      break;
    }
    if (ksp->errorifnotconverged && (PetscIsInfOrNanScalar(f->work.host[1]) || PetscIsInfOrNanScalar(f->work.host[2]))) PetscCall(KSPCGFusedApplyPending(ksp, f)); /* x as KSPCG leaves it before the error below */
    if (ksp->normtype == KSP_NORM_NATURAL) {
      beta = f->work.host[2];
      KSPCheckDot(ksp, beta);
      dp = PetscSqrtReal(PetscAbsScalar(beta));
    } else {
      dp = PetscSqrtReal(PetscAbsScalar(f->work.host[1]));
      KSPCheckNorm(ksp, dp);
    }
    ksp->rnorm = dp;
    PetscCall(KSPLogResidualHistory(ksp, dp));
    PetscCall(KSPMonitor(ksp, i + 1, dp));
    PetscCall((*ksp->converged)(ksp, i + 1, dp, &ksp->reason, ksp->cnvP));
    if (ksp->reason) break;
    if (ksp->normtype != KSP_NORM_NATURAL) {
      beta = f->work.host[2];
      KSPCheckDot(ksp, beta);
    }
    i++;
  } while (i < ksp->max_it);
  if (i >= ksp->max_it) ksp->reason = KSP_DIVERGED_ITS;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the fused iterations, then x's last step where no direction kernel took it */
static PetscErrorCode KSPSolve_CGFusedFast(KSP ksp, KSP_CGFused *f, PetscBool jacobi, PetscBool parallel)
{
  PetscFunctionBegin;
  f->pending = PETSC_FALSE;
  PetscCall(KSPSolve_CGFusedIterate(ksp, f, jacobi, parallel));
  PetscCall(KSPCGFusedApplyPending(ksp, f));
  PetscCall(VecDestroy(&f->solution));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  During a fused solve x lags one step behind where no direction kernel has yet applied the last update's (without
  look-ahead, between the update and the next iteration): the solution is then x + a p, formed as the kernels will
  form it, so monitors and convergence tests that ask for it see KSPCG's. Else KSPCG's own (KSPBuildSolutionDefault())
*/
static PetscErrorCode KSPBuildSolution_CGFused(KSP ksp, Vec v, Vec *V)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  if (!f->pending) {
    PetscCall(f->buildsolution_cg(ksp, v, V));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCheck(v != ksp->vec_sol, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "KSPBuildSolution() into the KSP's own solution vector during a fused CG solve");
  if (!f->solution) PetscCall(VecDuplicate(ksp->vec_sol, &f->solution));
  PetscCall(KSPCGFusedFormSolution(ksp, f, f->solution));
  if (v) {
    PetscCall(VecCopy(f->solution, v));
    *V = v;
  } else *V = f->solution;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode KSPSolve_CGFused(KSP ksp)
{
  KSP_CGFused *f;
  PetscBool    fast, jacobi, parallel;

  PetscFunctionBegin;
  PetscCall(KSPCGFusedGetContext(ksp, &f));
  PetscCall(KSPCGFusedApplies(ksp, f, &fast, &jacobi, &parallel));
  f->last_fast  = fast;
  f->last_dot   = PETSC_FALSE;
  f->last_ahead = PETSC_FALSE;
  f->pending    = PETSC_FALSE;
  f->solves++;
  if (fast) PetscCall(KSPSolve_CGFusedFast(ksp, f, jacobi, parallel));
  else PetscCall(f->solve_cg(ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*MC
   KSPCGFUSED - "cgfused": PETSc's preconditioned conjugate gradients (`KSPCG`), whose iterations run as a few fused
   GPU kernels with one host synchronisation each where they can

   Options Database Keys:
+  -ksp_type cgfused - this type (with `-dll_append <prefix>/lib/libpetscgpumat.so` in an unmodified program)
.  -ksp_cgfused_fast <bool> - the fused iterations where they apply (default true); false: PETSc's CG always
.  -ksp_cgfused_lookahead <bool> - on one rank, the next iteration's direction and product are queued before the host
   waits for the convergence test (default true); the same bits either way
-  the options of `KSPCG`

   Level: intermediate

   Notes:
   The object is a `KSPCG`: its options, `KSPView()`, eigenvalue estimates, trust region (`KSPCGSetRadius()`) and
   single reduction are PETSc's. A solve takes the fused path when the vectors are `VECSEQCUDA` or `VECMPICUDA`, the
   preconditioner is `PCNONE` or `PCJACOBI` (applied from its own inverse diagonal), the norm is preconditioned,
   unpreconditioned or natural, the scalars are real, and no trust region, objective target, single reduction or
   singular-value estimate is asked for; any operator (its own `MatMult()`). It then follows `KSPCG`'s steps, tests,
   monitors and convergence test one for one, with the product, p'w (summed in the product's own pass where the
   operator is one of our sequential types: `MATSEQCMRSCUDA`, `MATSEQELLRCUDA`, `MATSEQRGCSRCUDA`), one kernel for r,
   z and the next sums, the direction with x's step (x lags one step between them: `KSPBuildSolution()` gives the
   solution meanwhile), and one wait for the host per iteration. On several ranks there are two: p'w, then the norm
   and z'r, each summed over the ranks by one MPI reduction, where `KSPCG` reduces three times. Sums are in a fixed
   order (the same bits run to run; on several ranks as far as the MPI library's reduction is), so iteration counts
   are `KSPCG`'s up to rounding. Otherwise it is `KSPCG`'s own solve. `KSPView()` says which path the last solve
   took. The fused path does not track `KSPCG`'s objective (`KSPCGGetObjFcn()`), which only trust-region solvers read.

.seealso: [](ch_ksp), `KSPCG`, `KSPCreate()`, `KSPSetType()`, `PCJACOBI`
M*/
PetscErrorCode KSPCreate_CGFUSED(KSP ksp)
{
  KSP_CGFused *f;

  PetscFunctionBegin;
  PetscCall(KSPCreate_CG(ksp));
  PetscCall(PetscNew(&f));
  f->fast              = PETSC_TRUE;
  f->lookahead         = PETSC_TRUE;
  f->solve_cg          = ksp->ops->solve;
  f->destroy_cg        = ksp->ops->destroy;
  f->setfromoptions_cg = ksp->ops->setfromoptions;
  f->view_cg           = ksp->ops->view;
  f->buildsolution_cg  = ksp->ops->buildsolution;
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGSetRadius_C", &f->set_radius));
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGSetObjectiveTarget_C", &f->set_objective));
  PetscCall(PetscObjectQueryFunction((PetscObject)ksp, "KSPCGUseSingleReduction_C", &f->use_single_reduction));
  PetscCheck(f->set_radius && f->set_objective && f->use_single_reduction, PetscObjectComm((PetscObject)ksp), PETSC_ERR_SUP, "This PETSc's KSPCG lacks the composed functions KSPCGFUSED wraps");
  PetscCall(PetscObjectContainerCompose((PetscObject)ksp, KSPCGFusedContext, f, KSPCGFusedContextDestroy));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGSetRadius_C", KSPCGSetRadius_CGFused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGSetObjectiveTarget_C", KSPCGSetObjectiveTarget_CGFused));
  PetscCall(PetscObjectComposeFunction((PetscObject)ksp, "KSPCGUseSingleReduction_C", KSPCGUseSingleReduction_CGFused));
  ksp->ops->solve          = KSPSolve_CGFused;
  ksp->ops->destroy        = KSPDestroy_CGFused;
  ksp->ops->setfromoptions = KSPSetFromOptions_CGFused;
  ksp->ops->view           = KSPView_CGFused;
  ksp->ops->buildsolution  = KSPBuildSolution_CGFused;
  PetscFunctionReturn(PETSC_SUCCESS);
}
