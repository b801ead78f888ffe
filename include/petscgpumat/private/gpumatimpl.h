#pragma once

/*
  The shared base of petscgpumat's GPU matrix types.

  A petscgpumat matrix is a MATSEQAIJ whose host CSR arrays stay the master copy. A format (ELLPACK-R, CMRS,
  RgCSR) describes itself with a MatGPUFormat table; the base does everything the formats do alike:
  conversion to and from AIJ, saving and chaining the host (SeqAIJ) ops, deciding when the device copy is
  stale (object state) and whether the structure or only the values must be sent again (nonzero state),
  vector access, logging, MatView, options and the fall-back to the host.
*/

#include <petscgpumat.h>
#include <petsc/private/matimpl.h>
#include <petscgpumat/private/petsccompat.h>

/* exported by libpetsc (PETSC_EXTERN) but declared only in its private aij.h, which is not installed */
PETSC_EXTERN PetscErrorCode MatCreate_SeqAIJ(Mat);
PETSC_EXTERN PetscErrorCode MatCreate_MPIAIJ(Mat);

typedef struct _MatGPUFormat MatGPUFormat;

/* What a device-side product needs; the base prepares it, the format launches its kernel. */
typedef struct {
  void             *stream; /* cudaStream_t of the current PetscDeviceContext */
  const PetscScalar *x;     /* device input vector */
  const PetscScalar *y;     /* device vector added to the product (NULL: none); may alias z */
  PetscScalar       *z;     /* device output */
  PetscInt           ldx, ldz; /* block products (multblock): leading dimensions of the column-major blocks x and z */
} MatGPUMultArgs;

/*
  The CSR a format is built from or refreshed with: its m rows (all the matrix's, or the nonempty ones of a
  compressed block) on the host, for the plan and the host layouts, and on the device, as the base provides them
  (MatGPUMatSyncDevice(): its own upload, or the arrays of the matrix's MATSEQAIJCUSPARSE shadow where cuSPARSE's
  products or factorizations made one, so that one upload serves them all; compressed rows have their own row
  offsets into the same entries). A format reads the device arrays during its build or refresh only: they are the
  base's. d_aj is NULL in a value refresh.
*/
typedef struct {
  PetscInt           m;              /* rows */
  PetscCount         nnz;            /* entries */
  const PetscInt    *ai, *aj;        /* host */
  const PetscScalar *aa;
  const PetscInt    *d_ai, *d_aj;    /* device */
  const PetscScalar *d_aa;
  PetscInt          *own_aj;         /* d_aj and d_aa where they are the base's temporaries (else NULL): a format may keep */
  PetscScalar       *own_aa;         /* them as its own arrays instead of copying them, setting the field to NULL */
  void              *stream;         /* cudaStream_t of the build: the current PetscDeviceContext's, as for the products; the
                                        format's launches and copies go on it (MatGPUMatGetStream()) */
} MatGPUMatCSR;

/* The most vectors a format's block kernel (multblock: Z = A X for a dense block X) takes at once */
#define MATGPUMAT_MAX_BLOCK 8

/* The most partial sums of x'z a format's product with a dot product (multdot) writes */
#define MATGPUMAT_MAX_DOT_PARTIALS 1024

/* Where a product with a dot product (multdot, MatGPUMatMultDot()) leaves x'z, all on the device: its partial sums in
   partial[0 .. MATGPUMAT_MAX_DOT_PARTIALS - 1]; with ticket (a counter at 0), also their sum in *sum, added in a fixed
   order by the grid's last block to finish, which leaves the ticket at 0 again (one launch fewer than a kernel of its own) */
typedef struct {
  PetscScalar  *partial;
  unsigned int *ticket; /* optional */
  PetscScalar  *sum;    /* with ticket */
} MatGPUMatDotSums;

/* A row is heavy when it is longer than this many times the mean row length (MatGPUMatRowStats.heavy) */
#define MATGPUMAT_HEAVY_ROW_MEANS 4

/* What the formats plan from (src/base/gpumat_rowstats.c): A's rows as the device copy holds them */
typedef struct {
  PetscInt         rows;       /* rows of the device copy: the nonempty ones where rows are compressed */
  PetscInt         nzrows;     /* nonempty rows */
  PetscInt         maxlen;     /* the longest row */
  PetscReal        sumsq;      /* the sum of the squared row lengths: with nnz / rows, the spread of the lengths */
  PetscCount       nnz;        /* entries */
  PetscCount       heavy;      /* entries in the rows longer than MATGPUMAT_HEAVY_ROW_MEANS x the mean (nnz / rows) */
  PetscBool        compressed; /* only the nonempty rows go to the device */
  /* what they describe */
  PetscObjectState nonzerostate;
  PetscBool        preallocated, compress, valid;
} MatGPUMatRowStats;

