static const char help[] = "Creates a matrix the usual way (MatCreate, MatSetSizes, MatSetFromOptions with -mat_type), so that -help lists\n"
                           "the options of the chosen type; used by tests/run.sh to check that every option of each format is listed.\n";

#include <petscgpumat.h>

int main(int argc, char **argv)
{
  Mat A;

  PetscFunctionBeginUser;
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscGPUMatInitializePackage());
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetSizes(A, PETSC_DECIDE, PETSC_DECIDE, 8, 8));
  PetscCall(MatSetFromOptions(A));
  PetscCall(MatDestroy(&A));
  PetscCall(PetscFinalize());
  return 0;
}
