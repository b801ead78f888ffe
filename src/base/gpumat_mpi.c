/*
  The MPI types, written once for every format: a MATMPIAIJ whose diagonal and off-diagonal blocks are seq
  petscgpumat matrices of one format.

  MPIAIJ keeps doing what it does (preallocation, MatSetValues, assembly, MatLoad, the column map of the
  off-diagonal block). It creates its blocks as MATSEQAIJ; they become our seq type when the matrix is
  assembled (or at the next product, for paths such as COO that assemble without MatAssemblyEnd()), and get
  the format's parameters from a 0 x 0 seq matrix of the format, the parameter holder. The off-diagonal block
  keeps only its nonempty rows on the device (MatGPUMatSetCompressedRows()).

  The products are ours: the halo exchange of x into a ghost vector (a device vector when x is one) runs while
  the diagonal block multiplies, then the off-diagonal block adds its part.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice.h>

typedef struct {
  const MatGPUFormat *format;
  struct _MatOps      hostops;       /* the MPIAIJ ops: chained to, and restored by conversion back */
  Mat                 params;        /* 0 x 0 seq matrix of the format: the parameters the blocks get */
  Mat                 diag, offdiag; /* the blocks last set up (no reference: compared with MPIAIJ's to notice new ones) */
  PetscObjectState    halostate;     /* the nonzero state the halo was built for */
  PetscBool           halo_built;
  VecScatter          halo;     /* x -> the entries of x the off-diagonal block multiplies */
  MatGPUMatHalo      *staged;   /* the same exchange for forward products, overlapping the diagonal block (NULL: use halo) */
  PetscBool           use_vecscatter; /* -mat_gpumat_halo_vecscatter: forward products use PETSc's VecScatter too */
  PetscBool           no_ipc;         /* -mat_gpumat_halo_ipc 0: the exchange never uses CUDA IPC */
  PetscBool           device_products; /* -mat_gpumat_mpi_device_products: MPIAIJ's backend products, local ones on the device */
  Vec                 ghost[2]; /* those entries on the host [0] and on the device [1], created at first use */
  PetscInt            nghost;
} Mat_MPIGPUMat;

