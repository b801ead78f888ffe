static const char help[] = "KSPCGFUSED against PETSc's KSPCG: the same iterations, reasons and solutions.\n"
                           "  -host   host vectors and AIJ (CI: PETSc's own CG must run, bit for bit); else CUDA vectors (the fused path)\n"
                           "  -types cmrscuda,aijcusparse   matrix types of the GPU comparisons (on several ranks: their parallel types)\n";

#include <petscksp.h>
#include <petscgpumat.h>
#include <petscgpuksp.h>
#include <petscdevice_cuda.h>
#include <petscgpumat/private/gpumatimpl.h> /* MatGPUMatMultDot(), MATGPUMAT_MAX_DOT_PARTIALS */
#include "../common/mpiutil.h"

typedef struct {
  const char *pc;
  KSPNormType norm;
  PetscBool   guess;
} Config;

static PetscBool last_view_dot;   /* Solve()'s last KSPView said the product carried p'Ap */
static PetscBool last_view_ahead; /* ... and that the solve looked ahead */

/* one solve; returns the solution as a host Vec, the iterations, the reason and whether KSPView says the fused path ran */
static PetscErrorCode Solve(Mat A, KSPType ksptype, const Config *c, Vec bhost, Vec *xhost, PetscInt *its, KSPConvergedReason *reason, PetscBool *fused)
{
  KSP         ksp;
  PC          pc;
  Vec         b, x;
  PetscViewer viewer;
  char        text[4096] = "";
  char       *found;
  PetscBool   isfused;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecCopy(bhost, b));
  if (c->guess) PetscCall(VecSet(x, 0.25));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, ksptype));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, c->pc));
  PetscCall(KSPSetNormType(ksp, c->norm));
  PetscCall(KSPSetInitialGuessNonzero(ksp, c->guess));
  PetscCall(KSPSetTolerances(ksp, 1e-9, PETSC_CURRENT, PETSC_CURRENT, 3000));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPGetIterationNumber(ksp, its));
  PetscCall(KSPGetConvergedReason(ksp, reason));
  PetscCall(PetscViewerStringOpen(PETSC_COMM_SELF, text, sizeof(text), &viewer));
  PetscCall(KSPView(ksp, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(PetscStrstr(text, "last solve: fused", &found));
  *fused = (PetscBool)(found != NULL);
  PetscCall(PetscStrstr(text, "p'Ap in the product", &found));
  last_view_dot = (PetscBool)(found != NULL);
  PetscCall(PetscStrstr(text, "look-ahead", &found));
  last_view_ahead = (PetscBool)(found != NULL);
  PetscCall(PetscStrcmp(ksptype, KSPCGFUSED, &isfused));
  if (isfused) { /* the view must say which path ran, else `fused` could never be true */
    PetscCall(PetscStrstr(text, *fused ? "last solve: fused" : "last solve: PETSc's CG", &found));
    TEST_CHECK(found != NULL, "KSPView() of KSPCGFUSED names the path of the last solve (\"%s\")", text);
  }
  PetscCall(VecDuplicate(bhost, xhost));
  PetscCall(VecCopy(x, *xhost));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether A's product carries p'Ap: our three formats (CMRS with its scan kernel, which the test matrices get), and
   autocuda where it chose one of them (asked after a product: the choice is made at the build) */
static PetscErrorCode HasMultDot(Mat A, PetscBool *has)
{
  PetscBool auto_;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAUTOCUDA, &auto_));
  if (auto_) {
    MatType chosen;
    Vec     x, z;

    PetscCall(MatCreateVecs(A, &x, &z));
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(A, x, z));
    PetscCall(MatAutoCUDAGetChoice(A, &chosen));
    PetscCall(PetscStrcmpAny(chosen, has, MATSEQELLRCUDA, MATSEQCMRSCUDA, MATSEQRGCSRCUDA, ""));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&z));
  } else PetscCall(PetscObjectTypeCompareAny((PetscObject)A, has, MATSEQELLRCUDA, MATSEQCMRSCUDA, MATSEQRGCSRCUDA, ""));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether x and y agree to the bit or, where A's own products are not the same bits run to run, to 1e-10 of y's norm */
