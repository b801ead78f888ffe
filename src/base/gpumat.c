/*
  The SeqAIJ subclass shared by every petscgpumat format: conversion, op tables, options, view, destroy.
  The device side (when to upload, vector access, the products) is in gpumat_mult.c.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice.h>

#define GPUMAT_MAX_FORMATS 8

/* The formats registered by PetscGPUMatInitializePackage(), so that conversions between them can be composed. */
static const MatGPUFormat *registered_formats[GPUMAT_MAX_FORMATS];
static const char         *registered_roots[GPUMAT_MAX_FORMATS];
static PetscInt            n_registered_formats;

/* Other GPU types a petscgpumat matrix converts to through MATSEQAIJ (PETSc's own converters start from seqaij) */
static const char *const via_seqaij_targets[] = {"seqaijcusparse", "aijcusparse", "seqsellcuda", "sellcuda", "seqsell", "sell"};

PETSC_INTERN PetscErrorCode MatMult_GPUMat(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultAdd_GPUMat(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultTranspose_GPUMat(Mat, Vec, Vec);
PETSC_INTERN PetscErrorCode MatMultTransposeAdd_GPUMat(Mat, Vec, Vec, Vec);
PETSC_INTERN PetscErrorCode MatGPUMatFreeDevice_Private(Mat);

static PetscErrorCode MatDestroy_GPUMat(Mat);
static PetscErrorCode MatDuplicate_GPUMat(Mat, MatDuplicateOption, Mat *);
static PetscErrorCode MatAssemblyEnd_GPUMat(Mat, MatAssemblyType);
static PetscErrorCode MatSetFromOptions_GPUMat(Mat, PetscGPUMatOptionItems);
static PetscErrorCode MatBindToCPU_GPUMat(Mat, PetscBool);
static PetscErrorCode MatView_GPUMat(Mat, PetscViewer);
static PetscErrorCode MatConvert_GPUMat_SeqAIJ(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_GPUMat_ViaSeqAIJ(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_SeqAIJ_GPUMatByName(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatGPUMatGetInfo_GPUMat(Mat, MatGPUMatInfo *);
static PetscErrorCode MatGPUMatSetCompressedRows_GPUMat(Mat, PetscBool);
static PetscErrorCode MatGPUMatGetCompressedRows_GPUMat(Mat, PetscBool *);

/*
  MatCreate_<type>() of every format: a SeqAIJ converted in place (no device is touched). Reached only through
  MatSetType() of a type the registration (src/petscgpumatregis.c, above the base) registered, so the package is
  initialized: the base does not call up into it
*/
PetscErrorCode MatCreate_GPUMat(Mat B, const MatGPUFormat *format)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_SeqAIJ(B));
  PetscCall(MatConvert_SeqAIJ_GPUMat(B, format, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCreateSeqAIJ<format>CUDA() of every format */
PetscErrorCode MatCreateSeq_GPUMat(MPI_Comm comm, MatType type, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscAssertPointer(A, 7);
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, m, n, m, n));
  PetscCall(MatSetType(*A, type));
  PetscCall(MatSeqAIJSetPreallocation(*A, nz, nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Registers the seq type, and the root names that pick "seqaij..." or "mpiaij..." by communicator size: "ellrcuda"
  and "aijellrcuda". The second is the one DM programs need: DMDA gives its interpolation matrices the type of
  -dm_mat_type only when that name begins with "aij" (as aijcusparse does), and plain host AIJ otherwise.
*/
PetscErrorCode MatGPUMatRegisterFormat(const MatGPUFormat *format, PetscErrorCode (*create)(Mat))
{
  char root[64], aijroot[64], mpi[64];

  PetscFunctionBegin;
  for (PetscInt f = 0; f < n_registered_formats; f++)
    if (registered_formats[f] == format) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCheck(n_registered_formats < GPUMAT_MAX_FORMATS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Too many petscgpumat formats");
  PetscCall(PetscStrncpy(root, format->seqtype + 6, sizeof(root))); /* "seqaijellrcuda" -> "ellrcuda" */
  registered_formats[n_registered_formats] = format;
  PetscCall(PetscStrallocpy(root, (char **)&registered_roots[n_registered_formats]));
  n_registered_formats++;
  PetscCall(MatRegister(format->seqtype, create));
  PetscCall(PetscSNPrintf(mpi, sizeof(mpi), "mpi%s", format->seqtype + 3)); /* seqaijellrcuda -> mpiaijellrcuda */
  PetscCall(MatRegisterRootName(root, format->seqtype, mpi));
  PetscCall(PetscSNPrintf(aijroot, sizeof(aijroot), "aij%s", root));
  PetscCall(MatRegisterRootName(aijroot, format->seqtype, mpi));
  PetscCall(MatGPUMatRegisterFactors(format->seqtype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  -dm_mat_type under one of our root names ("cmrscuda") is read as its "aij" root name ("aijcmrscuda", the same types):
  DMDA gives its interpolation and restriction matrices the DM's type only when that name begins with "aij" (PETSc's
  dainterp.c), so under the plain root name PCMG's transfers would be host AIJ, copying vectors to the host at every
  level with nothing of ours to count it. Called once the formats are registered, before any DM reads the option.
*/
PetscErrorCode MatGPUMatAliasDMMatType_Private(void)
{
  char      type[256], aijroot[256];
  PetscBool set, match;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-dm_mat_type", type, sizeof(type), &set));
  for (PetscInt f = 0; set && f < n_registered_formats; f++) {
    PetscCall(PetscStrcmp(type, registered_roots[f], &match));
    if (!match) continue;
    PetscCall(PetscSNPrintf(aijroot, sizeof(aijroot), "aij%s", type));
    PetscCall(PetscOptionsSetValue(NULL, "-dm_mat_type", aijroot));
    PetscCall(PetscInfo(NULL, "-dm_mat_type %s is read as %s (the same types), the name under which DMDA gives its interpolation matrices the DM's type\n", type, aijroot));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The registered formats and their root names, for the MPI types' converters */
PetscErrorCode MatGPUMatRegisteredTypes(PetscInt *n, const MatGPUFormat *const **formats, const char *const **roots)
{
  PetscFunctionBegin;
  *n       = n_registered_formats;
  *formats = registered_formats;
  *roots   = registered_roots;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGPUMatResetFormats_Private(void)
{
  PetscFunctionBegin;
  for (PetscInt f = 0; f < n_registered_formats; f++) PetscCall(PetscFree(registered_roots[f]));
  n_registered_formats = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatFindFormat(MatType type, const MatGPUFormat **format)
{
  PetscBool match;

  PetscFunctionBegin;
  *format = NULL;
  for (PetscInt f = 0; f < n_registered_formats && !*format; f++) {
    PetscCall(PetscStrcmp(type, registered_formats[f]->seqtype, &match));
    if (!match) PetscCall(PetscStrcmp(type, registered_roots[f], &match));
    if (!match && !strncmp(type, "aij", 3)) PetscCall(PetscStrcmp(type + 3, registered_roots[f], &match)); /* aij<root> */
    if (!match && !strncmp(type, "mpi", 3)) PetscCall(PetscStrcmp(type + 3, registered_formats[f]->seqtype + 3, &match)); /* mpiaij<root> */
    if (match) *format = registered_formats[f];
  }
  PetscCheck(*format, PETSC_COMM_SELF, PETSC_ERR_ARG_UNKNOWN_TYPE, "%s is not a petscgpumat type", type);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Compose (fn != NULL) or remove (fn == NULL) "MatConvert_<from>_<to>_C" on A */
PetscErrorCode MatGPUMatComposeConvert(Mat A, const char from[], const char to[], PetscErrorCode (*fn)(Mat, MatType, MatReuse, Mat *))
{
  char name[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(name, sizeof(name), "MatConvert_%s_%s_C", from, to));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, name, fn));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every function composed on a matrix of `format` (the base's and the format's own); compose=PETSC_FALSE removes them. */
PetscErrorCode MatGPUMatComposeAll(Mat A, const MatGPUFormat *format, PetscBool compose)
{
  const char *self = format->seqtype;

  PetscFunctionBegin;
  /* MatConvert() looks for a converter from seqaij on a new matrix of the target type (search step 2), under
     the full type name and, when the user names the root type, under "seqaij_<root>" */
  PetscCall(MatGPUMatComposeConvert(A, "seqaij", self, compose ? MatConvert_SeqAIJ_GPUMatByName : NULL));
  PetscCall(MatGPUMatComposeConvert(A, "seqaij", self + 6, compose ? MatConvert_SeqAIJ_GPUMatByName : NULL));
  PetscCall(MatGPUMatComposeConvert(A, "seqaij", self + 3, compose ? MatConvert_SeqAIJ_GPUMatByName : NULL)); /* aij<root> */
  PetscCall(MatGPUMatComposeConvert(A, self, "seqaij", compose ? MatConvert_GPUMat_SeqAIJ : NULL));
  for (PetscInt f = 0; f < n_registered_formats; f++) {
    if (registered_formats[f] == format) continue;
    PetscCall(MatGPUMatComposeConvert(A, self, registered_formats[f]->seqtype, compose ? MatConvert_GPUMat_ViaSeqAIJ : NULL));
    PetscCall(MatGPUMatComposeConvert(A, self, registered_roots[f], compose ? MatConvert_GPUMat_ViaSeqAIJ : NULL));
  }
  for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(via_seqaij_targets); t++) PetscCall(MatGPUMatComposeConvert(A, self, via_seqaij_targets[t], compose ? MatConvert_GPUMat_ViaSeqAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatGPUMatGetInfo_C", compose ? MatGPUMatGetInfo_GPUMat : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatGPUMatSetCompressedRows_C", compose ? MatGPUMatSetCompressedRows_GPUMat : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatGPUMatGetCompressedRows_C", compose ? MatGPUMatGetCompressedRows_GPUMat : NULL));
  /* asked by MatProductSetFromOptions() when the operands' types differ (ours and SeqAIJ, a dense matrix...) */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", compose ? MatProductSetFromOptions_GPUMat : NULL));
  /* asked by MatAXPY() when X is of another type and the pattern changes: the exact union, as SeqAIJ's own */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatAXPYGetPreallocation_C", compose ? MatAXPYGetPreallocation_GPUMat : NULL));
  PetscCall(format->compose(A, compose));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Install our ops (the host ones in the compute slots when bound to the CPU): all of them, or only the compute
  slots after a parent call that may have rewritten them (see GPUMAT_LIFECYCLE_SLOTS).
*/
static PetscErrorCode MatGPUMatInstallOps(Mat A, MatGPUMatInstallWhat what)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
#define GPUMAT_SLOT_OVERRIDE(op, fn) GPUMAT_OVERRIDE(A, g, op, fn);
#define GPUMAT_SLOT_RESTORE(op, fn)  GPUMAT_RESTORE(A, g, op, fn);
  if (what == GPUMAT_INSTALL_ALL) {
    GPUMAT_LIFECYCLE_SLOTS(GPUMAT_SLOT_OVERRIDE, _GPUMat)
    GPUMAT_SEQ_SLOTS(GPUMAT_SLOT_OVERRIDE, _GPUMat)
  }
  if (A->boundtocpu) { GPUMAT_COMPUTE_SLOTS(GPUMAT_SLOT_RESTORE, _GPUMat) }
  else { GPUMAT_COMPUTE_SLOTS(GPUMAT_SLOT_OVERRIDE, _GPUMat) }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Undo MatGPUMatInstallOps(): every slot we own goes back to the host op. */
static PetscErrorCode MatGPUMatUninstallOps(Mat A)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  GPUMAT_LIFECYCLE_SLOTS(GPUMAT_SLOT_RESTORE, _GPUMat)
  GPUMAT_SEQ_SLOTS(GPUMAT_SLOT_RESTORE, _GPUMat)
  GPUMAT_COMPUTE_SLOTS(GPUMAT_SLOT_RESTORE, _GPUMat)
#undef GPUMAT_SLOT_OVERRIDE
#undef GPUMAT_SLOT_RESTORE
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The default vector type of a converted matrix (gpu: VECCUDA where a device can be used) or of a stripped one.
  Where a device is used, it is initialized here, with the matrix, as aijcusparse's conversion does: the CUDA
  context's creation (0.25-0.4 s per process on a 2-GPU H100 node) otherwise lands in whatever first touches the
  device, e.g. the work vectors of KSPSetUp(), and on several ranks the others wait for it inside KSPSolve().
*/
PetscErrorCode MatGPUMatSetVecType(Mat A, PetscBool gpu)
{
  VecType type = VECSTANDARD;

  PetscFunctionBegin;
  if (gpu) PetscCall(MatGPUMatDefaultVecType(&type));
  if (gpu && !strcmp(type, VECCUDA)) {
    PetscCall(PetscDeviceInitialize(PETSC_DEVICE_CUDA));
    PetscCall(MatGPUMatDenseLUWarmupStart()); /* once per process: cuSOLVER's set-up overlaps the host's work from here on */
  }
  PetscCall(PetscFree(A->defaultvectype));
  PetscCall(PetscStrallocpy(type, &A->defaultvectype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Make the SeqAIJ matrix A (or a copy of it) a petscgpumat matrix of `format`. Idempotent: a matrix already
  of this format is left alone (MatDuplicate_SeqAIJ creates the copy with our type before copying data).
*/
PetscErrorCode MatConvert_SeqAIJ_GPUMat(Mat A, const MatGPUFormat *format, MatReuse reuse, Mat *newmat)
{
  Mat         B;
  Mat_GPUMat *g;

  PetscFunctionBegin;
  PetscCheck(!PetscDefined(USE_COMPLEX), PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "%s supports real scalars only (this PETSc was configured with complex scalars)", format->name);
  /* the device layouts index rows and columns with 32-bit integers (64-bit PetscInt builds can exceed them) */
  PetscCheck((PetscInt64)A->rmap->n <= PETSC_INT32_MAX && (PetscInt64)A->cmap->n <= PETSC_INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s stores 32-bit row and column indices on the device: a %" PetscInt_FMT " x %" PetscInt_FMT " matrix does not fit (MATAIJCUSPARSE takes 64-bit indices)", format->name, A->rmap->n,
             A->cmap->n);
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  B = *newmat;
  if (B->spptr) {
    g = (Mat_GPUMat *)B->spptr;
    PetscCheck(g->format == format, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "Matrix already carries another petscgpumat format");
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&g));
  g->format      = format;
  g->hostops     = *B->ops;
  B->spptr       = g;
  B->offloadmask = PETSC_OFFLOAD_UNALLOCATED;
  B->boundtocpu  = PETSC_FALSE; /* MatCreate() binds every new matrix to the CPU: we want the device ops */
  PetscCall(format->create(&g->data));
  /* the products run on the device: SeqAIJ's inode search at each assembly would only cost (aijcusparse skips it too) */
  PetscCall(MatSetOption(B, MAT_USE_INODES, PETSC_FALSE));
  /* inode data found by an earlier assembly would outlive the option: a factorization would then pick SeqAIJ's
     inode numeric routine, which fails once the next assembly drops that data (PETSc's SNES ex42 on 2 ranks).
     SeqAIJ's assembly of an assembled matrix with an unchanged pattern only re-reads the option, and drops it. */
  if (B->assembled && B->ass_nonzerostate == B->nonzerostate) {
    const PetscBool was = B->was_assembled;

    B->was_assembled = PETSC_TRUE;
    PetscCall((*g->hostops.assemblyend)(B, MAT_FINAL_ASSEMBLY));
    B->was_assembled = was;
  }
  PetscCall(MatGPUMatSetVecType(B, PETSC_TRUE));
  PetscCall(MatGPUMatInstallOps(B, GPUMAT_INSTALL_ALL));
  PetscCall(MatGPUMatComposeAll(B, format, PETSC_TRUE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, format->seqtype));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_SeqAIJ_GPUMatByName(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  const MatGPUFormat *format;

  PetscFunctionBegin;
  PetscCall(MatGPUMatFindFormat(type, &format));
  PetscCall(MatConvert_SeqAIJ_GPUMat(A, format, reuse, newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Strip everything petscgpumat added: the result is a plain MATSEQAIJ with the same host arrays. */
static PetscErrorCode MatGPUMatStrip_Private(Mat B)
{
  Mat_GPUMat *g = (Mat_GPUMat *)B->spptr;

  PetscFunctionBegin;
  PetscCall(MatGPUMatFreeDevice_Private(B));
  PetscCall(MatGPUMatShadowReset(&g->csr));
  PetscCall(MatDestroy(&g->transpose));
  PetscCall(MatGPUMatDeviceTransposeDestroy(&g->dtranspose)); /* not with the device copy: forming it may rebuild that */
  if (g->format->destroy) PetscCall(g->format->destroy(g->data)); /* what the struct holds (a chooser's candidates' data) */
  PetscCall(PetscFree(g->data));                                   /* the format's struct (its device memory went with freedevice) */
  PetscCall(MatGPUMatComposeAll(B, g->format, PETSC_FALSE));
  PetscCall(MatGPUMatUninstallOps(B));
  PetscCall(PetscFree(B->spptr));
  B->offloadmask = PETSC_OFFLOAD_CPU;
  PetscCall(MatGPUMatSetVecType(B, PETSC_FALSE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATSEQAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Back to the parent type (MATSEQAIJ, MATMPIAIJ): `strip` removes, in place, all that petscgpumat added */
PetscErrorCode MatGPUMatConvertToParent(Mat A, MatReuse reuse, Mat *newmat, PetscErrorCode (*strip)(Mat))
{
  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  PetscCall((*strip)(*newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* To another type through the parent type, whose converters PETSc and petscgpumat provide */
PetscErrorCode MatGPUMatConvertThroughParent(Mat A, MatType type, MatReuse reuse, Mat *newmat, PetscErrorCode (*strip)(Mat))
{
  Mat B;

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX) {
    PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  B = A;
  PetscCall(MatGPUMatConvertToParent(A, reuse, &B, strip));
  PetscCall(MatConvert(B, type, MAT_INPLACE_MATRIX, &B));
  *newmat = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_GPUMat_SeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  (void)type; /* the parent type: the only target */
  PetscCall(MatGPUMatConvertToParent(A, reuse, newmat, MatGPUMatStrip_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_GPUMat_ViaSeqAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatConvertThroughParent(A, type, reuse, newmat, MatGPUMatStrip_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_GPUMat(Mat A)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  PetscErrorCode (*hostdestroy)(Mat);

  PetscFunctionBegin;
  if (!g) PetscFunctionReturn(PETSC_SUCCESS);
  hostdestroy = g->hostops.destroy;
  PetscCall(MatGPUMatStrip_Private(A));
  PetscCall((*hostdestroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_GPUMat(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  /* MatDuplicate_SeqAIJ creates *B with our type name, so *B arrives converted with default parameters */
  PetscCall((*g->hostops.duplicate)(A, op, B));
  PetscCall(MatConvert_SeqAIJ_GPUMat(*B, g->format, MAT_INPLACE_MATRIX, B));
  PetscCall(g->format->copyparameters(A, *B));
  PetscCall(MatGPUMatInvalidatePlan(*B)); /* planned, if at all, with the default parameters */
  ((Mat_GPUMat *)(*B)->spptr)->compress_rows          = g->compress_rows;
  ((Mat_GPUMat *)(*B)->spptr)->explicit_transpose     = g->explicit_transpose;
  ((Mat_GPUMat *)(*B)->spptr)->explicit_transpose_set = g->explicit_transpose_set;
  if (A->boundtocpu) PetscCall(MatBindToCPU(*B, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_GPUMat(Mat A, MatAssemblyType type)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  /* the device copy is rebuilt lazily at the next GPU operation; the object state tells it is stale */
  PetscCall((*g->hostops.assemblyend)(A, type));
  /* our assemblyend gone from its slot means the parent put back a whole saved table (hash assembly) */
  PetscCall(MatGPUMatInstallOps(A, A->ops->assemblyend == MatAssemblyEnd_GPUMat ? GPUMAT_INSTALL_COMPUTE : GPUMAT_INSTALL_ALL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatBindToCPU_GPUMat(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  A->boundtocpu = flg;
  PetscCall(MatGPUMatInstallOps(A, GPUMAT_INSTALL_COMPUTE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_GPUMat(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  PetscBool   flg, set;

  PetscFunctionBegin;
  if (g->hostops.setfromoptions) PetscCall((*g->hostops.setfromoptions)(A, PetscOptionsObject));
  PetscOptionsHeadBegin(PetscOptionsObject, g->format->title);
  PetscCall(PetscOptionsBool("-mat_gpumat_compressed_rows", "Keep only the nonempty rows on the device (MPI off-diagonal blocks always do)", "MatGPUMatSetCompressedRows", g->compress_rows, &flg, &set));
  if (set) PetscCall(MatGPUMatSetCompressedRows_GPUMat(A, flg));
  PetscCall(PetscOptionsBool("-mat_gpumat_explicit_transpose", "Transposed products multiply an explicit transpose of the same type kept on the device (unset: rectangular matrices multiply their transpose, formed on the device from their device CSR; false: the transposed kernels)", "", g->explicit_transpose_set ? g->explicit_transpose : PETSC_FALSE, &flg, &set));
  if (set) {
    g->explicit_transpose     = flg;
    g->explicit_transpose_set = PETSC_TRUE;
    if (!flg) PetscCall(MatDestroy(&g->transpose));
  }
  PetscCall(PetscOptionsBool("-mat_cusparse_use_cpu_solve", "cuSPARSE's LU and ILU factors (-pc_factor_mat_solver_type cusparse) factor and solve on the host, as for aijcusparse; with no solver type named, the host factor", "MatCUSPARSESetUseCPUSolve", g->cpu_solve, &g->cpu_solve, NULL));
  PetscCall(MatGPUMatProgramOptions(PetscOptionsObject));
  PetscCall(g->format->setfromoptions(A, PetscOptionsObject));
  PetscOptionsHeadEnd();
  PetscCall(MatGPUMatInstallOps(A, GPUMAT_INSTALL_COMPUTE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  SeqAIJ's MatGetInfo(), with never fewer entries allocated than used: SeqAIJ counts none for a matrix made over given
  arrays (MatCreateSeqAIJWithArrays(); a sparse product's result, made over cuSPARSE's), which -ksp_view would print
  as "allocated nonzeros=0"; those arrays hold exactly the entries used
*/
PetscErrorCode MatGetInfo_GPUMat(Mat A, MatInfoType flag, MatInfo *info)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*g->hostops.getinfo)(A, flag, info));
  if (info->nz_allocated < info->nz_used) {
    info->nz_allocated = info->nz_used;
    info->nz_unneeded  = 0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatGetInfo_GPUMat(Mat A, MatGPUMatInfo *info)
{
  Mat_GPUMat     *g = (Mat_GPUMat *)A->spptr;
  const PetscInt *ai;
  PetscInt        m;
  PetscObjectState state;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(info, sizeof(*info)));
  PetscCall(MatGetLocalSize(A, &m, &info->cols));
  info->rows = m;
  PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, NULL, NULL, NULL));
  info->nnz          = m ? ai[m] : 0;
  info->csr_bytes    = (size_t)(m + 1) * sizeof(int) + (size_t)info->nnz * (sizeof(int) + sizeof(PetscScalar));
  info->bound_to_cpu = A->boundtocpu;
  PetscCall(PetscObjectStateGet((PetscObject)A, &state));
  info->device_valid = (PetscBool)(g->built && !g->rebuild && g->state == state && g->nonzerostate == A->nonzerostate);
  PetscCall(g->format->getinfo(A, info));
  if (g->built && g->cai) { /* the row map, the row offsets and the work vector of compressed rows */
    info->index_count += 2 * g->mdev + 1;
    info->device_bytes += (size_t)g->mdev * (sizeof(PetscInt) + sizeof(PetscScalar)) + (size_t)(g->mdev + 1) * sizeof(PetscInt);
  }
  if (g->d_ai) info->device_bytes += (size_t)(m + 1) * sizeof(PetscInt); /* the row offsets the base keeps for value refreshes */
  if (g->csr.mat) info->device_csr_bytes = (size_t)(m + 1) * sizeof(PetscInt) + (size_t)info->nnz * (sizeof(PetscInt) + sizeof(PetscScalar));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatGetCompressedRows_GPUMat(Mat A, PetscBool *flg)
{
  PetscFunctionBegin;
  *flg = ((Mat_GPUMat *)A->spptr)->compress_rows;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatSetCompressedRows_GPUMat(Mat A, PetscBool flg)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  if (g->compress_rows != flg) PetscCall(MatGPUMatInvalidateStructure(A));
  g->compress_rows = flg;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_GPUMat(Mat A, PetscViewer viewer)
{
  Mat_GPUMat       *g = (Mat_GPUMat *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat fmt;
  MatGPUMatInfo     info;

  PetscFunctionBegin;
  if (g->hostops.view) PetscCall((*g->hostops.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &fmt));
  if (fmt != PETSC_VIEWER_ASCII_INFO && fmt != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatGetInfo_GPUMat(A, &info));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s GPU storage:\n", g->format->name));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(g->format->view(A, viewer));
  if (g->built && g->cai) PetscCall(PetscViewerASCIIPrintf(viewer, "compressed rows: the device copy holds the %" PetscInt_FMT " nonempty rows of %" PetscInt_FMT "\n", g->mdev, A->rmap->n));
  else if (g->compress_rows && !g->built) PetscCall(PetscViewerASCIIPrintf(viewer, "compressed rows: only the nonempty rows will be kept on the device\n"));
  if (g->built) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "stored entries %" PetscCount_FMT " for %" PetscCount_FMT " nonzeros (fill %.3f, padding %.1f%% of nnz)\n", info.stored, info.nnz, info.nnz ? (double)info.stored / (double)info.nnz : 1.0,
                                     info.nnz ? 100.0 * (double)(info.stored - info.nnz) / (double)info.nnz : 0.0));
    PetscCall(PetscViewerASCIIPrintf(viewer, "device memory %zu bytes (32-bit CSR would need %zu bytes: ratio %.3f)\n", info.device_bytes, info.csr_bytes, info.csr_bytes ? (double)info.device_bytes / (double)info.csr_bytes : 0.0));
    if (info.device_csr_bytes) PetscCall(PetscViewerASCIIPrintf(viewer, "beside it, the device CSR that cuSPARSE's products and factorizations read and the format is refreshed from: %zu bytes\n", info.device_csr_bytes));
  }
  {
    VecType vtype;

    PetscCall(MatGPUMatDefaultVecType(&vtype));
    if (strcmp(vtype, VECCUDA)) PetscCall(PetscViewerASCIIPrintf(viewer, "no usable CUDA device: MatCreateVecs() gives host vectors and the products run on the host (counted in the event GPUMatHostFallback)\n"));
    else {
      PetscCall(MatGPUMatUploadView(viewer));
      PetscCall(MatGPUMatDiagonalView(A, viewer));
    }
    PetscCall(MatGPUMatHostThreadsView(viewer));
  }
  if (g->trisolve_why[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "triangular solves of its factor (no solver type named): on the %s, %s\n", g->trisolve_device ? "device (cusparse)" : "host (petsc)", g->trisolve_why));
  if (g->transpose) PetscCall(PetscViewerASCIIPrintf(viewer, "transposed products: an explicit transpose of the same type (-mat_gpumat_explicit_transpose)\n"));
  else if (g->dtranspose) PetscCall(PetscViewerASCIIPrintf(viewer, "transposed products: a forward product of its transpose, formed on the device from %s (%.1f MB)\n", MatGPUMatDeviceTransposeSource(g->dtranspose), (double)MatGPUMatDeviceTransposeBytes(g->dtranspose) / 1048576.0));
  /* one state, one line */
  PetscCall(PetscViewerASCIIPrintf(viewer, "device copy %s%s\n", !g->built ? "not built yet (it is built at the first GPU product)" : info.device_valid ? "up to date" : "stale (refreshed at the next GPU product)", A->boundtocpu ? "; bound to the CPU (host ops in use)" : ""));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Format data of A, checking that A is of `format` or of a format that stands for it (the choosing type's candidates) */
PetscErrorCode MatGPUMatGetData(Mat A, const MatGPUFormat *format, void *data)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;
  void       *d = NULL;

  PetscFunctionBegin;
  if (g && g->format == format) d = g->data;
  else if (g && g->format->inner) PetscCall(g->format->inner(A, format, &d));
  PetscCheck(d, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_WRONG, "Matrix of type %s is not %s", ((PetscObject)A)->type_name, format->seqtype);
  *(void **)data = d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A structural parameter changed: the next GPU operation rebuilds the device structure. */
/* Whether X is of a petscgpumat type (seq or MPI: both compose MatGPUMatGetInfo_C) */
PetscBool MatGPUMatIsOurs(Mat X)
{
  PetscErrorCode (*f)(void) = NULL;

  return (PetscBool)(X && X->spptr && !PetscObjectQueryFunction((PetscObject)X, "MatGPUMatGetInfo_C", &f) && f);
}

PetscErrorCode MatGPUMatInvalidateStructure(Mat A)
{
  Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

  PetscFunctionBegin;
  g->rebuild       = PETSC_TRUE;
  g->planned.valid = PETSC_FALSE; /* a structural parameter: plan and build again */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatGPUMatGetInfo - What a petscgpumat matrix stores on the device: stored entries (padding included),
  device bytes, and the bytes 32-bit CSR would need

  Not Collective

  Input Parameter:
. A - a matrix of a petscgpumat type (`MATSEQELLRCUDA`, ...)

  Output Parameter:
. info - the sizes, see `MatGPUMatInfo`

  Level: intermediate

  Note:
  The stored entries and device bytes are those of the last device build; before the first GPU product
  they are computed from the host matrix without building anything.

.seealso: `MatGPUMatInfo`, `MATSEQELLRCUDA`, `MatView()`
@*/
PetscErrorCode MatGPUMatGetInfo(Mat A, MatGPUMatInfo *info)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(info, 2);
  PetscUseMethod(A, "MatGPUMatGetInfo_C", (Mat, MatGPUMatInfo *), (A, info));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatGPUMatSetCompressedRows - Keep only the nonempty rows of a petscgpumat matrix on the device

  Logically Collective

  Input Parameters:
+ A   - a seq petscgpumat matrix (`MATSEQELLRCUDA`, `MATSEQCMRSCUDA`, `MATSEQRGCSRCUDA`)
- flg - `PETSC_TRUE` to compress

  Options Database Key:
. -mat_gpumat_compressed_rows <bool> - compress the rows

  Level: developer

  Notes:
  The format is built on the nonempty rows only and its products are computed into a work vector, then added
  to the output rows (a transpose product gathers the input first). This is what the MPI types do with their
  off-diagonal blocks, whose rows are mostly empty; a padded format (ELLPACK-R) would otherwise store whole
  columns of padding. It costs a short extra pass when few rows are empty. Matrices of other types ignore it.

.seealso: `MatGPUMatGetInfo()`, `MATMPIELLRCUDA`
@*/
PetscErrorCode MatGPUMatSetCompressedRows(Mat A, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveBool(A, flg, 2);
  PetscTryMethod(A, "MatGPUMatSetCompressedRows_C", (Mat, PetscBool), (A, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatGPUMatGetCompressedRows - Gets whether a seq petscgpumat matrix keeps only its nonempty rows on the device

  Not Collective

  Input Parameter:
. A - a seq petscgpumat matrix

  Output Parameter:
. flg - `PETSC_TRUE` if compressed

  Level: developer

.seealso: `MatGPUMatSetCompressedRows()`
@*/
PetscErrorCode MatGPUMatGetCompressedRows(Mat A, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(flg, 2);
  PetscUseMethod(A, "MatGPUMatGetCompressedRows_C", (Mat, PetscBool *), (A, flg));
  PetscFunctionReturn(PETSC_SUCCESS);
}
