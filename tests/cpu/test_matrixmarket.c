static char help[] = "Tests MatLoadMatrixMarket(): valid files (plain and gzip) checked entry by entry, malformed files that must\n\
fail cleanly with the expected error code, and real matrices from -matrices_dir checked against its MANIFEST.tsv.\n\
Options:\n\
  -matrices_dir <dir>   directory of real .mtx.gz files with MANIFEST.tsv (default ../shared/matrices; skipped if missing)\n\
  -mm_names a,b,...     real matrices to load (default bcsstk02,cage5,Franz6_id1959_aug,power,mbeacxc,ash219,helmholtz_2D)\n\
  -mm_all               load every matrix of MANIFEST.tsv instead\n\
  -keep_files           do not remove the temporary directory\n\
  -verbose_errors <bool> print the error code and message of each expected error (default true)\n\
  -malloc_debug <bool>  on by default: failed loads must leave no PETSc memory allocated (use 0 under valgrind)\n";

#include <petscgpumat.h>
#include <petscgpumat/private/petsccompat.h> /* PETSc-version differences */
#include <zlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static PetscInt  npass, nfail, nskip;
static char      tmpdir[PETSC_MAX_PATH_LEN];
static PetscInt  fileid;
static PetscBool verbose_errors = PETSC_TRUE;

typedef struct {
  PetscInt  i, j; /* 1-based */
  PetscReal v;
} Trip;