static PetscErrorCode Agree(Vec x, Vec y, PetscBool repeatable, PetscBool *agree)
{
  Vec       d;
  PetscReal diff, nrm;

  PetscFunctionBeginUser;
  PetscCall(VecEqual(x, y, agree));
  if (*agree || repeatable) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(VecDuplicate(x, &d));
  PetscCall(VecWAXPY(d, -1.0, x, y));
  PetscCall(VecNorm(d, NORM_2, &diff));
  PetscCall(VecNorm(y, NORM_2, &nrm));
  *agree = (PetscBool)(diff <= 1e-10 * nrm);
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A KSPCGFUSED solve with the boolean option `option` set to 0; *same: its solution, iterations and reason are those
   of the reference solve (x, its, reason): the same bits and iterations where the products repeat, else within Agree()'s
   tolerance and one iteration */
static PetscErrorCode SolveWithOptionOff(Mat A, const Config *c, Vec bhost, const char *option, Vec xref, PetscInt itref, KSPConvergedReason rref, PetscBool repeatable, PetscInt *its, PetscBool *fused, PetscBool *same)
{
  Vec                x;
  KSPConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, option, "0"));
  PetscCall(Solve(A, KSPCGFUSED, c, bhost, &x, its, &reason, fused));
  PetscCall(PetscOptionsClearValue(NULL, option));
  PetscCall(Agree(x, xref, repeatable, same));
  *same = (PetscBool)(*same && (*its == itref || (!repeatable && PetscAbsInt(*its - itref) <= 1)) && reason == rref);
  PetscCall(VecDestroy(&x));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  KSPCG and KSPCGFUSED on A for every configuration: `exact` asks for the same bits (PETSc's CG on both sides);
  `repeatable`: A's products give the same bits run to run, so must two solves (cuSPARSE's default CSR SpMV does not
  promise it: mpiaijcusparse on 2 ranks gave KSPCG two different results on the random matrix)
