/* MATSEQCMRSCUDA: the CMRS format as a petscgpumat format (parameters, device copy, registration) */
#include <petscgpumat/private/cmrsimpl.h>

static const MatGPUFormat MatGPUFormat_CMRS;

static const char *const MatCMRSVariants[] = {"basic", "padded", "scan", "auto", "MatCMRSVariant", "MAT_CMRS_", NULL};
static const char *const MatCMRSHeavyModes[] = {"auto", "off", "on"}; /* CMRS_HEAVY_ROWS_AUTO, _OFF, _ON */

/* defaults: the height chosen from the mean row length (0) and the variant, block size and scan kernel parameters
   from the H100 sweep; see docs/cmrs.md */
#define CMRS_DEFAULT_HEIGHT  0
#define CMRS_DEFAULT_BLOCK   128
#define CMRS_DEFAULT_VARIANT CMRS_VARIANT_AUTO
#define CMRS_DEFAULT_UNROLL       0 /* automatic: MatCMRSUnroll() */
#define CMRS_DEFAULT_LANE_ENTRIES 4
#define CMRS_DEFAULT_SPLIT_ENTRIES 1024 /* best or within noise of it on the long-row cases, H100 (docs/cmrs.md) */

/*
  Automatic height, from the H100 sweep (double): about 256 entries per strip, i.e. the largest height in
  {1, 2, 3, 4, 6, 8} not above 256 / mean row length. It was within 4 % of the best height on every matrix.
*/
static PetscInt MatCMRSAutomaticHeight(PetscInt m, PetscCount nnz)
{
  const PetscInt  choices[] = {8, 6, 4, 3, 2, 1};
  const PetscReal mean      = m ? (PetscReal)nnz / (PetscReal)m : 0.0;

  for (size_t c = 0; c < PETSC_STATIC_ARRAY_LENGTH(choices); c++)
    if ((PetscReal)choices[c] * mean <= 256.0) return choices[c];
  return 1;
}

/*
  The scan kernel's automatic height and strips per warp (H100 sweeps, docs/cmrs.md): strips of 16 rows, and as many
  strips per warp (a power of two) as keep a warp's share near 512 entries. The height only sets how many strip
  pointers there are (and how many a lane compares its entry with), so the largest height is best; the entries per
  warp set its work. With 4 entries per lane and 1 pass loaded ahead (the defaults) that is 4 strips on stencils
  (mean row length 5-7) and 2 on cage10 (13), the best or within 2 % of it on the five matrices of the sweep.
*/
#define CMRS_SCAN_HEIGHT       16 /* best in double and in single precision */
#define CMRS_SCAN_WARP_ENTRIES 512

static PetscInt MatCMRSWarpStrips(PetscInt h, PetscInt option, PetscInt m, PetscCount nnz)
{
  const PetscReal mean = m ? (PetscReal)nnz / (PetscReal)m : 0.0;
  PetscInt        S    = 1;

  if (option) return option;
  while (S < 32 && (PetscReal)(2 * S * h) * PetscMax(mean, 1.0) <= CMRS_SCAN_WARP_ENTRIES) S *= 2;
  return S;
}

/*
  The scan kernel's automatic passes loaded ahead: 2 where a warp takes 1 or 2 strips (rows of more than ~8 entries),
  else 1. H100, 2026-11-26 (docs/cmrs.md): where a warp takes 1 or 2 strips U = 2 was 2-16 % faster on 16 of 21
  matrices (graphs, circuits, lap3d27, power laws) and within 1.1 % on the other 5; on meshes of 4 strips per warp it
  lost up to 6 % (2026-11-22 sweep)
*/
static PetscInt MatCMRSUnroll(PetscInt S, PetscInt option)
{
  if (option) return option;
  return S <= 2 ? 2 : 1;
}

/*
  The scan kernel's heavy rows (MatCMRSHeavy): the length above which a row is summed by warps of its own, 0 for none.
  Automatic, where some row is longer than T (H200, 20 M nonzeros; docs/cmrs.md, "Heavy rows"):
  - mean row up to 64 entries: where the rows longer than 4 means also hold at least CMRS_HEAVY_AUTO of the entries
    (19 real matrices with rows longer than T: +2 to +14 % on 9 of the 11 above 20 %, -6 % on two; up to -11 % on those
    below, whose few heavy rows only cut their groups' passes);
  - longer mean rows, where Algorithm 1 ran until 2026-11-29: always (MIT8 and JohnsHopkins 0.79-0.82x cuSPARSE with
    Algorithm 1, 0.90 with the scan kernel alone, 0.98 with heavy rows; a dense 4500 x 4500 0.92, 0.87, 1.01-1.02)
*/
static PetscInt MatCMRSHeavyPlan(const Mat_SeqCMRSCUDA *c, const MatCMRSPlan *p, const MatGPUMatRowStats *s)
{
  const PetscInt T = c->heavy_length_option ? c->heavy_length_option : CMRS_HEAVY_T;

  if (!p->warp_strips || !p->m || c->heavy_rows == CMRS_HEAVY_ROWS_OFF) return 0;
  if (c->heavy_rows == CMRS_HEAVY_ROWS_AUTO) {
    const PetscBool long_rows = (PetscBool)(p->nnz > (PetscCount)CMRS_HEAVY_LONG_MEAN * p->m);

    if (!s->preallocated || s->maxlen <= T) return 0;
    if (!long_rows && (PetscReal)s->heavy < CMRS_HEAVY_AUTO * (PetscReal)s->nnz) return 0;
  }
  return T;
}

/*
  The plan: the kernel, the strip height and the scan kernel's strips per warp, passes loaded ahead and heavy rows, from the rows and
  entries the device copy will hold (the base's row statistics) and the options
*/
static PetscErrorCode MatGPUFormatPlan_CMRS(Mat A, const MatGPUMatRowStats *s)
{
  Mat_SeqCMRSCUDA *c;
  MatCMRSPlan     *p;

  PetscFunctionBegin;
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_CMRS, &c));
  p           = &c->plan;
  p->m        = s->rows;
  p->nnz      = s->nnz;
  p->measured = PETSC_FALSE; /* measured again when asked, for this pattern */
  p->variant  = c->variant == CMRS_VARIANT_AUTO ? CMRS_VARIANT_SCAN : c->variant;
  p->height_auto = (PetscBool)!c->height_option;
  p->height      = c->height_option;
  if (!p->height && p->variant == CMRS_VARIANT_PADDED) p->height = CMRS_MAX_HEIGHT; /* the padded variant: the 2014 paper's height 16 */
  else if (!p->height && p->variant == CMRS_VARIANT_SCAN && !c->sort) p->height = CMRS_SCAN_HEIGHT; /* the scan kernel: see MatCMRSWarpStrips() */
  else if (!p->height && s->preallocated) p->height = MatCMRSAutomaticHeight(p->m, p->nnz);
  else if (!p->height) p->height = 4;
  p->warp_strips = p->variant == CMRS_VARIANT_SCAN && !c->sort ? MatCMRSWarpStrips(p->height, c->warp_strips_option, p->m, p->nnz) : 0;
  p->unroll      = MatCMRSUnroll(p->warp_strips, c->unroll_option);
  p->block       = c->block_option;
  p->heavy_length = MatCMRSHeavyPlan(c, p, s);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan in use: made by the base for A's pattern and parameters now */
