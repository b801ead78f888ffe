/*
  The halo exchange of the MPI types' forward products (x -> the ghost values the off-diagonal block multiplies),
  staged through pinned host buffers on a stream of its own.

  PETSc's VecScatter with MPI that is not CUDA-aware packs on the device, copies through pageable host memory
  and synchronizes the device before the messages leave, so the diagonal block's kernel cannot hide the exchange.
  Here the pack kernel and its device-to-host copy run on a separate stream while the diagonal block multiplies;
  the messages go from and to pinned buffers; the received values go back on the same separate stream, and the
  product's stream waits for them with an event, not with a host synchronization. The pattern (which entries go
  to which rank) is read from the VecScatter, so both paths move the same values. Host vectors use the same
  pattern with host copies.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscsf.h>
#include <petscdevice_cuda.h>

struct _MatGPUMatHalo {
  MPI_Comm     comm;
  PetscMPIInt  tag;
  PetscMPIInt  nsend, nrecv;
  PetscMPIInt *sendranks, *recvranks;
  PetscInt    *sendoff, *recvoff; /* [n + 1] offsets into the index lists and buffers */
  PetscInt    *sendidx, *recvidx; /* local entry of x sent; ghost entry received */
  PetscBool    recv_identity;     /* recvidx is 0, 1, ...: the values land in the ghost vector as they come */
  MPI_Request *reqs;
  PetscScalar *hsend, *hrecv; /* host buffers (pinned once a device product used them) */
  PetscBool    pinned;
  /* device side, created at the first device product */
  PetscBool    device_ready;
  PetscInt    *d_sendidx, *d_recvidx;
  PetscScalar *d_sendbuf, *d_recvbuf;
  cudaStream_t stream;
  cudaEvent_t  xready, arrived;
};

/* The pattern of the scatter x -> ghost (roots: entries of x; leaves: ghost entries), or NULL where it has a
   local part (never for MPIAIJ's ghost columns, which are all owned elsewhere) */
PetscErrorCode MatGPUMatHaloCreate(Mat A, VecScatter scatter, MatGPUMatHalo **halo)
{
  MatGPUMatHalo     *h;
  PetscMPIInt        rank, nranks, niranks;
  const PetscMPIInt *ranks, *iranks;
  const PetscInt    *roffset, *rmine, *rremote, *ioffset, *irootloc;
  PetscBool          self = PETSC_FALSE;

  PetscFunctionBegin;
  *halo = NULL;
  PetscCall(PetscSFSetUp(scatter));
  PetscCall(PetscSFGetRootRanks(scatter, &nranks, &ranks, &roffset, &rmine, &rremote));
  PetscCall(PetscSFGetLeafRanks(scatter, &niranks, &iranks, &ioffset, &irootloc));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)scatter), &rank));
  for (PetscMPIInt i = 0; i < nranks; i++) self = (PetscBool)(self || ranks[i] == rank);
  for (PetscMPIInt i = 0; i < niranks; i++) self = (PetscBool)(self || iranks[i] == rank);
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &self, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)scatter)));
  if (self) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(&h));
  h->comm  = PetscObjectComm((PetscObject)A);
  h->nsend = niranks;
  h->nrecv = nranks;
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &h->tag));
  PetscCall(PetscMalloc4(niranks, &h->sendranks, niranks + 1, &h->sendoff, nranks, &h->recvranks, nranks + 1, &h->recvoff));
  PetscCall(PetscArraycpy(h->sendranks, iranks, niranks));
  PetscCall(PetscArraycpy(h->sendoff, ioffset, niranks + 1));
  PetscCall(PetscArraycpy(h->recvranks, ranks, nranks));
  PetscCall(PetscArraycpy(h->recvoff, roffset, nranks + 1));
  PetscCall(PetscMalloc2(ioffset[niranks], &h->sendidx, roffset[nranks], &h->recvidx));
  PetscCall(PetscArraycpy(h->sendidx, irootloc, ioffset[niranks]));
  PetscCall(PetscArraycpy(h->recvidx, rmine, roffset[nranks]));
  h->recv_identity = PETSC_TRUE;
  for (PetscInt k = 0; k < roffset[nranks]; k++) h->recv_identity = (PetscBool)(h->recv_identity && h->recvidx[k] == k);
  PetscCall(PetscMalloc1(niranks + nranks, &h->reqs));
  PetscCall(PetscMalloc2(ioffset[niranks], &h->hsend, roffset[nranks], &h->hrecv));
  *halo = h;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatHaloFreeHostBuffers(MatGPUMatHalo *h)
{
  PetscFunctionBegin;
  if (h->pinned) {
    PetscCallCUDA(cudaFreeHost(h->hsend));
    PetscCallCUDA(cudaFreeHost(h->hrecv));
  } else PetscCall(PetscFree2(h->hsend, h->hrecv));
  h->hsend = h->hrecv = NULL;
  PetscFunctionReturn(PETSC_SUCCESS);
}

