#pragma once

#include <petscsys.h>

/*
  The fused CG's kernels (src/ksp/cgfused_kernels.cu). Sums are deterministic: each of at most
  KSPCGFUSED_MAX_BLOCKS blocks of KSPCGFUSED_THREADS threads adds its strided elements in order and its threads in a
  fixed tree, then the last block of the grid to finish adds the blocks' sums in a fixed tree (a product's p'w: as
  MatGPUMatBlockSumToPartial() does): the same bits run to run.
*/
#define KSPCGFUSED_THREADS    256
#define KSPCGFUSED_MAX_BLOCKS 1024

/* which squared norm the update kernel sums beside z'r */
typedef enum {
  KSPCGFUSED_SUM_ZZ,  /* preconditioned norm */
  KSPCGFUSED_SUM_RR,  /* unpreconditioned norm */
  KSPCGFUSED_SUM_NONE /* natural norm: z'r is the norm */
} KSPCGFusedNormSum;

/* Device scratch of one solve: block partial sums (3 x KSPCGFUSED_MAX_BLOCKS), the scalars (dpi, norm sum, z'r, and
   the z'r before it), their pinned host copy (mapped: hostdev is its device address, where the update kernel writes
   the first three itself, so that no copy stands in the stream between the update and the next direction; NULL where
   the device cannot map host memory, then a copy does), the tickets by which a grid's last block knows it is last
   (ticket[0] the update's, ticket[1] the product's), and the event after each iteration's update */
typedef struct {
  PetscScalar  *partial;
  PetscScalar  *scalars;
  PetscScalar  *host;
  PetscScalar  *hostdev;
  unsigned int *ticket;
  void         *done; /* cudaEvent_t */
} KSPCGFusedWork;

/* An update's step of x, a = beta / dpi with dpi = scalars[0], taken unless dpi is zero, not finite or (checksign) of
   the other sign than dpiold (where KSPSolve_CG() stops before it). The update kernel steps r and z; x takes the step
   later, in the next direction kernel (which reads p there anyway) or, where none follows, by itself: one vector pass
   an iteration less */
typedef struct {
  PetscScalar beta, dpiold;
  int         checksign;
} KSPCGFusedStep;

PETSC_INTERN PetscErrorCode KSPCGFusedWorkCreate(KSPCGFusedWork *);
PETSC_INTERN PetscErrorCode KSPCGFusedWorkDestroy(KSPCGFusedWork *);
/* p <- z + b p (rounded as VecAYPX(): the product, then the sum), b from the host or, with bdevice, scalars[2] /
   scalars[3] (this z'r over the one before, as the update kernel left them: the direction queued before the host has
   read z'r, to the bit the host's); with x, first x <- x + a p with the step (the last update's) and p before it changes */
PETSC_INTERN PetscErrorCode KSPCGFusedLaunchDirection(void *, PetscInt, PetscScalar, PetscBool, const KSPCGFusedStep *, const PetscScalar *, PetscScalar *, PetscScalar *, KSPCGFusedWork *);
/* out <- x + a p where the step is taken, else x (out may be x): the solution before the next direction kernel */
PETSC_INTERN PetscErrorCode KSPCGFusedLaunchSolution(void *, PetscInt, const KSPCGFusedStep *, const PetscScalar *, const PetscScalar *, PetscScalar *, KSPCGFusedWork *);
/* scalars[2] <- z'r of the start (computed on the host), on the stream */
PETSC_INTERN PetscErrorCode KSPCGFusedSetZR(void *, KSPCGFusedWork *, PetscScalar);
/* the event after everything queued on the stream so far (the update's copy to the host), and the host's wait for it */
PETSC_INTERN PetscErrorCode KSPCGFusedRecordDone(void *, KSPCGFusedWork *);
PETSC_INTERN PetscErrorCode KSPCGFusedWaitDone(KSPCGFusedWork *);
/* scalars[0] <- p'w */
PETSC_INTERN PetscErrorCode KSPCGFusedLaunchDot(void *, PetscInt, const PetscScalar *, const PetscScalar *, KSPCGFusedWork *);
/*
  Where the step is taken (else nothing changes): r <- r - a w, z <- dinv .* r (z <- r without dinv) in w's array,
  scalars[3] <- scalars[2] (the z'r before), and scalars[1], scalars[2] <- the squared norm chosen, z'r; then the first
  three scalars reach the host copy (written there by the kernel, or copied after it; not waited for). x is left for
  the next direction (KSPCGFusedStep)
*/
PETSC_INTERN PetscErrorCode KSPCGFusedLaunchUpdate(void *, PetscInt, const KSPCGFusedStep *, KSPCGFusedNormSum, PetscScalar *, PetscScalar *, const PetscScalar *, KSPCGFusedWork *);
/* scalars[0] to host[0] (tohost) or back, on the stream, not waited for: p'w's reduction over the ranks */
PETSC_INTERN PetscErrorCode KSPCGFusedCopyScalar(void *, KSPCGFusedWork *, PetscBool);
