#pragma once

#include <petscmat.h>

/* SUBMANSEC = Mat */

/*J
   MatType names of petscgpumat: GPU sparse-matrix types built on published SpMV formats.

   Each seq type is a `MATSEQAIJ` subclass (its name begins with "seqaij", so `MatSetType()` on an assembled
   `MATSEQAIJ` converts it in place and PETSc's factorizations still find the host matrix); users type the
   root names (`-mat_type ellrcuda`), which pick the seq or MPI type from the communicator size.

   Level: beginner

.seealso: [](ch_matrices), `Mat`, `MatType`, `MATSEQELLRCUDA`, `MATSEQCMRSCUDA`, `MATSEQRGCSRCUDA`, `MATSEQCSRCUDA`, `MATSEQAUTOCUDA`
J*/
#define MATELLRCUDA     "ellrcuda"
#define MATSEQELLRCUDA  "seqaijellrcuda"
#define MATMPIELLRCUDA  "mpiaijellrcuda"
#define MATCMRSCUDA     "cmrscuda"
#define MATSEQCMRSCUDA  "seqaijcmrscuda"
#define MATMPICMRSCUDA  "mpiaijcmrscuda"
#define MATRGCSRCUDA    "rgcsrcuda"
#define MATSEQRGCSRCUDA "seqaijrgcsrcuda"
#define MATMPIRGCSRCUDA "mpiaijrgcsrcuda"
#define MATCSRCUDA      "csrcuda"
#define MATSEQCSRCUDA   "seqaijcsrcuda"
#define MATMPICSRCUDA   "mpiaijcsrcuda"
#define MATAUTOCUDA     "autocuda"
#define MATSEQAUTOCUDA  "seqaijautocuda"
#define MATMPIAUTOCUDA  "mpiaijautocuda"

/* PETSc's host factorizations (SeqAIJ's) for our seq types, under a name of their own: a factor that remembers
   "petsc" would find MATSEQAIJ's factory by prefix when made again, which copies our functions into the factor */
#define MATSOLVERPETSCGPUMAT "petscgpumat"

PETSC_EXTERN PetscErrorCode PetscGPUMatInitializePackage(void);
PETSC_EXTERN PetscErrorCode PetscGPUMatFinalizePackage(void);
PETSC_EXTERN PetscErrorCode PetscGPUMatDeviceAvailable(PetscBool *, char[], size_t);

/*S
   MatGPUMatInfo - What a petscgpumat matrix stores on the device, as reported by `MatGPUMatGetInfo()`

   Level: intermediate

.seealso: `MatGPUMatGetInfo()`, `MATSEQELLRCUDA`
S*/
typedef struct {
  PetscInt   rows, cols;    /* local sizes */
  PetscCount nnz;           /* nonzeros of the host AIJ matrix (explicit zeros included) */
  PetscCount stored;        /* entries the device format stores, padding included */
  PetscCount read_entries;  /* entries one product reads (padding a kernel skips is not read) */
  PetscCount index_count;   /* integers the format stores besides one column index per entry (row lengths, pointers) */
  size_t     device_bytes;  /* device memory held by the format */
  size_t     device_csr_bytes; /* device memory of the CSR that cuSPARSE's products and factorizations of the matrix read (0 before the first) */
  size_t     csr_bytes;     /* what the same matrix needs as 32-bit-index CSR on the device, for comparison */
  PetscBool  device_valid;  /* the device copy exists and matches the host values */
  PetscBool  bound_to_cpu;  /* MatBindToCPU() is in effect */
} MatGPUMatInfo;

PETSC_EXTERN PetscErrorCode MatGPUMatGetInfo(Mat, MatGPUMatInfo *);
PETSC_EXTERN PetscErrorCode MatGPUMatSetCompressedRows(Mat, PetscBool);
PETSC_EXTERN PetscErrorCode MatGPUMatGetCompressedRows(Mat, PetscBool *);
PETSC_EXTERN PetscErrorCode MatGPUMatGetTriangularLevels(Mat, PetscInt *, PetscInt *);
PETSC_EXTERN PetscErrorCode MatGPUMatDenseLUWarmupWait(PetscBool *, PetscReal *);

/* ELLPACK-R (Vazquez, Fernandez, Garzon 2010) with the ELLR-T extension (T threads per row) */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJELLRCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateSeqAIJELLRCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJELLRCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateAIJELLRCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatELLRCUDASetThreadsPerRow(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatELLRCUDAGetThreadsPerRow(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatELLRCUDASetMaxFill(Mat, PetscReal);
PETSC_EXTERN PetscErrorCode MatELLRCUDAGetMaxFill(Mat, PetscReal *);

/* Row-grouped CSR (Oberhuber, Suzuki, Vacata 2010) with row reordering by length and T threads per row */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJRGCSRCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateSeqAIJRGCSRCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJRGCSRCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateAIJRGCSRCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDASetGroupSize(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDAGetGroupSize(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDASetSortWindow(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDAGetSortWindow(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDASetThreadsPerRow(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDAGetThreadsPerRow(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDASetMaxFill(Mat, PetscReal);
PETSC_EXTERN PetscErrorCode MatRGCSRCUDAGetMaxFill(Mat, PetscReal *);

/* Compressed multi-row storage (Koza, Matyka, Szkoda, Miroslaw 2012/2014) */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJCMRSCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateSeqAIJCMRSCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJCMRSCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateAIJCMRSCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCMRSCUDASetHeight(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatCMRSCUDAGetHeight(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatCMRSCUDASetBlockSize(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatCMRSCUDASetSort(Mat, PetscBool);
PETSC_EXTERN PetscErrorCode MatCMRSCUDASetLaneEntries(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatCMRSCUDAGetBlockSize(Mat, PetscInt *);
PETSC_EXTERN PetscErrorCode MatCMRSCUDAGetSort(Mat, PetscBool *);
PETSC_EXTERN PetscErrorCode MatCMRSCUDAGetLaneEntries(Mat, PetscInt *);

/* cuSPARSE's CSR SpMV (cusparseSpMV) as a format of the same pipeline */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJCSRCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateSeqAIJCSRCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJCSRCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateAIJCSRCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCSRCUDASetSpMVAlgorithm(Mat, PetscInt);
PETSC_EXTERN PetscErrorCode MatCSRCUDAGetSpMVAlgorithm(Mat, PetscInt *);

/* The format chosen per matrix (and per MPI block) among the four above, by a rule on the row statistics or by timing */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJAutoCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateSeqAIJAutoCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJAutoCUDA(Mat);
PETSC_EXTERN PetscErrorCode MatCreateAIJAutoCUDA(MPI_Comm, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
PETSC_EXTERN PetscErrorCode MatAutoCUDAGetChoice(Mat, MatType *);
PETSC_EXTERN PetscErrorCode MatAutoCUDASetTimed(Mat, PetscBool);
PETSC_EXTERN PetscErrorCode MatAutoCUDAGetTimed(Mat, PetscBool *);

/* Matrix Market input (coordinate real/integer/pattern, general/symmetric/skew-symmetric; .gz read directly) */
PETSC_EXTERN PetscErrorCode MatLoadMatrixMarket(MPI_Comm, const char[], MatType, Mat *);
PETSC_EXTERN PetscErrorCode PetscGPUMatIsMatrixMarketFile(MPI_Comm, const char[], PetscBool *);