static PetscErrorCode MatDestroy_MPIGPUMat(Mat);
static PetscErrorCode MatDuplicate_MPIGPUMat(Mat, MatDuplicateOption, Mat *);
static PetscErrorCode MatAssemblyEnd_MPIGPUMat(Mat, MatAssemblyType);
static PetscErrorCode MatSetFromOptions_MPIGPUMat(Mat, PetscGPUMatOptionItems);
static PetscErrorCode MatBindToCPU_MPIGPUMat(Mat, PetscBool);
static PetscErrorCode MatView_MPIGPUMat(Mat, PetscViewer);
static PetscErrorCode MatMult_MPIGPUMat(Mat, Vec, Vec);
static PetscErrorCode MatMultAdd_MPIGPUMat(Mat, Vec, Vec, Vec);
static PetscErrorCode MatMultTranspose_MPIGPUMat(Mat, Vec, Vec);
static PetscErrorCode MatMultTransposeAdd_MPIGPUMat(Mat, Vec, Vec, Vec);
static PetscErrorCode MatConvert_MPIAIJ_MPIGPUMatByName(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_MPIGPUMat_MPIAIJ(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatConvert_MPIGPUMat_ViaMPIAIJ(Mat, MatType, MatReuse, Mat *);
static PetscErrorCode MatGPUMatGetInfo_MPIGPUMat(Mat, MatGPUMatInfo *);
static PetscErrorCode MatGPUMatMPIGetParameters_MPIGPUMat(Mat, Mat *);

/* Other MPI GPU types reached through MATMPIAIJ */
static const char *const via_mpiaij_targets[] = {"mpiaijcusparse", "aijcusparse", "mpisellcuda", "sellcuda", "mpisell", "sell"};

/* Installed at conversion (all) and after each chained MPIAIJ call that may rewrite slots (see GPUMAT_LIFECYCLE_SLOTS) */
static PetscErrorCode MatMPIGPUMatInstallOps(Mat A, MatGPUMatInstallWhat what)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;

  PetscFunctionBegin;
#define GPUMAT_SLOT_OVERRIDE(op, fn) GPUMAT_OVERRIDE(A, m, op, fn);
#define GPUMAT_SLOT_RESTORE(op, fn)  GPUMAT_RESTORE(A, m, op, fn);
  if (what == GPUMAT_INSTALL_ALL) {
    GPUMAT_LIFECYCLE_SLOTS(GPUMAT_SLOT_OVERRIDE, _MPIGPUMat)
    GPUMAT_MPI_SLOTS(GPUMAT_SLOT_OVERRIDE, _MPIGPUMat)
  }
  GPUMAT_COMPUTE_SLOTS(GPUMAT_SLOT_OVERRIDE, _MPIGPUMat)
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMPIGPUMatUninstallOps(Mat A)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;

  PetscFunctionBegin;
  GPUMAT_LIFECYCLE_SLOTS(GPUMAT_SLOT_RESTORE, _MPIGPUMat)
  GPUMAT_MPI_SLOTS(GPUMAT_SLOT_RESTORE, _MPIGPUMat)
  GPUMAT_COMPUTE_SLOTS(GPUMAT_SLOT_RESTORE, _MPIGPUMat)
#undef GPUMAT_SLOT_OVERRIDE
#undef GPUMAT_SLOT_RESTORE
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every function composed on an MPI matrix of `format` (compose = PETSC_FALSE removes them) */
static PetscErrorCode MatMPIGPUMatComposeAll(Mat A, const MatGPUFormat *format, PetscBool compose)
{
  char                       self[64];
  const char                *root = format->seqtype + 6; /* seqaijellrcuda -> ellrcuda */
  PetscInt                   n;
  const MatGPUFormat *const *formats;
  const char *const         *roots;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(self, sizeof(self), "mpi%s", format->seqtype + 3));
  /* MatConvert() searches the target type's new matrix for "MatConvert_mpiaij_<target>_C" */
  PetscCall(MatGPUMatComposeConvert(A, "mpiaij", self, compose ? MatConvert_MPIAIJ_MPIGPUMatByName : NULL));
  PetscCall(MatGPUMatComposeConvert(A, "mpiaij", root, compose ? MatConvert_MPIAIJ_MPIGPUMatByName : NULL));
  PetscCall(MatGPUMatComposeConvert(A, "mpiaij", format->seqtype + 3, compose ? MatConvert_MPIAIJ_MPIGPUMatByName : NULL)); /* aij<root> */
  PetscCall(MatGPUMatComposeConvert(A, self, "mpiaij", compose ? MatConvert_MPIGPUMat_MPIAIJ : NULL));
  PetscCall(MatGPUMatComposeConvert(A, self, "aij", compose ? MatConvert_MPIGPUMat_MPIAIJ : NULL));
  PetscCall(MatGPUMatRegisteredTypes(&n, &formats, &roots));
  for (PetscInt f = 0; f < n; f++) {
    char other[64];

    if (formats[f] == format) continue;
    PetscCall(PetscSNPrintf(other, sizeof(other), "mpi%s", formats[f]->seqtype + 3));
    PetscCall(MatGPUMatComposeConvert(A, self, other, compose ? MatConvert_MPIGPUMat_ViaMPIAIJ : NULL));
    PetscCall(MatGPUMatComposeConvert(A, self, roots[f], compose ? MatConvert_MPIGPUMat_ViaMPIAIJ : NULL));
  }
  for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(via_mpiaij_targets); t++) PetscCall(MatGPUMatComposeConvert(A, self, via_mpiaij_targets[t], compose ? MatConvert_MPIGPUMat_ViaMPIAIJ : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatGPUMatGetInfo_C", compose ? MatGPUMatGetInfo_MPIGPUMat : NULL));
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatGPUMatMPIGetParameters_C", compose ? MatGPUMatMPIGetParameters_MPIGPUMat : NULL));
  /* asked by MatProductSetFromOptions() when the operands' types differ: dense matrices know MPIAIJ by name only */
  PetscCall(PetscObjectComposeFunction((PetscObject)A, "MatProductSetFromOptions_anytype_C", compose ? MatProductSetFromOptions_GPUMatAsParent : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatMPIGetParameters_MPIGPUMat(Mat A, Mat *params)
{
  PetscFunctionBegin;
  *params = ((Mat_MPIGPUMat *)A->spptr)->params;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool MatGPUMatIsFormat(Mat X, const MatGPUFormat *format)
{
  return (PetscBool)(X && X->spptr && ((Mat_GPUMat *)X->spptr)->format == format);
}

/* The matrices a public setter applies to: A, or for an MPI type its parameter holder and its blocks */
PetscErrorCode MatGPUMatParameterTargets(Mat A, PetscInt *n, Mat targets[])
{
  PetscErrorCode (*get)(Mat, Mat *);

  PetscFunctionBegin;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatGPUMatMPIGetParameters_C", &get));
  *n         = 1;
  targets[0] = A;
  if (get) {
    Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
    Mat            Ad = NULL, Ao = NULL;

    PetscCall((*get)(A, &targets[0]));
    if (A->preallocated) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
    if (MatGPUMatIsFormat(Ad, m->format)) targets[(*n)++] = Ad;
    if (MatGPUMatIsFormat(Ao, m->format)) targets[(*n)++] = Ao;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The matrix a public getter asks: A, or for an MPI type its diagonal block (its parameter holder before assembly) */
PetscErrorCode MatGPUMatParameterSource(Mat A, Mat *source)
{
  PetscErrorCode (*get)(Mat, Mat *);

  PetscFunctionBegin;
  *source = A;
  PetscCall(PetscObjectQueryFunction((PetscObject)A, "MatGPUMatMPIGetParameters_C", &get));
  if (get) {
    Mat_MPIGPUMat *m  = (Mat_MPIGPUMat *)A->spptr;
    Mat            Ad = NULL;

    PetscCall((*get)(A, source));
    if (A->preallocated) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, NULL, NULL));
    if (MatGPUMatIsFormat(Ad, m->format)) *source = Ad;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Make a block of MPIAIJ our seq type with the holder's parameters (new blocks only: MPIAIJ replaces them at
   preallocation and when new off-process columns appear) */
static PetscErrorCode MatMPIGPUMatSetUpBlock(Mat A, Mat X, PetscBool offdiag, Mat *last)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;

  PetscFunctionBegin;
  if (!X) PetscFunctionReturn(PETSC_SUCCESS);
  if (!MatGPUMatIsFormat(X, m->format)) {
    PetscCheck(!X->spptr, PETSC_COMM_SELF, PETSC_ERR_PLIB, "The %s block of %s is of type %s", offdiag ? "off-diagonal" : "diagonal", ((PetscObject)A)->type_name, ((PetscObject)X)->type_name);
    PetscCall(MatConvert_SeqAIJ_GPUMat(X, m->format, MAT_INPLACE_MATRIX, &X));
  }
  if (X != *last) {
    PetscCall(m->format->copyparameters(m->params, X));
    PetscCall(MatGPUMatInvalidateStructure(X));
    if (offdiag) PetscCall(MatGPUMatSetCompressedRows(X, PETSC_TRUE));
    if (A->boundtocpu != X->boundtocpu) PetscCall(MatBindToCPU(X, A->boundtocpu));
    *last = X;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMPIGPUMatDestroyHalo(Mat_MPIGPUMat *m)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatHaloDestroy(&m->staged));
  PetscCall(VecScatterDestroy(&m->halo));
  PetscCall(VecDestroy(&m->ghost[0]));
  PetscCall(VecDestroy(&m->ghost[1]));
  m->halo_built = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Collective: both blocks of our type, and the halo of the current column map (rebuilt when the nonzero state,
  which MPIAIJ keeps equal on all ranks, changes). `assembled`: A is assembled (MatAssemblyEnd() marks it so only
  after our assemblyend op returns).
*/
static PetscErrorCode MatMPIGPUMatSetUp_Private(Mat A, PetscBool assembled)
{
  Mat_MPIGPUMat  *m = (Mat_MPIGPUMat *)A->spptr;
  Mat             Ad, Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  if (!A->preallocated || !assembled) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, &garray));
  PetscCall(MatMPIGPUMatSetUpBlock(A, Ad, PETSC_FALSE, &m->diag));
  PetscCall(MatMPIGPUMatSetUpBlock(A, Ao, PETSC_TRUE, &m->offdiag));
  if (m->halo_built && m->halostate == A->nonzerostate) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatMPIGPUMatDestroyHalo(m));
  {
    IS  cols;
    Vec gx, lx;

    m->nghost = Ao ? Ao->cmap->n : 0;
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, m->nghost, garray, PETSC_USE_POINTER, &cols));
    PetscCall(VecCreateMPIWithArray(PetscObjectComm((PetscObject)A), 1, A->cmap->n, A->cmap->N, NULL, &gx));
    PetscCall(VecCreateSeqWithArray(PETSC_COMM_SELF, 1, m->nghost, NULL, &lx));
    PetscCall(VecScatterCreate(gx, cols, lx, NULL, &m->halo));
    PetscCall(MatGPUMatHaloCreate(A, m->halo, (PetscBool)!m->no_ipc, &m->staged));
    PetscCall(VecDestroy(&lx));
    PetscCall(VecDestroy(&gx));
    PetscCall(ISDestroy(&cols));
  }
  m->halostate  = A->nonzerostate;
  m->halo_built = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The blocks and the ghost vector for a product with input x: on the device when x is a device vector */
static PetscErrorCode MatMPIGPUMatPrepare(Mat A, Vec x, Mat *Ad, Mat *Ao, Vec *ghost, PetscBool *device)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
  PetscBool      iscuda, bound;
  PetscInt       d;

  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatSetUp_Private(A, A->assembled));
  PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, NULL));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)x, &iscuda, VECMPICUDA, VECSEQCUDA, ""));
  PetscCall(VecBoundToCPU(x, &bound));
  d = (iscuda && !bound && !A->boundtocpu) ? 1 : 0;
  if (!m->ghost[d]) {
    PetscCall(VecCreate(PETSC_COMM_SELF, &m->ghost[d]));
    PetscCall(VecSetSizes(m->ghost[d], m->nghost, m->nghost));
    PetscCall(VecSetType(m->ghost[d], d ? VECSEQCUDA : VECSEQ));
  }
  *ghost = m->ghost[d];
  if (device) *device = (PetscBool)d;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The stream of PETSc's current device context, on which our products run */