*/
static PetscErrorCode Compare(Mat A, const char *what, PetscBool exact, PetscBool expect_fused, PetscBool repeatable)
{
  const char *pcs[]   = {PCNONE, PCJACOBI, PCSOR};
  KSPNormType norms[] = {KSP_NORM_PRECONDITIONED, KSP_NORM_UNPRECONDITIONED, KSP_NORM_NATURAL};
  Vec         bhost;
  PetscInt    m, M, lo, hi;
  PetscBool   hasdot;
  PetscMPIInt size; /* one rank looks ahead (-ksp_cgfused_lookahead), several do not */

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)A), &size));
  PetscCall(HasMultDot(A, &hasdot));
  PetscCall(MatGetLocalSize(A, &m, NULL));
  PetscCall(MatGetSize(A, &M, NULL));
  PetscCall(VecCreate(PetscObjectComm((PetscObject)A), &bhost)); /* a host vector of A's row layout */
  PetscCall(VecSetSizes(bhost, m, M));
  PetscCall(VecSetType(bhost, VECSTANDARD));
  PetscCall(VecGetOwnershipRange(bhost, &lo, &hi));
  for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(bhost, i, PetscSinReal(1.0 + i), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(bhost));
  PetscCall(VecAssemblyEnd(bhost));
  for (size_t p = 0; p < PETSC_STATIC_ARRAY_LENGTH(pcs); p++)
    for (size_t nt = 0; nt < PETSC_STATIC_ARRAY_LENGTH(norms); nt++)
      for (PetscInt g = 0; g < 2; g++) {
        const Config       c = {pcs[p], norms[nt], (PetscBool)g};
        const PetscBool    fast = (PetscBool)(expect_fused && p < 2);
        Vec                x0, x1, x2;
        PetscInt           it0, it1, it2;
        KSPConvergedReason r0, r1, r2;
        PetscBool          f0, f1, f2, same, again, dot1;
        PetscReal          diff, nrm;

        PetscCall(Solve(A, KSPCG, &c, bhost, &x0, &it0, &r0, &f0));
        PetscCall(Solve(A, KSPCGFUSED, &c, bhost, &x1, &it1, &r1, &f1));
        dot1 = last_view_dot;
        PetscCall(Solve(A, KSPCGFUSED, &c, bhost, &x2, &it2, &r2, &f2));
        TEST_CHECK(last_view_ahead == (PetscBool)(f2 && size == 1), "%s, PC %s, norm %s, %s guess: KSPView says the solve %s ahead", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", last_view_ahead ? "looked" : "did not look");
        TEST_CHECK(dot1 == (PetscBool)(f1 && hasdot), "%s, PC %s, norm %s, %s guess: p'Ap %s", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", dot1 ? "from the product's pass" : "by its own kernel");
        PetscCall(Agree(x1, x2, repeatable, &again));
        if (exact) PetscCall(VecEqual(x0, x1, &same));
        PetscCall(VecAXPY(x1, -1.0, x0));
        PetscCall(VecNorm(x1, NORM_2, &diff));
        PetscCall(VecNorm(x0, NORM_2, &nrm));
        if (exact) TEST_CHECK(same && it0 == it1 && r0 == r1 && !f1, "%s, PC %s, norm %s, %s guess: KSPCGFUSED is PETSc's CG here (%" PetscInt_FMT " and %" PetscInt_FMT " iterations, reasons %s and %s, same bits: %s)", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", it0, it1, KSPConvergedReasons[r0], KSPConvergedReasons[r1], same ? "yes" : "no");
        else
          TEST_CHECK(f1 == fast && PetscAbsInt(it0 - it1) <= 1 && r0 == r1 && diff <= 1e-7 * nrm, "%s, PC %s, norm %s, %s guess: KSPCGFUSED (%s) %" PetscInt_FMT " iterations (%s) against KSPCG's %" PetscInt_FMT " (%s); solutions differ by %.2e of their norm", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", f1 ? "fused" : "PETSc's CG", it1, KSPConvergedReasons[r1], it0, KSPConvergedReasons[r0], (double)(nrm > 0 ? diff / nrm : diff));
        TEST_CHECK(again && (it1 == it2 || (!repeatable && PetscAbsInt(it1 - it2) <= 1)), "%s, PC %s, norm %s, %s guess: two KSPCGFUSED solves give the same %s and iterations", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", repeatable ? "bits" : "solution");
        if (!exact) { /* -ksp_cgfused_fast 0: PETSc's CG itself, on the same CUDA vectors */
          PetscInt  it3;
          PetscBool f3, same3;

          PetscCall(SolveWithOptionOff(A, &c, bhost, "-ksp_cgfused_fast", x0, it0, r0, repeatable, &it3, &f3, &same3));
          TEST_CHECK(!f3 && same3, "%s, PC %s, norm %s, %s guess: KSPCGFUSED with -ksp_cgfused_fast 0 is KSPCG %s (%" PetscInt_FMT " and %" PetscInt_FMT " iterations)", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", repeatable ? "to the bit" : "(its products are not the same bits run to run)", it0, it3);
        }
        if (f2) { /* -ksp_cgfused_lookahead 0: the host waits before queuing the next direction; the same bits */
          PetscInt  it4;
          PetscBool f4, same4;

          PetscCall(SolveWithOptionOff(A, &c, bhost, "-ksp_cgfused_lookahead", x2, it2, r2, repeatable, &it4, &f4, &same4));
          TEST_CHECK(f4 && same4 && !last_view_ahead, "%s, PC %s, norm %s, %s guess: KSPCGFUSED without look-ahead gives the %s as with it (%" PetscInt_FMT " and %" PetscInt_FMT " iterations)", what, c.pc, KSPNormTypes[c.norm], g ? "nonzero" : "zero", repeatable ? "same bits" : "same solution", it4, it2);
        }
        PetscCall(VecDestroy(&x0));
        PetscCall(VecDestroy(&x1));
        PetscCall(VecDestroy(&x2));
      }
  PetscCall(VecDestroy(&bhost));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* An indefinite diagonal: both stop with the same reason at the same iteration */
static PetscErrorCode CompareIndefinite(MatType type, PetscBool expect_fused)
{
  Mat                A;
  Vec                bhost, x0, x1;
  PetscInt           it0, it1;
  KSPConvergedReason r0, r1;
  PetscBool          f0, f1;
  const Config       c = {PCNONE, KSP_NORM_PRECONDITIONED, PETSC_FALSE};

  PetscFunctionBeginUser;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, 50, 50, 1, NULL, &A));
  for (PetscInt i = 0; i < 50; i++) PetscCall(MatSetValue(A, i, i, i % 2 ? -1.0 - i : 1.0 + i, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetType(A, type));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, 50, &bhost));
  PetscCall(VecSet(bhost, 1.0));
  PetscCall(Solve(A, KSPCG, &c, bhost, &x0, &it0, &r0, &f0));
  PetscCall(Solve(A, KSPCGFUSED, &c, bhost, &x1, &it1, &r1, &f1));
  TEST_CHECK(r0 == r1 && it0 == it1 && f1 == expect_fused, "indefinite diagonal (%s): KSPCG %s at %" PetscInt_FMT ", KSPCGFUSED (%s) %s at %" PetscInt_FMT, type, KSPConvergedReasons[r0], it0, f1 ? "fused" : "PETSc's CG", KSPConvergedReasons[r1], it1);
  PetscCall(VecDestroy(&x0));
  PetscCall(VecDestroy(&x1));
  PetscCall(VecDestroy(&bhost));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* the order in which a product's last block adds its grid's partial sums (MatGPUMatBlockSumToPartial()): lane l of one
   warp those of blocks l, l + 32, ..., then the lanes by halving */
static PetscScalar LastBlockSum(const PetscScalar *partial, PetscInt n)
{
  PetscScalar lane[32] = {0};

  for (int l = 0; l < 32; l++)
    for (PetscInt b = l; b < n; b += 32) lane[l] += partial[b];
  for (int off = 16; off > 0; off /= 2)
    for (int l = 0; l < off; l++) lane[l] += lane[l + off];
  return lane[0];
}

/*
  MatGPUMatMultDot() against MatMult() and VecDot() (outputs poisoned first): where the layout has the product with the
  dot (ELLPACK-R, RgCSR; CMRS's scan kernel without split groups), z to the bit and the sum of the partial sums within
  rounding of x'z, the same bits twice; asked with a ticket, the sum its last block adds is bitwise the host's in that
  order and the ticket is left at 0; elsewhere nothing done. *npartial (if not NULL): how many partial sums
*/
static PetscErrorCode CheckMultDot(Mat A, const char *what, PetscBool expect, PetscInt *npartial)
{
  Vec              x, z0, z1;
  PetscScalar     *d_partial, *d_sum, h_partial[MATGPUMAT_MAX_DOT_PARTIALS], sum = 0, again = 0, ref, dsum;
  unsigned int    *d_ticket, ticket = 1;
  PetscInt         np = -1, np2 = -1, m;
  PetscBool        same;
  MatGPUMatDotSums sums;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x, &z0));
  PetscCall(VecDuplicate(z0, &z1));
  PetscCall(MatGetSize(A, &m, NULL));
  for (PetscInt i = 0; i < m; i++) PetscCall(VecSetValue(x, i, PetscCosReal(0.5 + i), INSERT_VALUES));
  PetscCall(VecAssemblyBegin(x));
  PetscCall(VecAssemblyEnd(x));
  PetscCall(MatMult(A, x, z0));
  PetscCall(VecDot(x, z0, &ref));
  PetscCall(VecSet(z1, PETSC_MAX_REAL)); /* poison */
  PetscCallCUDA(cudaMalloc((void **)&d_partial, sizeof(h_partial)));
  PetscCallCUDA(cudaMalloc((void **)&d_sum, sizeof(PetscScalar)));
  PetscCallCUDA(cudaMalloc((void **)&d_ticket, sizeof(unsigned int)));
  PetscCallCUDA(cudaMemset(d_partial, 0xff, sizeof(h_partial)));
  PetscCallCUDA(cudaMemset(d_sum, 0xff, sizeof(PetscScalar))); /* poison: NaN */
  PetscCallCUDA(cudaMemset(d_ticket, 0, sizeof(unsigned int)));
  sums.partial = d_partial;
  sums.ticket  = NULL;
  sums.sum     = NULL;
  PetscCall(MatGPUMatMultDot(A, x, z1, &sums, &np));
  TEST_CHECK((np > 0) == expect && np <= MATGPUMAT_MAX_DOT_PARTIALS, "%s: MatGPUMatMultDot() %s (%" PetscInt_FMT " partial sums)", what, expect ? "done" : "not done, as this layout has no such product", np);
  if (np > 0) {
    PetscCall(VecEqual(z0, z1, &same));
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCallCUDA(cudaMemcpy(h_partial, d_partial, (size_t)np * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
    for (PetscInt k = 0; k < np; k++) sum += h_partial[k];
    sums.ticket = d_ticket; /* the second time with the sum */
    sums.sum    = d_sum;
    PetscCall(MatGPUMatMultDot(A, x, z1, &sums, &np2));
    PetscCallCUDA(cudaDeviceSynchronize());
    PetscCallCUDA(cudaMemcpy(h_partial, d_partial, (size_t)np2 * sizeof(PetscScalar), cudaMemcpyDeviceToHost));
    PetscCallCUDA(cudaMemcpy(&dsum, d_sum, sizeof(PetscScalar), cudaMemcpyDeviceToHost));
    PetscCallCUDA(cudaMemcpy(&ticket, d_ticket, sizeof(unsigned int), cudaMemcpyDeviceToHost));
    for (PetscInt k = 0; k < np2; k++) again += h_partial[k];
    TEST_CHECK(same, "%s: MatGPUMatMultDot()'s z is MatMult()'s to the bit", what);
    TEST_CHECK(PetscAbsScalar(sum - ref) <= 1e-12 * PetscMax(PetscAbsScalar(ref), 1.0) && sum == again && np == np2, "%s: the partial sums add to x'z (%.17g against VecDot()'s %.17g), the same bits twice", what, (double)PetscRealPart(sum), (double)PetscRealPart(ref));
    TEST_CHECK(dsum == LastBlockSum(h_partial, np2) && ticket == 0, "%s: the last block's sum of the partial sums is the host's in its order to the bit (%.17g against %.17g), the ticket left at 0 (%u)", what, (double)PetscRealPart(dsum), (double)PetscRealPart(LastBlockSum(h_partial, np2)), ticket);
  }
  if (npartial) *npartial = np;
  PetscCallCUDA(cudaFree(d_partial));
  PetscCallCUDA(cudaFree(d_sum));
  PetscCallCUDA(cudaFree(d_ticket));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&z0));
  PetscCall(VecDestroy(&z1));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Where the dot is, and is not, in the product's pass: a matrix with more rows than MATGPUMAT_MAX_DOT_PARTIALS blocks
  cover (the grid strides: exactly that many partial sums), for ELLPACK-R, CMRS and RgCSR; CMRS with sorted strips (Algorithm
  1) and with a long row split across warps (its rows finish after the pass) do without, then with the split off do it
*/
static PetscErrorCode CheckMultDotLayouts(void)
{
  const char *types[] = {MATSEQELLRCUDA, MATSEQCMRSCUDA, MATSEQRGCSRCUDA};
  Mat         A;
  PetscInt    np;

  PetscFunctionBeginUser;
  for (size_t t = 0; t < PETSC_STATIC_ARRAY_LENGTH(types); t++) {
    char what[128];

    PetscCall(TestCreateLaplacian(2, 1024, &A));
    PetscCall(MatSetType(A, types[t]));
    PetscCall(PetscSNPrintf(what, sizeof(what), "2-D 5-point 1024x1024, %s", types[t]));
    PetscCall(CheckMultDot(A, what, PETSC_TRUE, &np));
    TEST_CHECK(np == MATGPUMAT_MAX_DOT_PARTIALS, "%s: the grid strides over the rows (%" PetscInt_FMT " partial sums, at most %d)", what, np, MATGPUMAT_MAX_DOT_PARTIALS);
    PetscCall(MatDestroy(&A));
  }
  PetscCall(TestCreateLaplacian(2, 60, &A));
  PetscCall(MatSetType(A, MATSEQCMRSCUDA));
  PetscCall(MatCMRSCUDASetSort(A, PETSC_TRUE));
  PetscCall(CheckMultDot(A, "2-D 5-point 60x60, CMRS with sorted strips (Algorithm 1)", PETSC_FALSE, NULL));
  PetscCall(MatDestroy(&A));
  PetscCall(TestCreateRandom(3000, 3000, 4, "denserow", 12, &A));
  PetscCall(MatSetType(A, MATSEQCMRSCUDA));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_heavy_rows", "on"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(CheckMultDot(A, "one dense row 3000, CMRS, summed by warps of its own (-mat_cmrs_heavy_rows on)", PETSC_FALSE, NULL));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_heavy_rows", "off"));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_split_entries", "512"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(CheckMultDot(A, "one dense row 3000, CMRS, its group split (-mat_cmrs_split_entries 512)", PETSC_FALSE, NULL));
  PetscCall(PetscOptionsSetValue(NULL, "-mat_cmrs_split_entries", "0"));
  PetscCall(MatSetFromOptions(A));
  PetscCall(CheckMultDot(A, "one dense row 3000, CMRS, no split (-mat_cmrs_split_entries 0)", PETSC_TRUE, NULL));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_split_entries"));
  PetscCall(PetscOptionsClearValue(NULL, "-mat_cmrs_heavy_rows"));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The norms of KSPBuildSolution() at each monitor call (at most 16 iterations) */
typedef struct {
  PetscReal norm[16];
  PetscInt  n;
} SolutionNorms;

static PetscErrorCode MonitorSolutionNorm(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  SolutionNorms *s = (SolutionNorms *)ctx;
  Vec            x;

  PetscFunctionBeginUser;
  (void)rnorm;
  PetscCall(KSPBuildSolution(ksp, NULL, &x));
  if (it < 16) PetscCall(VecNorm(x, NORM_2, &s->norm[it]));
  s->n = PetscMax(s->n, it + 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A solve stopped after `its` iterations (KSP_DIVERGED_ITS), with the norm of the solution at each monitor call */
static PetscErrorCode SolveMonitored(Mat A, KSPType type, const char *pc, Vec b, PetscInt its, Vec x, SolutionNorms *s)
{
  KSP ksp;
  PC  p;

  PetscFunctionBeginUser;
  s->n = 0;
  PetscCall(VecSet(x, 0.0));
  PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, type));
  PetscCall(KSPGetPC(ksp, &p));
  PetscCall(PCSetType(p, pc));
  PetscCall(KSPSetTolerances(ksp, 1e-30, 1e-30, PETSC_CURRENT, its));
  PetscCall(KSPMonitorSet(ksp, MonitorSolutionNorm, s, NULL));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSolve(ksp, b, x));
  PetscCall(KSPDestroy(&ksp));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  x during and at the end of a solve: the fused iterations leave x one step behind until the next direction kernel
  takes it (or, at a stop, a kernel of its own), so KSPBuildSolution() forms x + a p meanwhile. With and without
  look-ahead (x then lags at each monitor call) the monitors must see the same bits, and KSPCG's solutions to rounding;
  the solve stopped by the iteration limit must end with KSPCG's x (the last step applied)
*/
static PetscErrorCode CheckSolutionOnTheWay(Mat A, const char *what, PetscBool repeatable)
{
  const char   *pcs[] = {PCNONE, PCJACOBI};
  const PetscInt its  = 9;
  Vec           b, x0, x1, x2;
  SolutionNorms s0, s1, s2;

  PetscFunctionBeginUser;
  PetscCall(MatCreateVecs(A, &x0, &b));
  PetscCall(VecDuplicate(x0, &x1));
  PetscCall(VecDuplicate(x0, &x2));
  {
    PetscInt lo, hi;

    PetscCall(VecGetOwnershipRange(b, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) PetscCall(VecSetValue(b, i, PetscCosReal(0.5 + i), INSERT_VALUES));
    PetscCall(VecAssemblyBegin(b));
    PetscCall(VecAssemblyEnd(b));
  }
  for (size_t p = 0; p < PETSC_STATIC_ARRAY_LENGTH(pcs); p++) {
    PetscReal diff, nrm, worst = 0;
    PetscBool same, samenorms = PETSC_TRUE;

    PetscCall(SolveMonitored(A, KSPCG, pcs[p], b, its, x0, &s0));
    PetscCall(SolveMonitored(A, KSPCGFUSED, pcs[p], b, its, x1, &s1));
    PetscCall(PetscOptionsSetValue(NULL, "-ksp_cgfused_lookahead", "0"));
    PetscCall(SolveMonitored(A, KSPCGFUSED, pcs[p], b, its, x2, &s2));
    PetscCall(PetscOptionsClearValue(NULL, "-ksp_cgfused_lookahead"));
    for (PetscInt k = 0; k < PetscMin(s0.n, 16); k++) {
      worst = PetscMax(worst, PetscAbsReal(s1.norm[k] - s0.norm[k]) / PetscMax(s0.norm[k], PETSC_SMALL));
      samenorms = (PetscBool)(samenorms && s1.norm[k] == s2.norm[k]);
    }
    TEST_CHECK(s0.n == its + 1 && s1.n == s0.n && s2.n == s0.n && worst <= 1e-8, "%s, PC %s: the solution at each of %" PetscInt_FMT " monitor calls is KSPCG's to %.1e (KSPCG %" PetscInt_FMT " calls, KSPCGFUSED %" PetscInt_FMT ")", what, pcs[p], s0.n, (double)worst, s0.n, s1.n);
    TEST_CHECK(samenorms || !repeatable, "%s, PC %s: the monitors see the same solution with look-ahead (x current) and without (x + a p)", what, pcs[p]);
    PetscCall(VecEqual(x1, x2, &same));
    TEST_CHECK(same || !repeatable, "%s, PC %s: stopped at the iteration limit, the same x with and without look-ahead", what, pcs[p]);
    PetscCall(VecAXPY(x1, -1.0, x0));
    PetscCall(VecNorm(x1, NORM_2, &diff));
    PetscCall(VecNorm(x0, NORM_2, &nrm));
    TEST_CHECK(diff <= 1e-10 * nrm, "%s, PC %s: stopped at the iteration limit (%" PetscInt_FMT "), x is KSPCG's to %.1e (its last step taken)", what, pcs[p], its, (double)(nrm > 0 ? diff / nrm : diff));
  }
  PetscCall(VecDestroy(&x0));
  PetscCall(VecDestroy(&x1));
  PetscCall(VecDestroy(&x2));
  PetscCall(VecDestroy(&b));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The type changes away and back; the trust region (recorded, forwarded) is KSPCG's */
static PetscErrorCode CheckWrapper(void)
{
  KSP       ksp;
  Mat       A;
  Vec       b, x0, x1;
  PetscInt  it0, it1;
  PetscBool same;

  PetscFunctionBeginUser;
  PetscCall(TestCreateLaplacian(2, 20, &A));
  PetscCall(MatCreateVecs(A, &x0, &b));
  PetscCall(VecDuplicate(x0, &x1));
  PetscCall(VecSet(b, 1.0));
  for (PetscInt k = 0; k < 2; k++) {
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, k ? KSPCGFUSED : KSPCG));
    PetscCall(KSPCGSetRadius(ksp, 0.5));
    PetscCall(KSPSolve(ksp, b, k ? x1 : x0));
    PetscCall(KSPGetIterationNumber(ksp, k ? &it1 : &it0));
    PetscCall(KSPDestroy(&ksp));
  }
  PetscCall(VecEqual(x0, x1, &same));
  TEST_CHECK(same && it0 == it1, "KSPCGSetRadius() on KSPCGFUSED: PETSc's trust-region CG, the same bits (%" PetscInt_FMT " and %" PetscInt_FMT " iterations)", it0, it1);
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
  PetscCall(KSPSetType(ksp, KSPCGFUSED));
  PetscCall(KSPSetType(ksp, KSPGMRES));
  PetscCall(KSPSetType(ksp, KSPCGFUSED));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSolve(ksp, b, x1));
  PetscCall(KSPDestroy(&ksp));
  TEST_CHECK(PETSC_TRUE, "KSPCGFUSED -> KSPGMRES -> KSPCGFUSED: solves (with -checkfunctionlist: nothing left behind)");
  PetscCall(VecDestroy(&x0));
  PetscCall(VecDestroy(&x1));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscBool   host = PETSC_FALSE, gpu, flg;
  char        reason[256], *types[8];
  PetscInt    ntypes = 8;
  PetscMPIInt size;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-host", &host, NULL));
  if (host) {
    Mat A;

    PetscCall(TestCreateLaplacian(2, 30, &A));
    PetscCall(Compare(A, "2-D 5-point 30x30, AIJ, host vectors", PETSC_TRUE, PETSC_FALSE, PETSC_TRUE));
    PetscCall(CheckSolutionOnTheWay(A, "2-D 5-point 30x30, AIJ, host vectors", PETSC_TRUE));
    PetscCall(MatDestroy(&A));
    PetscCall(TestCreateLaplacian(3, 10, &A));
    PetscCall(MatSetType(A, MATSEQCMRSCUDA)); /* ours on host vectors: products on the host, PETSc's CG */
    PetscCall(MatSetVecType(A, VECSTANDARD));  /* host vectors on a GPU machine too (else MatCreateVecs() gives CUDA ones) */
    PetscCall(Compare(A, "3-D 7-point 10^3, cmrscuda, host vectors", PETSC_TRUE, PETSC_FALSE, PETSC_TRUE));
    PetscCall(MatDestroy(&A));
    PetscCall(CompareIndefinite(MATSEQAIJ, PETSC_FALSE));
    PetscCall(CheckWrapper());
  } else {
    PetscCall(PetscGPUMatDeviceAvailable(&gpu, reason, sizeof(reason)));
    if (!gpu) {
      PetscCall(TestSkip("KSPCGFUSED on the GPU (test_gpu_cgfused)", reason));
      PetscCall(PetscFinalize());
      return 0;
    }
    PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-types", types, &ntypes, &flg));
    if (!flg) {
      PetscCall(PetscStrallocpy(MATSEQCMRSCUDA, &types[0]));
      ntypes = 1;
    }
    for (PetscInt t = 0; t < ntypes; t++) {
      const char *problems[] = {"2-D 5-point 60x60", "3-D 7-point 16^3", "random SPD 3000 (diagonally dominant)"};

      for (size_t q = 0; q < PETSC_STATIC_ARRAY_LENGTH(problems); q++) {
        Mat  A, S;
        char what[256];

        if (q == 0) PetscCall(TestCreateLaplacian(2, 60, &S));
        else if (q == 1) PetscCall(TestCreateLaplacian(3, 16, &S));
        else {
          Mat At;

          PetscCall(TestCreateRandom(3000, 3000, 6, "uniform", 7, &At));
          PetscCall(MatTranspose(At, MAT_INITIAL_MATRIX, &S));
          PetscCall(MatAXPY(S, 1.0, At, DIFFERENT_NONZERO_PATTERN)); /* symmetric */
          PetscCall(MatShift(S, 40.0));                              /* diagonally dominant: SPD */
          PetscCall(MatDestroy(&At));
        }
        if (size > 1) { /* the parallel type, CUDA vectors: p'w and the sums reduced over the ranks */
          PetscCall(TestDistribute(PETSC_COMM_WORLD, S, types[t], &A));
          PetscCall(MatDestroy(&S));
        } else {
          A = S;
          PetscCall(MatSetType(A, types[t]));
        }
        PetscCall(PetscSNPrintf(what, sizeof(what), "%s, %s on %d rank(s), CUDA vectors", problems[q], types[t], size));
        PetscCall(PetscStrcmp(types[t], MATAIJCUSPARSE, &flg));
        PetscCall(Compare(A, what, PETSC_FALSE, PETSC_TRUE, (PetscBool)(size == 1 || !flg)));
        PetscCall(CheckSolutionOnTheWay(A, what, (PetscBool)(size == 1 || !flg)));
        if (size == 1) {
          PetscCall(HasMultDot(A, &flg));
          PetscCall(CheckMultDot(A, what, flg, NULL));
        }
        PetscCall(MatDestroy(&A));
      }
      if (size == 1) PetscCall(CompareIndefinite(types[t], PETSC_TRUE));
      PetscCall(PetscFree(types[t]));
    }
    if (size == 1) PetscCall(CheckMultDotLayouts());
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_gpu_cgfused: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
