static char help[] = "Loads every file of the fuzzing seed corpus and of the fuzzer's regression inputs with MatLoadMatrixMarket()\n\
(as AIJ, and as SBAIJ when it loads), through the normal build: each must load or fail with a documented error code,\n\
leave the output NULL on error and leave no PETSc memory allocated (-malloc_debug, on by default; 0 under valgrind).\n\
Options:\n\
  -dirs a,b,...   directories to read (default tests/fuzz/seeds,tests/fuzz/regressions relative to -root)\n\
  -root <dir>     the checkout (default: the current directory)\n";

#include "mm_fuzz_check.h"
#include <dirent.h>
#include <stdlib.h>

static int CompareNames(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static PetscErrorCode CheckDir(const char dir[], PetscInt *npass, PetscInt *nfail, PetscInt *nskip)
{
  DIR           *d = opendir(dir);
  struct dirent *ent;
  char         **names = NULL;
  size_t         n = 0, cap = 0, k;

  PetscFunctionBeginUser;
  if (!d) {
    (*nskip)++;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "SKIP: corpus %s: cannot open the directory\n", dir));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  while ((ent = readdir(d))) {
    if (ent->d_name[0] == '.' || !strcmp(ent->d_name, "README.md")) continue;
    if (n == cap) {
      cap   = cap ? 2 * cap : 64;
      names = (char **)realloc(names, cap * sizeof(*names));
      PetscCheck(names, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
    }
    names[n++] = strdup(ent->d_name);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof(*names), CompareNames);
  for (k = 0; k < n; k++) {
    char           path[PETSC_MAX_PATH_LEN], why[1024];
    const char    *finding, *sbfinding = NULL;
    PetscErrorCode ierr, sbierr = 0;
    PetscBool      loaded, sbloaded = PETSC_FALSE;
    PetscLogDouble m0, m1;

    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", dir, names[k]));
    /* a first, unmeasured pass: PETSc registers types and packages at their first use, memory kept until PetscFinalize() */
    finding = MMFuzzLoad(path, NULL, &ierr, &loaded, why, sizeof(why));
    if (!finding && loaded) (void)MMFuzzLoad(path, MATSBAIJ, &sbierr, &sbloaded, why, sizeof(why));
    PetscCall(PetscMallocGetCurrentUsage(&m0));
    finding = MMFuzzLoad(path, NULL, &ierr, &loaded, why, sizeof(why));
    if (!finding && loaded) {
      sbfinding = MMFuzzLoad(path, MATSBAIJ, &sbierr, &sbloaded, why, sizeof(why));
      finding   = sbfinding;
    }
    PetscCall(PetscMallocGetCurrentUsage(&m1));
    if (!finding && m1 != m0) finding = "PETSc memory left allocated";
    if (finding) {
      (*nfail)++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "FAIL: corpus %s: %s (%g bytes left allocated)\n", path, finding, m1 - m0));
    } else {
      (*npass)++;
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "PASS: corpus %s: %s%s\n", path, loaded ? "loads" : "clean error", loaded ? (sbloaded ? " (and as SBAIJ)" : " (SBAIJ: clean error)") : ""));
    }
    (void)sbierr;
    free(names[k]);
  }
  free(names);
  PetscFunctionReturn(PETSC_SUCCESS);
}

int main(int argc, char **argv)
{
  char     *dirs[16];
  char      root[PETSC_MAX_PATH_LEN] = ".", path[PETSC_MAX_PATH_LEN];
  PetscInt  ndirs = 16, k, npass = 0, nfail = 0, nskip = 0;
  PetscBool given;

  PetscCall(PetscOptionsSetValue(NULL, "-malloc_debug", "true"));
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-root", root, sizeof(root), NULL));
  PetscCall(PetscOptionsGetStringArray(NULL, NULL, "-dirs", dirs, &ndirs, &given));
  if (!given) {
    ndirs = 2;
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/tests/fuzz/seeds", root));
    PetscCall(PetscStrallocpy(path, &dirs[0]));
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/tests/fuzz/regressions", root));
    PetscCall(PetscStrallocpy(path, &dirs[1]));
  }
  for (k = 0; k < ndirs; k++) {
    PetscCall(CheckDir(dirs[k], &npass, &nfail, &nskip));
    PetscCall(PetscFree(dirs[k]));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%" PetscInt_FMT " passed, %" PetscInt_FMT " failed, %" PetscInt_FMT " skipped\n", npass, nfail, nskip));
  PetscCall(PetscFinalize());
  return nfail ? 1 : 0;
}
