#!/usr/bin/env python3
"""petscgpumat from Python: petsc4py loads the plugin through PETSc's options, nothing is recompiled.

    python3 examples/solve_petsc4py.py [-lib lib/libpetscgpumat.so] [-mat_type cmrscuda] [-n 32] [PETSc options]

Solves a 3-D 7-point Laplacian (Dirichlet, n^3 unknowns) with CG + Jacobi on the matrix type given by
-mat_type (default cmrscuda), then again on MATAIJ, and prints both iteration counts and the type used.
The vectors come from Mat.createVecs(), so they live where the matrix type wants them: on the GPU where
one is usable, on the host otherwise (our types then run their products on the host). Exit status 1 if a
solve does not converge or the two iteration counts differ.

Needs petsc4py built for the same PETSc (pip install petsc4py==<PETSc version> with PETSC_DIR set);
`make check` runs this example when such a petsc4py is importable (see tests/run.sh).
"""
import os
import sys

import petsc4py

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
lib = os.path.join(os.path.dirname(here), "lib", "libpetscgpumat.so")
if "-lib" in args:
    i = args.index("-lib")
    lib = args[i + 1]
    del args[i : i + 2]
# -dll_append must be among PETSc's options when PETSc initializes: it registers the plugin's types
petsc4py.init([sys.argv[0], "-dll_append", lib] + args)
from petsc4py import PETSc  # noqa: E402  (after init, by petsc4py's rules)

opts = PETSc.Options()
n = opts.getInt("n", 32)
mat_type = opts.getString("mat_type", "cmrscuda")


def laplacian(mtype):
    """The 3-D 7-point Laplacian on an n^3 grid, assembled on the host, then given the type `mtype`."""
    N = n * n * n
    A = PETSc.Mat().create(comm=PETSc.COMM_WORLD)
    A.setSizes([N, N])
    A.setType(PETSc.Mat.Type.AIJ)
    A.setPreallocationNNZ(7)
    rstart, rend = A.getOwnershipRange()
    for row in range(rstart, rend):
        i, j, k = row % n, (row // n) % n, row // (n * n)
        A.setValue(row, row, 6.0)
        for di, dj, dk in ((-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)):
            ii, jj, kk = i + di, j + dj, k + dk
            if 0 <= ii < n and 0 <= jj < n and 0 <= kk < n:
                A.setValue(row, ii + n * (jj + n * kk), -1.0)
    A.assemble()
    if mtype != PETSc.Mat.Type.AIJ:
        A.convert(mtype)  # in place: our types are AIJ subclasses
    return A


def solve(mtype):
    A = laplacian(mtype)
    x, b = A.createVecs()
    b.set(1.0)
    ksp = PETSc.KSP().create(comm=A.getComm())
    ksp.setOperators(A)
    ksp.setType(PETSc.KSP.Type.CG)
    ksp.getPC().setType(PETSc.PC.Type.JACOBI)
    ksp.setTolerances(rtol=1e-8)
    ksp.setFromOptions()
    ksp.solve(b, x)
    result = (A.getType(), x.getType(), ksp.getIterationNumber(), ksp.getConvergedReason())
    for o in (ksp, x, b, A):
        o.destroy()
    return result


ours = solve(mat_type)
ref = solve(PETSc.Mat.Type.AIJ)
PETSc.Sys.Print(f"petsc4py {petsc4py.__version__}, PETSc {'.'.join(map(str, PETSc.Sys.getVersion()))}")
for label, (mtype, vtype, its, reason) in (("ours", ours), ("reference", ref)):
    PETSc.Sys.Print(f"{label:9s}: Mat {mtype}, Vec {vtype}, CG iterations {its}, converged reason {reason}")
ok = ours[3] > 0 and ref[3] > 0 and ours[2] == ref[2]
PETSc.Sys.Print("same iterations as MATAIJ: " + ("yes" if ok else "NO"))
sys.exit(0 if ok else 1)
