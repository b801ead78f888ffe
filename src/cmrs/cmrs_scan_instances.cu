/*
  CMRS's scan kernels for one (U, E), given by the makefile (-DCMRS_SCAN_U=u -DCMRS_SCAN_E=e): this file is compiled
  into nine objects, so that a program loads only the CUDA module of the kernels it runs (cmrs_scan.h)
*/
#include "cmrs_scan.h"

#if !defined(CMRS_SCAN_U) || !defined(CMRS_SCAN_E)
  #error "cmrs_scan_instances.cu is compiled once per (U, E) by the makefile, with -DCMRS_SCAN_U=u -DCMRS_SCAN_E=e"
#endif

template <int U, int E>
PetscErrorCode MatCMRSScanLaunchMult_Private(cudaStream_t stream, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, const PetscScalar *y, PetscScalar *z)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatWithConstant<1, 2, 4, 8, 16, 32>(c->warp_strips, "CMRS strips per warp", [&](auto s) {
    launch_scan<decltype(s)::value, U, E>(c, stream, x, y, z);
    return PETSC_SUCCESS;
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template <int U, int E>
PetscErrorCode MatCMRSScanLaunchMultDot_Private(cudaStream_t stream, const Mat_SeqCMRSCUDA *c, const PetscScalar *x, PetscScalar *z, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatWithConstant<1, 2, 4, 8, 16, 32>(c->warp_strips, "CMRS strips per warp", [&](auto s) {
    if (c->packed) launch_scan_dot_kernel<decltype(s)::value, U, E, true>(c, stream, x, z, sums, npartial);
    else launch_scan_dot_kernel<decltype(s)::value, U, E, false>(c, stream, x, z, sums, npartial);
    return PETSC_SUCCESS;
  }));
  PetscFunctionReturn(PETSC_SUCCESS);
}

template PetscErrorCode MatCMRSScanLaunchMult_Private<CMRS_SCAN_U, CMRS_SCAN_E>(cudaStream_t, const Mat_SeqCMRSCUDA *, const PetscScalar *, const PetscScalar *, PetscScalar *);
template PetscErrorCode MatCMRSScanLaunchMultDot_Private<CMRS_SCAN_U, CMRS_SCAN_E>(cudaStream_t, const Mat_SeqCMRSCUDA *, const PetscScalar *, PetscScalar *, const MatGPUMatDotSums *, PetscInt *);
