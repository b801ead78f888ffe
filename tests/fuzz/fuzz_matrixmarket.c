/*
  libFuzzer harness for MatLoadMatrixMarket() (src/io/matrixmarket.c, compiled into this harness with
  -fsanitize=fuzzer-no-link,address,undefined; PETSc is linked as built). Each input is written to a file (the
  reader takes a path; zlib reads it plain or, when it starts with the gzip magic, decompressed) and loaded as AIJ;
  a file that loads is loaded again as SBAIJ (the reader's second preallocation path). A clean PETSc error with a
  documented code is fine; crashes, ASan/UBSan reports, leaks, timeouts and the findings of mm_fuzz_check.h abort.

  Build and run: tests/fuzz/fuzz.sh (see there). Options for PETSc come from MMFUZZ_PETSC_OPTIONS, default
  "-matrixmarket_max_dim 65536" so that an input declaring millions of empty rows is refused early (the default
  limit, 2^24, is tested by tests/cpu/test_matrixmarket.c; with it every such input costs a second).
*/
#include "mm_fuzz_check.h"
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <unistd.h>
#include <fcntl.h>

static char mm_path[PETSC_MAX_PATH_LEN];

static void MMFuzzAtExit(void)
{
  if (mm_path[0]) (void)unlink(mm_path);
  (void)PetscFinalize();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  const char *opts = getenv("MMFUZZ_PETSC_OPTIONS");
  const char *dir  = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

  (void)argc;
  (void)argv;
  /* PETSc must not catch SEGV and friends: the sanitizers report them */
  if (PetscOptionsSetValue(NULL, "-no_signal_handler", NULL)) abort();
  if (PetscOptionsInsertString(NULL, opts ? opts : "-matrixmarket_max_dim 65536")) abort();
  if (PetscInitializeNoArguments()) abort();
  snprintf(mm_path, sizeof(mm_path), "%s/petscgpumat-fuzz-%d.mtx", dir, (int)getpid());
  atexit(MMFuzzAtExit);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  PetscErrorCode ierr;
  PetscBool      loaded;
  const char    *finding;
  char           why[1024];
  int            fd = open(mm_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  size_t         done = 0;

  if (fd < 0) {
    perror(mm_path);
    abort();
  }
  while (done < size) {
    ssize_t w = write(fd, data + done, size - done);

    if (w <= 0) {
      perror(mm_path);
      abort();
    }
    done += (size_t)w;
  }
  close(fd);
  finding = MMFuzzLoad(mm_path, NULL, &ierr, &loaded, why, sizeof(why));
  if (!finding && loaded) finding = MMFuzzLoad(mm_path, MATSBAIJ, &ierr, &loaded, why, sizeof(why));
  if (finding) {
    fprintf(stderr, "FINDING: %s\n", finding);
    abort();
  }
  return 0;
}
