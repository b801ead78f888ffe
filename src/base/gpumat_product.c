/*
  MatProduct (MatMatMult, MatTransposeMatMult, MatPtAP, MatRARt, MatMatMatMult, and what PCMG with Galerkin
  coarse operators and GAMG build with them) of the seq petscgpumat types, on the device.

  The products run in cuSPARSE through PETSc's aijcusparse: each sparse operand of our types (or plain SeqAIJ)
  has a MATSEQAIJCUSPARSE shadow over its host arrays, whose device values follow the operand's at each numeric
  phase, and aijcusparse multiplies the shadows on the device (SpGEMM; SpMM with a dense operand).
  - Sparse result: of the type of its first operand that is ours, over the CSR arrays of the shadows' product
    (a MATSEQAIJCUSPARSE, which becomes its shadow): the product's values come to the host once per numeric phase,
    and nothing is uploaded again (its format builds and refreshes from the product's device arrays; the next
    level's product and a factorization read them). Its products check their vectors' types as all of ours do: the
    reduced-space DMs of SNES's VI solvers give host vectors to PCMG's levels (SNES ex58), which a MATSEQAIJCUSPARSE
    Galerkin operator, and its cuSPARSE LU, read as device arrays. -mat_gpumat_product_same_type 0: the
    MATSEQAIJCUSPARSE result itself, which saves only that copy of the values (mg3d-galerkin at 97^3 on the H100:
    MatPtAPNumeric 2 ms against 25 ms; PCSetUp within the runs' spread; docs/clients.md).
  - Dense B (AB, AtB, ABt, PtAP, RARt; B on the host or the device, as aijcusparse takes it): A B with a
    MATSEQDENSECUDA block of at most 8 columns runs the format's block kernel where its layout has one; otherwise
    (or with -mat_gpumat_block_kernel 0) aijcusparse computes straight into the product matrix, with the shadow of
    A standing in for A during its calls.
  The shadows (gpumat_shadow.c) share the operands' host arrays; those of our types are kept by the base, read by
  all the products and factorizations of the matrix, and the format's device copy is refreshed from them.

  Elsewhere (an operand bound to the CPU or not AIJ-based, no usable device) SeqAIJ's own code runs, or PETSc's
  column-by-column loop for dense operands, whose products are ours.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscdevice_cuda.h>

typedef struct {
  Mat              operand[3]; /* A, B, C of the product, as the product holds them at the last phase (no reference) */
  MatGPUMatShadow  shadow[3];  /* shadows of plain SeqAIJ operands (ours are their base's device CSR: MatGPUMatShadowOf()) */
  PetscObjectId    id[3];      /* the operands the nonzero states below are of */
  PetscObjectState nonzerostate[3]; /* the operands' at the symbolic phase, or when MatProductReplaceMats() put them in */
  Mat              product;    /* the shadows' product (sparse results of our type): it holds their CSR arrays, on the
                                  host and the device, and is their shadow */
  PetscObjectState result_nonzerostate; /* the result's, at the symbolic phase (sparse results of our type) */
  PetscObjectId    shadow_id[3]; /* what aijcusparse's symbolic phase was given (results it computes into the product matrix) */
  Mat              compute;    /* after MatProductReplaceMats() put other operands in: their shadows' product, computed
                                  there and copied into `product` (PETSc's PtAP keeps its intermediate product of the
                                  old operands, so `product` cannot take them) */
  PetscErrorCode (*numeric)(Mat); /* aijcusparse's numeric phase (results it computes into the product matrix) */
} MatGPUMatProduct;

static const char product_key[] = "MatGPUMatProductShadows";