/* Prints PASS or FAIL (reduced over all ranks); failing ranks add their details */
static PetscErrorCode Report(PetscBool ok, const char what[], const char fmt[], ...)
{
  char        details[1024] = "";
  PetscMPIInt lok           = ok ? 1 : 0, gok, rank;

  PetscFunctionBegin;
  if (!ok && fmt) {
    va_list Argp;
    size_t  len;

    va_start(Argp, fmt);
    PetscCall(PetscVSNPrintf(details, sizeof(details), fmt, &len, Argp));
    va_end(Argp);
  }
  PetscCallMPI(MPI_Allreduce(&lok, &gok, 1, MPI_INT, MPI_MIN, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (gok) {
    npass++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS: %s\n", what));
  } else {
    nfail++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: %s: see the rank details below\n", what));
    if (!ok) PetscCall(PetscSynchronizedPrintf(PETSC_COMM_WORLD, "  [rank %d] %s: %s\n", rank, what, details));
    PetscCall(PetscSynchronizedFlush(PETSC_COMM_WORLD, PETSC_STDOUT));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Rank 0 writes the bytes to a new file of the temporary directory, plain or gzip; every rank gets the path */
static PetscErrorCode WriteBytes(const char name[], const char *data, size_t len, PetscBool gz, char path[])
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscSNPrintf(path, PETSC_MAX_PATH_LEN, "%s/%03" PetscInt_FMT "_%s.mtx%s", tmpdir, fileid++, name, gz ? ".gz" : ""));
  if (rank == 0) {
    if (gz) {
      gzFile f = gzopen(path, "wb");

      PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot create %s", path);
      PetscCheck(!len || gzwrite(f, data, (unsigned)len) == (int)len, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s", path);
      PetscCheck(gzclose(f) == Z_OK, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot close %s", path);
    } else {
      FILE *f = fopen(path, "wb");

      PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot create %s", path);
      PetscCheck(fwrite(data, 1, len, f) == len, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s", path);
      PetscCheck(!fclose(f), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot close %s", path);
    }
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscBool SameScalar(PetscScalar a, PetscScalar b)
{
  if (PetscIsNanScalar(a) || PetscIsNanScalar(b)) return (PetscBool)(PetscIsNanScalar(a) && PetscIsNanScalar(b));
  if (a == b) return PETSC_TRUE;
  return (PetscBool)(PetscAbsScalar(a - b) <= 1e-14 * PetscMax(PetscAbsScalar(a), PetscAbsScalar(b)));
}

/* Compares A with the M x N matrix whose entries are t (1-based, duplicates summed): sizes, every owned row, global nnz */
static PetscErrorCode CheckMatrix(Mat A, PetscInt M, PetscInt N, PetscInt nt, const Trip t[], const char what[])
{
  PetscScalar *ev;
  PetscBool   *eh, ok = PETSC_TRUE;
  PetscInt     k, gM, gN, rs, re, r, nexp = 0;
  MatInfo      info;
  char         details[512] = "";

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(M * N, &ev, M * N, &eh));
  for (k = 0; k < nt; k++) {
    PetscInt idx = (t[k].i - 1) * N + (t[k].j - 1);

    if (eh[idx]) ev[idx] += t[k].v;
    else {
      ev[idx] = t[k].v;
      eh[idx] = PETSC_TRUE;
      nexp++;
    }
  }
  PetscCall(MatGetSize(A, &gM, &gN));
  if (gM != M || gN != N) {
    ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(details, sizeof(details), "size %" PetscInt_FMT " x %" PetscInt_FMT ", expected %" PetscInt_FMT " x %" PetscInt_FMT, gM, gN, M, N));
  }
  if (ok) {
    PetscCall(MatGetOwnershipRange(A, &rs, &re));
    for (r = rs; r < re && ok; r++) {
      PetscInt           nc, c, rowexp = 0;
      const PetscInt    *cols;
      const PetscScalar *vals;

      for (c = 0; c < N; c++) rowexp += eh[r * N + c];
      PetscCall(MatGetRow(A, r, &nc, &cols, &vals));
      for (c = 0; c < nc && ok; c++) {
        PetscInt idx = r * N + cols[c];

        if (!eh[idx]) {
          ok = PETSC_FALSE;
          PetscCall(PetscSNPrintf(details, sizeof(details), "unexpected entry (%" PetscInt_FMT ",%" PetscInt_FMT ") = %g", r + 1, cols[c] + 1, (double)PetscRealPart(vals[c])));
        } else if (!SameScalar(vals[c], ev[idx])) {
          ok = PETSC_FALSE;
          PetscCall(PetscSNPrintf(details, sizeof(details), "entry (%" PetscInt_FMT ",%" PetscInt_FMT ") = %g, expected %g", r + 1, cols[c] + 1, (double)PetscRealPart(vals[c]), (double)PetscRealPart(ev[idx])));
        }
      }
      if (ok && nc != rowexp) {
        ok = PETSC_FALSE;
        PetscCall(PetscSNPrintf(details, sizeof(details), "row %" PetscInt_FMT " has %" PetscInt_FMT " entries, expected %" PetscInt_FMT, r + 1, nc, rowexp));
      }
      PetscCall(MatRestoreRow(A, r, &nc, &cols, &vals));
    }
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  if (ok && (PetscInt)info.nz_used != nexp) {
    ok = PETSC_FALSE;
    PetscCall(PetscSNPrintf(details, sizeof(details), "%g nonzeros, expected %" PetscInt_FMT, (double)info.nz_used, nexp));
  }
  PetscCall(PetscFree2(ev, eh));
  PetscCall(Report(ok, what, "%s", details));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Loads with errors returned, not printed */
/* Loads with errors returned, not printed; *leaked is the PETSc memory a failed load left allocated (known with -malloc_debug) */
static PetscErrorCode LoadLeak(const char path[], MatType type, Mat *A, PetscErrorCode *ierr, const char **msg, PetscLogDouble *leaked)
{
  const char    *text;
  PetscGPUMatErrorText specific;
  PetscLogDouble m0, m1;

  PetscFunctionBegin;
  PetscCall(PetscMallocGetCurrentUsage(&m0));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  *ierr = MatLoadMatrixMarket(PETSC_COMM_WORLD, path, type, A);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscMallocGetCurrentUsage(&m1));
  *msg    = "";
  *leaked = 0;
  if (*ierr) {
    PetscCall(PetscErrorMessage(*ierr, &text, &specific));
    *msg    = specific;
    *leaked = m1 - m0;
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode Load(const char path[], MatType type, Mat *A, PetscErrorCode *ierr, const char **msg)
{
  PetscLogDouble leaked;

  PetscFunctionBegin;
  PetscCall(LoadLeak(path, type, A, ierr, msg, &leaked));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestValidType(const char name[], const char content[], PetscBool gz, MatType type, PetscInt M, PetscInt N, PetscInt nt, const Trip t[])
{
  char           path[PETSC_MAX_PATH_LEN], what[256];
  Mat            A    = NULL;
  PetscErrorCode ierr = PETSC_SUCCESS;
  const char    *msg  = "";

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(what, sizeof(what), "load %s%s%s%s", name, gz ? " (gzip)" : "", type ? " as " : "", type ? type : ""));
  PetscCall(WriteBytes(name, content, strlen(content), gz, path));
  PetscCall(Load(path, type, &A, &ierr, &msg));
  if (ierr) PetscCall(Report(PETSC_FALSE, what, "error %d: %s", (int)ierr, msg));
  else {
    PetscBool sbaij;

    /* MatGetRow() of SBAIJ gives the upper triangle only: compare its AIJ copy */
    PetscCall(PetscObjectTypeCompareAny((PetscObject)A, &sbaij, MATSEQSBAIJ, MATMPISBAIJ, ""));
    if (sbaij) PetscCall(MatConvert(A, MATAIJ, MAT_INPLACE_MATRIX, &A));
    PetscCall(CheckMatrix(A, M, N, nt, t, what));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Every valid case is loaded from a plain and from a gzip file */
static PetscErrorCode TestValid(const char name[], const char content[], PetscInt M, PetscInt N, PetscInt nt, const Trip t[])
{
  PetscFunctionBegin;
  PetscCall(TestValidType(name, content, PETSC_FALSE, NULL, M, N, nt, t));
  PetscCall(TestValidType(name, content, PETSC_TRUE, NULL, M, N, nt, t));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Loads path and checks the error code is expected (or alt, when alt is not PETSC_SUCCESS) and the matrix is
   untouched; expected == PETSC_SUCCESS checks that the load succeeds */
static PetscErrorCode ExpectError2(const char what[], const char path[], PetscErrorCode expected, PetscErrorCode alt)
{
  Mat            A    = NULL;
  PetscErrorCode ierr = PETSC_SUCCESS;
  const char    *msg  = "";
  PetscBool      ok;
  char           line[1536];

  PetscLogDouble leaked;

  PetscFunctionBegin;
  PetscCall(LoadLeak(path, NULL, &A, &ierr, &msg, &leaked));
  if (expected == PETSC_SUCCESS) ok = (PetscBool)(!ierr && A);
  else ok = (PetscBool)((ierr == expected || (alt && ierr == alt)) && !A && leaked == 0);
  if (expected == PETSC_SUCCESS) PetscCall(PetscSNPrintf(line, sizeof(line), "load %s", what));
  else if (ok && verbose_errors) PetscCall(PetscSNPrintf(line, sizeof(line), "error %s -> %d: %s", what, (int)ierr, msg));
  else PetscCall(PetscSNPrintf(line, sizeof(line), "error %s", what));
  PetscCall(Report(ok, line, "returned %d (%s), expected %d; matrix %s; %g bytes left allocated", (int)ierr, msg, (int)expected, A ? "was set" : "untouched", leaked));
  if (A) PetscCall(MatDestroy(&A));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode ExpectError(const char what[], const char path[], PetscErrorCode expected)
{
  PetscFunctionBegin;
  PetscCall(ExpectError2(what, path, expected, PETSC_SUCCESS));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestErrorBytes(const char name[], const char *data, size_t len, PetscBool gz, PetscErrorCode expected)
{
  char path[PETSC_MAX_PATH_LEN], what[256];

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(what, sizeof(what), "%s%s", name, gz ? " (gzip)" : ""));
  PetscCall(WriteBytes(name, data, len, gz, path));
  PetscCall(ExpectError(what, path, expected));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestError(const char name[], const char content[])
{
  PetscFunctionBegin;
  PetscCall(TestErrorBytes(name, content, strlen(content), PETSC_FALSE, PETSC_ERR_FILE_UNEXPECTED));
  PetscFunctionReturn(PETSC_SUCCESS);
}

#define NT(t) ((PetscInt)(sizeof(t) / sizeof((t)[0])))

static PetscErrorCode TestValidFiles(void)
{
  PetscFunctionBegin;
  {
    const Trip t[] = {
      {1, 1, 1.5  },
      {1, 4, -2.25},
      {2, 2, 3e-3 },
      {3, 1, 0.0  },
      {3, 3, 1e10 },
      {3, 4, 0.5  }
    };
    PetscCall(TestValid("general real 3x4 with an explicit zero", "%%MatrixMarket matrix coordinate real general\n% a comment\n3 4 6\n1 1 1.5\n1 4 -2.25\n2 2 3e-3\n3 1 0\n3 3 1E+10\n3 4 .5\n", 3, 4, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 4 },
      {2, 1, -1},
      {1, 2, -1},
      {2, 2, 4 },
      {4, 2, -2},
      {2, 4, -2},
      {3, 3, 5 },
      {4, 4, 6 },
      {4, 3, 7 },
      {3, 4, 7 }
    };
    PetscCall(TestValid("symmetric real mirrored", "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 4\n2 1 -1\n2 2 4\n3 3 5\n4 2 -2\n4 3 7\n4 4 6\n", 4, 4, NT(t), t));
    PetscCall(TestValid("symmetric with upper-triangle entries mirrored", "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 4\n1 2 -1\n2 2 4\n3 3 5\n2 4 -2\n4 3 7\n4 4 6\n", 4, 4, NT(t), t));
    PetscCall(TestValidType("symmetric real mirrored", "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 4\n2 1 -1\n2 2 4\n3 3 5\n4 2 -2\n4 3 7\n4 4 6\n", PETSC_FALSE, MATBAIJ, 4, 4, NT(t), t));
    PetscCall(TestValidType("symmetric real mirrored", "%%MatrixMarket matrix coordinate real symmetric\n4 4 7\n1 1 4\n2 1 -1\n2 2 4\n3 3 5\n4 2 -2\n4 3 7\n4 4 6\n", PETSC_TRUE, MATSBAIJ, 4, 4, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 2},
      {2, 1, 6},
      {1, 2, 6}
    };
    PetscCall(TestValid("symmetric storing both triangles sums them", "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n1 1 2\n2 1 3\n1 2 3\n", 2, 2, NT(t), t));
  }
  {
    const Trip t[] = {
      {2, 1, 1.5 },
      {1, 2, -1.5},
      {3, 1, -2  },
      {1, 3, 2   },
      {3, 2, 4   },
      {2, 3, -4  }
    };
    PetscCall(TestValid("skew-symmetric negated mirror", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 1.5\n3 1 -2\n3 2 4\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 2, 1},
      {2, 3, 1},
      {3, 1, 1},
      {3, 3, 1}
    };
    PetscCall(TestValid("pattern general values 1", "%%MatrixMarket matrix coordinate pattern general\n3 3 4\n1 2\n2 3\n3 1\n3 3\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 1},
      {3, 1, 1},
      {1, 3, 1},
      {3, 2, 1},
      {2, 3, 1}
    };
    PetscCall(TestValid("pattern symmetric", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n3 2\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 7         },
      {2, 3, -12       },
      {3, 2, 2147483648}
    };
    PetscCall(TestValid("integer general", "%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 1 7\n2 3 -12\n3 2 +2147483648\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 1},
      {2, 1, 0},
      {3, 1, 3},
      {1, 2, 0},
      {2, 2, 5},
      {3, 2, 0}
    };
    PetscCall(TestValid("array real general stores zeros", "%%MatrixMarket matrix array real general\n% column major\n3 2\n1\n0\n3\n0.0\n5\n-0\n", 3, 2, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 1},
      {2, 1, 2},
      {1, 2, 2},
      {3, 1, 3},
      {1, 3, 3},
      {2, 2, 4},
      {3, 2, 0},
      {2, 3, 0},
      {3, 3, 6}
    };
    PetscCall(TestValid("array real symmetric", "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n0\n6\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {2, 1, 1 },
      {1, 2, -1},
      {3, 1, 2 },
      {1, 3, -2},
      {3, 2, 3 },
      {2, 3, -3}
    };
    PetscCall(TestValid("array integer skew-symmetric", "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 1  },
      {1, 1, 2.5},
      {2, 3, 1  },
      {2, 3, 1  },
      {2, 3, -4 },
      {3, 3, 1  }
    };
    PetscCall(TestValid("duplicates summed", "%%MatrixMarket matrix coordinate real general\n3 3 6\n1 1 1\n2 3 1\n1 1 2.5\n2 3 1\n3 3 1\n2 3 -4\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 1},
      {3, 5, 2},
      {5, 2, 3}
    };
    PetscCall(TestValid("empty rows", "%%MatrixMarket matrix coordinate real general\n5 5 3\n5 2 3\n1 1 1\n3 5 2\n", 5, 5, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 5, 1},
      {2, 1, 2},
      {2, 3, 3}
    };
    PetscCall(TestValid("rectangular 2x5", "%%MatrixMarket matrix coordinate real general\n2 5 3\n1 5 1\n2 1 2\n2 3 3\n", 2, 5, NT(t), t));
  }
  {
    const Trip t[] = {
      {5, 1, 1},
      {1, 2, 2},
      {3, 2, 3}
    };
    PetscCall(TestValid("rectangular 5x2", "%%MatrixMarket matrix coordinate real general\n5 2 3\n5 1 1\n1 2 2\n3 2 3\n", 5, 2, NT(t), t));
  }
  PetscCall(TestValid("0x0 coordinate", "%%MatrixMarket matrix coordinate real general\n0 0 0\n", 0, 0, 0, NULL));
  PetscCall(TestValid("3x0 coordinate", "%%MatrixMarket matrix coordinate real general\n3 0 0\n", 3, 0, 0, NULL));
  PetscCall(TestValid("0x3 coordinate", "%%MatrixMarket matrix coordinate pattern general\n0 3 0\n", 0, 3, 0, NULL));
  PetscCall(TestValid("4x4 with no entries", "%%MatrixMarket matrix coordinate real symmetric\n4 4 0\n", 4, 4, 0, NULL));
  PetscCall(TestValid("0x0 array", "%%MatrixMarket matrix array real general\n0 0\n", 0, 0, 0, NULL));
  PetscCall(TestValid("2x0 array", "%%MatrixMarket matrix array real general\n2 0\n", 2, 0, 0, NULL));
  {
    const Trip t[] = {
      {1, 1, -3.5}
    };
    PetscCall(TestValid("1x1", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 -3.5\n", 1, 1, NT(t), t));
    PetscCall(TestValid("1x1 array", "%%MatrixMarket matrix array real general\n1 1\n-3.5\n", 1, 1, NT(t), t));
  }
  {
    const Trip t[] = {
      {7, 9, 42},
      {1, 1, 1 }
    };
    PetscCall(TestValid("entry at the last row and column", "%%MatrixMarket matrix coordinate real general\n7 9 2\n7 9 42\n1 1 1\n", 7, 9, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, 1  },
      {2, 2, 2  },
      {2, 1, -1 },
      {1, 2, -1 },
      {3, 3, 0.5}
    };
    PetscCall(TestValid("case-insensitive header, tabs, blank lines and comments", "%%matrixmarket MATRIX Coordinate REAL Symmetric\n\n%\n   % indented comment\n\t\n  3\t3   4  \n1 1 1\n\n% comment among entries\n2\t2\t2\n  2 1 -1\n3 3 0.5\n\n\n", 3, 3, NT(t), t));
    PetscCall(TestValid("CRLF line endings", "%%MatrixMarket matrix coordinate real symmetric\r\n% c\r\n3 3 4\r\n1 1 1\r\n2 2 2\r\n2 1 -1\r\n3 3 0.5\r\n", 3, 3, NT(t), t));
    PetscCall(TestValid("no newline at the end", "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 2 2\n2 1 -1\n3 3 0.5", 3, 3, NT(t), t));
    PetscCall(TestValid("UTF-8 byte-order mark", "\xEF\xBB\xBF%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 2 2\n2 1 -1\n3 3 0.5\n", 3, 3, NT(t), t));
  }
  {
    const Trip t[] = {
      {1, 1, (PetscReal)NAN      },
      {1, 2, (PetscReal)INFINITY },
      {2, 1, -(PetscReal)INFINITY},
      {2, 2, (PetscReal)INFINITY }
    };
    PetscCall(TestValid("NaN and Inf values kept", "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 nan\n1 2 inf\n2 1 -Infinity\n2 2 1e999\n", 2, 2, NT(t), t));
  }
  {
    /* a comment longer than the reader's line buffer is skipped, not an error */
    const Trip t[] = {
      {2, 2, 1}
    };
    size_t      n    = 10000, h;
    const char *head = "%%MatrixMarket matrix coordinate real general\n%", *tail = "\n2 2 1\n2 2 1\n";
    char       *s;

    h = strlen(head);
    PetscCall(PetscMalloc1(h + n + strlen(tail) + 1, &s));
    PetscCall(PetscArraycpy(s, head, h));
    memset(s + h, 'x', n);
    PetscCall(PetscArraycpy(s + h + n, tail, strlen(tail) + 1));
    PetscCall(TestValid("10000-character comment line", s, 2, 2, NT(t), t));
    PetscCall(PetscFree(s));
  }
  {
    const Trip t[] = {
      {1, 1, 1},
      {2, 2, 2},
      {2, 1, 3}
    };
    PetscCall(TestValidType("explicit type", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 2\n2 1 3\n", PETSC_FALSE, MATAIJ, 2, 2, NT(t), t));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestMalformedFiles(void)
{
  char           path[PETSC_MAX_PATH_LEN];
  PetscMPIInt    rank, size;
  PetscErrorCode ierr        = PETSC_SUCCESS;
  const char    *banner      = "%%MatrixMarket matrix coordinate real general\n";
  PetscErrorCode complexcode = PetscDefined(USE_COMPLEX) ? PETSC_SUCCESS : PETSC_ERR_FILE_UNEXPECTED;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/does-not-exist.mtx", tmpdir));
  PetscCall(ExpectError("missing file", path, PETSC_ERR_FILE_OPEN));
  PetscCall(ExpectError("directory instead of a file", tmpdir, PETSC_ERR_FILE_READ));

  PetscCall(TestError("empty file", ""));
  PetscCall(TestErrorBytes("empty file", "", 0, PETSC_TRUE, PETSC_ERR_FILE_UNEXPECTED));
  PetscCall(TestError("missing banner", "3 3 1\n1 1 1\n"));
  PetscCall(TestError("comment instead of banner", "% hello\n%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("banner word glued", "%%MatrixMarketmatrix coordinate real general\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("unknown object vector", "%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("unknown format", "%%MatrixMarket matrix sparse real general\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("unknown field", "%%MatrixMarket matrix coordinate quaternion general\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("unknown symmetry", "%%MatrixMarket matrix coordinate real lower\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("banner lacks symmetry", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("banner only", "%%MatrixMarket\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("banner extra token", "%%MatrixMarket matrix coordinate real general extra\n1 1 1\n1 1 1\n"));
  if (complexcode) {
    PetscCall(TestError("complex field in a real build", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n"));
    PetscCall(TestError("hermitian in a real build", "%%MatrixMarket matrix coordinate complex hermitian\n1 1 1\n1 1 1 0\n"));
  }
  PetscCall(TestError("hermitian real", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n"));
  PetscCall(TestError("array pattern", "%%MatrixMarket matrix array pattern general\n1 1\n1\n"));
  PetscCall(TestError("skew-symmetric pattern", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n"));
  PetscCall(TestError("old Mac CR-only line endings", "%%MatrixMarket matrix coordinate real general\r1 1 1\r1 1 1\r"));

  PetscCall(TestError("missing size line", "%%MatrixMarket matrix coordinate real general\n% only comments\n\n"));
  PetscCall(TestError("size line lacks nnz", "%%MatrixMarket matrix coordinate real general\n3 3\n1 1 1\n"));
  PetscCall(TestError("size line extra token", "%%MatrixMarket matrix coordinate real general\n3 3 1 9\n1 1 1\n"));
  PetscCall(TestError("array size line with nnz", "%%MatrixMarket matrix array real general\n1 1 1\n1\n"));
  PetscCall(TestError("negative rows", "%%MatrixMarket matrix coordinate real general\n-3 3 1\n1 1 1\n"));
  PetscCall(TestError("negative nnz", "%%MatrixMarket matrix coordinate real general\n3 3 -1\n"));
  PetscCall(TestError("non-numeric size", "%%MatrixMarket matrix coordinate real general\n3 x 1\n1 1 1\n"));
  PetscCall(TestError("fractional size", "%%MatrixMarket matrix coordinate real general\n3.0 3 1\n1 1 1\n"));
  PetscCall(TestError("size with trailing garbage", "%%MatrixMarket matrix coordinate real general\n3 3abc 1\n1 1 1\n"));
  PetscCall(TestError("rows overflow PetscInt", "%%MatrixMarket matrix coordinate real general\n99999999999999 3 1\n1 1 1\n"));
  PetscCall(TestError("nnz overflows 64 bits", "%%MatrixMarket matrix coordinate real general\n3 3 99999999999999999999999\n1 1 1\n"));
  PetscCall(TestError("nnz larger than rows*cols", "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 1 1\n1 2 1\n2 1 1\n2 2 1\n1 1 1\n"));
  PetscCall(TestError("symmetric nnz larger than the triangle", "%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n1 1 1\n2 1 1\n2 2 1\n3 1 1\n3 2 1\n3 3 1\n1 1 1\n"));
  PetscCall(TestError("skew nnz larger than the strict triangle", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 4\n2 1 1\n3 1 1\n3 2 1\n3 2 1\n"));
  PetscCall(TestError("symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n"));
  PetscCall(TestError("array symmetric not square", "%%MatrixMarket matrix array real symmetric\n3 2\n1\n2\n3\n4\n5\n"));
  PetscCall(TestError("huge header: 1e15 nonzeros in a tiny file", "%%MatrixMarket matrix coordinate real general\n1000000000 1000000000 1000000000000000\n1 1 1\n2 2 1\n"));
  PetscCall(TestError("huge header: 2e9 rows with one entry", "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n"));
  PetscCall(TestError("huge array header", "%%MatrixMarket matrix array real general\n2000000000 2000000000\n1\n2\n"));

  PetscCall(TestError("row index 0", "%%MatrixMarket matrix coordinate real general\n3 3 1\n0 1 1\n"));
  PetscCall(TestError("column index 0", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 0 1\n"));
  PetscCall(TestError("row index > rows", "%%MatrixMarket matrix coordinate real general\n3 4 1\n4 1 1\n"));
  PetscCall(TestError("column index > cols", "%%MatrixMarket matrix coordinate real general\n4 3 1\n1 4 1\n"));
  PetscCall(TestError("negative index", "%%MatrixMarket matrix coordinate real general\n3 3 1\n-1 1 1\n"));
  PetscCall(TestError("huge index", "%%MatrixMarket matrix coordinate real general\n3 3 1\n18446744073709551617 1 1\n"));
  PetscCall(TestError("non-numeric index", "%%MatrixMarket matrix coordinate real general\n3 3 1\na 1 1\n"));
  PetscCall(TestError("fractional index", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1.5 1 1\n"));
  PetscCall(TestError("missing column index", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1\n"));
  PetscCall(TestError("truncated: fewer entries than declared", "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n"));
  PetscCall(TestError("truncated mid-line", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2"));
  PetscCall(TestError("truncated array", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n"));
  PetscCall(TestError("more entries than declared", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n2 2 1\n"));
  PetscCall(TestError("array with an extra value", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n"));
  PetscCall(TestError("array with two values on a line", "%%MatrixMarket matrix array real general\n1 2\n1 2\n"));
  PetscCall(TestError("extra token after value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 junk\n"));
  PetscCall(TestError("pattern entry with a value", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n"));
  PetscCall(TestError("missing value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n"));
  PetscCall(TestError("non-numeric value", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 abc\n"));
  PetscCall(TestError("value with two decimal points", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.0.0\n"));
  PetscCall(TestError("value with a decimal comma", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1,5\n"));
  PetscCall(TestError("integer field with a fraction", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n"));
  PetscCall(TestError("skew-symmetric diagonal entry", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n"));
  {
    const char *g = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n";
    Mat         A = NULL;

    PetscCall(WriteBytes("general as sbaij", g, strlen(g), PETSC_FALSE, path));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatLoadMatrixMarket(PETSC_COMM_WORLD, path, MATSBAIJ, &A);
    PetscCall(PetscPopErrorHandler());
    PetscCall(Report((PetscBool)(ierr == PETSC_ERR_SUP && !A), "error general file loaded as sbaij", "returned %d, expected %d", (int)ierr, (int)PETSC_ERR_SUP));
    if (A) PetscCall(MatDestroy(&A));
  }
  if (size > 1) { /* the ranks read alone: one rank's failure must reach the others, not hang them in MatCreate */
    const char *g = "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n";
    Mat         A = NULL;
    char        missing[PETSC_MAX_PATH_LEN];

    PetscCall(WriteBytes("good on rank 0", g, strlen(g), PETSC_FALSE, path));
    PetscCall(PetscSNPrintf(missing, sizeof(missing), "%s/missing-on-this-rank.mtx", tmpdir));
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MatLoadMatrixMarket(PETSC_COMM_WORLD, rank ? missing : path, NULL, &A);
    PetscCall(PetscPopErrorHandler());
    PetscCall(Report((PetscBool)(ierr == (rank ? PETSC_ERR_FILE_OPEN : PETSC_ERR_FILE_READ) && !A), "error file missing on the other ranks only", "returned %d", (int)ierr));
    if (A) PetscCall(MatDestroy(&A));
  }
  PetscCall(TestError("garbage line after the entries", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\nthe end\n"));
  {
    const char data[] = "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n2 2\0 1\n";

    PetscCall(TestErrorBytes("NUL byte in a line", data, sizeof(data) - 1, PETSC_FALSE, PETSC_ERR_FILE_UNEXPECTED));
  }
  {
    /* lines longer than the reader's buffer: data must not be silently truncated */
    size_t n = 10000, h = strlen(banner), pos;
    char  *s;

    PetscCall(PetscMalloc1(h + n + 64, &s));
    PetscCall(PetscArraycpy(s, banner, h));
    pos = h;
    memcpy(s + pos, "1 1 1\n1 1 1", 11);
    pos += 11;
    memset(s + pos, '0', n);
    pos += n;
    s[pos++] = '\n';
    s[pos]   = 0;
    PetscCall(TestError("10000-digit value line", s));
    pos = h;
    memcpy(s + pos, "1 1 1\n", 6);
    pos += 6;
    memset(s + pos, ' ', n);
    pos += n;
    memcpy(s + pos, "1 1 1\n", 7);
    PetscCall(TestError("10000 blanks then data", s));
    memset(s, 'x', h + n);
    memcpy(s, "%%MatrixMarket matrix coordinate real general ", 46);
    s[h + n] = 0;
    PetscCall(TestError("10000-character banner", s));
    PetscCall(PetscFree(s));
  }
  /* a few malformed cases through gzip */
  {
    const char *s = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n";

    PetscCall(TestErrorBytes("truncated", s, strlen(s), PETSC_TRUE, PETSC_ERR_FILE_UNEXPECTED));
    s = "%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1\n";
    PetscCall(TestErrorBytes("row index > rows", s, strlen(s), PETSC_TRUE, PETSC_ERR_FILE_UNEXPECTED));
  }
  /* damaged gzip streams: cut inside the data, cut before the trailer, corrupted bytes */
  {
    char       *s, *bytes = NULL, cutpath[PETSC_MAX_PATH_LEN];
    size_t      len = 0, pos = 0;
    PetscInt    k, nent      = 2000, step;
    const char *head = "%%MatrixMarket matrix coordinate real general\n2000 2000 2000\n";

    PetscCall(PetscMalloc1(strlen(head) + 40 * nent + 1, &s));
    PetscCall(PetscArraycpy(s, head, strlen(head)));
    pos = strlen(head);
    for (k = 0; k < nent; k++) pos += (size_t)snprintf(s + pos, 40, "%d %d %.17g\n", (int)(k + 1), (int)((k * 7919) % nent + 1), 1.0 / (k + 3.0));
    PetscCall(WriteBytes("gzip source", s, pos, PETSC_TRUE, path));
    PetscCall(PetscFree(s));
    PetscCall(ExpectError("intact 2000-entry gzip file (control for the damaged copies)", path, PETSC_SUCCESS));
    if (rank == 0) {
      FILE *f = fopen(path, "rb");

      PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", path);
      PetscCheck(!fseek(f, 0, SEEK_END), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "fseek");
      len = (size_t)ftell(f);
      rewind(f);
      PetscCall(PetscMalloc1(len, &bytes));
      PetscCheck(fread(bytes, 1, len, f) == len, PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "fread");
      fclose(f);
    }
    PetscCallMPI(MPI_Bcast(&len, sizeof(len), MPI_BYTE, 0, PETSC_COMM_WORLD));
    if (rank) PetscCall(PetscMalloc1(len, &bytes));
    PetscCallMPI(MPI_Bcast(bytes, (PetscMPIInt)len, MPI_BYTE, 0, PETSC_COMM_WORLD));
    PetscCall(WriteBytes("gzip cut in half", bytes, len / 2, PETSC_FALSE, cutpath));
    PetscCall(ExpectError("gzip stream cut in half", cutpath, PETSC_ERR_FILE_READ));
    PetscCall(WriteBytes("gzip without trailer", bytes, len - 8, PETSC_FALSE, cutpath));
    PetscCall(ExpectError("gzip stream without its 8-byte trailer", cutpath, PETSC_ERR_FILE_READ));
    step = (PetscInt)(len / 16);
    for (k = 1; k < 16; k++) bytes[k * step] ^= 0x5a; /* header magic left alone, so zlib decodes and must notice */
    PetscCall(WriteBytes("gzip corrupted", bytes, len, PETSC_FALSE, cutpath));
    /* zlib may hand out garbage before it detects the damage, so a parse error is as good as a read error */
    PetscCall(ExpectError2("gzip stream with corrupted bytes", cutpath, PETSC_ERR_FILE_READ, PETSC_ERR_FILE_UNEXPECTED));
    PetscCall(PetscFree(bytes));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Splits a tab-separated line in place; returns the number of fields */
static int SplitTabs(char *line, char *fields[], int max)
{
  int n = 0;

  line[strcspn(line, "\r\n")] = 0;
  while (n < max) {
    fields[n++] = line;
    line        = strchr(line, '\t');
    if (!line) break;
    *line++ = 0;
  }
  return n;
}

/* Loads one real matrix and checks its size and expanded nonzero count against MANIFEST.tsv */
static PetscErrorCode TestRealMatrix(const char dir[], const char name[], PetscInt M, PetscInt N, PetscInt64 nnz, const char field[], const char sym[])
{
  char           path[PETSC_MAX_PATH_LEN], what[PETSC_MAX_PATH_LEN + 64];
  Mat            A    = NULL;
  PetscErrorCode ierr = PETSC_SUCCESS;
  const char    *msg  = "";
  PetscBool      flg, iscomplex, ispattern, issym;
  PetscLogDouble t0, t1;

  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s.mtx.gz", dir, name));
  PetscCall(PetscSNPrintf(what, sizeof(what), "real matrix %s (%s %s, %" PetscInt_FMT " x %" PetscInt_FMT ", nnz %" PetscInt64_FMT ")", name, field, sym, M, N, nnz));
  PetscCall(PetscTestFile(path, 'r', &flg));
  if (!flg) {
    nskip++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SKIP: %s: %s not found\n", what, path));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscStrcmp(field, "complex", &iscomplex));
  PetscCall(PetscStrcmp(field, "pattern", &ispattern));
  PetscCall(PetscStrcmp(sym, "symmetric", &issym));
  if (iscomplex && !PetscDefined(USE_COMPLEX)) {
    PetscCall(PetscStrlcat(what, ": rejected by a real build", sizeof(what)));
    PetscCall(ExpectError(what, path, PETSC_ERR_FILE_UNEXPECTED));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscTime(&t0));
  PetscCall(Load(path, NULL, &A, &ierr, &msg));
  PetscCall(PetscTime(&t1));
  if (ierr) {
    PetscCall(Report(PETSC_FALSE, what, "error %d: %s", (int)ierr, msg));
  } else {
    PetscInt  gM, gN, rs, re, r;
    MatInfo   info;
    PetscBool ok = PETSC_TRUE, sym_ok = PETSC_TRUE;
    char      details[256] = "";

    PetscCall(MatGetSize(A, &gM, &gN));
    PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
    if (gM != M || gN != N || (PetscInt64)info.nz_used != nnz) {
      ok = PETSC_FALSE;
      PetscCall(PetscSNPrintf(details, sizeof(details), "got %" PetscInt_FMT " x %" PetscInt_FMT " with %.0f nonzeros", gM, gN, info.nz_used));
    }
    if (ok && ispattern) { /* every pattern entry is 1 (symmetric pattern files could double an entry stored in both triangles) */
      PetscCall(MatGetOwnershipRange(A, &rs, &re));
      for (r = rs; r < re && ok; r++) {
        PetscInt           nc, c;
        const PetscScalar *vals;

        PetscCall(MatGetRow(A, r, &nc, NULL, &vals));
        for (c = 0; c < nc; c++)
          if (vals[c] != 1.0) ok = PETSC_FALSE;
        PetscCall(MatRestoreRow(A, r, &nc, NULL, &vals));
        if (!ok) PetscCall(PetscSNPrintf(details, sizeof(details), "row %" PetscInt_FMT " holds a value other than 1", r + 1));
      }
    }
    if (issym) {
      PetscCall(MatIsSymmetric(A, 0.0, &sym_ok));
      if (!sym_ok) PetscCall(PetscSNPrintf(details, sizeof(details), "matrix is not symmetric"));
      ok = (PetscBool)(ok && sym_ok);
    }
    PetscCall(PetscStrlcat(what, issym ? ", symmetric" : "", sizeof(what)));
    PetscCall(PetscSNPrintf(what + strlen(what), sizeof(what) - strlen(what), ", %.3f s", t1 - t0));
    PetscCall(Report(ok, what, "%s", details));
    PetscCall(MatDestroy(&A));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode TestRealMatrices(void)
{
  char        dir[PETSC_MAX_PATH_LEN] = "../shared/matrices", manifest[PETSC_MAX_PATH_LEN], line[4096];
  char       *names[64];
  const char *defaults[] = {"bcsstk02", "cage5", "Franz6_id1959_aug", "power", "mbeacxc", "ash219", "helmholtz_2D"};
  PetscInt    nnames     = 64, k;
  PetscBool   flg, all = PETSC_FALSE, given;
  FILE       *f;
  int         col_name = -1, col_rows = -1, col_cols = -1, col_nnz = -1, col_field = -1, col_sym = -1;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-matrices_dir", dir, sizeof(dir), NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mm_all", &all, NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-mm_names", names, &nnames, &given));
  if (!given) nnames = 0;
  PetscCall(PetscTestDirectory(dir, 'r', &flg));
  PetscCall(PetscSNPrintf(manifest, sizeof(manifest), "%s/MANIFEST.tsv", dir));
  if (flg) PetscCall(PetscTestFile(manifest, 'r', &flg));
  if (!flg) {
    nskip++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SKIP: real matrices: %s not found (set -matrices_dir)\n", manifest));
    for (k = 0; k < nnames; k++) PetscCall(PetscFree(names[k]));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  f = fopen(manifest, "r");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "Cannot open %s", manifest);
  if (fgets(line, sizeof(line), f)) {
    char *fields[32];
    int   nf = SplitTabs(line, fields, 32), c;

    for (c = 0; c < nf; c++) {
      if (!strcmp(fields[c], "name")) col_name = c;
      if (!strcmp(fields[c], "rows")) col_rows = c;
      if (!strcmp(fields[c], "cols")) col_cols = c;
      if (!strcmp(fields[c], "nnz_expanded")) col_nnz = c;
      if (!strcmp(fields[c], "field")) col_field = c;
      if (!strcmp(fields[c], "symmetry")) col_sym = c;
    }
  }
  if (col_name < 0 || col_rows < 0 || col_cols < 0 || col_nnz < 0 || col_field < 0 || col_sym < 0) {
    fclose(f);
    for (k = 0; k < nnames; k++) PetscCall(PetscFree(names[k]));
    PetscCall(Report(PETSC_FALSE, "real matrices: MANIFEST.tsv header", "%s lacks a name/rows/cols/nnz_expanded/field/symmetry column", manifest));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  while (fgets(line, sizeof(line), f)) {
    char     *fields[32];
    int       nf     = SplitTabs(line, fields, 32);
    PetscBool wanted = all;

    if (nf <= col_sym || nf <= col_nnz) continue;
    for (k = 0; !wanted && k < (given ? nnames : NT(defaults)); k++) wanted = (PetscBool)!strcmp(fields[col_name], given ? names[k] : defaults[k]);
    if (!wanted) continue;
    PetscCall(TestRealMatrix(dir, fields[col_name], (PetscInt)atoll(fields[col_rows]), (PetscInt)atoll(fields[col_cols]), (PetscInt64)atoll(fields[col_nnz]), fields[col_field], fields[col_sym]));
  }
  fclose(f);
  for (k = 0; k < nnames; k++) PetscCall(PetscFree(names[k]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Index sizes: 2^40 rows and nnz beyond memory are refused in either build; with 64-bit PetscInt a 1 x (2^32 + 1)
   matrix loads with its entry at column 2^32 + 1, and converting it to each GPU type either works or fails with a
   clear error (the device indices are 32-bit), never a crash; with 32-bit PetscInt the header is refused */
static PetscErrorCode TestIndexSizes(void)
{
  char        path[PETSC_MAX_PATH_LEN];
  PetscMPIInt size;
  const char *wide = "%%MatrixMarket matrix coordinate real general\n1 4294967297 2\n1 4294967297 2.5\n1 1 1\n";

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(TestError("2^40 x 2^40 with one entry", "%%MatrixMarket matrix coordinate real general\n1099511627776 1099511627776 1\n1 1 1\n"));
  PetscCall(TestError("2^40 x 1 with 2^40 entries declared (beyond memory), 1 present", "%%MatrixMarket matrix coordinate real general\n1099511627776 1 1099511627776\n1 1 1\n"));
  PetscCall(TestError("2^40 x 2^40 array", "%%MatrixMarket matrix array real general\n1099511627776 1099511627776\n1\n"));
  PetscCall(TestError("symmetric 2^40, nnz 2^62", "%%MatrixMarket matrix coordinate real symmetric\n1099511627776 1099511627776 4611686018427387904\n1 1 1\n"));
  PetscCall(TestError("row index 2^40 in a 3 x 3", "%%MatrixMarket matrix coordinate real general\n3 3 1\n1099511627776 1 1\n"));
  PetscCall(TestError("row index 2^63 (overflows 64 bits)", "%%MatrixMarket matrix coordinate real general\n3 3 1\n9223372036854775808 1 1\n"));
#if defined(PETSC_USE_64BIT_INDICES)
  {
    Mat            A = NULL;
    PetscErrorCode ierr;
    const char    *msg;
    PetscInt       M = 0, N = 0, rs, re;
    PetscBool      ok;
    const char    *types[] = {"ellrcuda", "rgcsrcuda", "cmrscuda"};

    PetscCall(WriteBytes("wide 1 x 2^32+1", wide, strlen(wide), PETSC_FALSE, path));
    PetscCall(PetscOptionsSetValue(NULL, "-matrixmarket_max_dim", "4294967297"));
    PetscCall(Load(path, NULL, &A, &ierr, &msg));
    PetscCall(PetscOptionsClearValue(NULL, "-matrixmarket_max_dim"));
    ok = (PetscBool)(!ierr && A);
    if (ok) {
      PetscCall(MatGetSize(A, &M, &N));
      PetscCall(MatGetOwnershipRange(A, &rs, &re));
      ok = (PetscBool)(M == 1 && N == ((PetscInt)1 << 32) + 1);
      if (ok && rs == 0 && re == 1) {
        PetscInt           nc, zero = 0;
        const PetscInt    *cols;
        const PetscScalar *vals;

        PetscCall(MatGetRow(A, zero, &nc, &cols, &vals));
        ok = (PetscBool)(nc == 2 && cols[0] == 0 && cols[1] == ((PetscInt)1 << 32) && vals[0] == 1.0 && vals[1] == 2.5);
        PetscCall(MatRestoreRow(A, zero, &nc, &cols, &vals));
      }
    }
    PetscCall(Report(ok, "64-bit PetscInt: 1 x (2^32 + 1) matrix loads with its entry at column 2^32 + 1", "error %d (%s), %" PetscInt_FMT " x %" PetscInt_FMT, (int)ierr, msg, M, N));
    if (ok && size == 1) {
      PetscCall(PetscGPUMatInitializePackage());
      for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        Mat            B = NULL;
        PetscErrorCode e2;
        char           what[256];

        const char    *where = "MatConvert";

        PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
        e2 = MatConvert(A, types[t], MAT_INITIAL_MATRIX, &B);
        if (!e2) {
          MatGPUMatInfo info;

          where = "MatGPUMatGetInfo (the conversion itself accepted it)";
          e2    = MatGPUMatGetInfo(B, &info);
        }
        PetscCall(PetscPopErrorHandler());
        if (e2) {
          const char *text;
          PetscGPUMatErrorText specific;

          PetscCall(PetscErrorMessage(e2, &text, &specific));
          PetscCall(PetscPrintf(PETSC_COMM_WORLD, "# %s: error %d in %s: %s\n", types[t], (int)e2, where, specific));
        }
        PetscCall(PetscSNPrintf(what, sizeof(what), "64-bit PetscInt: 1 x (2^32 + 1) to %s: %s in %s (%d)", types[t], e2 ? "refused with a clear error" : "accepted", where, (int)e2));
        PetscCall(Report((PetscBool)(e2 == PETSC_ERR_SUP && !strncmp(where, "MatConvert", 11)), what, "expected PETSC_ERR_SUP from MatConvert, got error %d", (int)e2));
        PetscCall(MatDestroy(&B));
      }
    }
    PetscCall(MatDestroy(&A));
  }
#else
  PetscCall(WriteBytes("wide 1 x 2^32+1", wide, strlen(wide), PETSC_FALSE, path));
  PetscCall(ExpectError("32-bit PetscInt: 1 x (2^32 + 1) header refused (does not fit in PetscInt)", path, PETSC_ERR_FILE_UNEXPECTED));
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  PetscMPIInt rank;
  PetscBool   keep = PETSC_FALSE;

  /* tracing malloc by default, so that each failed load is checked to free all it allocated; -malloc_debug 0 turns it off (valgrind) */
  PetscCall(PetscOptionsSetValue(NULL, "-malloc_debug", "true"));
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-keep_files", &keep, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-verbose_errors", &verbose_errors, NULL));
  if (rank == 0) {
    PetscCall(PetscStrncpy(tmpdir, "/tmp/petscgpumat-mmtest-XXXXXX", sizeof(tmpdir)));
    PetscCall(PetscMkdtemp(tmpdir));
  }
  PetscCallMPI(MPI_Bcast(tmpdir, sizeof(tmpdir), MPI_CHAR, 0, PETSC_COMM_WORLD));

  PetscCall(TestValidFiles());
  PetscCall(TestMalformedFiles());
  PetscCall(TestIndexSizes());
  PetscCall(TestRealMatrices());

  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  if (rank == 0 && !keep) PetscCall(PetscRMTree(tmpdir));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed, %" PetscInt_FMT " skipped\n", npass, nfail, nskip));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
