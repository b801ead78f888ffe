/*
   Matrix Market reader (https://math.nist.gov/MatrixMarket/formats.html) for plain and gzip files.

   Every rank reads the whole file through zlib (gzread() reads uncompressed files transparently) and keeps
   only the entries of the rows it owns; the matrix is then preallocated exactly and assembled.
   The file is untrusted input: every malformation is reported with the file name and line number, and no
   allocation is sized from a header count alone.
*/
#include <petscgpumat.h>
#include <petsc/private/petscimpl.h> /* PetscAssertPointer */
#include <zlib.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MM_CHUNK    65536 /* bytes decompressed per gzread() */
#define MM_MAX_LINE 4096  /* longest header or data line accepted; the format itself limits lines to 1024 */

/* Matrices with more rows or columns than this must have at least (dimension / MM_DIM_RATIO) entries, so that a
   tiny file cannot declare billions of empty rows and make us allocate gigabytes; -matrixmarket_max_dim overrides */
#define MM_DIM_FREE  ((PetscInt64)1 << 24)
#define MM_DIM_RATIO 16

typedef enum {
  MM_COORDINATE,
  MM_ARRAY
} MMFormat;
typedef enum {
  MM_REAL,
  MM_INTEGER,
  MM_PATTERN,
  MM_COMPLEX
} MMField;
typedef enum {
  MM_GENERAL,
  MM_SYMMETRIC,
  MM_SKEW,
  MM_HERMITIAN
} MMSymmetry;

typedef struct {
  PetscInt    i, j; /* global 0-based indices */
  PetscScalar v;
} MMEntry;

typedef struct {
  /* input */
  gzFile      gz;
  const char *fname;
  char       *buf; /* MM_CHUNK decompressed bytes */
  int         blen, bpos;
  PetscBool   eof;
  char       *line; /* MM_MAX_LINE + 1 */
  PetscInt64  lineno;
  /* header */
  MMFormat   format;
  MMField    field;
  MMSymmetry sym;
  PetscInt   M, N;
  PetscInt64 nz; /* entries the file must hold */
  /* layout of this rank */
  PetscInt m, n, rstart, cstart;
  /* entries of the owned rows, in file order */
  MMEntry   *e;
  PetscCount ne, cap, maxkept;
  /* owned rows in CSR form, duplicates summed */
  PetscCount  *rowptr;
  PetscInt    *cols, *dnnz, *onnz, *dnnzu, *onnzu; /* *nnzu: upper triangle only, for SBAIJ */
  PetscScalar *vals;
} MMData;

