#pragma once

/*
  The papers' SpMV metrics (Koza et al. 2014, eq. 6.1-6.2), shared by bench_spmv and its test.

    GFLOPS = (2 nnz - rows) / tau
    beta+  = (s_v + s_i) e + s_i r + 2 s_v rows     (x read once per row's worth: the optimistic bound)
    beta-  = (2 s_v + s_i) e + s_i r + s_v rows     (x read once per entry: the pessimistic bound)
    eta+-  = beta+- / tau / B

  with e the entries a product reads (padding it reads included), r the format's extra integers (row offsets,
  row lengths, strip or group pointers), s_v and s_i the bytes of a value and an index, and B the measured
  device-to-device copy bandwidth (bytes read + written per second).
*/
typedef struct {
  double gflops, beta_plus, beta_minus, eta_plus, eta_minus;
} SpMVMetrics;

static inline SpMVMetrics SpMVMetricsCompute(double rows, double nnz, double entries_read, double extra_indices, double s_v, double s_i, double tau_s, double bandwidth)
{
  SpMVMetrics r;

  r.gflops     = (2.0 * nnz - rows) / tau_s / 1e9;
  r.beta_plus  = (s_v + s_i) * entries_read + s_i * extra_indices + 2.0 * s_v * rows;
  r.beta_minus = (2.0 * s_v + s_i) * entries_read + s_i * extra_indices + s_v * rows;
  r.eta_plus   = r.beta_plus / tau_s / bandwidth;
  r.eta_minus  = r.beta_minus / tau_s / bandwidth;
  return r;
}

/*
  The time a CG iteration cannot go below (issue #16's bound): the product's bytes at best (beta+: the matrix, x and y
  once each) and 8 more passes over a vector of `rows` values (PCJacobi's CG, fused: x, r and p updated, z formed,
  two sums), 10 vector passes in all, at the copy bandwidth
*/
#define SPMV_CG_VECTOR_PASSES 10

static inline double SpMVCGIterationBound(double beta_plus, double rows, double s_v, double bandwidth)
{
  return (beta_plus + (SPMV_CG_VECTOR_PASSES - 2) * s_v * rows) / bandwidth;
}

/*
  The largest relative error ||y - y_ref|| / ||y_ref|| (y_ref in float64) a correct product may show: the rounding
  of a sum of up to maxrow products, with margin, in the working precision's epsilon (1e-13 on a 7-point stencil in
  double, 5e-5 in single). A fixed 1e-10 flagged every single-precision result as wrong.
*/
static inline double SpMVResultTolerance(double epsilon, double maxrow)
{
  return 64.0 * epsilon * (maxrow > 1.0 ? maxrow : 1.0);
}