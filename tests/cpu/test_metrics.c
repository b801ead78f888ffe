static const char help[] = "The benchmark's metrics (GFLOPS, beta+-, eta+-) on small cases computed by hand.\n";

#include <petscsys.h>
#include "../../examples/spmv_metrics.h"
#include "../common/testutil.h"

static PetscBool Close(double a, double b)
{
  return (PetscBool)(fabs(a - b) <= 1e-12 * PetscMax(1.0, fabs(b)));
}

int main(int argc, char **argv)
{
  SpMVMetrics r;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  /*
    The 4x4 ELLPACK-R example of test_ellr_layout (8 nonzeros, 4 rows, rl[] = 4 extra indices), double values and
    32-bit indices, one product in 1 microsecond, copy bandwidth 1e9 B/s:
      GFLOPS = (2*8 - 4) / 1e-6 / 1e9          = 0.012
      beta+  = (8+4)*8 + 4*4 + 2*8*4           = 96 + 16 + 64  = 176 bytes,  eta+ = 176 / 1e-6 / 1e9 = 0.176
      beta-  = (16+4)*8 + 4*4 + 8*4            = 160 + 16 + 32 = 208 bytes,  eta- = 0.208
  */
  r = SpMVMetricsCompute(4, 8, 8, 4, 8, 4, 1e-6, 1e9);
  TEST_CHECK(Close(r.gflops, 0.012), "GFLOPS of the 4x4 example: %g (0.012 by hand)", r.gflops);
  TEST_CHECK(Close(r.beta_plus, 176) && Close(r.eta_plus, 0.176), "beta+ %g (176), eta+ %g (0.176)", r.beta_plus, r.eta_plus);
  TEST_CHECK(Close(r.beta_minus, 208) && Close(r.eta_minus, 0.208), "beta- %g (208), eta- %g (0.208)", r.beta_minus, r.eta_minus);
  /*
    Padding that is read counts, CSR's offsets are rows+1: 3 rows, 5 nonzeros, 8 entries read (padded), 4 offsets,
    single precision (4-byte values), 2 microseconds, 2e9 B/s:
      GFLOPS = (10 - 3) / 2e-6 / 1e9 = 0.0035
      beta+  = (4+4)*8 + 4*4 + 2*4*3 = 64 + 16 + 24 = 104,  eta+ = 104 / 2e-6 / 2e9 = 0.026
      beta-  = (8+4)*8 + 4*4 + 4*3   = 96 + 16 + 12 = 124,  eta- = 0.031
  */
  r = SpMVMetricsCompute(3, 5, 8, 4, 4, 4, 2e-6, 2e9);
  TEST_CHECK(Close(r.gflops, 0.0035), "GFLOPS of the padded single-precision case: %g (0.0035)", r.gflops);
  TEST_CHECK(Close(r.beta_plus, 104) && Close(r.eta_plus, 0.026), "beta+ %g (104), eta+ %g (0.026)", r.beta_plus, r.eta_plus);
  TEST_CHECK(Close(r.beta_minus, 124) && Close(r.eta_minus, 0.031), "beta- %g (124), eta- %g (0.031)", r.beta_minus, r.eta_minus);
  /* CG's bound: the 4x4 example's product (beta+ 176 bytes, two of its passes over 4 doubles among them) and 8 more
     passes over 4 doubles = 176 + 8*8*4 = 432 bytes, at 1e9 B/s: 4.32e-7 s */
  r = SpMVMetricsCompute(4, 8, 8, 4, 8, 4, 1e-6, 1e9);
  TEST_CHECK(Close(SpMVCGIterationBound(r.beta_plus, 4, 8, 1e9), 4.32e-7), "CG's iteration bound of the 4x4 example: %g s (4.32e-7 by hand)", SpMVCGIterationBound(r.beta_plus, 4, 8, 1e9));
  /* the correctness threshold follows the precision: a single-precision 7-point product (1.7e-7 measured on the
     H100) passes, a double one must stay far below the old fixed 1e-10 */
  TEST_CHECK(SpMVResultTolerance(1.1920929e-07, 7) > 1.7e-7 && SpMVResultTolerance(1.1920929e-07, 7) < 1e-3, "single-precision tolerance for 7 entries per row: %.2e", SpMVResultTolerance(1.1920929e-07, 7));
  TEST_CHECK(SpMVResultTolerance(2.220446e-16, 7) < 1e-12, "double-precision tolerance for 7 entries per row: %.2e", SpMVResultTolerance(2.220446e-16, 7));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_metrics: %" PetscInt_FMT " passed, %" PetscInt_FMT " failed\n", test_counts.passed, test_counts.failed));
  PetscCall(PetscFinalize());
  return TestExitCode();
}
