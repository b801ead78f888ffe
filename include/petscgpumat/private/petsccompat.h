#pragma once

/*
  Every difference between the PETSc releases petscgpumat supports (3.22 to 3.26) that its code meets, in one
  place. The rest of the library is written against the newest API; each entry maps it onto the older releases.
  config/petsc.sh refuses a PETSc outside the range; the check below says the same at compile time.
*/
#include <petscversion.h>

#if PETSC_VERSION_LT(3, 22, 0) || PETSC_VERSION_GE(3, 27, 0)
  #error "petscgpumat supports PETSc 3.22 to 3.26 (config/petsc.sh provides 3.26.1)"
#endif

/*
  3.23 made PetscOptionItems a pointer type (typedef struct _n_PetscOptionItems *PetscOptionItems): the
  setfromoptions slot of struct _MatOps takes it by value; before, it took `PetscOptionItems *`.
  PetscGPUMatOptionItems is what that slot takes on the PETSc in use.
*/
#if PETSC_VERSION_LT(3, 23, 0)
typedef PetscOptionItems *PetscGPUMatOptionItems;
#else
typedef PetscOptionItems PetscGPUMatOptionItems;
#endif

/* 3.24 made PetscBool C's bool, reduced with MPI_C_BOOL (MPIU_BOOL is deprecated there); before, an enum */
#if PETSC_VERSION_LT(3, 24, 0)
  #define PETSCGPUMAT_MPI_BOOL MPIU_BOOL
#else
  #define PETSCGPUMAT_MPI_BOOL MPI_C_BOOL
#endif

/* 3.25 made the text PetscErrorMessage() returns const */
#if PETSC_VERSION_LT(3, 25, 0)
typedef char *PetscGPUMatErrorText;
#else
typedef const char *PetscGPUMatErrorText;
#endif

/*
  A composed container's destroy hook (PetscObjectContainerCompose()): 3.22 passes the context; 3.23 passes its address
  (void **), which 3.25 types as PetscCtxRt (void *). A hook takes a PetscGPUMatCtxArg and reads the context with
  PetscGPUMatCtxOf().
*/
#if PETSC_VERSION_LT(3, 23, 0)
typedef void *PetscGPUMatCtxArg;
  #define PetscGPUMatCtxOf(arg) (arg)
#elif PETSC_VERSION_LT(3, 25, 0)
typedef void **PetscGPUMatCtxArg;
  #define PetscGPUMatCtxOf(arg) (*(arg))
#else
typedef PetscCtxRt PetscGPUMatCtxArg;
  #define PetscGPUMatCtxOf(arg) (*(void **)(arg))
#endif

/*
  The device CSR indices of a MATSEQAIJCUSPARSE (MatSeqAIJCUSPARSEGetIJ()): 3.26 stores and returns PetscInt; before,
  32-bit int, which is PetscInt unless PETSc has 64-bit indices. PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT says
  whether the arrays can be read as PetscInt.
*/
#if PETSC_VERSION_LT(3, 26, 0)
  #if defined(PETSC_USE_64BIT_INDICES)
    #define PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT 0
  #else
    #define PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT 1
  #endif
  #define PetscGPUMatSeqAIJCUSPARSEGetIJ(A, compressed, i, j) MatSeqAIJCUSPARSEGetIJ(A, compressed, (const int **)(i), (const int **)(j))
#else
  #define PETSCGPUMAT_CUSPARSE_INDICES_ARE_PETSCINT 1
  #define PetscGPUMatSeqAIJCUSPARSEGetIJ(A, compressed, i, j) MatSeqAIJCUSPARSEGetIJ(A, compressed, i, j)
#endif

/* MatFactorInfo.factoronhost and .solveonhost (-pc_factor_mat_factor_on_host, -pc_factor_mat_solve_on_host: device
   matrix types factor or solve on the host), in 3.24's MatFactorInfo and not in 3.22's; read from 3.24 on */
#if PETSC_VERSION_LT(3, 24, 0)
  #define PetscGPUMatFactorOnHost(info)    PETSC_FALSE
  #define PetscGPUMatSolveOnHost(info)     PETSC_FALSE
  #define PetscGPUMatSetFactorOnHost(info) ((void)(info))
#else
  #define PetscGPUMatFactorOnHost(info)    ((info)->factoronhost)
  #define PetscGPUMatSolveOnHost(info)     ((info)->solveonhost)
  #define PetscGPUMatSetFactorOnHost(info) ((void)((info)->factoronhost = PETSC_TRUE))
#endif