struct _MatGPUFormat {
  const char *name;    /* "ELLPACK-R": printed by MatView */
  const char *seqtype; /* MATSEQELLRCUDA */
  const char *title;   /* heading of the options in -help */

  PetscErrorCode (*create)(void **);                                     /* the format's data with default parameters, which the
                                                                            base keeps (Mat_GPUMat.data) and frees (PetscFree()) */
  PetscErrorCode (*copyparameters)(Mat, Mat);                            /* copy parameters from the first matrix to the second */
  PetscErrorCode (*setfromoptions)(Mat, PetscGPUMatOptionItems);             /* inside the base's PetscOptionsHeadBegin/End */
  PetscErrorCode (*view)(Mat, PetscViewer);                              /* the format's parameters and layout (ASCII info) */
  /* optional: decide every parameter of the layout and its kernels that the format chooses (threads per row, height,
     strips per warp, the choosing type's candidate) from the row statistics and its options, into its plan record (in
     its data). Called by the base (MatGPUMatPlan()) once per nonzero pattern and parameter set, before the build and
     before a getter or MatView reads the record; no device work, and no error for a pattern the build will refuse */
  PetscErrorCode (*plan)(Mat, const MatGPUMatRowStats *);
  PetscErrorCode (*build)(Mat, MatGPUMatCSR *);                         /* (re)build the device structure from the CSR, as planned */
  PetscErrorCode (*copyvalues)(Mat, MatGPUMatCSR *);                    /* same pattern, new values */
  PetscErrorCode (*freedevice)(Mat);                                     /* free every device allocation; safe on partial builds */
  PetscErrorCode (*mult)(Mat, const MatGPUMultArgs *);                   /* z = A x (+ y) */
  PetscErrorCode (*multtranspose)(Mat, const MatGPUMultArgs *);          /* z += A^T x (the base initializes z) */
  PetscErrorCode (*getinfo)(Mat, MatGPUMatInfo *);                       /* stored entries, index count, device bytes */
  PetscErrorCode (*compose)(Mat, PetscBool);                             /* compose (or remove) the format's own methods: setters, getters */
  PetscErrorCode (*multblock)(Mat, PetscInt, const MatGPUMultArgs *, PetscBool *); /* optional: Z = A X for a dense block of n vectors
                                                                                     (*can: this layout can; args NULL: only ask) */
  /* a format that stands for others (the choosing type, src/choose/): the data it keeps for one of them (NULL: none),
     through which MatGPUMatGetData() answers that format's code; and what to free of its data besides the struct */
  PetscErrorCode (*inner)(Mat, const MatGPUFormat *, void **);          /* optional */
  PetscErrorCode (*destroy)(void *);                                     /* optional */
  /* optional: copy the built layout's entries back to CSR order, its column indices and values (either array may
     be NULL: not wanted) into device arrays of nnz, on the given stream, given the device row offsets (*can:
     PETSC_FALSE where the layout cannot); what reads the device CSR besides the products (MatGPUMatCopyDeviceCSR())
     then needs no upload */
  PetscErrorCode (*copycsr)(Mat, void *, const PetscInt *, PetscInt *, PetscScalar *, PetscBool *);
  /* optional: z = A x of a square A whose rows are all on the device (args->y NULL), z to the bit as mult gives it,
     and in the same pass x'z as at most MATGPUMAT_MAX_DOT_PARTIALS partial sums, each over a fixed set of rows in a
     fixed order, to sums->partial[0 .. *npartial - 1] on the device and with sums->ticket their sum to *sums->sum
     (MatGPUMatDotSums; the fused CG's p'Ap without reading p and Ap again); args NULL: only ask whether the layout on
     the device can (*npartial > 0) */
  PetscErrorCode (*multdot)(Mat, const MatGPUMultArgs *, const MatGPUMatDotSums *, PetscInt *);
  /* optional: the built layout's device array that holds the values in the CSR's order, and its length (*val NULL:
     the layout keeps them otherwise); a value refresh then uploads the host values into it, with no temporary */
  PetscErrorCode (*valuearray)(Mat, PetscScalar **, PetscCount *);
  /* optional: the built layout's diagonal read from the layout itself into the device array d of A's m rows (0 where a
     row has no diagonal entry), on the given stream, where it does not hold the values in CSR order (MatGetDiagonal());
     *can: PETSC_FALSE where this layout cannot; d NULL: only ask */
  PetscErrorCode (*diagonal)(Mat, void *, PetscScalar *, PetscBool *);
};