static PetscErrorCode MatGPUMatProductDestroy_Private(PetscGPUMatCtxArg ctx)
{
  MatGPUMatProduct *p = (MatGPUMatProduct *)PetscGPUMatCtxOf(ctx);

  PetscFunctionBegin;
  for (PetscInt i = 0; i < 3; i++) PetscCall(MatGPUMatShadowReset(&p->shadow[i]));
  PetscCall(MatDestroy(&p->product));
  PetscCall(MatDestroy(&p->compute));
  PetscCall(PetscFree(p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The operands' shadows, current; `S` gets what aijcusparse multiplies. The operands are read from C's product at
  each phase: MatProductReplaceMats() (a MAT_REUSE_MATRIX MatPtAP() of PCMG's Galerkin operators given a new matrix of
  the same pattern) may have put other matrices there since the symbolic phase, and the old ones may be gone.
*/
static PetscErrorCode MatGPUMatProductSyncShadows(Mat C, MatGPUMatProduct *p, Mat S[3])
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
  PetscCheck(product, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "Product phase of a matrix that is no product");
  p->operand[0] = product->A;
  p->operand[1] = product->B;
  p->operand[2] = product->type == MATPRODUCT_ABC ? product->C : NULL;
  for (PetscInt i = 0; i < 3; i++) {
    Mat       X = p->operand[i];
    PetscBool cusp, dense;

    S[i] = NULL;
    if (!X) continue;
    if (i && X == p->operand[0]) { /* AtA, PtAP with P = A...: one shadow */
      S[i] = S[0];
      continue;
    }
    PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJCUSPARSE, &cusp));
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)X, MATSEQDENSE, &dense));
    if (cusp || dense) S[i] = X;
    else {
      if (p->id[i] != ((PetscObject)X)->id) { /* the symbolic phase, or a matrix MatProductReplaceMats() put in: PETSc's contract is the same pattern */
        p->id[i]           = ((PetscObject)X)->id;
        p->nonzerostate[i] = X->nonzerostate;
      }
      PetscCheck(p->nonzerostate[i] == X->nonzerostate, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_WRONGSTATE, "An operand of the product changed its nonzero pattern since MatProductSymbolic(): call it again");
      PetscCall(MatGPUMatShadowOf(X, &p->shadow[i], &S[i]));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The shadows' product of C's product type, its symbolic phase done, as the user's call asked for C */
static PetscErrorCode MatGPUMatProductInner(Mat C, Mat S[3], Mat *P)
{
  Mat_Product *product = C->product;

  PetscFunctionBegin;
  PetscCall(MatProductCreate(S[0], S[1], S[2], P));
  PetscCall(MatProductSetType(*P, product->type));
  PetscCall(MatProductSetAlgorithm(*P, MATPRODUCTALGORITHMDEFAULT));
  PetscCall(MatProductSetFill(*P, product->fill));
  (*P)->product->api_user = product->api_user; /* as the user called it: aijcusparse then computes the values of a
                                                  MatPtAP()'s intermediate A P in its symbolic phase, not uploading them */
  PetscCall(MatProductSetFromOptions(*P));
  PetscCall(MatProductSymbolic(*P));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatProductNonzeros(Mat P, PetscLogDouble *nz)
{
  MatInfo info;

  PetscFunctionBegin;
  PetscCall(MatGetInfo(P, MAT_LOCAL, &info));
  *nz = info.nz_used;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The device values of `from` into those of `to`, a product of the same nonzero pattern */
static PetscErrorCode MatGPUMatProductCopyValues(Mat from, Mat to)
{
  const PetscScalar *a;
  PetscScalar       *b;
  PetscLogDouble     nz = 0;
  void              *stream;

  PetscFunctionBegin;
  PetscCall(MatGPUMatProductNonzeros(to, &nz));
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(from, &a));
  PetscCall(MatSeqAIJCUSPARSEGetArrayWrite(to, &b));
  PetscCall(MatGPUMatCopyOnStream(b, a, (size_t)nz * sizeof(PetscScalar), stream));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayWrite(to, &b));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(from, &a));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The values of P, a MATSEQAIJCUSPARSE product computed on the device, to its host array (the host master copy of the
  result of our type over it), where the host's are stale: through MatGPUMatCopyToHost(), whose large copies go through
  pinned buffers by host threads, where aijcusparse's own copy (MatSeqAIJGetArrayRead()) is CUDA's pageable one. Both
  copies then hold P's values, as that copy would leave them.
*/
static PetscErrorCode MatGPUMatProductValuesToHost(Mat P)
{
  const PetscScalar *d;
  PetscScalar       *h;
  PetscLogDouble     nz = 0;
  void              *stream;

  PetscFunctionBegin;
  if (P->offloadmask != PETSC_OFFLOAD_GPU) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatProductNonzeros(P, &nz));
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(MatSeqAIJCUSPARSEGetArrayRead(P, &d));
  PetscCall(MatSeqAIJGetArrayWrite(P, &h)); /* aijcusparse's write access: the host array, nothing copied */
  PetscCall(MatGPUMatCopyToHost(h, d, (size_t)nz * sizeof(PetscScalar), stream));
  PetscCall(MatSeqAIJRestoreArrayWrite(P, &h));
  PetscCall(MatSeqAIJCUSPARSERestoreArrayRead(P, &d));
  P->offloadmask = PETSC_OFFLOAD_BOTH; /* what the restore above took for host values newer than the device's */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Sparse result of our type: the shadows' product on the device, whose values come to the host into C's (the same
  array: C's device copy is refreshed from the product's, with no upload)
*/
static PetscErrorCode MatProductNumeric_GPUMat_Sparse(Mat C)
{
  MatGPUMatProduct  *p;
  Mat                S[3];
  const PetscScalar *v;
  PetscScalar       *w;
  const PetscInt    *ci;
  Mat                P;

  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)C, product_key, (void **)&p));
  PetscCheck(p, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "Product without its petscgpumat shadows");
  PetscCheck(C->nonzerostate == p->result_nonzerostate, PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_WRONGSTATE, "The product matrix changed its nonzero pattern since MatProductSymbolic(): call it again");
  PetscCall(MatGPUMatProductSyncShadows(C, p, S));
  P = p->compute ? p->compute : p->product;
  if (P->product->A != S[0] || P->product->B != S[1] || (S[2] && P->product->C != S[2])) { /* operands replaced since */
    PetscInt       m, n;
    PetscLogDouble nz[2] = {0, 0};

    PetscCall(MatDestroy(&p->compute));
    PetscCall(MatGPUMatProductInner(C, S, &p->compute));
    P = p->compute;
    PetscCall(MatGetSize(P, &m, &n));
    PetscCall(MatGPUMatProductNonzeros(P, &nz[0]));
    PetscCall(MatGPUMatProductNonzeros(p->product, &nz[1]));
    PetscCheck(m == C->rmap->n && n == C->cmap->n && nz[0] == nz[1], PetscObjectComm((PetscObject)C), PETSC_ERR_ARG_INCOMP, "MatProductReplaceMats() gave operands whose product has another nonzero pattern: call MatProductSymbolic() again");
  }
  PetscCall(MatProductNumeric(P));
  if (P != p->product) PetscCall(MatGPUMatProductCopyValues(P, p->product));
  PetscCall(MatSeqAIJGetCSRAndMemType(C, &ci, NULL, NULL, NULL));
  PetscCall(MatGPUMatProductValuesToHost(p->product));
  PetscCall(MatSeqAIJGetArrayRead(p->product, &v));
  PetscCall(MatSeqAIJGetArrayWrite(C, &w));
  if (w != v) PetscCall(PetscArraycpy(w, v, C->rmap->n ? ci[C->rmap->n] : 0)); /* C's values array was replaced */
  PetscCall(MatSeqAIJRestoreArrayWrite(C, &w));
  PetscCall(MatSeqAIJRestoreArrayRead(p->product, &v));
  if (w == v && C->spptr && MatGPUMatIsOurs(C)) PetscCall(MatGPUMatShadowAdopt(C, &((Mat_GPUMat *)C->spptr)->csr, p->product, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The operands of C's product in aijcusparse's eyes (their shadows) and back; `saved` keeps ours */
static void MatGPUMatProductSwapOperands(Mat_Product *product, Mat S[3], Mat saved[3])
{
  saved[0]   = product->A;
  saved[1]   = product->B;
  saved[2]   = product->C;
  product->A = S[0];
  product->B = S[1];
  if (S[2]) product->C = S[2];
}

static void MatGPUMatProductRestoreOperands(Mat_Product *product, Mat saved[3])
{
  product->A = saved[0];
  product->B = saved[1];
  product->C = saved[2];
}

/* Result computed by aijcusparse (dense, or sparse in MATSEQAIJCUSPARSE): its numeric phase on the shadows */
/*
  A host dense result block (the caller's MATSEQDENSE) made a CUDA one in place for a numeric phase that writes on the
  device, and a host one again after it (where that phase did not do so itself)
*/
static PetscErrorCode MatGPUMatProductHostResultToDevice_Private(Mat C, PetscBool *chost)
{
  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSE, chost));
  if (*chost) PetscCall(MatConvert(C, MATSEQDENSECUDA, MAT_INPLACE_MATRIX, &C)); /* the same header: C's product stays */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatProductHostResultBack_Private(Mat C, PetscBool chost)
{
  PetscBool cuda;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQDENSECUDA, &cuda));
  if (chost && cuda) PetscCall(MatConvert(C, MATSEQDENSE, MAT_INPLACE_MATRIX, &C));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductNumeric_GPUMat_CUSPARSE(Mat C)
{
  MatGPUMatProduct *p;
  Mat               S[3], saved[3];
  PetscBool         chost;

  PetscFunctionBegin;
  PetscCall(PetscObjectContainerQuery((PetscObject)C, product_key, (void **)&p));
  PetscCheck(p, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "Product without its petscgpumat shadows");
  PetscCall(MatGPUMatProductSyncShadows(C, p, S));
  if (C->product->type >= MATPRODUCT_PtAP) { /* PETSc's two-step products keep their intermediate product of the operands of the symbolic phase */
    PetscBool sparse;

    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAIJCUSPARSE, &sparse));
    for (PetscInt i = 0; i < 3 && sparse; i++) PetscCheck(!S[i] || ((PetscObject)S[i])->id == p->shadow_id[i], PetscObjectComm((PetscObject)C), PETSC_ERR_SUP, "MatProductReplaceMats() with other matrices in a %s product whose result is cuSPARSE's (-mat_gpumat_product_same_type 0): call MatProductSymbolic() again", MatProductTypes[C->product->type]);
  }
  /* aijcusparse's products with a dense block make a host C a CUDA one in their symbolic phase and a host one again
     at the end of each numeric phase, but not a CUDA one at the start of the next: cusparseSpMM() would then write
     through C's host pointer (PETSc 3.22-3.26, aijcusparse.cu; cudaErrorIllegalAddress in PETSc's KSP test ex26
     matcycles at 1 rank, with aijcusparse itself). The numeric phase gets the CUDA C it expects, and hands it back
     to the host. */
  PetscCall(MatGPUMatProductHostResultToDevice_Private(C, &chost));
  MatGPUMatProductSwapOperands(C->product, S, saved);
  PetscCall((*p->numeric)(C));
  MatGPUMatProductRestoreOperands(C->product, saved);
  PetscCall(MatGPUMatProductHostResultBack_Private(C, chost)); /* aijcusparse's numeric phase may have done it */
  C->ops->productnumeric = MatProductNumeric_GPUMat_CUSPARSE; /* PETSc's PtAP, RARt and ABC put back their own */
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The first operand of a petscgpumat type (one is: the product came to our productsetfromoptions) */
static Mat MatGPUMatProductFirstOurs(Mat X[3])
{
  for (PetscInt i = 0; i < 3; i++)
    if (MatGPUMatIsOurs(X[i])) return X[i];
  return NULL;
}