PetscErrorCode MatGPUMatHaloDestroy(MatGPUMatHalo **halo)
{
  MatGPUMatHalo *h = *halo;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->device_ready) {
    PetscCall(MatGPUMatDeviceFree((void **)&h->d_sendidx));
    PetscCall(MatGPUMatDeviceFree((void **)&h->d_recvidx));
    PetscCall(MatGPUMatDeviceFree((void **)&h->d_sendbuf));
    PetscCall(MatGPUMatDeviceFree((void **)&h->d_recvbuf));
    PetscCallCUDA(cudaEventDestroy(h->xready));
    PetscCallCUDA(cudaEventDestroy(h->arrived));
    PetscCallCUDA(cudaStreamDestroy(h->stream));
  }
  PetscCall(MatGPUMatHaloFreeHostBuffers(h));
  PetscCall(PetscFree2(h->sendidx, h->recvidx));
  PetscCall(PetscFree4(h->sendranks, h->sendoff, h->recvranks, h->recvoff));
  PetscCall(PetscFree(h->reqs));
  PetscCall(PetscFree(*halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatHaloSetUpDevice(Mat A, MatGPUMatHalo *h)
{
  const PetscInt ns = h->sendoff[h->nsend], nr = h->recvoff[h->nrecv];

  PetscFunctionBegin;
  if (h->device_ready) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatHaloFreeHostBuffers(h));
  PetscCallCUDA(cudaMallocHost((void **)&h->hsend, PetscMax(ns, 1) * sizeof(PetscScalar)));
  PetscCallCUDA(cudaMallocHost((void **)&h->hrecv, PetscMax(nr, 1) * sizeof(PetscScalar)));
  h->pinned = PETSC_TRUE;
  PetscCall(MatGPUMatDeviceMalloc(A, ns * sizeof(PetscInt), (void **)&h->d_sendidx));
  PetscCall(MatGPUMatDeviceMalloc(A, ns * sizeof(PetscScalar), (void **)&h->d_sendbuf));
  PetscCall(MatGPUMatCopyToDevice(h->d_sendidx, h->sendidx, ns * sizeof(PetscInt)));
  if (!h->recv_identity) {
    PetscCall(MatGPUMatDeviceMalloc(A, nr * sizeof(PetscInt), (void **)&h->d_recvidx));
    PetscCall(MatGPUMatDeviceMalloc(A, nr * sizeof(PetscScalar), (void **)&h->d_recvbuf));
    PetscCall(MatGPUMatCopyToDevice(h->d_recvidx, h->recvidx, nr * sizeof(PetscInt)));
  }
  PetscCallCUDA(cudaStreamCreateWithFlags(&h->stream, cudaStreamNonBlocking));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->xready, cudaEventDisableTiming));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->arrived, cudaEventDisableTiming));
  h->device_ready = PETSC_TRUE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatHaloPostReceives(MatGPUMatHalo *h)
{
  PetscFunctionBegin;
  for (PetscMPIInt i = 0; i < h->nrecv; i++) {
    PetscMPIInt n;

    PetscCall(PetscMPIIntCast(h->recvoff[i + 1] - h->recvoff[i], &n));
    PetscCallMPI(MPI_Irecv(h->hrecv + h->recvoff[i], n, MPIU_SCALAR, h->recvranks[i], h->tag, h->comm, &h->reqs[i]));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode MatGPUMatHaloSendAndWait(MatGPUMatHalo *h)
{
  PetscFunctionBegin;
  for (PetscMPIInt i = 0; i < h->nsend; i++) {
    PetscMPIInt n;

    PetscCall(PetscMPIIntCast(h->sendoff[i + 1] - h->sendoff[i], &n));
    PetscCallMPI(MPI_Isend(h->hsend + h->sendoff[i], n, MPIU_SCALAR, h->sendranks[i], h->tag, h->comm, &h->reqs[h->nrecv + i]));
  }
  PetscCallMPI(MPI_Waitall(h->nrecv + h->nsend, h->reqs, MPI_STATUSES_IGNORE));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Start sending x's entries: on the device the pack kernel and its copy to the host are queued on the halo's stream
  after x is ready on `stream` (the product's); the receives are posted. Then the caller queues the diagonal block.
*/
PetscErrorCode MatGPUMatHaloBegin(Mat A, MatGPUMatHalo *h, Vec x, PetscBool device, void *stream)
{
  const PetscScalar *xa;
  PetscMemType       mt;
  const PetscInt     ns = h->sendoff[h->nsend];

  PetscFunctionBegin;
  /* pinned buffers replace the host ones before any message uses them */
  if (device) PetscCall(MatGPUMatHaloSetUpDevice(A, h));
  /* the receive buffer may still feed the previous product's copy to the device */
  if (h->device_ready) PetscCallCUDA(cudaEventSynchronize(h->arrived));
  PetscCall(MatGPUMatHaloPostReceives(h));
  if (device) {
    PetscCall(VecGetArrayReadAndMemType(x, &xa, &mt));
    PetscCallCUDA(cudaEventRecord(h->xready, (cudaStream_t)stream));
    PetscCallCUDA(cudaStreamWaitEvent(h->stream, h->xready, 0));
    PetscCall(MatGPUMatLaunchGatherRows(h->stream, ns, h->d_sendidx, xa, h->d_sendbuf));
    if (ns) PetscCallCUDA(cudaMemcpyAsync(h->hsend, h->d_sendbuf, ns * sizeof(PetscScalar), cudaMemcpyDeviceToHost, h->stream));
    PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
  } else {
    PetscCall(VecGetArrayRead(x, &xa));
    for (PetscInt k = 0; k < ns; k++) h->hsend[k] = xa[h->sendidx[k]];
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(MatGPUMatHaloSendAndWait(h));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Finish: the ghost values are in `ghost`; on the device, `stream` waits for them (no host synchronization) */
PetscErrorCode MatGPUMatHaloEnd(Mat A, MatGPUMatHalo *h, Vec ghost, PetscBool device, void *stream)
{
  PetscScalar   *ga;
  PetscMemType   mt;
  const PetscInt nr = h->recvoff[h->nrecv];

  PetscFunctionBegin;
  if (device) {
    PetscCallCUDA(cudaStreamSynchronize(h->stream)); /* the packed values are on the host (the diagonal block still runs) */
    PetscCall(MatGPUMatHaloSendAndWait(h));
    PetscCall(VecGetArrayWriteAndMemType(ghost, &ga, &mt));
    if (h->recv_identity) {
      if (nr) PetscCallCUDA(cudaMemcpyAsync(ga, h->hrecv, nr * sizeof(PetscScalar), cudaMemcpyHostToDevice, h->stream));
    } else {
      if (nr) PetscCallCUDA(cudaMemcpyAsync(h->d_recvbuf, h->hrecv, nr * sizeof(PetscScalar), cudaMemcpyHostToDevice, h->stream));
      PetscCall(MatGPUMatLaunchScatterRows(h->stream, nr, h->d_recvidx, h->d_recvbuf, ga));
    }
    PetscCallCUDA(cudaEventRecord(h->arrived, h->stream));
    PetscCallCUDA(cudaStreamWaitEvent((cudaStream_t)stream, h->arrived, 0));
    PetscCall(VecRestoreArrayWriteAndMemType(ghost, &ga));
  } else {
    PetscCall(VecGetArrayWrite(ghost, &ga));
    for (PetscInt k = 0; k < nr; k++) ga[h->recvidx[k]] = h->hrecv[k];
    PetscCall(VecRestoreArrayWrite(ghost, &ga));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}