/* A MATSEQAIJCUSPARSE over the host CSR arrays of a seq matrix X, for aijcusparse's products and factorizations (src/base/gpumat_shadow.c) */
typedef struct {
  Mat               mat;                 /* NULL until the first MatGPUMatShadowSync() */
  PetscObjectId     id;                  /* X */
  PetscObjectState  nonzerostate, state; /* X's when the shadow was made, when its values were last synced */
  const PetscInt    *ai, *aj;            /* X's host arrays the shadow is made over */
  const PetscScalar *aa;
  PetscBool          bump;               /* adopted at a product's numeric phase: X's state may also be one more than `state`
                                            (MatProductNumeric() increases it after the phase) */
} MatGPUMatShadow;
PETSC_INTERN PetscErrorCode MatGPUMatShadowSync(Mat, MatGPUMatShadow *);
PETSC_INTERN PetscErrorCode MatGPUMatShadowReset(MatGPUMatShadow *);
PETSC_INTERN PetscErrorCode MatGPUMatShadowOf(Mat, MatGPUMatShadow *, Mat *);
PETSC_INTERN PetscErrorCode MatGPUMatShadowAdopt(Mat, MatGPUMatShadow *, Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatGPUMatCreateOverArrays(PetscInt, PetscInt, PetscInt *, PetscInt *, PetscScalar *, Mat *);
/* X's current device CSR (row offsets, column indices, values; NULL: not wanted) copied into device arrays, from the
   format's layout where it holds them, else from a shadow (src/base/gpumat_devcsr.c) */
PETSC_INTERN PetscErrorCode MatGPUMatCopyDeviceCSR(Mat, MatGPUMatShadow *, void *, PetscInt *, PetscInt *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatGPUMatCopyHeldDeviceCSR(Mat, void *, PetscInt *, PetscInt *, PetscScalar *, PetscBool *);

/* A rectangular matrix's transpose formed on the device, for its transposed products (src/base/gpumat_transpose.cu) */
typedef struct _MatGPUMatDeviceTranspose *MatGPUMatDeviceTranspose;
/* Lanes that sum each row of a transpose of `rows` rows and nnz entries in its product: about the mean row (the
   kernel and its host emulation, tests/reference/transpose_emulate.c) */
static inline PetscInt MatGPUMatTransposeLanes(PetscInt rows, PetscCount nnz)
{
  return nnz > 16 * (PetscCount)rows ? 32 : nnz > 4 * (PetscCount)rows ? 8 : 4;
}
PETSC_INTERN PetscErrorCode MatGPUMatDeviceTransposeMult(Mat, MatGPUMatDeviceTranspose *, void *, const PetscScalar *, const PetscScalar *, PetscScalar *, PetscCount *);
PETSC_INTERN PetscErrorCode MatGPUMatDeviceTransposeDestroy(MatGPUMatDeviceTranspose *);
PETSC_INTERN size_t         MatGPUMatDeviceTransposeBytes(MatGPUMatDeviceTranspose);
PETSC_INTERN const char    *MatGPUMatDeviceTransposeSource(MatGPUMatDeviceTranspose);

/* A->spptr of every petscgpumat matrix */
typedef struct {
  const MatGPUFormat *format;
  void               *data;         /* the format's own struct */
  struct _MatOps      hostops;      /* the SeqAIJ ops this matrix had before conversion: chained to and restored */
  PetscObjectState    state;        /* object state the device values match */
  PetscObjectState    nonzerostate; /* nonzero state the device structure matches */
  PetscBool           built;        /* the device structure exists */
  void               *stream;       /* cudaStream_t the device copy was last written on or last waited for on */
  void               *written;      /* cudaEvent_t recorded there after the last build or refresh (MatGPUMatSyncDevice()) */
  PetscBool           rebuild;      /* a structural parameter changed: rebuild at next use */
  PetscInt            nzrows;       /* rows with at least one entry (for flop counts) */
  MatGPUMatRowStats   rowstats;     /* MatGPUMatGetRowStats() */
  struct {                          /* what the format's plan record was made for (MatGPUMatPlan()) */
    PetscBool        valid;         /* no parameter changed since */
    PetscObjectState nonzerostate;
    PetscBool        preallocated, compress;
  } planned;
  PetscCount          nnz;          /* nonzeros of the host matrix at the last build */
  MatGPUMatShadow     csr;          /* the MATSEQAIJCUSPARSE shadow of cuSPARSE's products and factorizations, made by the first of them
                                       (src/base/gpumat_shadow.c) and kept: then the format's device CSR too */
  PetscBool           fallback_reported; /* PetscInfo said once why a product ran on the host */
  PetscInt           *d_diagpos;    /* device: each row's diagonal entry in the CSR order (-1: none), for MatGetDiagonal() */
  PetscObjectState    diagpos_nonzerostate; /* the pattern d_diagpos was found in */
  const char         *diagonal_from; /* where the last MatGetDiagonal() into a device vector read the diagonal (MatView; NULL: none yet) */

  /* compressed rows: the device copy holds only the nonempty rows (MPI off-diagonal blocks) */
  PetscBool    compress_rows; /* asked for: MatGPUMatSetCompressedRows() or -mat_gpumat_compressed_rows */
  PetscInt     mdev;          /* rows of the device copy: nzrows when compressed, else the local rows */
  PetscInt    *cai;           /* host row pointers of the nonempty rows (NULL: not compressed) */
  PetscInt    *d_rows;        /* device: the row of A of each device row */
  PetscInt    *d_cai;         /* device: the row offsets of the nonempty rows into the device CSR's entries */
  PetscInt    *d_ai;          /* device: the row offsets, uploaded by the base when A has no shadow (value refreshes) */
  PetscScalar *d_work;        /* device: products of the device rows, or x gathered at them (transpose) */

  /* how transposed products run (MatGPUMatGetTransposeWay()); -mat_gpumat_explicit_transpose 1: through an
     explicit transpose (a matrix of the same type and parameters, made at the first transposed product) */
  PetscBool                explicit_transpose, explicit_transpose_set;
  Mat                      transpose;
  PetscObjectState         transpose_state, transpose_nonzerostate;
  MatGPUMatDeviceTranspose dtranspose; /* a rectangular matrix's transpose formed on the device (kept with the matrix: forming it may rebuild the device copy) */

  /* where the triangular solves of the last factor made with no solver type named run, and why (MatView) */
  char      trisolve_why[192];
  PetscBool trisolve_device;
  PetscBool cpu_solve; /* aijcusparse's -mat_cusparse_use_cpu_solve, read for ours: cuSPARSE's factor solves on the host */
  /* the level sets of the triangles that decided it, kept for the nonzero pattern they were counted on (the count
     stops at levels_cap: beyond it the host wins) */
  PetscBool        levels_counted;
  PetscObjectState levels_nonzerostate;
  PetscInt         levels[2], levels_cap;
} Mat_GPUMat;

PETSC_INTERN PetscLogEvent MAT_GPUMatBuild, MAT_GPUMatCopyValues, MAT_GPUMatHostFallback, MAT_GPUMatHaloSetUp, MAT_GPUMatTranspose, MAT_GPUMatStagedUpload, MAT_GPUMatStagedDownload;
PETSC_INTERN PetscBool     MatGPUMatHostFallbackIsError; /* -mat_gpumat_host_fallback_error */
PETSC_INTERN PetscBool     MatGPUMatCheckProductsOn;     /* -mat_gpumat_check_products (src/base/gpumat_check.c) */
PETSC_INTERN PetscBool     MatGPUMatBlockKernelOn;       /* -mat_gpumat_block_kernel (src/base/gpumat_product.c) */
PETSC_INTERN PetscInt      MatGPUMatUploadThreads;       /* -mat_gpumat_upload_threads (src/base/gpumat_staged_copy.c) */
PETSC_INTERN PetscInt      MatGPUMatThreadsAuto(PetscInt); /* the automatic count of host threads, at most the argument (src/base/gpumat_staged_copy.c) */
/* Loops over the host master copy's entries split over host threads (src/base/gpumat_host_values.c) */
#define MATGPUMAT_HOST_THREADS_MIN ((PetscCount)1 << 20) /* entries below which one thread runs */
#define MATGPUMAT_HOST_THREADS_MAX 16                    /* -mat_gpumat_host_threads' bound, and of the ranges a loop gets */
#define MATGPUMAT_HOST_THREADS_AUTO 8                    /* the automatic count's cap: 12 threads gained nothing more (docs/clients.md) */
/* The first index in [lo, hi) of the sorted a[] whose value is at least v (hi: none); a plain function, for host threads */
static inline PetscInt MatGPUMatLowerBound(const PetscInt a[], PetscInt lo, PetscInt hi, PetscCount v)
{
  while (lo < hi) {
    const PetscInt mid = lo + (hi - lo) / 2;

    if ((PetscCount)a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
PETSC_INTERN PetscInt       MatGPUMatHostThreads; /* -mat_gpumat_host_threads */
PETSC_INTERN PetscErrorCode MatGPUMatSetHostThreads(PetscInt);
PETSC_INTERN PetscInt       MatGPUMatHostThreadCount(PetscCount);
typedef void (*MatGPUMatRowsFn)(void *, PetscInt, PetscInt, PetscInt); /* (context, range, first row, end row) */
PETSC_INTERN PetscErrorCode MatGPUMatHostForRows(PetscInt, const PetscInt *, PetscInt, MatGPUMatRowsFn, void *);
PETSC_INTERN PetscErrorCode MatGPUMatHostThreadsView(PetscViewer);
PETSC_INTERN PetscErrorCode MatGPUMatDiagonalView(Mat, PetscViewer); /* src/base/gpumat_diagonal.c */
PETSC_INTERN PetscErrorCode MatGPUMatProgramOptions(PetscGPUMatOptionItems);

/* Device or host triangular solves for the factors made with no solver type named (src/base/gpumat_trisolve.c) */
typedef enum {
  MATGPUMAT_TRISOLVE_AUTO,
  MATGPUMAT_TRISOLVE_DEVICE,
  MATGPUMAT_TRISOLVE_HOST
} MatGPUMatTriSolveMode;
PETSC_INTERN const char *const   MatGPUMatTriSolveModes[];
PETSC_INTERN MatGPUMatTriSolveMode MatGPUMatTriSolve;            /* -mat_gpumat_trisolve */
PETSC_INTERN PetscReal             MatGPUMatTriSolveLevelUs;     /* -mat_gpumat_trisolve_level_us */
PETSC_INTERN PetscErrorCode        MatGPUMatTriSolveOnDevice(Mat, MatFactorType, PetscBool *, char[], size_t);
/* How a matrix's transposed products run: the format's transposed kernels (square matrices), a forward product of
   its transpose formed on the device (rectangular ones: prolongators, off-diagonal blocks), or an explicit transpose
   of our type (-mat_gpumat_explicit_transpose) */
typedef enum {
  GPUMAT_TRANSPOSE_KERNELS,
  GPUMAT_TRANSPOSE_DEVICE,
  GPUMAT_TRANSPOSE_EXPLICIT
} MatGPUMatTransposeWay;
PETSC_INTERN MatGPUMatTransposeWay MatGPUMatGetTransposeWay(Mat);
PETSC_INTERN PetscErrorCode MatGPUMatCheckProductBegin(Vec, Vec, Vec *);
PETSC_INTERN PetscErrorCode MatGPUMatCheckProductEnd(Mat, const struct _MatOps *, Vec, Vec, Vec, Vec, PetscBool);

/*
  Op slots of a matrix whose spptr struct `g` has a `hostops` table (seq and MPI types alike).
  PUT_IN_FRONT: put `fn` in slot `op` unless it is there, remembering what was there in `saved` (also for factors).
  OVERRIDE: the same, remembering it as the host op.
  RESTORE: give slot `op` back to the host op; a parent's newer op found there becomes the host op.
*/
#define GPUMAT_PUT_IN_FRONT(A, op, saved, fn) \
  do { \
    if ((A)->ops->op != (fn)) { \
      (saved)      = (A)->ops->op; \
      (A)->ops->op = (fn); \
    } \
  } while (0)
#define GPUMAT_OVERRIDE(A, g, op, fn) GPUMAT_PUT_IN_FRONT(A, op, (g)->hostops.op, fn)
#define GPUMAT_RESTORE(A, g, op, fn) \
  do { \
    if ((A)->ops->op == (fn)) (A)->ops->op = (g)->hostops.op; \
    else (g)->hostops.op = (A)->ops->op; \
  } while (0)

/*
  The slots a petscgpumat type owns, listed once for the seq (S = _GPUMat) and MPI (S = _MPIGPUMat) types:
  X(slot, function). Lifecycle slots are installed at conversion and given back at conversion back; in
  between, PETSc may wrap one of them (its sub-matrix code puts its own destroy in front of ours and calls
  ours from it), so they are installed again only when the parent rewrote the whole table (the hash
  assembly of unpreallocated matrices restores a saved table). Compute slots are installed again after
  every parent call that may rewrite them (SeqAIJ's assembly installs its inode products).
*/
#define GPUMAT_LIFECYCLE_SLOTS(X, S) \
  X(destroy, MatDestroy##S) \
  X(duplicate, MatDuplicate##S) \
  X(assemblyend, MatAssemblyEnd##S) \
  X(setfromoptions, MatSetFromOptions##S) \
  X(bindtocpu, MatBindToCPU##S) \
  X(view, MatView##S)
/* real scalars only (checked at conversion): the Hermitian transpose is the transpose */
#define GPUMAT_COMPUTE_SLOTS(X, S) \
  X(mult, MatMult##S) \
  X(multadd, MatMultAdd##S) \
  X(multtranspose, MatMultTranspose##S) \
  X(multtransposeadd, MatMultTransposeAdd##S) \
  X(multhermitiantranspose, MatMultTranspose##S) \
  X(multhermitiantransposeadd, MatMultTransposeAdd##S)

/* Seq types only: the device products, the in-place factorizations, AXPY with a subset pattern */
#define GPUMAT_SEQ_SLOTS(X, S) \
  X(productsetfromoptions, MatProductSetFromOptions##S) \
  X(lufactor, MatLUFactor##S) \
  X(choleskyfactor, MatCholeskyFactor##S) \
  X(axpy, MatAXPY##S) \
  X(scale, MatScale##S) \
  X(diagonalscale, MatDiagonalScale##S) \
  X(getdiagonal, MatGetDiagonal##S) \
  X(getinfo, MatGetInfo##S)
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_GPUMat(Mat); /* src/base/gpumat_product.c */
PETSC_INTERN PetscErrorCode MatGetDiagonal_GPUMat(Mat, Vec);      /* src/base/gpumat_diagonal.c */
PETSC_INTERN PetscErrorCode MatScale_GPUMat(Mat, PetscScalar);     /* src/base/gpumat_host_values.c */
PETSC_INTERN PetscErrorCode MatDiagonalScale_GPUMat(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatGetInfo_GPUMat(Mat, MatInfoType, MatInfo *); /* src/base/gpumat.c */
/* MPI types only: MPIAIJ's products, with its backend algorithm on the device (src/base/gpumat_mpi.c) */
#define GPUMAT_MPI_SLOTS(X, S) X(productsetfromoptions, MatProductSetFromOptions##S)
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_MPIGPUMat(Mat);
PETSC_INTERN PetscErrorCode MatLUFactor_GPUMat(Mat, IS, IS, const MatFactorInfo *); /* src/base/gpumat_factor.c */
PETSC_INTERN PetscErrorCode MatGetFactor_GPUMat_Petsc(Mat, MatFactorType, Mat *);   /* src/base/gpumat_factor_host.c */
/* ILU(0)/ICC(0) factored and solved on the device from the matrix's device CSR (src/base/gpumat_factor_device.c) */
PETSC_INTERN PetscBool      MatGPUMatDeviceFactorOn; /* -mat_gpumat_device_factor */
PETSC_INTERN PetscErrorCode MatGPUMatDeviceFactorTakes(Mat, IS, IS, const MatFactorInfo *, PetscBool *);
PETSC_INTERN PetscErrorCode MatGPUMatDeviceFactorSymbolic(Mat, Mat, MatFactorType, const MatFactorInfo *);
PETSC_INTERN PetscErrorCode MatGPUMatDeviceFactorRelease(Mat);
PETSC_INTERN PetscErrorCode MatGPUMatDeviceSolve(Mat, Vec, Vec, PetscErrorCode (*)(Mat, Vec, Vec)); /* src/base/gpumat_mult.c */
/* LU on the device kept as the explicit inverse, for small matrices (src/base/gpumat_factor_dense.cu) */
PETSC_INTERN PetscInt       MatGPUMatDenseLUMin, MatGPUMatDenseLUMax; /* -mat_gpumat_dense_lu_min, _max */
PETSC_INTERN PetscErrorCode MatGPUMatDenseLUTakes(Mat, MatFactorType, PetscBool *);
PETSC_INTERN PetscErrorCode MatGetFactor_GPUMat_DenseLU(Mat, MatFactorType, Mat *);
/* cuSOLVER set up for it in a host thread while the host works (src/base/gpumat_factor_warmup.c) */
PETSC_INTERN PetscBool      MatGPUMatDenseLUWarmupOn; /* -mat_gpumat_dense_lu_warmup */
PETSC_INTERN PetscErrorCode MatGPUMatDenseLUWarmupStart(void);
/* Factors: GPUMAT_PUT_IN_FRONT where the factor has the slot filled */
#define GPUMAT_WRAP_FACTOR_SLOT(F, op, saved, ours) \
  do { \
    if ((F)->ops->op) GPUMAT_PUT_IN_FRONT(F, op, saved, ours); \
  } while (0)
PETSC_INTERN PetscErrorCode MatCholeskyFactor_GPUMat(Mat, IS, const MatFactorInfo *);
PETSC_INTERN PetscErrorCode MatAXPY_GPUMat(Mat, PetscScalar, Mat, MatStructure); /* src/base/gpumat_axpy.c */
PETSC_INTERN PetscErrorCode MatAXPYGetPreallocation_GPUMat(Mat, Mat, Mat *);       /* src/base/gpumat_axpy.c */
PETSC_INTERN PetscErrorCode MatAXPY_GPUMatProductResult(Mat, PetscScalar, Mat, MatStructure); /* src/base/gpumat_product.c */
PETSC_INTERN PetscErrorCode MatProductSetFromOptions_GPUMatAsParent(Mat);

/* What the install functions install: everything (at conversion, or after the parent rewrote the table) or the compute slots */
typedef enum {
  GPUMAT_INSTALL_ALL,
  GPUMAT_INSTALL_COMPUTE
} MatGPUMatInstallWhat;

PETSC_INTERN PetscErrorCode MatConvert_SeqAIJ_GPUMat(Mat, const MatGPUFormat *, MatReuse, Mat *);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterFormat(const MatGPUFormat *, PetscErrorCode (*)(Mat));
PETSC_INTERN PetscErrorCode MatGPUMatComposeAll(Mat, const MatGPUFormat *, PetscBool);
PETSC_INTERN PetscErrorCode MatGPUMatRegisterFactors(const char[]);
PETSC_INTERN PetscErrorCode MatCreate_GPUMat(Mat, const MatGPUFormat *);
PETSC_INTERN PetscErrorCode MatCreateSeq_GPUMat(MPI_Comm, MatType, PetscInt, PetscInt, PetscInt, const PetscInt[], Mat *);
PETSC_INTERN PetscErrorCode MatGPUMatGetData(Mat, const MatGPUFormat *, void *);
PETSC_INTERN PetscErrorCode MatGPUMatInvalidateStructure(Mat);
PETSC_INTERN PetscBool      MatGPUMatIsOurs(Mat); /* src/base/gpumat.c */
/* A build its caller may recover from (another candidate, the shadow): the format refused the matrix (its padding
   guard) or it does not fit the device */
static inline PetscBool MatGPUMatBuildRefused(PetscErrorCode ierr)
{
  return (PetscBool)(ierr == PETSC_ERR_SUP || ierr == PETSC_ERR_MEM || ierr == PETSC_ERR_GPU_RESOURCE);
}
PETSC_INTERN PetscErrorCode MatGPUMatSyncDevice(Mat);
PETSC_EXTERN PetscErrorCode MatGPUMatMultDot(Mat, Vec, Vec, const MatGPUMatDotSums *, PetscInt *); /* exported for the tests */
PETSC_INTERN PetscErrorCode MatGPUMatCheckDeviceMemory(Mat, size_t, const char *);
PETSC_INTERN PetscErrorCode MatGPUMatCheckPadding(const char *, const char *, const char *, PetscInt, PetscCount, PetscInt, PetscCount, PetscReal);
PETSC_INTERN PetscErrorCode MatGPUMatDeviceMalloc(Mat, size_t, void **);
PETSC_INTERN PetscErrorCode MatGPUMatStreamMalloc(Mat, size_t, void *, void **);
PETSC_INTERN PetscErrorCode MatGPUMatDeviceFree(void **);
PETSC_INTERN PetscErrorCode MatGPUMatGetStream(void **);
PETSC_INTERN PetscErrorCode MatGPUMatCopyToDevice(void *, const void *, size_t, void *); /* src/base/gpumat_staged_copy.c */
PETSC_INTERN PetscErrorCode MatGPUMatUploadView(PetscViewer);
PETSC_INTERN PetscErrorCode MatGPUMatSetUploadThreads(PetscInt);
PETSC_INTERN PetscErrorCode MatGPUMatCopyToHost(void *, const void *, size_t, void *); /* src/base/gpumat_staged_copy.c */
PETSC_INTERN PetscErrorCode MatGPUMatCopyOnStream(void *, const void *, size_t, void *);
PETSC_INTERN PetscErrorCode MatGPUMatVecIsOnDevice(Vec, PetscBool *);
PETSC_INTERN PetscErrorCode MatGPUMatFreeDevice_Private(Mat);
PETSC_INTERN PetscErrorCode MatGPUMatDefaultVecType(VecType *);
PETSC_INTERN PetscErrorCode MatGPUMatSetVecType(Mat, PetscBool);
PETSC_INTERN PetscErrorCode MatGPUMatConvertToParent(Mat, MatReuse, Mat *, PetscErrorCode (*)(Mat));
PETSC_INTERN PetscErrorCode MatGPUMatConvertThroughParent(Mat, MatType, MatReuse, Mat *, PetscErrorCode (*)(Mat));
PETSC_INTERN PetscErrorCode MatGPUMatLaunchScatterAddRows(void *, PetscInt, const PetscInt *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatGPUMatLaunchGatherRows(void *, PetscInt, const PetscInt *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatGPUMatLaunchGatherOrZero(void *, PetscInt, const PetscInt *, const PetscScalar *, PetscScalar *);
PETSC_INTERN PetscErrorCode MatGPUMatLaunchScatterRows(void *, PetscInt, const PetscInt *, const PetscScalar *, PetscScalar *);
PETSC_EXTERN PetscErrorCode MatGPUMatChooseThreadsPerRow(PetscInt, PetscCount, PetscInt, PetscInt *);
PETSC_INTERN PetscErrorCode MatGPUMatPlanThreadsPerRow(const MatGPUMatRowStats *, PetscInt, PetscInt *, PetscBool *);
PETSC_INTERN PetscErrorCode MatGPUMatGetRowStats(Mat, const MatGPUMatRowStats **);
PETSC_INTERN PetscErrorCode MatGPUMatGetRowStatsForBuild(Mat, const MatGPUMatRowStats **);
PETSC_INTERN PetscErrorCode MatGPUMatPlan(Mat);           /* src/base/gpumat_plan.c */
PETSC_INTERN PetscErrorCode MatGPUMatInvalidatePlan(Mat); /* a kernel parameter changed: plan again, keep the layout */
PETSC_INTERN PetscErrorCode MatGPUMatUploadRowOffsets(Mat, const PetscInt *, void *); /* src/base/gpumat_mult.c */
PETSC_EXTERN PetscErrorCode MatGPUMatRowStatsOnDevice(PetscInt, const PetscInt *, PetscInt, void *, PetscInt *, PetscInt *, PetscReal *, PetscCount *); /* src/base/gpumat_rowstats_device.cu */

/*
  MPI types (src/base/gpumat_mpi.c): MATMPIAIJ whose diagonal and off-diagonal blocks are seq petscgpumat
  matrices. The format's parameters live in a 0 x 0 seq matrix of the format (the parameter holder) and are
  copied to the blocks whenever MPIAIJ creates them.
*/
PETSC_INTERN PetscErrorCode MatCreate_MPIGPUMat(Mat, const char[]);
PETSC_INTERN PetscErrorCode MatCreateMPI_GPUMat(MPI_Comm, MatType, PetscInt, PetscInt, PetscInt, PetscInt, PetscInt, const PetscInt[], PetscInt, const PetscInt[], Mat *);
PETSC_INTERN PetscErrorCode MatGPUMatFindFormat(MatType, const MatGPUFormat **);
PETSC_INTERN PetscErrorCode MatGPUMatComposeConvert(Mat, const char[], const char[], PetscErrorCode (*)(Mat, MatType, MatReuse, Mat *));
PETSC_INTERN PetscErrorCode MatGPUMatRegisteredTypes(PetscInt *, const MatGPUFormat *const **, const char *const **);
PETSC_INTERN PetscErrorCode MatGPUMatParameterTargets(Mat, PetscInt *, Mat[]);
PETSC_INTERN PetscErrorCode MatGPUMatParameterSource(Mat, Mat *);

/* The halo exchange of the MPI types' forward products: CUDA IPC or staged (src/base/gpumat_halo.c) */
typedef struct _MatGPUMatHalo MatGPUMatHalo;
PETSC_INTERN PetscErrorCode MatGPUMatHaloCreate(Mat, VecScatter, PetscBool, MatGPUMatHalo **);
PETSC_INTERN PetscErrorCode MatGPUMatHaloDestroy(MatGPUMatHalo **);
PETSC_INTERN PetscErrorCode MatGPUMatHaloBegin(Mat, MatGPUMatHalo *, Vec, PetscBool, void *);
PETSC_INTERN PetscErrorCode MatGPUMatHaloEnd(MatGPUMatHalo *, Vec, Vec, PetscBool, void *);
PETSC_INTERN PetscErrorCode MatGPUMatHaloRelease(MatGPUMatHalo *, Vec, PetscBool, void *);
PETSC_INTERN PetscErrorCode MatGPUMatHaloDescribe(MatGPUMatHalo *, const char **);

/* The body of a public setter: the format's method on a seq matrix; on an MPI type, on its parameter holder and blocks */
#define MatGPUMatTryMethodAll(A, name, type, value) \
  do { \
    Mat      t_[3]; \
    PetscInt n_; \
    PetscCall(MatGPUMatParameterTargets(A, &n_, t_)); \
    for (PetscInt i_ = 0; i_ < n_; i_++) PetscTryMethod(t_[i_], name, (Mat, type), (t_[i_], value)); \
  } while (0)
/* The body of a public getter: a seq matrix answers; an MPI type answers through its diagonal block (or holder) */
#define MatGPUMatUseMethodSource(A, name, type, value) \
  do { \
    Mat s_; \
    PetscCall(MatGPUMatParameterSource(A, &s_)); \
    PetscUseMethod(s_, name, (Mat, type), (s_, value)); \
  } while (0)