/*
  Blocks of vectors (KSPMatSolve, block Krylov): C = A B with B a dense CUDA block of at most 8 columns runs the
  format's block kernel where it has one for A's layout (ELLPACK-R and RgCSR with one thread per row, CMRS on
  unsorted strips without padding): each entry of A is read once for all the columns, and no second copy of A is
  made. A host result given by the caller (PCMG's finest level in KSPMatSolve() with the user's MATSEQDENSE block) is
  written on the device and copied back, as aijcusparse does with such a C. On the H100 (lap3d7 150^3, ELLPACK-R) 4 and 8 columns took 2.15x and 3.52x less time per vector than as
  many MatMult, where cuSPARSE SpMM on the shadow gave 0.87x and 1.16x. -mat_gpumat_block_kernel 0: SpMM.
*/
PetscBool MatGPUMatBlockKernelOn = PETSC_TRUE;

static PetscErrorCode MatGPUMatBlockKernelUsable(Mat C, PetscBool *yes)
{
  Mat_Product *product = C->product;
  Mat          A = product->A, B = product->B;
  Mat_GPUMat  *g;
  PetscBool    densecuda, cdense = PETSC_TRUE;

  PetscFunctionBegin;
  *yes = PETSC_FALSE;
  if (!MatGPUMatBlockKernelOn || product->type != MATPRODUCT_AB || !MatGPUMatIsOurs(A)) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscObjectTypeCompare((PetscObject)B, MATSEQDENSECUDA, &densecuda));
  if (((PetscObject)C)->type_name) PetscCall(PetscObjectTypeCompareAny((PetscObject)C, &cdense, MATSEQDENSECUDA, MATSEQDENSE, ""));
  g = (Mat_GPUMat *)A->spptr;
  if (!densecuda || !cdense || g->compress_rows || !g->format->multblock || B->cmap->n < 1 || B->cmap->n > MATGPUMAT_MAX_BLOCK) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(g->format->multblock(A, B->cmap->n, NULL, yes));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductNumeric_GPUMat_Block(Mat C)
{
  Mat                A = C->product->A, B = C->product->B;
  Mat_GPUMat        *g = (Mat_GPUMat *)A->spptr;
  PetscInt           nv = B->cmap->n;
  MatGPUMultArgs     args;
  const PetscScalar *x;
  PetscScalar       *z;
  PetscBool          can, chost;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&args, sizeof(args)));
  PetscCall(MatGPUMatSyncDevice(A));
  PetscCall(MatGPUMatProductHostResultToDevice_Private(C, &chost));
  PetscCall(MatGPUMatGetStream(&args.stream));
  PetscCall(MatDenseGetLDA(B, &args.ldx));
  PetscCall(MatDenseGetLDA(C, &args.ldz));
  PetscCall(MatDenseCUDAGetArrayRead(B, &x));
  PetscCall(MatDenseCUDAGetArrayWrite(C, &z));
  args.x = x;
  args.z = z;
  PetscCall(PetscLogGpuTimeBegin());
  PetscCall(g->format->multblock(A, nv, &args, &can));
  PetscCall(PetscLogGpuTimeEnd());
  PetscCall(MatDenseCUDARestoreArrayWrite(C, &z));
  PetscCall(MatDenseCUDARestoreArrayRead(B, &x));
  if (can) PetscCall(PetscLogGpuFlops(2.0 * (PetscLogDouble)g->nnz * nv));
  else { /* the layout changed since the symbolic phase (a rebuild chose other parameters): one product per column */
    for (PetscInt k = 0; k < nv; k++) {
      Vec xk, zk;

      PetscCall(MatDenseGetColumnVecRead(B, k, &xk));
      PetscCall(MatDenseGetColumnVecWrite(C, k, &zk));
      PetscCall(MatMult(A, xk, zk));
      PetscCall(MatDenseRestoreColumnVecWrite(C, k, &zk));
      PetscCall(MatDenseRestoreColumnVecRead(B, k, &xk));
    }
  }
  PetscCall(MatGPUMatProductHostResultBack_Private(C, chost));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSymbolic_GPUMat_Block(Mat C)
{
  Mat A = C->product->A, B = C->product->B;

  PetscFunctionBegin;
  PetscCall(MatSetSizes(C, A->rmap->n, B->cmap->n, A->rmap->N, B->cmap->N));
  if (!((PetscObject)C)->type_name) PetscCall(MatSetType(C, MATSEQDENSECUDA));
  PetscCall(MatSetUp(C));
  C->ops->productnumeric = MatProductNumeric_GPUMat_Block;
  { /* a mark the tests read: which device path the product took */
    PetscContainer mark;

    PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &mark));
    PetscCall(PetscObjectCompose((PetscObject)C, "MatGPUMatBlockKernel", (PetscObject)mark));
    PetscCall(PetscContainerDestroy(&mark));
  }
  PetscCall(PetscInfo(C, "MatProduct AB of %s and a block of %" PetscInt_FMT " vectors: the format's block kernel\n", ((PetscObject)A)->type_name, B->cmap->n));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Y += a X where Y is the sparse result of one of our products (aijcusparse's matrix): X's shadow stands in for an X
  of ours, so that aijcusparse adds on the device (cuSPARSE csrgeam for a pattern inside Y's), where it would take its
  host path for an operand of another type. GAMG's prolongator smoothing does this on every level:
  MatAYPX(A P0 D^-1, alpha, P0, SUBSET_NONZERO_PATTERN) with P0 of A's type. MatAXPY() calls Y's slot only when X has
  the same one, so the result's slot is our types' own, MatAXPY_GPUMat(), which sends Y here; aijcusparse, in turn,
  stays on the device only when both operands have its slot, so they get it back for the call.
*/
static PetscErrorCode (*cusp_axpy)(Mat, PetscScalar, Mat, MatStructure); /* aijcusparse's, as its matrices have it */

PetscErrorCode MatAXPY_GPUMatProductResult(Mat Y, PetscScalar a, Mat X, MatStructure str)
{
  MatGPUMatShadow own;
  PetscBool       seq, ours, xresult = PETSC_FALSE;
  Mat             S = X;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCheck(cusp_axpy, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Not the result of a product of ours");
  PetscCall(PetscMemzero(&own, sizeof(own)));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)X, MATSEQAIJ, &seq));
  ours = (PetscBool)(seq && X != Y && MatGPUMatIsOurs(X));
  if (ours && !X->boundtocpu && !Y->boundtocpu) PetscCall(MatGPUMatShadowOf(X, &own, &S)); /* ours: the base's shadow, current */
  else if (!ours && X->ops->axpy == MatAXPY_GPUMat) xresult = PETSC_TRUE; /* the result of another product of ours */
  Y->ops->axpy = cusp_axpy;
  if (xresult) X->ops->axpy = cusp_axpy;
  ierr         = (*cusp_axpy)(Y, a, S, str);
  Y->ops->axpy = MatAXPY_GPUMat;
  if (xresult) X->ops->axpy = MatAXPY_GPUMat;
  PetscCall(MatGPUMatShadowReset(&own)); /* also after an error */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSymbolic_GPUMat_Private(Mat C, PetscBool same_type)
{
  Mat_Product      *product = C->product;
  MatGPUMatProduct *p;
  Mat               S[3];
  PetscBool         dense, block, sparse;

  PetscFunctionBegin;
  PetscCall(MatGPUMatBlockKernelUsable(C, &block));
  if (block) {
    PetscCall(MatProductSymbolic_GPUMat_Block(C));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscNew(&p));
  PetscCall(MatGPUMatProductSyncShadows(C, p, S)); /* reads the operands from C's product */
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)product->B, MATSEQDENSE, &dense));
  if (dense || !same_type) {
    Mat saved[3];

    for (PetscInt i = 0; i < 3; i++) p->shadow_id[i] = S[i] ? ((PetscObject)S[i])->id : 0;
    MatGPUMatProductSwapOperands(product, S, saved);
    PetscCall((*S[0]->ops->productsetfromoptions)(C));
    PetscCheck(C->ops->productsymbolic, PetscObjectComm((PetscObject)C), PETSC_ERR_PLIB, "aijcusparse has no %s product with %s", MatProductTypes[product->type], ((PetscObject)product->B)->type_name);
    PetscCall((*C->ops->productsymbolic)(C));
    MatGPUMatProductRestoreOperands(product, saved);
    p->numeric             = C->ops->productnumeric;
    C->ops->productnumeric = MatProductNumeric_GPUMat_CUSPARSE;
    PetscCall(PetscObjectTypeCompare((PetscObject)C, MATSEQAIJCUSPARSE, &sparse));
    if (sparse && C->ops->axpy && !C->boundtocpu) GPUMAT_PUT_IN_FRONT(C, axpy, cusp_axpy, MatAXPY_GPUMat);
  } else {
    const PetscInt    *ia, *ja;
    const PetscScalar *va;
    PetscInt           n;
    PetscBool          done;
    Mat                P, T, X = MatGPUMatProductFirstOurs(p->operand);
    Mat_Product       *keep = C->product;

    PetscCall(MatGPUMatProductInner(C, S, &p->product));
    P = p->product;
    /* C: the type of the first operand of ours (A's, as aijcusparse gives its own) over P's host CSR arrays, which P
       keeps (C holds this context, and P, to its end): P is then C's shadow, and neither copies the product on the
       host nor uploads it again (its format builds and refreshes from P's device arrays, the next level's product
       and a factorization read them). C's header is made a SeqAIJ header; its product goes on. */
    PetscCall(MatGetRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No CSR structure of the device product");
    PetscCall(MatGPUMatProductValuesToHost(P)); /* computed already where the user's MatMatMult() etc. asked for it */
    PetscCall(MatSeqAIJGetArrayRead(P, &va));
    PetscCall(MatGPUMatCreateOverArrays(P->rmap->n, P->cmap->n, (PetscInt *)ia, (PetscInt *)ja, (PetscScalar *)va, &T));
    PetscCall(MatSeqAIJRestoreArrayRead(P, &va));
    PetscCall(MatRestoreRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCall(MatSetBlockSizesFromMats(T, P, P));
    PetscCall(MatSetOptionsPrefix(T, ((PetscObject)C)->prefix));
    C->product = NULL; /* MatHeaderReplace() destroys C's old header, and with it what it holds */
    PetscCall(MatHeaderReplace(C, &T));
    C->product = keep;
    PetscCall(MatConvert_SeqAIJ_GPUMat(C, ((Mat_GPUMat *)X->spptr)->format, MAT_INPLACE_MATRIX, &C));
    PetscCall(((Mat_GPUMat *)X->spptr)->format->copyparameters(X, C)); /* what was set on the operand holds for the product */
    PetscCall(MatGPUMatInvalidatePlan(C));
    PetscCall(MatGPUMatShadowAdopt(C, &((Mat_GPUMat *)C->spptr)->csr, P, PETSC_FALSE));
    p->result_nonzerostate = C->nonzerostate;
    C->ops->productnumeric = MatProductNumeric_GPUMat_Sparse;
  }
  PetscCall(PetscObjectContainerCompose((PetscObject)C, product_key, p, MatGPUMatProductDestroy_Private));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSymbolic_GPUMat(Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatProductSymbolic_GPUMat_Private(C, PETSC_FALSE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatProductSymbolic_GPUMat_SameType(Mat C)
{
  PetscFunctionBegin;
  PetscCall(MatProductSymbolic_GPUMat_Private(C, PETSC_TRUE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Whether X can be an operand of a device product: AIJ-based (ours, SeqAIJ, aijcusparse) and not bound to the CPU,
  or (B of a product with a dense operand) any sequential dense matrix: as aijcusparse does, a host one is
  converted to CUDA during the numeric phase and back, and the result is a MATSEQDENSECUDA unless set otherwise.
*/
static PetscErrorCode MatGPUMatProductOperandOnDevice(Mat X, PetscBool sparse_only, PetscBool *ok)
{
  PetscBool aij, plain, dense = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)X, MATSEQAIJ, &aij));
  if (!sparse_only) PetscCall(PetscObjectBaseTypeCompare((PetscObject)X, MATSEQDENSE, &dense));
  PetscCall(PetscObjectTypeCompare((PetscObject)X, MATSEQAIJ, &plain));
  /* a plain host SeqAIJ is bound to the CPU from its creation: it gets a shadow all the same; a dense B may be anywhere */
  *ok = (PetscBool)(((aij && (plain || !X->boundtocpu)) || dense) && X->assembled);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  What PETSc chooses for the parent types: the function "MatProductSetFromOptions_<A>_<B>[_<C>]_C" with each type
  of ours named as its parent (seqaij, mpiaij), asked of each operand. Dense matrices compose such functions
  for AIJ (dense times AIJ, AIJ times dense on several ranks), under the parent's name only. Also composed on
  the MPI types as "MatProductSetFromOptions_anytype_C".
*/
PetscErrorCode MatProductSetFromOptions_GPUMatAsParent(Mat C)
{
  Mat_Product *product = C->product;
  Mat          X[3]    = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL};
  char         name[256];
  PetscErrorCode (*f)(Mat) = NULL;

  PetscFunctionBegin;
  PetscCall(PetscStrncpy(name, "MatProductSetFromOptions", sizeof(name)));
  for (PetscInt i = 0; i < 3; i++) {
    PetscBool seq;

    if (!X[i]) continue;
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)X[i], MATSEQAIJ, &seq));
    PetscCall(PetscStrlcat(name, "_", sizeof(name)));
    PetscCall(PetscStrlcat(name, MatGPUMatIsOurs(X[i]) ? (seq ? MATSEQAIJ : MATMPIAIJ) : ((PetscObject)X[i])->type_name, sizeof(name)));
  }
  PetscCall(PetscStrlcat(name, "_C", sizeof(name)));
  for (PetscInt i = 0; i < 3 && !f; i++)
    if (X[i]) PetscCall(PetscObjectQueryFunction((PetscObject)X[i], name, &f));
  if (f) {
    PetscCall(PetscInfo(C, "MatProduct %s: %s, as for the parent types\n", MatProductTypes[product->type], name));
    PetscCall((*f)(C));
  }
  /* PETSc asks A's "anytype" handler (ours) before B's: give the other operands' their turn (MATDIAGONAL's handles
     any type with a diagonal scaling) */
  for (PetscInt i = 0; i < 3 && !C->ops->productsymbolic; i++) {
    if (!X[i] || MatGPUMatIsOurs(X[i])) continue;
    PetscCall(PetscObjectQueryFunction((PetscObject)X[i], "MatProductSetFromOptions_anytype_C", &f));
    if (f && f != MatProductSetFromOptions_GPUMat && f != MatProductSetFromOptions_GPUMatAsParent) {
      PetscCall(PetscInfo(C, "MatProduct %s: the anytype handler of %s\n", MatProductTypes[product->type], ((PetscObject)X[i])->type_name));
      PetscCall((*f)(C));
    }
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The algorithm the user chose (and -mat_gpumat_product_same_type), read where SeqAIJ and aijcusparse read it:
  -mat<product>_via for the classic calls (MatMatMult(), MatPtAP(), ...) and -mat_product_algorithm for the
  MatProduct API, "cusparse" naming the device products (the default) and anything else one of SeqAIJ's host
  algorithms (which SeqAIJ checks and runs); and
  aijcusparse's -mat<product>_backend_cpu, -mat_product_algorithm_backend_cpu.
*/
static PetscErrorCode MatGPUMatProductOptions(Mat C, PetscBool *host, PetscBool *same_type)
{
  static const char *const classic[] = {NULL, "matmatmult", "mattransposematmult", "matmattransposemult", "matptap", "matrart", "matmatmatmult"};
  Mat_Product             *product   = C->product;
  char                     via[64], backend[64], alg[256] = "cusparse";
  PetscBool                set = PETSC_FALSE, cpu = PETSC_FALSE;

  PetscFunctionBegin;
  *host      = PETSC_FALSE;
  *same_type = PETSC_TRUE;
  if (product->type <= MATPRODUCT_UNSPECIFIED || product->type > MATPRODUCT_ABC) PetscFunctionReturn(PETSC_SUCCESS);
  if (product->api_user) {
    PetscCall(PetscSNPrintf(via, sizeof(via), "-%s_via", classic[product->type]));
    PetscCall(PetscSNPrintf(backend, sizeof(backend), "-%s_backend_cpu", classic[product->type]));
  } else {
    PetscCall(PetscStrncpy(via, "-mat_product_algorithm", sizeof(via)));
    PetscCall(PetscStrncpy(backend, "-mat_product_algorithm_backend_cpu", sizeof(backend)));
  }
  PetscOptionsBegin(PetscObjectComm((PetscObject)C), ((PetscObject)C)->prefix, "MatProduct of petscgpumat types", "Mat");
  PetscCall(PetscOptionsString(via, "Algorithm: cusparse (on the device) or one of SeqAIJ's host algorithms", "MatProductSetAlgorithm", alg, alg, sizeof(alg), &set));
  PetscCall(PetscOptionsBool(backend, "Run the product on the host (SeqAIJ's algorithms)", "MatProductSetFromOptions", cpu, &cpu, NULL));
  PetscCall(PetscOptionsBool("-mat_gpumat_product_same_type", "A sparse product on the device is of the type of its first petscgpumat operand, over cuSPARSE's result (false: that result itself, a MATSEQAIJCUSPARSE, which misreads host vectors)", "MatProductSetFromOptions", *same_type, same_type, NULL));
  PetscOptionsEnd();
  if (set) {
    PetscBool device;

    PetscCall(PetscStrcmpAny(alg, &device, "cusparse", "default", ""));
    cpu = (PetscBool)(cpu || !device);
  }
  *host = cpu;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Our seq types' productsetfromoptions, also composed as "MatProductSetFromOptions_anytype_C" (which PETSc asks
  when the operands' types differ): the device products where every operand allows them, else SeqAIJ's choice.
*/
PetscErrorCode MatProductSetFromOptions_GPUMat(Mat C)
{
  Mat_Product *product = C->product;
  PetscBool    ok = PETSC_FALSE, okB = PETSC_FALSE, okC = PETSC_TRUE, dense = PETSC_FALSE, same_type = PETSC_FALSE;
  VecType      vtype;

  PetscFunctionBegin;
  C->ops->productsymbolic = NULL;
  PetscCall(MatGPUMatDefaultVecType(&vtype));
  if (!strcmp(vtype, VECCUDA) && !C->structure_only) {
    PetscCall(MatGPUMatProductOperandOnDevice(product->A, PETSC_TRUE, &ok));
    PetscCall(MatGPUMatProductOperandOnDevice(product->B, PETSC_FALSE, &okB));
    if (product->type == MATPRODUCT_ABC) PetscCall(MatGPUMatProductOperandOnDevice(product->C, PETSC_TRUE, &okC));
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)product->B, MATSEQDENSE, &dense));
    /* with a dense B: the products aijcusparse has for a dense operand (ABC goes through PETSc's two-step code) */
    ok = (PetscBool)(ok && okB && okC && (!dense || (product->type >= MATPRODUCT_AB && product->type <= MATPRODUCT_RARt)));
    if (ok && !dense) {
      PetscBool host;

      PetscCall(MatGPUMatProductOptions(C, &host, &same_type));
      if (host) PetscCall(PetscInfo(C, "MatProduct %s on the host: the user's choice of algorithm\n", MatProductTypes[product->type]));
      ok = (PetscBool)!host;
    }
  }
  if (ok) {
    C->ops->productsymbolic = same_type ? MatProductSymbolic_GPUMat_SameType : MatProductSymbolic_GPUMat;
    PetscCall(PetscInfo(C, "MatProduct %s of %s and %s on the device (cuSPARSE, through aijcusparse shadows)%s\n", MatProductTypes[product->type], ((PetscObject)product->A)->type_name, ((PetscObject)product->B)->type_name,
                        dense ? "" : (same_type ? ": the result of its first petscgpumat operand's type" : ": the result a MATSEQAIJCUSPARSE")));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* SeqAIJ's own products where every operand is AIJ-based; otherwise PETSc goes on with its fall-backs (a dense
     operand: its loop over the columns, with our products) */
  {
    Mat       X[3] = {product->A, product->B, product->type == MATPRODUCT_ABC ? product->C : NULL}, ours = MatGPUMatProductFirstOurs(X);
    PetscBool aij = PETSC_TRUE;

    for (PetscInt i = 0; i < 3 && aij; i++)
      if (X[i]) PetscCall(PetscObjectBaseTypeCompare((PetscObject)X[i], MATSEQAIJ, &aij));
    if (aij && ours) PetscCall((*((Mat_GPUMat *)ours->spptr)->hostops.productsetfromoptions)(C));
  }
  if (!C->ops->productsymbolic) PetscCall(MatProductSetFromOptions_GPUMatAsParent(C));
  PetscFunctionReturn(PETSC_SUCCESS);
}
