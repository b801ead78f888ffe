#pragma once

/*
  Host emulations of the device kernels, kept out of the library: the tests compare the kernels with them bit for
  bit, so they are compiled (tests/reference/, by the makefile into every test program) without floating-point
  contraction, which the library itself does not need.
*/
#include <petscgpumat/private/cmrsimpl.h>
#include <petscgpumat/private/ellrimpl.h>
#include <petscgpumat/private/rgcsrimpl.h>

PetscErrorCode MatCMRSLayoutMult(const MatCMRSLayout *, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatCMRSLayoutMultScan(const MatCMRSLayout *, PetscInt, PetscInt, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatCMRSLayoutMultScanSplit(const MatCMRSLayout *, PetscInt, PetscInt, const MatCMRSSplit *, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatCMRSLayoutMultScanHeavy(const MatCMRSLayout *, PetscInt, PetscInt, const MatCMRSHeavy *, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatRowGroupEmulateMult(PetscInt, PetscInt, PetscInt, const PetscCount[], const int[], const int[], const int[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatRowGroupEmulateDiagonal(PetscInt, PetscInt, PetscInt, const PetscCount[], const int[], const int[], const int[], const PetscScalar[], PetscScalar[]);
/* the host layouts, the oracles of the device builds (ellr_layout.c, rgcsr_layout.c) */
PetscErrorCode MatELLRLayoutMeasure(PetscInt, PetscInt, const PetscInt[], PetscInt, PetscInt *, PetscInt *, PetscCount *);
PetscErrorCode MatELLRLayoutCreate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, MatELLRLayout *);
PetscErrorCode MatELLRLayoutFillValues(const MatELLRLayout *, const PetscInt[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatRgCSRLayoutCreate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], PetscInt, PetscInt, PetscInt, MatRgCSRLayout *);
PetscErrorCode MatRgCSRLayoutFillValues(const MatRgCSRLayout *, const PetscInt[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatELLRLayoutMult(const MatELLRLayout *, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatELLRLayoutFillEmulate(PetscInt, PetscInt, PetscInt, PetscBool, const PetscInt[], const PetscInt[], const PetscScalar[], int[], int[], PetscScalar[]);
PetscErrorCode MatELLRLayoutGatherEmulate(PetscInt, PetscInt, const PetscInt[], const int[], const int[], const PetscScalar[], PetscInt[], PetscScalar[]);
PetscErrorCode MatRgCSRLayoutMult(const MatRgCSRLayout *, const PetscScalar[], const PetscScalar[], PetscScalar[]);
PetscErrorCode MatRgCSRLayoutFillEmulate(PetscInt, PetscInt, PetscInt, PetscBool, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscCount[], const int[], int[], PetscScalar[]);
PetscErrorCode MatRgCSRLayoutGatherEmulate(PetscInt, PetscInt, PetscInt, const PetscInt[], const PetscCount[], const int[], const int[], const int[], const PetscScalar[], PetscInt[], PetscScalar[]);
/* the device transpose's product (transpose_emulate.c) */
PetscErrorCode MatGPUMatTransposeMultEmulate(PetscInt, PetscInt, const PetscInt[], const PetscInt[], const PetscScalar[], const PetscScalar[], const PetscScalar[], PetscScalar[]);
