#!/usr/bin/env bash
# Run a command with the environment PETSc programs need here: OpenMPI as root (containers, CI) and,
# on GPU machines whose OpenMPI is not CUDA-aware, -use_gpu_aware_mpi 0.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
case " ${PETSC_OPTIONS:-} " in
  *" -use_gpu_aware_mpi "*) ;;
  *) export PETSC_OPTIONS="${PETSC_OPTIONS:-} -use_gpu_aware_mpi 0" ;;
esac
exec "$@"