static PetscErrorCode MatMPIGPUMatStream(PetscBool device, void **stream)
{
  PetscFunctionBegin;
  *stream = NULL;
  if (device) PetscCall(MatGPUMatGetStream(stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  z = A x (+ y): the diagonal block's product is queued first; the halo exchange of x's off-process entries into
  the ghost vector runs while it computes; then the off-diagonal block adds its part
*/
static PetscErrorCode MatMPIGPUMatForwardProduct(Mat A, Vec x, Vec y, Vec z)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
  Mat            Ad, Ao;
  Vec            ghost, ysave;
  PetscBool      device;

  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatPrepare(A, x, &Ad, &Ao, &ghost, &device));
  if (device) PetscCall(MatGPUMatCheckProductBegin(y, z, &ysave));
  if (m->staged && !m->use_vecscatter) {
    void *stream;

    PetscCall(MatMPIGPUMatStream(device, &stream));
    PetscCall(MatGPUMatHaloBegin(A, m->staged, x, device, stream));
    if (y) PetscUseTypeMethod(Ad, multadd, x, y, z);
    else PetscUseTypeMethod(Ad, mult, x, z);
    PetscCall(MatGPUMatHaloEnd(m->staged, x, ghost, device, stream));
    PetscUseTypeMethod(Ao, multadd, ghost, z, z);
    PetscCall(MatGPUMatHaloRelease(m->staged, ghost, device, stream));
  } else {
    PetscCall(VecScatterBegin(m->halo, x, ghost, INSERT_VALUES, SCATTER_FORWARD));
    if (y) PetscUseTypeMethod(Ad, multadd, x, y, z);
    else PetscUseTypeMethod(Ad, mult, x, z);
    PetscCall(VecScatterEnd(m->halo, x, ghost, INSERT_VALUES, SCATTER_FORWARD));
    PetscUseTypeMethod(Ao, multadd, ghost, z, z);
  }
  if (device) {
    PetscCall(MatGPUMatCheckProductEnd(A, &m->hostops, x, y, ysave, z, PETSC_FALSE));
    PetscCall(VecDestroy(&ysave));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMult_MPIGPUMat(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatForwardProduct(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultAdd_MPIGPUMat(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatForwardProduct(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A^T x (+ y): the off-diagonal block's part goes to the ghost vector and is added to its owners */
static PetscErrorCode MatMPIGPUMatTransposeProduct(Mat A, Vec x, Vec y, Vec z)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
  Mat            Ad, Ao;
  Vec            ghost, ysave;
  PetscBool      device;

  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatPrepare(A, x, &Ad, &Ao, &ghost, &device));
  if (device) PetscCall(MatGPUMatCheckProductBegin(y, z, &ysave));
  PetscUseTypeMethod(Ao, multtranspose, x, ghost);
  if (y) PetscUseTypeMethod(Ad, multtransposeadd, x, y, z);
  else PetscUseTypeMethod(Ad, multtranspose, x, z);
  PetscCall(VecScatterBegin(m->halo, ghost, z, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(m->halo, ghost, z, ADD_VALUES, SCATTER_REVERSE));
  if (device) {
    PetscCall(MatGPUMatCheckProductEnd(A, &m->hostops, x, y, ysave, z, PETSC_TRUE));
    PetscCall(VecDestroy(&ysave));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTranspose_MPIGPUMat(Mat A, Vec x, Vec y)
{
  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatTransposeProduct(A, x, NULL, y));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatMultTransposeAdd_MPIGPUMat(Mat A, Vec x, Vec y, Vec z)
{
  PetscFunctionBegin;
  PetscCall(MatMPIGPUMatTransposeProduct(A, x, y, z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatAssemblyEnd_MPIGPUMat(Mat A, MatAssemblyType type)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;

  PetscFunctionBegin;
  PetscCall((*m->hostops.assemblyend)(A, type));
  if (type == MAT_FINAL_ASSEMBLY) PetscCall(MatMPIGPUMatSetUp_Private(A, PETSC_TRUE));
  /* our assemblyend gone from its slot means MPIAIJ put back a whole saved table (hash assembly) */
  PetscCall(MatMPIGPUMatInstallOps(A, A->ops->assemblyend == MatAssemblyEnd_MPIGPUMat ? GPUMAT_INSTALL_COMPUTE : GPUMAT_INSTALL_ALL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatBindToCPU_MPIGPUMat(Mat A, PetscBool flg)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
  Mat            Ad = NULL, Ao = NULL;

  PetscFunctionBegin;
  /* MPIAIJ's binds its blocks and its own vectors; ours then take the host ghost vector */
  if (m->hostops.bindtocpu) PetscCall((*m->hostops.bindtocpu)(A, flg));
  else if (A->preallocated) {
    PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
    if (Ad) PetscCall(MatBindToCPU(Ad, flg));
    if (Ao) PetscCall(MatBindToCPU(Ao, flg));
  }
  A->boundtocpu = flg;
  PetscCall(MatMPIGPUMatInstallOps(A, GPUMAT_INSTALL_COMPUTE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatSetFromOptions_MPIGPUMat(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
  PetscInt       n;
  Mat            targets[3];

  PetscFunctionBegin;
  if (m->hostops.setfromoptions) PetscCall((*m->hostops.setfromoptions)(A, PetscOptionsObject));
  /* the options of A's prefix set the holder's parameters, which then go to both blocks */
  PetscOptionsHeadBegin(PetscOptionsObject, m->format->title);
  PetscCall(PetscOptionsBool("-mat_gpumat_halo_vecscatter", "Forward products exchange ghost values with PETSc's VecScatter instead of our exchange", "", m->use_vecscatter, &m->use_vecscatter, NULL));
  {
    PetscBool ipc = (PetscBool)!m->no_ipc;

    PetscCall(PetscOptionsBool("-mat_gpumat_halo_ipc", "Our exchange goes device to device through CUDA IPC when every neighbour rank is on the same node (else staged through pinned host buffers)", "", ipc, &ipc, NULL));
    if (ipc == m->no_ipc) {
      m->no_ipc = (PetscBool)!ipc;
      PetscCall(MatMPIGPUMatDestroyHalo(m)); /* rebuilt at the next product */
    }
  }
  PetscCall(PetscOptionsBool("-mat_gpumat_mpi_device_products", "Sparse products (AB, AtB, PtAP) by MPIAIJ's backend algorithm: the local products on the device, assembled on the host", "MatProductSetFromOptions", m->device_products, &m->device_products, NULL));
  PetscCall(MatGPUMatProgramOptions(PetscOptionsObject));
  PetscCall(m->format->setfromoptions(m->params, PetscOptionsObject));
  PetscOptionsHeadEnd();
  PetscCall(MatGPUMatParameterTargets(A, &n, targets));
  for (PetscInt i = 1; i < n; i++) {
    PetscCall(m->format->copyparameters(m->params, targets[i]));
    PetscCall(MatGPUMatInvalidateStructure(targets[i]));
  }
  PetscCall(MatMPIGPUMatInstallOps(A, GPUMAT_INSTALL_COMPUTE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sums over the two local blocks (local rows and columns of A) */
static PetscErrorCode MatGPUMatGetInfo_MPIGPUMat(Mat A, MatGPUMatInfo *info)
{
  Mat           Ad = NULL, Ao = NULL;
  MatGPUMatInfo b[2];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(info, sizeof(*info)));
  PetscCall(PetscMemzero(b, sizeof(b)));
  PetscCall(MatGetLocalSize(A, &info->rows, &info->cols));
  info->bound_to_cpu = A->boundtocpu;
  if (A->preallocated) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (!Ad || !Ad->spptr || !Ao || !Ao->spptr) PetscFunctionReturn(PETSC_SUCCESS); /* blocks not set up yet */
  PetscCall(MatGPUMatGetInfo(Ad, &b[0]));
  PetscCall(MatGPUMatGetInfo(Ao, &b[1]));
  for (PetscInt i = 0; i < 2; i++) {
    info->nnz += b[i].nnz;
    info->stored += b[i].stored;
    info->read_entries += b[i].read_entries;
    info->index_count += b[i].index_count;
    info->device_bytes += b[i].device_bytes;
  }
  info->csr_bytes    = b[0].csr_bytes + b[1].csr_bytes - (size_t)(info->rows + 1) * sizeof(int); /* one row pointer array */
  info->device_valid = (PetscBool)(b[0].device_valid && b[1].device_valid);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatView_MPIGPUMat(Mat A, PetscViewer viewer)
{
  Mat_MPIGPUMat    *m = (Mat_MPIGPUMat *)A->spptr;
  PetscBool         isascii;
  PetscViewerFormat fmt;
  Mat               Ad = NULL, Ao = NULL;
  MatGPUMatInfo     d, o;
  PetscMPIInt       rank;

  PetscFunctionBegin;
  if (m->hostops.view) PetscCall((*m->hostops.view)(A, viewer));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscViewerGetFormat(viewer, &fmt));
  if (fmt != PETSC_VIEWER_ASCII_INFO && fmt != PETSC_VIEWER_ASCII_INFO_DETAIL) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)A), &rank));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s GPU storage of the local blocks (the off-diagonal one keeps its nonempty rows only):\n", m->format->name));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  if (A->preallocated) PetscCall(MatMPIAIJGetSeqAIJ(A, &Ad, &Ao, NULL));
  if (MatGPUMatIsFormat(Ad, m->format) && MatGPUMatIsFormat(Ao, m->format)) {
    PetscViewer sub;

    PetscCall(MatGPUMatGetInfo(Ad, &d));
    PetscCall(MatGPUMatGetInfo(Ao, &o));
    PetscCall(PetscViewerASCIIPushSynchronized(viewer));
    PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "[%d] diagonal %" PetscInt_FMT " x %" PetscInt_FMT ", %" PetscCount_FMT " nonzeros; off-diagonal %" PetscInt_FMT " x %" PetscInt_FMT " (ghost columns), %" PetscCount_FMT " nonzeros; device memory %zu + %zu bytes%s\n", rank, d.rows, d.cols, d.nnz,
                                                 o.rows, o.cols, o.nnz, d.device_bytes, o.device_bytes, d.device_valid && o.device_valid ? "" : " (device copy stale or not built yet)"));
    PetscCall(PetscViewerFlush(viewer));
    PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    /* the format's parameters and layout, as rank 0's blocks show them (they plan, or choose, each for its own rows) */
    PetscCall(PetscViewerGetSubViewer(viewer, PETSC_COMM_SELF, &sub));
    if (rank == 0) {
      Mat         blocks[2] = {Ad, Ao};
      const char *names[2]  = {"diagonal block", "off-diagonal block (its nonempty rows)"};

      for (int b = 0; b < 2; b++) {
        PetscCall(PetscViewerASCIIPrintf(sub, "rank 0, %s:\n", names[b]));
        PetscCall(PetscViewerASCIIPushTab(sub));
        PetscCall(PetscViewerPushFormat(sub, PETSC_VIEWER_ASCII_INFO));
        PetscCall(((Mat_GPUMat *)blocks[b]->spptr)->format->view(blocks[b], sub));
        PetscCall(PetscViewerPopFormat(sub));
        PetscCall(PetscViewerASCIIPopTab(sub));
      }
    }
    PetscCall(PetscViewerRestoreSubViewer(viewer, PETSC_COMM_SELF, &sub));
  } else PetscCall(PetscViewerASCIIPrintf(viewer, "blocks not set up yet (they are at assembly)\n"));
  if (m->halo_built) {
    const char *what;

    PetscCall(MatGPUMatHaloDescribe(m->use_vecscatter ? NULL : m->staged, &what));
    PetscCall(PetscViewerASCIIPrintf(viewer, "halo exchange of forward products: %s\n", what));
  }
  if (A->boundtocpu) PetscCall(PetscViewerASCIIPrintf(viewer, "bound to the CPU (host ops in use)\n"));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Make the MPIAIJ matrix A (or a copy) an MPI petscgpumat matrix of `format`; a matrix already of it is left alone */
static PetscErrorCode MatConvert_MPIAIJ_MPIGPUMat(Mat A, const MatGPUFormat *format, MatReuse reuse, Mat *newmat)
{
  Mat            B;
  Mat_MPIGPUMat *m;
  char           type[64];

  PetscFunctionBegin;
  PetscCheck(!PetscDefined(USE_COMPLEX), PetscObjectComm((PetscObject)A), PETSC_ERR_SUP, "%s supports real scalars only (this PETSc was configured with complex scalars)", format->name);
  if (reuse == MAT_INITIAL_MATRIX) PetscCall(MatDuplicate(A, MAT_COPY_VALUES, newmat));
  else if (reuse == MAT_REUSE_MATRIX) PetscCall(MatCopy(A, *newmat, SAME_NONZERO_PATTERN));
  B = *newmat;
  if (B->spptr) {
    m = (Mat_MPIGPUMat *)B->spptr;
    PetscCheck(m->format == format, PetscObjectComm((PetscObject)B), PETSC_ERR_PLIB, "Matrix already carries another petscgpumat format");
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&m));
  m->format   = format;
  m->hostops  = *B->ops;
  B->spptr    = m;
  /* the halo options hold from the start, also for the matrices solvers create and never set from options
     (GAMG's coarse operators and prolongators); MatSetFromOptions() may still change them */
  {
    PetscBool ipc = PETSC_TRUE;

    PetscCall(PetscOptionsGetBool(((PetscObject)B)->options, ((PetscObject)B)->prefix, "-mat_gpumat_halo_vecscatter", &m->use_vecscatter, NULL));
    PetscCall(PetscOptionsGetBool(((PetscObject)B)->options, ((PetscObject)B)->prefix, "-mat_gpumat_halo_ipc", &ipc, NULL));
    PetscCall(PetscOptionsGetBool(((PetscObject)B)->options, ((PetscObject)B)->prefix, "-mat_gpumat_mpi_device_products", &m->device_products, NULL));
    m->no_ipc = (PetscBool)!ipc;
  }
  B->boundtocpu = PETSC_FALSE; /* MatCreate() binds every new matrix to the CPU */
  PetscCall(MatCreate(PETSC_COMM_SELF, &m->params));
  PetscCall(MatSetSizes(m->params, 0, 0, 0, 0));
  PetscCall(MatSetType(m->params, format->seqtype));
  PetscCall(MatGPUMatSetVecType(B, PETSC_TRUE));
  PetscCall(MatMPIGPUMatInstallOps(B, GPUMAT_INSTALL_ALL));
  PetscCall(MatMPIGPUMatComposeAll(B, format, PETSC_TRUE));
  PetscCall(PetscSNPrintf(type, sizeof(type), "mpi%s", format->seqtype + 3));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, type));
  PetscCall(MatMPIGPUMatSetUp_Private(B, B->assembled)); /* an assembled matrix gets its blocks converted now */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIAIJ_MPIGPUMatByName(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  const MatGPUFormat *format;

  PetscFunctionBegin;
  PetscCall(MatGPUMatFindFormat(type, &format));
  PetscCall(MatConvert_MPIAIJ_MPIGPUMat(A, format, reuse, newmat));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Back to a plain MATMPIAIJ with MATSEQAIJ blocks and the same host arrays */
static PetscErrorCode MatMPIGPUMatStrip_Private(Mat B)
{
  Mat_MPIGPUMat *m  = (Mat_MPIGPUMat *)B->spptr;
  Mat            Ad = NULL, Ao = NULL;

  PetscFunctionBegin;
  if (B->preallocated) PetscCall(MatMPIAIJGetSeqAIJ(B, &Ad, &Ao, NULL));
  if (MatGPUMatIsFormat(Ad, m->format)) PetscCall(MatConvert(Ad, MATSEQAIJ, MAT_INPLACE_MATRIX, &Ad));
  if (MatGPUMatIsFormat(Ao, m->format)) PetscCall(MatConvert(Ao, MATSEQAIJ, MAT_INPLACE_MATRIX, &Ao));
  PetscCall(MatMPIGPUMatDestroyHalo(m));
  PetscCall(MatDestroy(&m->params));
  PetscCall(MatMPIGPUMatComposeAll(B, m->format, PETSC_FALSE));
  PetscCall(MatMPIGPUMatUninstallOps(B));
  PetscCall(PetscFree(B->spptr));
  PetscCall(MatGPUMatSetVecType(B, PETSC_FALSE));
  PetscCall(PetscObjectChangeTypeName((PetscObject)B, MATMPIAIJ));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIGPUMat_MPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  (void)type; /* the parent type: the only target */
  PetscCall(MatGPUMatConvertToParent(A, reuse, newmat, MatMPIGPUMatStrip_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatConvert_MPIGPUMat_ViaMPIAIJ(Mat A, MatType type, MatReuse reuse, Mat *newmat)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatConvertThroughParent(A, type, reuse, newmat, MatMPIGPUMatStrip_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDestroy_MPIGPUMat(Mat A)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;
  PetscErrorCode (*hostdestroy)(Mat);

  PetscFunctionBegin;
  hostdestroy = m->hostops.destroy;
  PetscCall(MatMPIGPUMatDestroyHalo(m));
  PetscCall(MatDestroy(&m->params));
  PetscCall(MatMPIGPUMatComposeAll(A, m->format, PETSC_FALSE));
  PetscCall(PetscFree(A->spptr));
  PetscCall((*hostdestroy)(A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatDuplicate_MPIGPUMat(Mat A, MatDuplicateOption op, Mat *B)
{
  Mat_MPIGPUMat *m = (Mat_MPIGPUMat *)A->spptr;

  PetscFunctionBegin;
  /* MatDuplicate_MPIAIJ creates *B with our type name and duplicates the blocks, which keep their type and parameters */
  PetscCall((*m->hostops.duplicate)(A, op, B));
  PetscCall(MatConvert_MPIAIJ_MPIGPUMat(*B, m->format, MAT_INPLACE_MATRIX, B));
  PetscCall(m->format->copyparameters(m->params, ((Mat_MPIGPUMat *)(*B)->spptr)->params));
  ((Mat_MPIGPUMat *)(*B)->spptr)->use_vecscatter  = m->use_vecscatter;
  ((Mat_MPIGPUMat *)(*B)->spptr)->device_products = m->device_products;
  if (m->no_ipc) {
    ((Mat_MPIGPUMat *)(*B)->spptr)->no_ipc = PETSC_TRUE;
    PetscCall(MatMPIGPUMatDestroyHalo((Mat_MPIGPUMat *)(*B)->spptr));
  }
  if (A->boundtocpu) PetscCall(MatBindToCPU(*B, PETSC_TRUE));
  PetscCall(MatMPIGPUMatSetUp_Private(*B, (*B)->assembled));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCreate_MPIAIJ<format>CUDA(): an MPIAIJ converted in place (no device is touched; registered, hence initialized) */
PetscErrorCode MatCreate_MPIGPUMat(Mat B, const char seqtype[])
{
  const MatGPUFormat *format;

  PetscFunctionBegin;
  PetscCall(MatGPUMatFindFormat(seqtype, &format));
  PetscCall(MatCreate_MPIAIJ(B));
  PetscCall(MatConvert_MPIAIJ_MPIGPUMat(B, format, MAT_INPLACE_MATRIX, &B));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* MatCreateAIJ<format>CUDA(): seq or MPI by communicator size, preallocated like MatCreateAIJ() */
PetscErrorCode MatCreateMPI_GPUMat(MPI_Comm comm, MatType root, PetscInt m, PetscInt n, PetscInt M, PetscInt N, PetscInt d_nz, const PetscInt d_nnz[], PetscInt o_nz, const PetscInt o_nnz[], Mat *A)
{
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscAssertPointer(A, 11);
  PetscCall(MatCreate(comm, A));
  PetscCall(MatSetSizes(*A, m, n, M, N));
  PetscCall(MatSetType(*A, root));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (size > 1) PetscCall(MatMPIAIJSetPreallocation(*A, d_nz, d_nnz, o_nz, o_nnz));
  else PetscCall(MatSeqAIJSetPreallocation(*A, d_nz, d_nnz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The MPI types' productsetfromoptions: MPIAIJ's own. With -mat_gpumat_mpi_device_products, its "backend" algorithm
  (MatProductSymbolic_MPIAIJBACKEND) becomes the default for AB, AtB and PtAP of operands all of one of our MPI types
  where a device is usable: the products of the local blocks then run on the device as the seq types' do
  (gpumat_product.c), and MPIAIJ assembles the result (COO, on the host) from them. Off by default: on 2 ranks
  sharing an H100 it made GAMG's and Galerkin multigrid's setup slower than MPIAIJ's host algorithms (shadow copies,
  results back to the host, our device copies rebuilt; docs/data/clients-mpi-products-2026-11-23-H100.md; again on
  2026-11-27, 1.07-1.08x aijcusparse against 1.22x, faster only on GAMG elasticity: docs/clients.md). A user's
  algorithm (-matptap_via, -mat_product_algorithm, MatProductSetAlgorithm()) is MPIAIJ's to read and wins.
*/
PetscErrorCode MatProductSetFromOptions_MPIGPUMat(Mat C)
{
  Mat_Product *product = C->product;
  Mat          X[3]    = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL};
  PetscBool    device  = PETSC_FALSE, same = PETSC_TRUE, isdefault;
  VecType      vtype;

  PetscFunctionBegin;
  PetscCall(MatGPUMatDefaultVecType(&vtype));
  if (((Mat_MPIGPUMat *)product->A->spptr)->device_products && !strcmp(vtype, VECCUDA) && !C->structure_only && (product->type == MATPRODUCT_AB || product->type == MATPRODUCT_AtB || product->type == MATPRODUCT_PtAP)) {
    device = PETSC_TRUE;
    for (PetscInt i = 0; i < 3; i++) {
      if (!X[i]) continue;
      PetscCall(PetscObjectTypeCompare((PetscObject)X[i], ((PetscObject)X[0])->type_name, &same));
      device = (PetscBool)(device && same && !X[i]->boundtocpu && X[i]->assembled);
    }
  }
  PetscCall(PetscStrcmp(product->alg, MATPRODUCTALGORITHMDEFAULT, &isdefault));
  if (device && isdefault) {
    PetscCall(MatProductSetAlgorithm(C, "backend"));
    PetscCall(PetscInfo(C, "MatProduct %s of %s: MPIAIJ's backend algorithm, the local products on the device\n", MatProductTypes[product->type], ((PetscObject)X[0])->type_name));
  }
  PetscCall((*((Mat_MPIGPUMat *)product->A->spptr)->hostops.productsetfromoptions)(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}
