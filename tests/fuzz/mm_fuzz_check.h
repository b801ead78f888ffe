#pragma once
/*
  The check shared by the libFuzzer harness (fuzz_matrixmarket.c) and the corpus driver (test_fuzz_corpus.c):
  load one file with MatLoadMatrixMarket() with errors returned, not printed, and decide whether what happened is
  acceptable. A clean PETSc error with one of the reader's documented codes, the output left NULL, is fine; so is a
  successful load whose matrix is consistent. Anything else (an undocumented error code, the output set on error,
  an inconsistent matrix) is a finding. Crashes, sanitizer reports, leaks and timeouts are caught by the callers.
*/
#include <petscgpumat.h>
#include <petscgpumat/private/petsccompat.h> /* PETSc-version differences the tests meet */
#include <string.h>

/* the error codes MatLoadMatrixMarket() documents for bad input; PETSC_ERR_SUP: a non-symmetric file as SBAIJ */
static inline PetscBool MMFuzzExpectedError(PetscErrorCode ierr)
{
  return (PetscBool)(ierr == PETSC_ERR_FILE_UNEXPECTED || ierr == PETSC_ERR_FILE_READ || ierr == PETSC_ERR_FILE_OPEN || ierr == PETSC_ERR_SUP || ierr == PETSC_ERR_INT_OVERFLOW);
}

/* Loads path as type (NULL: AIJ). *ierr is the loader's code; *loaded whether a matrix came back; the return value
   is NULL when the outcome is acceptable, else a description of the finding (written into why). */
static inline const char *MMFuzzLoad(const char path[], MatType type, PetscErrorCode *ierr, PetscBool *loaded, char why[], size_t whylen)
{
  Mat            A = NULL;
  PetscErrorCode e2;
  PetscInt       M = -1, N = -1, rs = -1, re = -1;
  MatInfo        info;

  *loaded = PETSC_FALSE;
  if (PetscPushErrorHandler(PetscReturnErrorHandler, NULL)) return "PetscPushErrorHandler failed";
  *ierr = MatLoadMatrixMarket(PETSC_COMM_SELF, path, type, &A);
  if (*ierr) {
    (void)PetscPopErrorHandler();
    if (A) {
      (void)PetscSNPrintf(why, whylen, "error %d but the output matrix was set", (int)*ierr);
      return why;
    }
    if (!MMFuzzExpectedError(*ierr)) {
      const char *text;
      PetscGPUMatErrorText specific = NULL;

      (void)PetscErrorMessage(*ierr, &text, &specific);
      (void)PetscSNPrintf(why, whylen, "undocumented error code %d (%s): %s", (int)*ierr, text ? text : "?", specific ? specific : "");
      return why;
    }
    return NULL;
  }
  *loaded = PETSC_TRUE;
  /* a loaded matrix must be consistent: sizes, ownership, and its entries countable */
  e2 = MatGetSize(A, &M, &N);
  if (!e2) e2 = MatGetOwnershipRange(A, &rs, &re);
  if (!e2) e2 = MatGetInfo(A, MAT_LOCAL, &info);
  (void)PetscPopErrorHandler();
  if (e2 || !A || M < 0 || N < 0 || rs != 0 || re != M) {
    (void)PetscSNPrintf(why, whylen, "loaded matrix inconsistent (error %d, %" PetscInt_FMT " x %" PetscInt_FMT ", rows %" PetscInt_FMT "..%" PetscInt_FMT ")", (int)e2, M, N, rs, re);
    (void)MatDestroy(&A);
    return why;
  }
  if (MatDestroy(&A)) return "MatDestroy failed";
  return NULL;
}