static PetscErrorCode MatCMRSGetPlan_Private(Mat A, const MatCMRSPlan **p)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatGPUMatPlan(A));
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_CMRS, &c));
  *p = &c->plan;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSHeight_Private(Mat A, PetscInt *h)
{
  const MatCMRSPlan *p = NULL;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetPlan_Private(A, &p));
  *h = p->height;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSGetData_Private(Mat A, Mat_SeqCMRSCUDA **c)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatGetData(A, &MatGPUFormat_CMRS, c));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDASetHeight_CMRS(Mat A, PetscInt h)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCheck(h >= 0 && h <= CMRS_MAX_HEIGHT, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "CMRS height %" PetscInt_FMT " must be in 1..%d (RowInStrip has %d bits), or 0: automatic", h, CMRS_MAX_HEIGHT, CMRS_BITS);
  PetscCall(MatCMRSGetData_Private(A, &c));
  if (c->height_option != h) PetscCall(MatGPUMatInvalidateStructure(A));
  c->height_option = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDASetBlockSize_CMRS(Mat A, PetscInt b)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCheck(b >= 32 && b <= 1024 && b % 32 == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "CMRS block size %" PetscInt_FMT " must be a multiple of 32 in 32..1024 (one warp per strip)", b);
  PetscCall(MatCMRSGetData_Private(A, &c));
  c->block_option = b;
  PetscCall(MatGPUMatInvalidatePlan(A)); /* a launch parameter, not the layout's: planned again before the next product */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDASetSort_CMRS(Mat A, PetscBool sort)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  if (c->sort != sort) PetscCall(MatGPUMatInvalidateStructure(A));
  c->sort = sort;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDASetLaneEntries_CMRS(Mat A, PetscInt E)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCheck(E == 1 || E == 2 || E == 4, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "CMRS lane entries (-mat_cmrs_lane_entries) %" PetscInt_FMT " must be 1, 2 or 4", E);
  PetscCall(MatCMRSGetData_Private(A, &c));
  c->lane_entries = E; /* a kernel parameter: the layout stays */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDAGetBlockSize_CMRS(Mat A, PetscInt *b)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  *b = c->block_option;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDAGetSort_CMRS(Mat A, PetscBool *sort)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  *sort = c->sort;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDAGetLaneEntries_CMRS(Mat A, PetscInt *E)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  *E = c->lane_entries;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSCUDAGetHeight_CMRS(Mat A, PetscInt *h)
{
  PetscFunctionBegin;
  PetscCall(MatCMRSHeight_Private(A, h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatComposeCMRS_Private(Mat A, PetscBool compose)
{
  PetscObject o = (PetscObject)A;

  PetscFunctionBegin;
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDASetHeight_C", compose ? MatCMRSCUDASetHeight_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDAGetHeight_C", compose ? MatCMRSCUDAGetHeight_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDASetBlockSize_C", compose ? MatCMRSCUDASetBlockSize_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDASetSort_C", compose ? MatCMRSCUDASetSort_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDASetLaneEntries_C", compose ? MatCMRSCUDASetLaneEntries_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDAGetBlockSize_C", compose ? MatCMRSCUDAGetBlockSize_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDAGetSort_C", compose ? MatCMRSCUDAGetSort_CMRS : NULL));
  PetscCall(PetscObjectComposeFunction(o, "MatCMRSCUDAGetLaneEntries_C", compose ? MatCMRSCUDAGetLaneEntries_CMRS : NULL));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCreate_CMRS(void **data)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(PetscNew(&c));
  c->height_option      = CMRS_DEFAULT_HEIGHT;
  c->block_option       = CMRS_DEFAULT_BLOCK;
  c->sort               = PETSC_FALSE;
  c->variant            = CMRS_DEFAULT_VARIANT;
  c->M_option           = 4; /* the paper used 8 on Kepler; 4 measured faster on both Laplacians on the H100 */
  c->warp_strips_option = 0;
  c->unroll_option      = CMRS_DEFAULT_UNROLL;
  c->lane_entries       = CMRS_DEFAULT_LANE_ENTRIES;
  c->device_convert     = PETSC_TRUE;
  c->split_entries      = CMRS_DEFAULT_SPLIT_ENTRIES;
  c->heavy_rows         = CMRS_HEAVY_ROWS_AUTO;
  *data = c;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyParameters_CMRS(Mat A, Mat B)
{
  Mat_SeqCMRSCUDA *a, *b;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &a));
  PetscCall(MatCMRSGetData_Private(B, &b));
  b->height_option = a->height_option;
  b->block_option  = a->block_option;
  b->sort          = a->sort;
  b->variant       = a->variant;
  b->M_option      = a->M_option;
  b->warp_strips_option = a->warp_strips_option;
  b->unroll_option      = a->unroll_option;
  b->lane_entries       = a->lane_entries;
  b->device_convert     = a->device_convert;
  b->split_entries      = a->split_entries;
  b->heavy_rows          = a->heavy_rows;
  b->heavy_length_option = a->heavy_length_option;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatSetFromOptions_CMRS(Mat A, PetscGPUMatOptionItems PetscOptionsObject)
{
  Mat_SeqCMRSCUDA *c;
  PetscInt         v, variant = 0;
  PetscBool        set, flg;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  PetscCall(PetscOptionsInt("-mat_cmrs_height", "Rows per strip, 1..16; 0: automatic (16 for the scan and padded variants; for basic the largest of 1, 2, 3, 4, 6, 8 with height x mean row length <= 256)", "MatCMRSCUDASetHeight", c->height_option, &v, &set));
  if (set) PetscCall(MatCMRSCUDASetHeight(A, v));
  PetscCall(PetscOptionsInt("-mat_cmrs_block_size", "Threads per block (one warp per strip): a multiple of 32 in 32..1024", "MatCMRSCUDASetBlockSize", c->block_option, &v, &set));
  if (set) PetscCall(MatCMRSCUDASetBlockSize(A, v));
  PetscCall(PetscOptionsBool("-mat_cmrs_sort", "Sort the entries of each strip by column (the papers' fourth optimisation)", "MatCMRSCUDASetSort", c->sort, &flg, &set));
  if (set) PetscCall(MatCMRSCUDASetSort(A, flg));
  variant = c->variant;
  PetscCall(PetscOptionsEList("-mat_cmrs_variant", "CMRS kernel: basic (Algorithm 1, no padding), padded (section 6.7: height 16, M-column buffer, strips padded to passes of 32), scan (H100 kernel on the basic layout: warp segmented scan, no padding) or auto (scan, with heavy rows where rows are long)", "", MatCMRSVariants, 4, MatCMRSVariants[c->variant], &variant, &set));
  if (set && variant != c->variant) {
    c->variant = variant;
    PetscCall(MatGPUMatInvalidateStructure(A));
  }
  PetscCall(PetscOptionsInt("-mat_cmrs_buffer_columns", "Padded variant: buffer columns M (2, 4, 8, 16); height x M must be >= 32", "", c->M_option, &v, &set));
  if (set) {
    PetscCheck(v == 2 || v == 4 || v == 8 || v == 16, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_cmrs_buffer_columns %" PetscInt_FMT " must be 2, 4, 8 or 16", v);
    if (v != c->M_option) PetscCall(MatGPUMatInvalidateStructure(A));
    c->M_option = v;
  }
  PetscCall(PetscOptionsInt("-mat_cmrs_warp_strips", "Scan variant: strips per warp, 1, 2, 4, 8, 16 or 32 (0: automatic, about 512 entries per warp)", "", c->warp_strips_option, &v, &set));
  if (set) {
    PetscCheck(v >= 0 && v <= 32 && !(v & (v - 1)), PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_cmrs_warp_strips %" PetscInt_FMT " must be 0 (automatic) or a power of two up to 32", v);
    if (v != c->warp_strips_option) PetscCall(MatGPUMatInvalidateStructure(A)); /* the split of long groups is planned for S */
    c->warp_strips_option = v;
  }
  PetscCall(PetscOptionsInt("-mat_cmrs_split_entries", "Scan variant: a group of strips (one warp's) with more than 2 C entries is split into chunks of C entries, each summed by its own warp, then combined in a fixed order; C a multiple of 512, 0: no split", "", c->split_entries, &v, &set));
  if (set) {
    PetscCheck(v >= 0 && v % CMRS_SPLIT_ALIGN == 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_cmrs_split_entries %" PetscInt_FMT " must be 0 or a multiple of %d", v, CMRS_SPLIT_ALIGN);
    if (v != c->split_entries) PetscCall(MatGPUMatInvalidateStructure(A));
    c->split_entries = v;
  }
  v = c->heavy_rows;
  PetscCall(PetscOptionsEList("-mat_cmrs_heavy_rows", "Scan variant: rows longer than -mat_cmrs_heavy_length summed by warps of their own, in chunks of at most -mat_cmrs_split_entries entries, out of their strips' warps: auto (where there are such rows, and the mean row is longer than 64 entries or the rows longer than 4 means hold >= 20 % of the entries), off or on", "", MatCMRSHeavyModes, 3, MatCMRSHeavyModes[c->heavy_rows], &v, &set));
  if (set && v != c->heavy_rows) {
    c->heavy_rows = v;
    PetscCall(MatGPUMatInvalidateStructure(A)); /* the plan of the heavy rows is made at the build */
  }
  PetscCall(PetscOptionsInt("-mat_cmrs_heavy_length", "Scan variant: a row longer than this many entries is heavy (0: automatic, 256)", "", c->heavy_length_option, &v, &set));
  if (set) {
    PetscCheck(v >= 0, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_cmrs_heavy_length %" PetscInt_FMT " must be 0 (automatic) or positive", v);
    if (v != c->heavy_length_option) PetscCall(MatGPUMatInvalidateStructure(A));
    c->heavy_length_option = v;
  }
  PetscCall(PetscOptionsInt("-mat_cmrs_unroll", "Scan variant: passes each warp loads ahead, 1, 2 or 4 (0: automatic, 2 where a warp takes at most 2 strips, else 1)", "", c->unroll_option, &v, &set));
  if (set) {
    PetscCheck(v == 0 || v == 1 || v == 2 || v == 4, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "-mat_cmrs_unroll %" PetscInt_FMT " must be 0 (automatic), 1, 2 or 4", v);
    c->unroll_option = v;
    PetscCall(MatGPUMatInvalidatePlan(A)); /* a kernel parameter of the plan: the layout stays */
  }
  PetscCall(PetscOptionsInt("-mat_cmrs_lane_entries", "Scan variant: consecutive entries each lane takes in a pass (1, 2 or 4): a pass covers 32 x E entries, one segmented scan per pass", "MatCMRSCUDASetLaneEntries", c->lane_entries, &v, &set));
  if (set) PetscCall(MatCMRSCUDASetLaneEntries(A, v));
  PetscCall(PetscOptionsBool("-mat_cmrs_device_convert", "Build the unsorted, unpadded packed layout on the GPU from the uploaded CSR arrays", "", c->device_convert, &c->device_convert, NULL));
  if (c->variant == CMRS_VARIANT_PADDED) {
    PetscInt h;

    PetscCall(MatCMRSHeight_Private(A, &h));
    PetscCheck(h * c->M_option >= 32, PetscObjectComm((PetscObject)A), PETSC_ERR_ARG_OUTOFRANGE, "The padded CMRS variant needs height x buffer columns >= 32: %" PetscInt_FMT " x %" PetscInt_FMT, h, c->M_option);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatView_CMRS(Mat A, PetscViewer viewer)
{
  Mat_SeqCMRSCUDA   *c;
  Mat_GPUMat        *g = (Mat_GPUMat *)A->spptr;
  const MatCMRSPlan *p = NULL;
  PetscBool          packed;
  const char        *hauto;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  PetscCall(MatCMRSCanPack(A->cmap->n, &packed));
  PetscCall(MatCMRSGetPlan_Private(A, &p));
  hauto = p->height_auto ? " (automatic)" : "";
  if (p->variant == CMRS_VARIANT_PADDED) PetscCall(PetscViewerASCIIPrintf(viewer, "variant padded (section 6.7), height %" PetscInt_FMT ", buffer columns M = %" PetscInt_FMT ", block size %" PetscInt_FMT "; strips padded with explicit zeros to passes of 32\n", p->height, c->M_option, p->block));
  else if (p->warp_strips) PetscCall(PetscViewerASCIIPrintf(viewer, "variant %s scan (H100 kernel: warp segmented scan on the unsorted layout), height %" PetscInt_FMT "%s, %" PetscInt_FMT " strips per warp, %" PetscInt_FMT " passes loaded ahead, %" PetscInt_FMT " entries per lane per pass, block size %" PetscInt_FMT "\n", c->variant == CMRS_VARIANT_AUTO ? "auto:" : "", p->height, hauto, p->warp_strips, p->unroll, c->lane_entries, p->block));
  else PetscCall(PetscViewerASCIIPrintf(viewer, "variant basic (Algorithm 1)%s, height %" PetscInt_FMT "%s, block size %" PetscInt_FMT ", strips sorted by column: %s\n", c->variant >= CMRS_VARIANT_SCAN ? " (the scan kernel needs unsorted strips)" : "", p->height, hauto, p->block, c->sort ? "yes" : "no"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "%s\n", packed ? "RowInStrip packed into the 4 high bits of 32-bit column indices" : "unpacked: RowInStrip in a separate byte array (more than 2^28 columns or 64-bit PetscInt)"));
  if (g->built && !c->M) PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " strips, no padding; built on the %s\n", c->strips, c->device_built ? "GPU" : "host"));
  if (g->built && c->M) PetscCall(PetscViewerASCIIPrintf(viewer, "%" PetscInt_FMT " strips, padding %.1f%% of nnz (memory overhead of the padded variant)\n", c->strips, g->nnz ? 100.0 * (double)(c->nnz - g->nnz) / (double)g->nnz : 0.0));
  if (!g->built && p->heavy_length) PetscCall(PetscViewerASCIIPrintf(viewer, "heavy rows planned: rows longer than %" PetscInt_FMT " entries, summed by warps of their own (-mat_cmrs_heavy_rows %s)\n", p->heavy_length, MatCMRSHeavyModes[c->heavy_rows]));
  if (g->built && c->heavy.nheavy) PetscCall(PetscViewerASCIIPrintf(viewer, "heavy rows: %" PetscInt_FMT " rows longer than %" PetscInt_FMT " entries (%.1f %% of the entries) summed by warps of their own in %" PetscInt_FMT " chunks of at most %" PetscCount_FMT " entries, out of their strips' warps (-mat_cmrs_heavy_rows %s)\n", c->heavy.nheavy, c->heavy.T, g->nnz ? 100.0 * (double)c->heavy.entries / (double)g->nnz : 0.0, c->heavy.nchunks, c->heavy.C ? c->heavy.C : (PetscCount)g->nnz, MatCMRSHeavyModes[c->heavy_rows]));
  else if (g->built && c->warp_strips && c->heavy_rows == CMRS_HEAVY_ROWS_AUTO) PetscCall(PetscViewerASCIIPrintf(viewer, "heavy rows: none (-mat_cmrs_heavy_rows auto: only where a row is longer than %d entries, and the mean row is longer than %d entries or the rows longer than %d means hold %.0f %% of the entries or more)\n", CMRS_HEAVY_T, CMRS_HEAVY_LONG_MEAN, CMRS_HEAVY_ROW_MEANS, 100 * CMRS_HEAVY_AUTO));
  if (g->built && c->split.nlong) PetscCall(PetscViewerASCIIPrintf(viewer, "long rows: %" PetscInt_FMT " of %" PetscInt_FMT " warp groups (more than %" PetscInt_FMT " entries) split into %" PetscInt_FMT " chunks of %" PetscInt_FMT "+ entries, one warp each, combined in a fixed order (-mat_cmrs_split_entries)\n", c->split.nlong, c->split.ngroups, 2 * c->split_entries, c->split.nchunks, c->split_entries));
  else if (g->built && c->split_entries && c->warp_strips) PetscCall(PetscViewerASCIIPrintf(viewer, "long rows: no warp group holds more than %" PetscInt_FMT " entries, none split (-mat_cmrs_split_entries %" PetscInt_FMT ")\n", 2 * c->split_entries, c->split_entries));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatCMRSLongRowsFree_Private(Mat_SeqCMRSCUDA *c)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceFree(&c->d_split.buffer));
  PetscCall(PetscMemzero(&c->d_split, sizeof(c->d_split)));
  PetscCall(MatCMRSSplitDestroy(&c->split));
  PetscCall(MatGPUMatDeviceFree(&c->d_heavy.buffer));
  PetscCall(PetscMemzero(&c->d_heavy, sizeof(c->d_heavy)));
  PetscCall(MatCMRSHeavyDestroy(&c->heavy));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Host arrays to the device in one allocation and one copy, packed at 256-byte offsets, followed by nscratch scalars the
  kernels write (not copied); the device addresses to dev[k]
*/
static PetscErrorCode MatCMRSPlanUpload_Private(Mat A, Mat_SeqCMRSCUDA *c, size_t n, const void *const host[], const size_t bytes[], void **const dev[], size_t nscratch, void **buffer, PetscScalar **scratch, void *stream)
{
  size_t         off = 0, total;
  char          *staged;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  for (size_t k = 0; k < n; k++) off += (bytes[k] + 255) / 256 * 256;
  total = off;
  PetscCall(MatGPUMatDeviceMalloc(A, total + nscratch * sizeof(PetscScalar), buffer));
  PetscCall(PetscMalloc1(total, &staged));
  off = 0;
  for (size_t k = 0; k < n; k++) {
    if (bytes[k]) PetscCall(PetscMemcpy(staged + off, host[k], bytes[k]));
    *dev[k] = (char *)*buffer + off;
    off += (bytes[k] + 255) / 256 * 256;
  }
  *scratch = (PetscScalar *)((char *)*buffer + total);
  ierr     = MatGPUMatCopyToDevice(*buffer, staged, total, stream);
  PetscCall(PetscFree(staged)); /* staged by CUDA on return (pageable source) */
  PetscCall(ierr);
  c->bytes += total + nscratch * sizeof(PetscScalar);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* The plan of the heavy rows (cmrsimpl.h) to the device */
static PetscErrorCode MatCMRSHeavyUpload_Private(Mat A, Mat_SeqCMRSCUDA *c, void *stream)
{
  const MatCMRSHeavy *h       = &c->heavy;
  unsigned int       *zeros; /* the tickets, at 0 */
  const void *const   host[]  = {h->gptr, h->hq, h->crow, h->cpart, h->cmulti, h->mptr, h->hstart, h->hend, h->cstart, h->cend, NULL};
  const size_t        bytes[] = {(size_t)(h->ngroups + 1) * sizeof(int), (size_t)h->nheavy * sizeof(int), (size_t)h->nchunks * sizeof(int), (size_t)h->nchunks * sizeof(int), (size_t)h->nchunks * sizeof(int), (size_t)(h->nmulti + 1) * sizeof(int), (size_t)h->nheavy * sizeof(PetscCount), (size_t)h->nheavy * sizeof(PetscCount), (size_t)h->nchunks * sizeof(PetscCount), (size_t)h->nchunks * sizeof(PetscCount), (size_t)h->nmulti * sizeof(unsigned int)};
  void **const        dev[]   = {(void **)&c->d_heavy.gptr, (void **)&c->d_heavy.hq, (void **)&c->d_heavy.crow, (void **)&c->d_heavy.cpart, (void **)&c->d_heavy.cmulti, (void **)&c->d_heavy.mptr, (void **)&c->d_heavy.hstart, (void **)&c->d_heavy.hend, (void **)&c->d_heavy.cstart, (void **)&c->d_heavy.cend, (void **)&c->d_heavy.ticket};
  const void         *with[PETSC_STATIC_ARRAY_LENGTH(host)];
  PetscErrorCode      ierr;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(h->nmulti + 1, &zeros));
  for (size_t k = 0; k < PETSC_STATIC_ARRAY_LENGTH(host); k++) with[k] = host[k] ? host[k] : zeros;
  ierr = MatCMRSPlanUpload_Private(A, c, PETSC_STATIC_ARRAY_LENGTH(host), with, bytes, dev, (size_t)(h->nmulti ? h->mptr[h->nmulti] : 0), &c->d_heavy.buffer, &c->d_heavy.part, stream);
  PetscCall(PetscFree(zeros)); /* staged by the upload on return */
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The split plan to the device in one allocation and one copy: its arrays packed on the host at 256-byte offsets
  (the partial sums, written by the kernel, last and not copied)
*/
static PetscErrorCode MatCMRSSplitUpload_Private(Mat A, Mat_SeqCMRSCUDA *c, void *stream)
{
  const MatCMRSSplit *s       = &c->split;
  const void *const   host[]  = {s->islong, s->longgroup, s->lc, s->cgroup, s->cqa, s->cnq, s->cstart, s->cend, s->coff};
  const size_t        bytes[] = {(size_t)s->ngroups, (size_t)s->nlong * sizeof(int), (size_t)(s->nlong + 1) * sizeof(int), (size_t)s->nchunks * sizeof(int), (size_t)s->nchunks * sizeof(int), (size_t)s->nchunks * sizeof(int), (size_t)s->nchunks * sizeof(PetscCount), (size_t)s->nchunks * sizeof(PetscCount), (size_t)s->nchunks * sizeof(PetscCount)};
  void **const        dev[]   = {(void **)&c->d_split.islong, (void **)&c->d_split.longgroup, (void **)&c->d_split.lc, (void **)&c->d_split.cgroup, (void **)&c->d_split.cqa, (void **)&c->d_split.cnq, (void **)&c->d_split.cstart, (void **)&c->d_split.cend, (void **)&c->d_split.coff};

  PetscFunctionBegin;
  PetscCall(MatCMRSPlanUpload_Private(A, c, PETSC_STATIC_ARRAY_LENGTH(host), host, bytes, dev, (size_t)s->nparts, &c->d_split.buffer, &c->d_split.part, stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The scan kernel's part of the build: the plan's strips per warp (c->warp_strips, 0: Algorithm 1 or the padded kernel)
  and its heavy rows, or else the split of its long groups (cmrsimpl.h), laid out from the host row offsets of the rows
  the device holds
*/
static PetscErrorCode MatCMRSLongRows_Private(Mat A, Mat_SeqCMRSCUDA *c, const MatGPUMatCSR *csr)
{
  MatCMRSSplit *s = &c->split;

  PetscFunctionBegin;
  PetscCall(MatCMRSLongRowsFree_Private(c));
  c->warp_strips = c->plan.warp_strips; /* the plan's: the scan kernel on an unsorted, unpadded layout */
  if (!c->warp_strips || !csr->m) PetscFunctionReturn(PETSC_SUCCESS);
  if (c->plan.heavy_length) {
    PetscCall(MatCMRSHeavyCreate(csr->m, c->height, csr->ai, c->warp_strips, c->plan.heavy_length, c->split_entries, &c->heavy));
    if (c->heavy.nheavy) {
      PetscCall(MatCMRSHeavyUpload_Private(A, c, csr->stream));
      PetscFunctionReturn(PETSC_SUCCESS); /* what made groups long is out of them: none is split */
    }
    PetscCall(MatCMRSHeavyDestroy(&c->heavy));
  }
  if (!c->split_entries) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCMRSSplitCreate(csr->m, c->height, csr->ai, c->warp_strips, c->split_entries, s));
  if (!s->nlong) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCMRSSplitUpload_Private(A, c, csr->stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatFreeDevice_CMRS(Mat A)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_sp));
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_col));
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_ris));
  PetscCall(MatGPUMatDeviceFree((void **)&c->d_val));
  PetscCall(MatCMRSLongRowsFree_Private(c));
  c->bytes = 0;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static size_t MatCMRSDeviceBytes(PetscInt strips, PetscCount nnz, PetscBool packed)
{
  return (size_t)(strips + 1) * sizeof(PetscCount) + (size_t)nnz * (sizeof(unsigned int) + sizeof(PetscScalar) + (packed ? 0 : 1));
}

static PetscErrorCode MatCMRSUpload_Private(Mat A, Mat_SeqCMRSCUDA *c, const MatCMRSLayout *L, void *stream)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)(L->strips + 1) * sizeof(PetscCount), (void **)&c->d_sp));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)L->nnz * sizeof(unsigned int), (void **)&c->d_col));
  if (!L->packed) PetscCall(MatGPUMatDeviceMalloc(A, (size_t)L->nnz, (void **)&c->d_ris));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)L->nnz * sizeof(PetscScalar), (void **)&c->d_val));
  PetscCall(MatGPUMatCopyToDevice(c->d_sp, L->sp, (size_t)(L->strips + 1) * sizeof(PetscCount), stream));
  PetscCall(MatGPUMatCopyToDevice(c->d_col, L->col, (size_t)L->nnz * sizeof(unsigned int), stream));
  if (!L->packed) PetscCall(MatGPUMatCopyToDevice(c->d_ris, L->ris, (size_t)L->nnz, stream));
  PetscCall(MatGPUMatCopyToDevice(c->d_val, L->val, (size_t)L->nnz * sizeof(PetscScalar), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Val and Col of the unsorted, unpadded, packed layout are the CSR's value and column arrays (the latter with
  RowInStrip in its 4 high bits): the base's device arrays, kept where they are its temporaries, else copied
*/
static PetscErrorCode MatCMRSTakeCSR_Private(Mat A, Mat_SeqCMRSCUDA *c, PetscBool structure, MatGPUMatCSR *csr)
{
  const PetscCount nnz = csr->nnz;

  PetscFunctionBegin;
  if (csr->own_aa) {
    PetscCall(MatGPUMatDeviceFree((void **)&c->d_val));
    c->d_val = csr->own_aa, csr->own_aa = NULL;
  } else {
    if (!c->d_val) PetscCall(MatGPUMatDeviceMalloc(A, (size_t)nnz * sizeof(PetscScalar), (void **)&c->d_val));
    PetscCall(MatGPUMatCopyOnStream(c->d_val, csr->d_aa, (size_t)nnz * sizeof(PetscScalar), csr->stream));
  }
  if (!structure) PetscFunctionReturn(PETSC_SUCCESS);
  if (csr->own_aj) c->d_col = (unsigned int *)csr->own_aj, csr->own_aj = NULL;
  else {
    PetscCall(MatGPUMatDeviceMalloc(A, (size_t)nnz * sizeof(unsigned int), (void **)&c->d_col));
    PetscCall(MatGPUMatCopyOnStream(c->d_col, csr->d_aj, (size_t)nnz * sizeof(unsigned int), csr->stream));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The unsorted, unpadded, packed layout built on the GPU from the base's device CSR, whose column indices and values
  become the CMRS arrays (MatCMRSTakeCSR_Private()): a kernel ORs RowInStrip into the column indices and takes
  StripPtr from the row offsets. Peak device memory: the CSR (+ the format where the CSR is the shadow's).
*/
static PetscErrorCode MatCMRSBuildOnDevice_Private(Mat A, Mat_SeqCMRSCUDA *c, PetscInt h, MatGPUMatCSR *csr)
{
  const PetscInt   m = csr->m, strips = (m + h - 1) / h;
  const PetscCount nnz = csr->nnz;

  PetscFunctionBegin;
  PetscCheck(sizeof(PetscInt) == sizeof(unsigned int), PETSC_COMM_SELF, PETSC_ERR_PLIB, "The packed layout needs 32-bit PetscInt");
  if (!csr->own_aa) PetscCall(MatGPUMatCheckDeviceMemory(A, MatCMRSDeviceBytes(strips, nnz, PETSC_TRUE), "CMRS"));
  PetscCall(MatGPUMatDeviceMalloc(A, (size_t)(strips + 1) * sizeof(PetscCount), (void **)&c->d_sp));
  PetscCall(MatCMRSTakeCSR_Private(A, c, PETSC_TRUE, csr));
  PetscCall(MatCMRSCUDALaunchPack(csr->stream, m, h, strips, nnz, csr->d_ai, c->d_col, c->d_sp));
  c->height = h, c->m = m, c->strips = strips, c->packed = PETSC_TRUE, c->sorted = PETSC_FALSE, c->M = 0, c->nnz = nnz;
  c->device_built = PETSC_TRUE;
  c->bytes        = MatCMRSDeviceBytes(strips, nnz, PETSC_TRUE);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatBuild_CMRS(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqCMRSCUDA *c;
  MatCMRSLayout    L;
  PetscInt         strips, h, m = csr->m;
  PetscBool        packed;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  h      = c->plan.height; /* made by the base for this pattern (MatGPUMatPlan()) */
  strips = (m + h - 1) / h;
  PetscCheck(c->plan.m == m && c->plan.nnz == csr->nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "CMRS plan for %" PetscInt_FMT " rows, %" PetscCount_FMT " entries: not made for this CSR (%" PetscInt_FMT " rows, %" PetscCount_FMT " entries)", c->plan.m, c->plan.nnz, m, csr->nnz);
  PetscCall(MatCMRSCanPack(A->cmap->n, &packed));
  if (c->variant != CMRS_VARIANT_PADDED && !c->sort && packed && c->device_convert && m > 0) {
    PetscCall(MatCMRSBuildOnDevice_Private(A, c, h, csr));
    PetscCall(MatCMRSLongRows_Private(A, c, csr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  /* the sorted and padded variants are laid out on the host */
  c->device_built = PETSC_FALSE;
  if (c->variant == CMRS_VARIANT_PADDED) {
    PetscCall(MatCMRSCanPack(A->cmap->n + 1, &packed)); /* column 2^28 - 1 marks padding */
    PetscCall(MatCMRSLayoutCreatePadded(m, A->cmap->n, csr->ai, csr->aj, csr->aa, h, c->M_option, packed, &L));
    ierr = MatGPUMatCheckDeviceMemory(A, MatCMRSDeviceBytes(strips, L.nnz, packed), "CMRS (padded)");
    if (ierr) PetscCall(MatCMRSLayoutDestroy(&L));
    PetscCall(ierr);
  } else {
    PetscCall(MatGPUMatCheckDeviceMemory(A, MatCMRSDeviceBytes(strips, csr->nnz, packed), "CMRS"));
    PetscCall(MatCMRSLayoutCreate(m, A->cmap->n, csr->ai, csr->aj, csr->aa, h, c->sort, packed, &L));
  }
  ierr      = MatCMRSUpload_Private(A, c, &L, csr->stream);
  c->height = L.height;
  c->m      = m;
  c->strips = L.strips;
  c->packed = L.packed;
  c->sorted = L.sorted;
  c->M      = L.M;
  c->nnz    = L.nnz;
  c->bytes  = MatCMRSDeviceBytes(L.strips, L.nnz, L.packed);
  PetscCall(MatCMRSLayoutDestroy(&L));
  PetscCall(ierr);
  PetscCall(MatCMRSLongRows_Private(A, c, csr));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatCopyValues_CMRS(Mat A, MatGPUMatCSR *csr)
{
  Mat_SeqCMRSCUDA *c;
  MatCMRSLayout    L;
  PetscScalar     *val;
  PetscErrorCode   ierr;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  if (!c->sorted && !c->M) { /* Val is the CSR value array itself */
    PetscCall(MatCMRSTakeCSR_Private(A, c, PETSC_FALSE, csr));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  if (c->M) PetscCall(MatCMRSLayoutCreatePadded(c->m, A->cmap->n, csr->ai, csr->aj, NULL, c->height, c->M, c->packed, &L));
  else PetscCall(MatCMRSLayoutCreate(c->m, A->cmap->n, csr->ai, csr->aj, NULL, c->height, PETSC_TRUE, c->packed, &L));
  PetscCall(PetscMalloc1(L.nnz, &val));
  PetscCall(MatCMRSLayoutFillValues(&L, csr->aa, val));
  ierr = MatGPUMatCopyToDevice(c->d_val, val, (size_t)L.nnz * sizeof(PetscScalar), csr->stream);
  PetscCall(PetscFree(val));
  PetscCall(MatCMRSLayoutDestroy(&L));
  PetscCall(ierr);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMult_CMRS(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  if (c->warp_strips) PetscCall(MatCMRSCUDALaunchMultScan(args->stream, c, args->x, args->y, args->z));
  else PetscCall(MatCMRSCUDALaunchMult(args->stream, c, args->x, args->y, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* z = A x and the partial sums of x'z in the scan kernel's pass, where it runs and splits no group (args NULL: only ask) */
static PetscErrorCode MatGPUFormatMultDot_CMRS(Mat A, const MatGPUMultArgs *args, const MatGPUMatDotSums *sums, PetscInt *npartial)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  *npartial = MatCMRSCUDACanMultDot(c) ? 1 : 0;
  if (!args || !*npartial) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCMRSCUDALaunchMultScanDot(args->stream, c, args->x, args->z, sums, npartial));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Z = A X for a block of nvec <= 8 vectors on unsorted strips without padding; *can says whether this layout can (args NULL: only ask) */
static PetscErrorCode MatGPUFormatMultBlock_CMRS(Mat A, PetscInt nvec, const MatGPUMultArgs *args, PetscBool *can)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  if (args) *can = (PetscBool)(!c->sorted && !c->M);
  else *can = (PetscBool)(!c->sort && c->variant != CMRS_VARIANT_PADDED); /* what the next build will make */
  *can = (PetscBool)(*can && nvec >= 1 && nvec <= MATGPUMAT_MAX_BLOCK);
  if (!args || !*can) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatCMRSCUDALaunchMultBlock(args->stream, c, nvec, args->x, args->ldx, args->z, args->ldz));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatMultTranspose_CMRS(Mat A, const MatGPUMultArgs *args)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  PetscCall(MatCMRSCUDALaunchMultTranspose(args->stream, c, args->x, args->z));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  The unsorted, unpadded layouts keep the CSR's entries in its order: the values as they are, the column indices
  with RowInStrip in their high bits where packed (masked off here)
*/
static PetscErrorCode MatGPUFormatCopyCSR_CMRS(Mat A, void *stream, const PetscInt *d_ai, PetscInt *d_aj, PetscScalar *d_aa, PetscBool *can)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  (void)d_ai; /* the layout's own order is the CSR's */
  PetscCall(MatCMRSGetData_Private(A, &c));
  *can = (PetscBool)(!c->sorted && !c->M && sizeof(PetscInt) == sizeof(unsigned int));
  if (!*can) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatCopyOnStream(d_aa, c->d_val, (size_t)c->nnz * sizeof(PetscScalar), stream));
  if (d_aj && c->packed) PetscCall(MatCMRSCUDALaunchUnpackColumns(stream, c->nnz, c->d_col, d_aj));
  else PetscCall(MatGPUMatCopyOnStream(d_aj, c->d_col, (size_t)c->nnz * sizeof(PetscInt), stream));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Unsorted and unpadded, Val is the CSR's value array (MatCMRSTakeCSR_Private()): a value refresh uploads into it */
static PetscErrorCode MatGPUFormatValueArray_CMRS(Mat A, PetscScalar **val, PetscCount *n)
{
  Mat_SeqCMRSCUDA *c;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  *val = !c->sorted && !c->M ? c->d_val : NULL;
  *n   = c->nnz;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUFormatGetInfo_CMRS(Mat A, MatGPUMatInfo *info)
{
  Mat_SeqCMRSCUDA *c;
  PetscBool        packed;
  PetscInt         strips, h;

  PetscFunctionBegin;
  PetscCall(MatCMRSGetData_Private(A, &c));
  PetscCall(MatCMRSCanPack(info->cols, &packed));
  PetscCall(MatCMRSHeight_Private(A, &h));
  strips              = (info->rows + h - 1) / h;
  info->stored        = info->nnz;
  if (c->variant == CMRS_VARIANT_PADDED) { /* the padded size: from the device copy, or by arranging the strips on the host */
    Mat_GPUMat *g = (Mat_GPUMat *)A->spptr;

    PetscCall(MatCMRSCanPack(info->cols + 1, &packed)); /* column 2^28 - 1 marks padding */
    if (g->built && c->M) info->stored = c->nnz;
    else { /* measured on the host rows once per pattern, kept in the plan */
      if (!c->plan.measured) {
        const PetscInt *ai, *aj;
        MatCMRSLayout   L;

        PetscCall(MatSeqAIJGetCSRAndMemType(A, &ai, &aj, NULL, NULL));
        PetscCall(MatCMRSLayoutCreatePadded(info->rows, info->cols, ai, aj, NULL, h, c->M_option, packed, &L));
        c->plan.measured_stored = L.nnz;
        c->plan.measured        = PETSC_TRUE;
        PetscCall(MatCMRSLayoutDestroy(&L));
      }
      info->stored = c->plan.measured_stored;
    }
  }
  info->read_entries  = info->stored; /* the padded variant reads its explicit zeros */
  info->device_bytes  = MatCMRSDeviceBytes(strips, info->stored, packed);
  info->index_count   = 2 * (strips + 1); /* StripPtr (64-bit); packed RowInStrip costs nothing more */
  PetscFunctionReturn(PETSC_SUCCESS);
}

static const MatGPUFormat MatGPUFormat_CMRS = {
  .name           = "CMRS",
  .seqtype        = MATSEQCMRSCUDA,
  .title          = "Compressed multi-row storage (CMRS) GPU matrix options",
  .create         = MatGPUFormatCreate_CMRS,
  .copyparameters = MatGPUFormatCopyParameters_CMRS,
  .setfromoptions = MatGPUFormatSetFromOptions_CMRS,
  .view           = MatGPUFormatView_CMRS,
  .plan           = MatGPUFormatPlan_CMRS,
  .build          = MatGPUFormatBuild_CMRS,
  .copyvalues     = MatGPUFormatCopyValues_CMRS,
  .freedevice     = MatGPUFormatFreeDevice_CMRS,
  .mult           = MatGPUFormatMult_CMRS,
  .multtranspose  = MatGPUFormatMultTranspose_CMRS,
  .getinfo        = MatGPUFormatGetInfo_CMRS,
  .compose        = MatComposeCMRS_Private,
  .multblock      = MatGPUFormatMultBlock_CMRS,
  .copycsr        = MatGPUFormatCopyCSR_CMRS,
  .multdot        = MatGPUFormatMultDot_CMRS,
  .valuearray     = MatGPUFormatValueArray_CMRS,
};

/*MC
   MATSEQCMRSCUDA - MATSEQCMRSCUDA = "seqaijcmrscuda" - A sequential sparse matrix whose products run on an
   NVIDIA GPU in the compressed multi-row storage format of Koza, Matyka, Szkoda and Miroslaw (2012, 2014)

   Strips of `height` consecutive rows are processed by one warp each (Algorithm 1 of the papers): the CSR
   arrays are kept, regrouped by strips, with each entry's row inside its strip packed into the 4 high bits of
   its column index, so the device stores less than CSR and nothing is padded. Long and short rows mix freely.

   Options Database Keys:
+  -mat_type cmrscuda - sets the type
.  -mat_cmrs_height <h> - rows per strip, 1..16; 0 (default): automatic, 16 for the scan and padded variants, about 256 entries per strip for basic
.  -mat_cmrs_block_size <b> - threads per block, a multiple of 32 (default 128)
.  -mat_cmrs_sort <bool> - sort each strip's entries by column (default false)
.  -mat_cmrs_variant <basic,padded,scan,auto> - Algorithm 1, the padded variant of section 6.7, the H100 scan kernel,
                                                or auto (default: scan, with heavy rows where rows are long); see docs/cmrs.md
.  -mat_cmrs_buffer_columns <M> - the padded variant's buffer columns: 2, 4 (default), 8 or 16
.  -mat_cmrs_warp_strips <S> - the scan kernel's strips per warp (default 0: about 512 entries per warp, 4 strips of 16 rows on stencils)
.  -mat_cmrs_unroll <U> - the scan kernel's passes loaded ahead: 1, 2 or 4; 0 (default): 2 where a warp takes at most 2 strips, else 1
.  -mat_cmrs_lane_entries <E> - the scan kernel's consecutive entries per lane in a pass of 32 x E: 1, 2 or 4 (default)
.  -mat_cmrs_split_entries <C> - the scan kernel splits a warp's group of strips holding more than 2 C entries (a few long
                                 rows) into chunks of C entries, one warp each, combined in a fixed order; a multiple of
                                 512, default 1024, 0: no split; also the longest chunk of a heavy row
.  -mat_cmrs_heavy_rows <auto,off,on> - the scan kernel sums the rows longer than -mat_cmrs_heavy_length by warps of their
                                 own, in chunks, out of their strips' warps (default auto: where there are such rows, and
                                 the mean row is longer than 64 entries or the rows longer than 4 means hold 20 % of the
                                 entries or more; no group is then split)
.  -mat_cmrs_heavy_length <T> - a row longer than T entries is heavy (default 0: automatic, 256)
-  -mat_cmrs_device_convert <bool> - build the unsorted, unpadded layout on the GPU (default true)

   Level: beginner

   Notes:
   Matrices with more than 2^28 columns, and PETSc builds with 64-bit indices, use an unpacked layout (a byte
   per entry for the row in strip) automatically; `MatView()` says which.

   References:
   K. Koza, M. Matyka, S. Szkoda, L. Miroslaw, Compressed multirow storage format for sparse matrices on
   graphics processing units, SIAM J. Sci. Comput. 36 (2014) C219-C239.

.seealso: `MatCreateSeqAIJCMRSCUDA()`, `MatCMRSCUDASetHeight()`, `MatCMRSCUDASetLaneEntries()`, `MATSEQELLRCUDA`, `MATSEQRGCSRCUDA`, `MatGPUMatGetInfo()`
M*/
PetscErrorCode MatCreate_SeqAIJCMRSCUDA(Mat B)
{
  PetscFunctionBegin;
  PetscCall(MatCreate_GPUMat(B, &MatGPUFormat_CMRS));
  PetscFunctionReturn(PETSC_SUCCESS);
}

PETSC_INTERN PetscErrorCode MatGPUMatRegisterCMRS_Private(void)
{
  PetscFunctionBegin;
  PetscCall(MatGPUMatRegisterFormat(&MatGPUFormat_CMRS, MatCreate_SeqAIJCMRSCUDA));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatCreateSeqAIJCMRSCUDA - Creates a sequential `MATSEQCMRSCUDA` matrix with AIJ preallocation

  Collective

  Input Parameters:
+ comm - `PETSC_COMM_SELF`
. m    - rows
. n    - columns
. nz   - nonzeros per row (same for all rows), ignored if `nnz` is given
- nnz  - nonzeros per row, or `NULL`

  Output Parameter:
. A - the matrix

  Level: beginner

.seealso: `MATSEQCMRSCUDA`, `MatCreateSeqAIJ()`
@*/
PetscErrorCode MatCreateSeqAIJCMRSCUDA(MPI_Comm comm, PetscInt m, PetscInt n, PetscInt nz, const PetscInt nnz[], Mat *A)
{
  PetscFunctionBegin;
  PetscCall(MatCreateSeq_GPUMat(comm, MATSEQCMRSCUDA, m, n, nz, nnz, A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDASetHeight - Sets the number of rows per strip of a `MATSEQCMRSCUDA` matrix

  Logically Collective

  Input Parameters:
+ A - the matrix
- h - 1..16, or 0 (default): automatic, 16 for the scan and padded variants; for basic the largest of 1, 2, 3, 4, 6, 8 with height x mean row length <= 256 (H100 sweep)

  Options Database Key:
. -mat_cmrs_height <h> - the same

  Level: intermediate

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDAGetHeight()`
@*/
PetscErrorCode MatCMRSCUDASetHeight(Mat A, PetscInt h)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, h, 2);
  MatGPUMatTryMethodAll(A, "MatCMRSCUDASetHeight_C", PetscInt, h);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDAGetHeight - Gets the number of rows per strip of a `MATSEQCMRSCUDA` matrix

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. h - rows per strip

  Level: intermediate

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetHeight()`
@*/
PetscErrorCode MatCMRSCUDAGetHeight(Mat A, PetscInt *h)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(h, 2);
  MatGPUMatUseMethodSource(A, "MatCMRSCUDAGetHeight_C", PetscInt *, h);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDASetBlockSize - Sets the threads per block of the CMRS kernel (one warp per strip)

  Logically Collective

  Input Parameters:
+ A - the matrix
- b - a multiple of 32 in 32..1024 (default 128)

  Options Database Key:
. -mat_cmrs_block_size <b> - the same

  Level: intermediate

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetHeight()`
@*/
PetscErrorCode MatCMRSCUDASetBlockSize(Mat A, PetscInt b)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, b, 2);
  MatGPUMatTryMethodAll(A, "MatCMRSCUDASetBlockSize_C", PetscInt, b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDASetSort - Sorts the entries of each strip of a `MATSEQCMRSCUDA` matrix by column

  Logically Collective

  Input Parameters:
+ A    - the matrix
- sort - `PETSC_TRUE` to sort (rows in order among equal columns)

  Options Database Key:
. -mat_cmrs_sort <bool> - the same

  Level: intermediate

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetHeight()`
@*/
PetscErrorCode MatCMRSCUDASetSort(Mat A, PetscBool sort)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveBool(A, sort, 2);
  MatGPUMatTryMethodAll(A, "MatCMRSCUDASetSort_C", PetscBool, sort);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDASetLaneEntries - Sets how many consecutive entries each lane of the CMRS scan kernel takes in a pass

  Logically Collective

  Input Parameters:
+ A - the matrix
- E - 1, 2 or 4 (default): a warp's pass covers 32 x E entries; each lane adds its E products in order, rows that
      begin and end among them go straight to their sums, and one segmented scan per pass joins the lanes' first
      and last row pieces, so the scan's fixed cost is paid once per 32 x E entries instead of once per 32

  Options Database Key:
. -mat_cmrs_lane_entries <E> - the same

  Level: intermediate

  Note:
  Used by the scan kernel only (`-mat_cmrs_variant scan` or `auto`); the layout
  does not change, so setting it after the first product costs no rebuild. Results are bitwise reproducible for each
  E, but different values of E add in different orders.

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetHeight()`, `MatCMRSCUDASetBlockSize()`
@*/
PetscErrorCode MatCMRSCUDASetLaneEntries(Mat A, PetscInt E)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscValidLogicalCollectiveInt(A, E, 2);
  MatGPUMatTryMethodAll(A, "MatCMRSCUDASetLaneEntries_C", PetscInt, E);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDAGetBlockSize - Gets the threads per block of the CMRS kernel of a `MATSEQCMRSCUDA` matrix

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. b - threads per block

  Level: intermediate

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetBlockSize()`
@*/
PetscErrorCode MatCMRSCUDAGetBlockSize(Mat A, PetscInt *b)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(b, 2);
  MatGPUMatUseMethodSource(A, "MatCMRSCUDAGetBlockSize_C", PetscInt *, b);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDAGetSort - Gets whether the entries of each strip of a `MATSEQCMRSCUDA` matrix are sorted by column

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. sort - `PETSC_TRUE` if sorted

  Level: intermediate

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetSort()`
@*/
PetscErrorCode MatCMRSCUDAGetSort(Mat A, PetscBool *sort)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(sort, 2);
  MatGPUMatUseMethodSource(A, "MatCMRSCUDAGetSort_C", PetscBool *, sort);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@
  MatCMRSCUDAGetLaneEntries - Gets how many consecutive entries each lane of the CMRS scan kernel takes in a pass

  Not Collective

  Input Parameter:
. A - the matrix

  Output Parameter:
. E - 1, 2 or 4

  Level: advanced

.seealso: `MATSEQCMRSCUDA`, `MatCMRSCUDASetLaneEntries()`
@*/
PetscErrorCode MatCMRSCUDAGetLaneEntries(Mat A, PetscInt *E)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(A, MAT_CLASSID, 1);
  PetscAssertPointer(E, 2);
  MatGPUMatUseMethodSource(A, "MatCMRSCUDAGetLaneEntries_C", PetscInt *, E);
  PetscFunctionReturn(PETSC_SUCCESS);
}
