#pragma once

/* cuSOLVER's and cuBLAS's routines of PETSc's real precision, for the dense LU (gpumat_factor_dense.cu) and its warm-up
   (gpumat_factor_warmup.c, C) */
#include <petscsys.h>
#include <cusolverDn.h>
#include <cublas_v2.h>

#if defined(PETSC_USE_REAL_SINGLE)
  #define GPUMAT_GETRF_BUFFERSIZE cusolverDnSgetrf_bufferSize
  #define GPUMAT_GETRF            cusolverDnSgetrf
  #define GPUMAT_GETRS            cusolverDnSgetrs
  #define GPUMAT_GEMV             cublasSgemv
  #define GPUMAT_GEMM             cublasSgemm
#else
  #define GPUMAT_GETRF_BUFFERSIZE cusolverDnDgetrf_bufferSize
  #define GPUMAT_GETRF            cusolverDnDgetrf
  #define GPUMAT_GETRS            cusolverDnDgetrs
  #define GPUMAT_GEMV             cublasDgemv
  #define GPUMAT_GEMM             cublasDgemm
#endif