static PetscErrorCode MMDataReset(MMData *mm)
{
  PetscFunctionBegin;
  if (mm->gz) (void)gzclose(mm->gz); /* read-only: a close error cannot lose data */
  mm->gz = NULL;
  PetscCall(PetscFree(mm->buf));
  PetscCall(PetscFree(mm->line));
  PetscCall(PetscFree(mm->e));
  PetscCall(PetscFree(mm->rowptr));
  PetscCall(PetscFree2(mm->cols, mm->vals));
  PetscCall(PetscFree2(mm->dnnz, mm->onnz));
  PetscCall(PetscFree2(mm->dnnzu, mm->onnzu));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
   Reads the next line (newline removed) into mm->line. *found is PETSC_FALSE at end of file. A line longer than
   MM_MAX_LINE is consumed entirely and flagged with *toolong, so the caller may skip a long comment but must
   reject long data.
*/
static PetscErrorCode MMReadLine(MMData *mm, PetscBool *found, PetscBool *toolong)
{
  size_t    len = 0;
  PetscBool any = PETSC_FALSE;

  PetscFunctionBegin;
  *toolong = PETSC_FALSE;
  while (PETSC_TRUE) {
    const char *start, *nl;
    size_t      avail, take;

    if (mm->bpos == mm->blen) {
      int n, zerr = Z_OK;

      if (mm->eof) break;
      n = gzread(mm->gz, mm->buf, MM_CHUNK);
      /* a truncated gzip stream ends with n == 0 and Z_BUF_ERROR, so the error state is checked too */
      if (n <= 0) {
        const char *msg = gzerror(mm->gz, &zerr);
        size_t      flen;

        if (!msg) msg = "unknown zlib error";
        flen = strlen(mm->fname); /* zlib prefixes the path, which the message has already */
        if (!strncmp(msg, mm->fname, flen) && msg[flen] == ':' && msg[flen + 1] == ' ') msg += flen + 2;
        PetscCheck(n == 0 && zerr == Z_OK, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "File %s, line %" PetscInt64_FMT ": read error: %s", mm->fname, mm->lineno + 1, zerr == Z_ERRNO ? strerror(errno) : msg);
        mm->eof = PETSC_TRUE;
        break;
      }
      mm->blen = n;
      mm->bpos = 0;
    }
    any   = PETSC_TRUE;
    start = mm->buf + mm->bpos;
    avail = (size_t)(mm->blen - mm->bpos);
    nl    = (const char *)memchr(start, '\n', avail);
    take  = nl ? (size_t)(nl - start) : avail;
    if (!*toolong) {
      size_t room = MM_MAX_LINE - len, c = take < room ? take : room;

      memcpy(mm->line + len, start, c);
      len += c;
      if (take > room) *toolong = PETSC_TRUE;
    }
    mm->bpos += (int)(take + (nl ? 1 : 0));
    if (nl) break;
  }
  mm->line[len] = 0;
  if (any) mm->lineno++;
  *found = any;
  PetscCheck(!memchr(mm->line, 0, len), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": contains a NUL byte (binary data?)", mm->fname, mm->lineno);
  PetscFunctionReturn(PETSC_SUCCESS);
}

static inline PetscBool MMIsSpace(char c)
{
  return (c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f') ? PETSC_TRUE : PETSC_FALSE;
}

/* Returns the next whitespace-separated token of *p (NUL-terminated in place), or NULL at the end of the line */
static char *MMNextToken(char **p)
{
  char *s = *p, *t;

  while (*s && MMIsSpace(*s)) s++;
  if (!*s) {
    *p = s;
    return NULL;
  }
  t = s;
  while (*s && !MMIsSpace(*s)) s++;
  if (*s) *s++ = 0;
  *p = s;
  return t;
}

/* First character of a line that is not white space, NUL for a blank line */
static char MMFirstChar(const char *line)
{
  while (*line && MMIsSpace(*line)) line++;
  return *line;
}

/* Reads the next line holding data, skipping comments and blank lines (anywhere after the banner).
   *found is PETSC_FALSE at end of file. */
static PetscErrorCode MMReadDataLine(MMData *mm, PetscBool *found)
{
  PetscBool toolong;

  PetscFunctionBegin;
  while (PETSC_TRUE) {
    char c;

    PetscCall(MMReadLine(mm, found, &toolong));
    if (!*found) break;
    c = MMFirstChar(mm->line);
    if (c == '%') continue; /* a comment may be of any length */
    /* a long line is rejected even if its first MM_MAX_LINE characters are blank: data may follow */
    PetscCheck(!toolong, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": line longer than %d characters", mm->fname, mm->lineno, MM_MAX_LINE);
    if (c) break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parses a decimal integer token (optional sign) without overflow; what names the token in errors */
static PetscErrorCode MMParseInt64(MMData *mm, const char *tok, const char *what, PetscInt64 *val)
{
  const char *s   = tok;
  PetscBool   neg = PETSC_FALSE;
  PetscInt64  v   = 0;

  PetscFunctionBegin;
  PetscCheck(tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": missing %s", mm->fname, mm->lineno, what);
  if (*s == '+' || *s == '-') neg = (PetscBool)(*s++ == '-');
  PetscCheck(*s, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": %s '%.32s' is not an integer", mm->fname, mm->lineno, what, tok);
  for (; *s; s++) {
    PetscInt64 d = *s - '0';

    PetscCheck(*s >= '0' && *s <= '9', PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": %s '%.32s' is not an integer", mm->fname, mm->lineno, what, tok);
    PetscCheck(v <= (PETSC_INT64_MAX - d) / 10, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": %s '%.32s' overflows a 64-bit integer", mm->fname, mm->lineno, what, tok);
    v = 10 * v + d;
  }
  *val = neg ? -v : v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A matrix dimension: non-negative and representable as PetscInt */
static PetscErrorCode MMParseSize(MMData *mm, const char *tok, const char *what, PetscInt *val)
{
  PetscInt64 v;

  PetscFunctionBegin;
  PetscCall(MMParseInt64(mm, tok, what, &v));
  PetscCheck(v >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": negative %s %" PetscInt64_FMT, mm->fname, mm->lineno, what, v);
  PetscCheck(v <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": %s %" PetscInt64_FMT " does not fit in PetscInt (configure PETSc --with-64-bit-indices)", mm->fname, mm->lineno, what, v);
  *val = (PetscInt)v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A 1-based index in [1, max], returned 0-based */
static PetscErrorCode MMParseIndex(MMData *mm, const char *tok, const char *what, PetscInt max, PetscInt *val)
{
  PetscInt64 v;

  PetscFunctionBegin;
  PetscCall(MMParseInt64(mm, tok, what, &v));
  PetscCheck(v >= 1 && v <= max, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": %s %" PetscInt64_FMT " out of range [1, %" PetscInt_FMT "]", mm->fname, mm->lineno, what, v, max);
  *val = (PetscInt)(v - 1);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* A real number; strtod() accepts nan and inf, which are kept, and values beyond the range become inf or 0 */
static PetscErrorCode MMParseReal(MMData *mm, const char *tok, PetscReal *val)
{
  char  *end;
  double v;

  PetscFunctionBegin;
  PetscCheck(tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": missing value", mm->fname, mm->lineno);
  v = strtod(tok, &end);
  PetscCheck(end != tok && !*end, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": value '%.32s' is not a number", mm->fname, mm->lineno, tok);
  *val = (PetscReal)v;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Parses the value tokens of an entry according to the field; *p is the rest of the line */
static PetscErrorCode MMParseValue(MMData *mm, char **p, PetscScalar *val)
{
  PetscFunctionBegin;
  switch (mm->field) {
  case MM_PATTERN:
    *val = 1.0;
    break;
  case MM_INTEGER: {
    PetscInt64 v;

    PetscCall(MMParseInt64(mm, MMNextToken(p), "integer value", &v));
    *val = (PetscScalar)v;
  } break;
  case MM_REAL: {
    PetscReal v;

    PetscCall(MMParseReal(mm, MMNextToken(p), &v));
    *val = v;
  } break;
  case MM_COMPLEX: {
    PetscReal re, im;

    PetscCall(MMParseReal(mm, MMNextToken(p), &re));
    PetscCall(MMParseReal(mm, MMNextToken(p), &im));
#if defined(PETSC_USE_COMPLEX)
    *val = PetscCMPLX(re, im);
#else
    (void)im;
    *val = re; /* unreachable: the header check rejects complex files in a real build */
#endif
  } break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MMCheckLineEnd(MMData *mm, char **p)
{
  char *tok = MMNextToken(p);

  PetscFunctionBegin;
  PetscCheck(!tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": unexpected extra token '%.32s'", mm->fname, mm->lineno, tok);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Keeps an entry if this rank owns its row; arrays grow with what is actually read, never beyond what the file may hold */
static PetscErrorCode MMKeep(MMData *mm, PetscInt i, PetscInt j, PetscScalar v)
{
  PetscFunctionBegin;
  if (i < mm->rstart || i >= mm->rstart + mm->m) PetscFunctionReturn(PETSC_SUCCESS);
  if (mm->ne == mm->cap) {
    PetscCount cap = PetscMin(PetscMax(2 * mm->cap, 1024), mm->maxkept);
    MMEntry   *e;

    PetscCheck(cap > mm->ne, PETSC_COMM_SELF, PETSC_ERR_PLIB, "File %s, line %" PetscInt64_FMT ": more entries than the header allows", mm->fname, mm->lineno);
    PetscCall(PetscMalloc1(cap, &e));
    if (mm->ne) PetscCall(PetscArraycpy(e, mm->e, mm->ne));
    PetscCall(PetscFree(mm->e));
    mm->e   = e;
    mm->cap = cap;
  }
  mm->e[mm->ne].i = i;
  mm->e[mm->ne].j = j;
  mm->e[mm->ne].v = v;
  mm->ne++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Keeps entry (i,j) and, for symmetric storage, its mirror (j,i) */
static PetscErrorCode MMKeepSym(MMData *mm, PetscInt i, PetscInt j, PetscScalar v)
{
  PetscFunctionBegin;
  PetscCall(MMKeep(mm, i, j, v));
  if (i == j) PetscFunctionReturn(PETSC_SUCCESS);
  switch (mm->sym) {
  case MM_GENERAL:
    break;
  case MM_SYMMETRIC:
    PetscCall(MMKeep(mm, j, i, v));
    break;
  case MM_SKEW:
    PetscCall(MMKeep(mm, j, i, -v));
    break;
  case MM_HERMITIAN:
    PetscCall(MMKeep(mm, j, i, PetscConj(v)));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* a*b, or PETSC_INT64_MAX when it overflows (only used as an upper bound) */
static PetscInt64 MMMulSat(PetscInt64 a, PetscInt64 b)
{
  if (a == 0 || b == 0) return 0;
  if (a > PETSC_INT64_MAX / b) return PETSC_INT64_MAX;
  return a * b;
}

/* Number of stored entries of a full M x N matrix, or of one triangle of a square one (diagonal included or not) */
static PetscInt64 MMPositions(MMData *mm)
{
  PetscInt64 M = mm->M;

  switch (mm->sym) {
  case MM_GENERAL:
    return MMMulSat(mm->M, mm->N);
  case MM_SKEW: /* strictly lower: M(M-1)/2 */
    return M < 2 ? 0 : (M % 2 ? MMMulSat(M, (M - 1) / 2) : MMMulSat(M / 2, M - 1));
  default: /* lower with diagonal: M(M+1)/2 */
    return M % 2 ? MMMulSat(M, (M + 1) / 2) : MMMulSat(M / 2, M + 1);
  }
}

static PetscErrorCode MMReadHeader(MMData *mm)
{
  PetscBool   found, toolong, flg;
  char       *p, *tok;
  const char *fname = mm->fname;

  PetscFunctionBegin;
  PetscCall(MMReadLine(mm, &found, &toolong));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s: empty file, expected a %%%%MatrixMarket banner", fname);
  p = mm->line;
  if ((unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF) p += 3; /* UTF-8 byte-order mark */
  tok = MMNextToken(&p);
  flg = PETSC_FALSE;
  if (tok) PetscCall(PetscStrcasecmp(tok, "%%MatrixMarket", &flg));
  PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: missing %%%%MatrixMarket banner: not a Matrix Market file", fname);
  PetscCheck(!toolong, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: banner longer than %d characters", fname, MM_MAX_LINE);

  tok = MMNextToken(&p);
  PetscCheck(tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: banner lacks the object (matrix)", fname);
  PetscCall(PetscStrcasecmp(tok, "matrix", &flg));
  PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: unsupported object '%.32s' (only 'matrix')", fname, tok);

  tok = MMNextToken(&p);
  PetscCheck(tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: banner lacks the format (coordinate or array)", fname);
  PetscCall(PetscStrcasecmp(tok, "coordinate", &flg));
  if (flg) mm->format = MM_COORDINATE;
  else {
    PetscCall(PetscStrcasecmp(tok, "array", &flg));
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: unsupported format '%.32s' (coordinate or array)", fname, tok);
    mm->format = MM_ARRAY;
  }

  tok = MMNextToken(&p);
  PetscCheck(tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: banner lacks the field (real, integer, pattern or complex)", fname);
  {
    const char *names[]  = {"real", "integer", "pattern", "complex"};
    MMField     fields[] = {MM_REAL, MM_INTEGER, MM_PATTERN, MM_COMPLEX};
    PetscInt    k;

    for (k = 0, flg = PETSC_FALSE; k < 4 && !flg; k++) {
      PetscCall(PetscStrcasecmp(tok, names[k], &flg));
      if (flg) mm->field = fields[k];
    }
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: unsupported field '%.32s' (real, integer, pattern or complex)", fname, tok);
  }
  PetscCheck(mm->field != MM_COMPLEX || PetscDefined(USE_COMPLEX), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: field 'complex' needs PETSc configured with --with-scalar-type=complex", fname);
  PetscCheck(mm->field != MM_PATTERN || mm->format == MM_COORDINATE, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: field 'pattern' is only valid with the coordinate format", fname);

  tok = MMNextToken(&p);
  PetscCheck(tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: banner lacks the symmetry (general, symmetric, skew-symmetric or hermitian)", fname);
  {
    const char *names[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
    MMSymmetry  syms[]  = {MM_GENERAL, MM_SYMMETRIC, MM_SKEW, MM_HERMITIAN};
    PetscInt    k;

    for (k = 0, flg = PETSC_FALSE; k < 4 && !flg; k++) {
      PetscCall(PetscStrcasecmp(tok, names[k], &flg));
      if (flg) mm->sym = syms[k];
    }
    PetscCheck(flg, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: unsupported symmetry '%.32s' (general, symmetric, skew-symmetric or hermitian)", fname, tok);
  }
  PetscCheck(mm->sym != MM_HERMITIAN || PetscDefined(USE_COMPLEX), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: symmetry 'hermitian' needs PETSc configured with --with-scalar-type=complex", fname);
  PetscCheck(mm->sym != MM_HERMITIAN || mm->field == MM_COMPLEX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: symmetry 'hermitian' needs field 'complex'", fname);
  PetscCheck(mm->sym != MM_SKEW || mm->field != MM_PATTERN, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: field 'pattern' cannot be skew-symmetric", fname);
  tok = MMNextToken(&p);
  PetscCheck(!tok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line 1: unexpected extra token '%.32s' in the banner", fname, tok);

  /* size line, after comments and blank lines */
  PetscCall(MMReadDataLine(mm, &found));
  PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": missing size line", fname, mm->lineno);
  p = mm->line;
  PetscCall(MMParseSize(mm, MMNextToken(&p), "number of rows", &mm->M));
  PetscCall(MMParseSize(mm, MMNextToken(&p), "number of columns", &mm->N));
  PetscCheck(mm->sym == MM_GENERAL || mm->M == mm->N, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": a %s matrix must be square, not %" PetscInt_FMT " x %" PetscInt_FMT, fname, mm->lineno, mm->sym == MM_SYMMETRIC ? "symmetric" : (mm->sym == MM_SKEW ? "skew-symmetric" : "hermitian"), mm->M, mm->N);
  if (mm->format == MM_COORDINATE) {
    PetscInt64 max = MMPositions(mm);

    PetscCall(MMParseInt64(mm, MMNextToken(&p), "number of nonzeros", &mm->nz));
    PetscCheck(mm->nz >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": negative number of nonzeros %" PetscInt64_FMT, fname, mm->lineno, mm->nz);
    PetscCheck(mm->nz <= max, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": %" PetscInt64_FMT " nonzeros declared, more than the %" PetscInt64_FMT " positions a %s %" PetscInt_FMT " x %" PetscInt_FMT " matrix stores", fname, mm->lineno, mm->nz, max, mm->sym == MM_GENERAL ? "general" : "triangle of a", mm->M, mm->N);
  } else {
    mm->nz = MMPositions(mm);
    PetscCheck(mm->nz < PETSC_INT64_MAX, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": array of %" PetscInt_FMT " x %" PetscInt_FMT " has too many entries", fname, mm->lineno, mm->M, mm->N);
  }
  PetscCall(MMCheckLineEnd(mm, &p));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MMReadEntries(MMData *mm)
{
  PetscInt64 k;
  PetscInt   ai = 0, aj = 0; /* next position of an array file, column by column */
  PetscBool  found;
  char      *p;

  PetscFunctionBegin;
  if (mm->format == MM_ARRAY && mm->sym == MM_SKEW) ai = 1; /* the strictly lower triangle starts at (2,1) */
  for (k = 0; k < mm->nz; k++) {
    PetscInt    i, j;
    PetscScalar v = 0.0;

    PetscCall(MMReadDataLine(mm, &found));
    PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": file ends after %" PetscInt64_FMT " of %" PetscInt64_FMT " entries (truncated?)", mm->fname, mm->lineno, k, mm->nz);
    p = mm->line;
    if (mm->format == MM_COORDINATE) {
      PetscCall(MMParseIndex(mm, MMNextToken(&p), "row index", mm->M, &i));
      PetscCall(MMParseIndex(mm, MMNextToken(&p), "column index", mm->N, &j));
      PetscCheck(mm->sym != MM_SKEW || i != j, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": diagonal entry (%" PetscInt_FMT ",%" PetscInt_FMT ") in a skew-symmetric file", mm->fname, mm->lineno, i + 1, j + 1);
    } else {
      i = ai;
      j = aj;
      if (++ai == mm->M) { /* next column: whole for general, from the diagonal (or below it) for a triangle */
        aj++;
        ai = mm->sym == MM_GENERAL ? 0 : (mm->sym == MM_SKEW ? aj + 1 : aj);
      }
    }
    PetscCall(MMParseValue(mm, &p, &v));
    PetscCall(MMCheckLineEnd(mm, &p));
    PetscCall(MMKeepSym(mm, i, j, v));
  }
  /* only comments and blank lines may follow */
  PetscCall(MMReadDataLine(mm, &found));
  PetscCheck(!found, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s, line %" PetscInt64_FMT ": unexpected data after the %" PetscInt64_FMT " declared entries", mm->fname, mm->lineno, mm->nz);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Everything up to the entries of the owned rows; no collective call, so that a failure on one rank cannot hang */
static PetscErrorCode MMReadFile(MPI_Comm comm, const char filename[], MMData *mm)
{
  PetscMPIInt size, rank;
  PetscInt64  maxdim;
  PetscInt    optdim = -1;
  PetscBool   set;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  mm->fname = filename;
  PetscCall(PetscMalloc1(MM_CHUNK, &mm->buf));
  PetscCall(PetscMalloc1(MM_MAX_LINE + 1, &mm->line));
  errno  = 0;
  mm->gz = gzopen(filename, "rb");
  PetscCheck(mm->gz, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open Matrix Market file %s: %s", filename, errno ? strerror(errno) : "out of memory");
  (void)gzbuffer(mm->gz, 1 << 17); /* a hint only: a larger zlib buffer reads faster */

  PetscCall(MMReadHeader(mm));

  /* the layout MatSetSizes(PETSC_DECIDE) would give, computed here without communication */
  mm->m      = mm->M / size + ((mm->M % size) > rank);
  mm->n      = mm->N / size + ((mm->N % size) > rank);
  mm->rstart = rank * (mm->M / size) + PetscMin(rank, mm->M % size);
  mm->cstart = rank * (mm->N / size) + PetscMin(rank, mm->N % size);
  /* a rank keeps at most every entry and every mirror: the growth cap, not an allocation size */
  mm->maxkept = MMMulSat(mm->nz, mm->sym == MM_GENERAL ? 1 : 2);

  PetscCall(MMReadEntries(mm));

  /* dimensions far beyond the number of entries would make us allocate per-row arrays for nothing */
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-matrixmarket_max_dim", &optdim, &set));
  maxdim = set ? (PetscInt64)optdim : PetscMax(MM_DIM_FREE, MMMulSat(MM_DIM_RATIO, mm->nz));
  PetscCheck(PetscMax(mm->M, mm->N) <= maxdim, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "File %s: %" PetscInt_FMT " x %" PetscInt_FMT " matrix with only %" PetscInt64_FMT " entries: refusing to allocate for so many empty rows or columns (limit %" PetscInt64_FMT ", raise it with -matrixmarket_max_dim)", filename, mm->M, mm->N, mm->nz, maxdim);
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Sorts the owned entries into CSR, sums duplicates and counts the diagonal- and off-diagonal-block nonzeros */
static PetscErrorCode MMCompress(MMData *mm)
{
  PetscInt   r;
  PetscCount k;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(mm->m + 1, &mm->rowptr));
  PetscCall(PetscMalloc2(mm->ne, &mm->cols, mm->ne, &mm->vals));
  PetscCall(PetscMalloc2(mm->m, &mm->dnnz, mm->m, &mm->onnz));
  for (k = 0; k < mm->ne; k++) mm->rowptr[mm->e[k].i - mm->rstart + 1]++;
  for (r = 0; r < mm->m; r++) mm->rowptr[r + 1] += mm->rowptr[r];
  for (k = 0; k < mm->ne; k++) { /* rowptr[r] runs to the end of row r, then is shifted back */
    PetscCount q = mm->rowptr[mm->e[k].i - mm->rstart]++;

    mm->cols[q] = mm->e[k].j;
    mm->vals[q] = mm->e[k].v;
  }
  for (r = mm->m; r > 0; r--) mm->rowptr[r] = mm->rowptr[r - 1];
  mm->rowptr[0] = 0;
  PetscCall(PetscFree(mm->e));
  mm->ne = mm->cap = 0;

  for (r = 0; r < mm->m; r++) {
    PetscCount   start = mm->rowptr[r], len = mm->rowptr[r + 1] - start, u = 0, d = 0;
    PetscInt    *c;
    PetscScalar *v;

    if (!len) { /* cols and vals are NULL when no entry is kept: no pointer arithmetic on them (UB, found by fuzzing) */
      mm->dnnz[r] = mm->onnz[r] = 0;
      continue;
    }
    c = mm->cols + start;
    v = mm->vals + start;
    PetscCall(PetscSortIntWithScalarArray(len, c, v));
    for (k = 0; k < len; k++) {
      if (u && c[u - 1] == c[k]) v[u - 1] += v[k];
      else {
        c[u] = c[k];
        v[u] = v[k];
        u++;
      }
    }
    for (k = 0; k < u; k++) d += (c[k] >= mm->cstart && c[k] < mm->cstart + mm->n);
    /* u <= N <= PETSC_MAX_INT after duplicates are merged */
    mm->dnnz[r] = (PetscInt)d;
    mm->onnz[r] = (PetscInt)(u - d);
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MMBuildMatrix(MPI_Comm comm, MatType type, MMData *mm, Mat *B)
{
  PetscInt   r;
  PetscCount dtot = 0, otot = 0;
  PetscBool  sbaij;

  PetscFunctionBegin;
  PetscCall(MMCompress(mm));
  for (r = 0; r < mm->m; r++) {
    dtot += mm->dnnz[r];
    otot += mm->onnz[r];
  }
  PetscCheck(dtot <= PETSC_MAX_INT && otot <= PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_INT_OVERFLOW, "File %s: %" PetscCount_FMT " nonzeros on one rank do not fit in PetscInt (configure PETSc --with-64-bit-indices or use more ranks)", mm->fname, dtot + otot);
  PetscCall(MatCreate(comm, B));
  PetscCall(MatSetSizes(*B, mm->m, mm->n, mm->M, mm->N));
  PetscCall(MatSetType(*B, type ? type : MATAIJ));
  PetscCall(PetscObjectTypeCompareAny((PetscObject)*B, &sbaij, MATSEQSBAIJ, MATMPISBAIJ, ""));
  if (sbaij) { /* SBAIJ stores the upper triangle: preallocate that, and drop the mirrored lower entries */
    MatType mtype;

    PetscCall(MatGetType(*B, &mtype));
    PetscCheck(mm->sym == MM_SYMMETRIC || mm->sym == MM_HERMITIAN, PETSC_COMM_SELF, PETSC_ERR_SUP, "File %s: only a symmetric or hermitian file can be loaded as %s", mm->fname, mtype);
    PetscCall(PetscMalloc2(mm->m, &mm->dnnzu, mm->m, &mm->onnzu));
    for (r = 0; r < mm->m; r++) {
      const PetscInt *c;
      PetscInt        k, nc = mm->dnnz[r] + mm->onnz[r], row = mm->rstart + r;

      mm->dnnzu[r] = mm->onnzu[r] = 0;
      if (!nc) continue; /* as in MMCompress(): cols may be NULL */
      c = mm->cols + mm->rowptr[r];
      for (k = 0; k < nc; k++) {
        if (c[k] < row) continue;
        if (c[k] < mm->cstart + mm->n) mm->dnnzu[r]++;
        else mm->onnzu[r]++;
      }
    }
  }
  PetscCall(MatXAIJSetPreallocation(*B, 1, mm->dnnz, mm->onnz, mm->dnnzu, mm->onnzu));
  PetscCall(MatSetUp(*B));
  PetscCall(MatSetOption(*B, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  if (sbaij) PetscCall(MatSetOption(*B, MAT_IGNORE_LOWER_TRIANGULAR, PETSC_TRUE));
  for (r = 0; r < mm->m; r++) {
    PetscInt row = mm->rstart + r, nc = mm->dnnz[r] + mm->onnz[r];

    if (nc) PetscCall(MatSetValues(*B, 1, &row, nc, mm->cols + mm->rowptr[r], mm->vals + mm->rowptr[r], ADD_VALUES));
  }
  PetscCall(MatAssemblyBegin(*B, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*B, MAT_FINAL_ASSEMBLY));
  switch (mm->sym) {
  case MM_GENERAL:
    break;
  case MM_SYMMETRIC:
    PetscCall(MatSetOption(*B, MAT_SYMMETRIC, PETSC_TRUE));
    break;
  case MM_SKEW:
    PetscCall(MatSetOption(*B, MAT_STRUCTURALLY_SYMMETRIC, PETSC_TRUE));
    break;
  case MM_HERMITIAN:
    PetscCall(MatSetOption(*B, MAT_HERMITIAN, PETSC_TRUE));
    break;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  MatLoadMatrixMarket - Loads a matrix from a Matrix Market file, plain or gzip-compressed

  Collective

  Input Parameters:
+ comm     - the MPI communicator of the matrix
. filename - the name of the file, read on every rank of `comm`
- type     - the `MatType` of the result, for example `MATAIJ` or `MATELLRCUDA`; `NULL` means `MATAIJ`

  Output Parameter:
. A - the assembled matrix, with the row and column layout `PETSC_DECIDE` gives; left untouched on error

  Options Database Key:
. -matrixmarket_max_dim <n> - refuse files with more than `n` rows or columns (default: 2^24, or 16 times the number of entries if larger)

  Level: intermediate

  Notes:
  Supported headers are `%%MatrixMarket matrix coordinate {real|integer|pattern} {general|symmetric|skew-symmetric}`
  and `%%MatrixMarket matrix array {real|integer} {general|symmetric|skew-symmetric}`, with keywords in any case;
  the field `complex` and the symmetry `hermitian` need PETSc configured with complex scalars.
  The file is read through zlib, so gzip-compressed files are read directly, whatever their name.

  Each rank reads the whole file and keeps only the entries of the rows it owns, then the matrix is preallocated
  exactly (`MatXAIJSetPreallocation()`, so AIJ, BAIJ with block size 1, SELL, dense and the petscgpumat types work;
  `MATSBAIJ` takes only symmetric or hermitian files and keeps the upper triangle). Pattern entries get the value 1.
  Duplicate entries are summed. Explicit zeros, and every value of an `array` file, are stored. NaN and Inf values
  are kept.

  A symmetric, skew-symmetric or hermitian file should store one triangle; every off-diagonal entry is mirrored
  (a_ji = a_ij, -a_ij or conj(a_ij)) whichever triangle it is in, so a file storing both triangles gets each
  value twice (summed). A skew-symmetric file may not hold diagonal entries. Comments and blank lines may appear
  anywhere after the banner; data lines may not exceed 4096 characters.

  Any malformed file (missing or unknown banner, bad size line, more entries declared than the matrix has
  positions, index out of range, non-numeric or missing value, extra token, truncated file, corrupt gzip stream)
  raises `PETSC_ERR_FILE_UNEXPECTED` (or `PETSC_ERR_FILE_OPEN`, `PETSC_ERR_FILE_READ`) naming the file and line,
  on every rank.

  The program must be linked with zlib (-lz).

.seealso: [](ch_matrices), `Mat`, `MatLoad()`, `MatCreate()`, `MatSetType()`, `MatXAIJSetPreallocation()`, `MATAIJ`
@*/
PetscErrorCode MatLoadMatrixMarket(MPI_Comm comm, const char filename[], MatType type, Mat *A)
{
  MMData         mm;
  Mat            B = NULL;
  PetscErrorCode ierr, ierr2;
  PetscMPIInt    lfail, gfail = 0;

  PetscFunctionBegin;
  PetscCheck(filename, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null file name (argument 2)");
  PetscCheck(A, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null pointer for the matrix (argument 4)");
  PetscCall(PetscMemzero(&mm, sizeof(mm)));
  ierr = MMReadFile(comm, filename, &mm);
  /* the ranks read alone; agree before the collective part so that one rank's failure cannot hang the others */
  lfail = ierr ? 1 : 0;
  ierr2 = MPI_Allreduce(&lfail, &gfail, 1, MPI_INT, MPI_MAX, comm) ? PETSC_ERR_MPI : PETSC_SUCCESS;
  if (!ierr && ierr2) ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, ierr2, PETSC_ERROR_INITIAL, "MPI_Allreduce() failed");
  if (!ierr && gfail) ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_FILE_READ, PETSC_ERROR_INITIAL, "File %s: reading failed on another rank", filename);
  if (!ierr) ierr = MMBuildMatrix(comm, type, &mm, &B);
  ierr2 = MMDataReset(&mm);
  if (!ierr) ierr = ierr2;
  if (ierr) {
    ierr2 = MatDestroy(&B);
    (void)ierr2; /* the first error is the one to report */
  }
  PetscCall(ierr);
  *A = B;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*@C
  PetscGPUMatIsMatrixMarketFile - Whether a file holds a Matrix Market matrix, judged by its content

  Collective

  Input Parameters:
+ comm - the communicator of the processes that will read it
- file - the file name

  Output Parameter:
. isMM - `PETSC_TRUE` if the file (plain or gzip-compressed) begins with the banner `%%MatrixMarket`

  Level: beginner

  Note:
  The name's extension plays no part (`matrix.MTX`, `a.mtx.gz` or `data` alike): programs that read either
  Matrix Market or PETSc binary files call this to pick `MatLoadMatrixMarket()` or `MatLoad()`. A file that
  cannot be opened is reported as not Matrix Market; the reader chosen then says why it cannot read it.

.seealso: `MatLoadMatrixMarket()`, `MatLoad()`
@*/
PetscErrorCode PetscGPUMatIsMatrixMarketFile(MPI_Comm comm, const char file[], PetscBool *isMM)
{
  PetscMPIInt rank;
  int         yes = 0;

  PetscFunctionBegin;
  PetscAssertPointer(file, 2);
  PetscAssertPointer(isMM, 3);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    gzFile gz = gzopen(file, "rb"); /* reads plain files as they are */
    char   head[15] = {0};

    if (gz) {
      if (gzread(gz, head, 14) == 14) yes = !strncasecmp(head, "%%MatrixMarket", 14);
      gzclose(gz);
    }
  }
  PetscCallMPI(MPI_Bcast(&yes, 1, MPI_INT, 0, comm));
  *isMM = yes ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}
