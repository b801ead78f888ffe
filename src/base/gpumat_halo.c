/*
  The halo exchange of the MPI types' forward products (x -> the ghost values the off-diagonal block multiplies).

  PETSc's VecScatter with MPI that is not CUDA-aware packs on the device, copies through pageable host memory
  and synchronizes the device before the messages leave, so the diagonal block's kernel cannot hide the exchange.
  Here the exchange runs beside the diagonal block's product, in one of two ways:

  - CUDA IPC, where every neighbour of every rank runs on the same node (the usual one-node, several-GPU case):
    each rank exports a device receive buffer once; a sender packs its values on the device and copies them
    straight into its receivers' buffers (NVLink or PCIe peer to peer, or within one GPU). Zero-byte messages
    say "your values are there" and "my buffer is free again"; the buffer has two halves that alternate between
    products, so a sender almost never waits for the second message. The off-diagonal block reads the received
    half in place. No host copies at all.
  - Staged through pinned host buffers (other cases, or -mat_gpumat_halo_ipc 0): the pack kernel and its copy to
    the host run on the halo's stream, the messages go from and to pinned buffers, the received values go back on
    that stream, and the product's stream waits for them with an event, not with a host synchronization.

  Order of a device product: HaloBegin (the receives, an event "x is ready") -> the diagonal block's kernel ->
  HaloEnd (pack on a high-priority stream, which gets SMs as soon as the running kernel's blocks retire, then the
  exchange) -> the off-diagonal product -> HaloRelease. The diagonal block's kernel so starts as early as on one
  rank. The pattern (which entries go to which rank) is read from the VecScatter, so every path moves the same
  values. Host vectors use the same pattern with host copies and messages.
*/
#include <petscgpumat/private/gpumatimpl.h>
#include <petscsf.h>
#include <petscdevice_cuda.h>

/* What a receiver tells each of its senders once: where the sender's values go */
typedef struct {
  cudaIpcMemHandle_t handle; /* the receiver's exported buffer of 2 x stride values */
  PetscInt           offset; /* this sender's first entry in a half */
  PetscInt           stride; /* entries in a half (all the receiver's ghost values) */
} MatGPUMatHaloAddress;

struct _MatGPUMatHalo {
  MPI_Comm     comm;
  PetscMPIInt  tag, tag_arrived, tag_free;
  PetscMPIInt  nsend, nrecv;
  PetscMPIInt *sendranks, *recvranks;
  PetscInt    *sendoff, *recvoff; /* [n + 1] offsets into the index lists and buffers */
  PetscInt    *sendidx, *recvidx; /* local entry of x sent; ghost entry received */
  PetscBool    recv_identity;     /* recvidx is 0, 1, ...: the values land in the ghost vector as they come */
  MPI_Request *reqs, *freereqs;   /* [nrecv + nsend] each */
  PetscScalar *hsend, *hrecv;     /* host buffers (pinned once a device product used them on the staged path) */
  PetscBool    pinned;
  /* device side, created at the first device product */
  PetscBool    device_ready;
  PetscInt    *d_sendidx, *d_recvidx;
  PetscScalar *d_sendbuf, *d_recvbuf;
  cudaStream_t stream; /* highest priority: the pack kernel overtakes the diagonal block's pending blocks */
  cudaEvent_t  xready, arrived;
  /* CUDA IPC: decided (collectively) at the first device product */
  PetscBool     allow_ipc, ipc;
  PetscScalar  *d_ipcrecv;            /* 2 x nr, exported: the halves alternate between products */
  PetscScalar **peerbase, **peerdst;  /* [nsend]: each receiver's opened buffer, and where my values go in half 0 */
  PetscInt     *peerstride;           /* [nsend]: the receiver's half size */
  cudaEvent_t   consumed[2];          /* the off-diagonal product has read that half */
  PetscInt64    round;                /* device products exchanged by IPC */
  PetscBool     placed;               /* the ghost vector holds a half of d_ipcrecv (HaloRelease resets it) */
};

/* The pattern of the scatter x -> ghost (roots: entries of x; leaves: ghost entries), or NULL where it has a
   local part (never for MPIAIJ's ghost columns, which are all owned elsewhere) */
PetscErrorCode MatGPUMatHaloCreate(Mat A, VecScatter scatter, PetscBool allow_ipc, MatGPUMatHalo **halo)
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
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &self, 1, PETSCGPUMAT_MPI_BOOL, MPI_LOR, PetscObjectComm((PetscObject)scatter)));
  if (self) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(PetscNew(&h));
  h->comm      = PetscObjectComm((PetscObject)A);
  h->nsend     = niranks;
  h->nrecv     = nranks;
  h->allow_ipc = allow_ipc;
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &h->tag));
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &h->tag_arrived));
  PetscCall(PetscObjectGetNewTag((PetscObject)A, &h->tag_free));
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
  PetscCall(PetscMalloc2(niranks + nranks, &h->reqs, niranks + nranks, &h->freereqs));
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

/* Collective. Importers close the receivers' buffers before any exporter frees its own */
static PetscErrorCode MatGPUMatHaloDestroyIPC(MatGPUMatHalo *h)
{
  PetscFunctionBegin;
  for (PetscMPIInt j = 0; j < h->nsend; j++)
    if (h->peerbase[j]) PetscCallCUDA(cudaIpcCloseMemHandle(h->peerbase[j]));
  PetscCallMPI(MPI_Barrier(h->comm));
  PetscCall(MatGPUMatDeviceFree((void **)&h->d_ipcrecv));
  PetscCall(PetscFree3(h->peerbase, h->peerdst, h->peerstride));
  PetscCallCUDA(cudaEventDestroy(h->consumed[0]));
  PetscCallCUDA(cudaEventDestroy(h->consumed[1]));
  h->ipc = PETSC_FALSE;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective when the halo was used on the device with CUDA IPC */
PetscErrorCode MatGPUMatHaloDestroy(MatGPUMatHalo **halo)
{
  MatGPUMatHalo *h = *halo;

  PetscFunctionBegin;
  if (!h) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->ipc) PetscCall(MatGPUMatHaloDestroyIPC(h));
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
  PetscCall(PetscFree2(h->reqs, h->freereqs));
  PetscCall(PetscFree(*halo));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Whether every rank this one exchanges with is on its node (shares memory with it). PETSc keeps the node's
   communicator as an attribute of the matrix's communicator, so it is split once, not at every halo's set-up */
static PetscErrorCode MatGPUMatHaloNeighboursOnNode(MatGPUMatHalo *h, PetscBool *onnode)
{
  PetscFunctionBegin;
#if PetscDefined(HAVE_MPI_PROCESS_SHARED_MEMORY)
  PetscShmComm shm;

  PetscCall(PetscShmCommGet(h->comm, &shm));
  *onnode = PETSC_TRUE;
  for (PetscMPIInt i = 0; i < h->nsend + h->nrecv && *onnode; i++) {
    PetscMPIInt local;

    PetscCall(PetscShmCommGlobalToLocal(shm, i < h->nsend ? h->sendranks[i] : h->recvranks[i - h->nsend], &local));
    *onnode = (PetscBool)(local != MPI_PROC_NULL);
  }
#else
  *onnode = PETSC_FALSE; /* no MPI-3 shared-memory communicators in this PETSc: the staged path */
#endif
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Collective: export a receive buffer, tell each sender where its values go, open the receivers' buffers. Any
  failure on any rank (a neighbour on another node, no IPC between the devices) leaves every rank on the staged path.
*/
static PetscErrorCode MatGPUMatHaloSetUpIPC(MatGPUMatHalo *h, void *stream)
{
  const PetscInt        nr = h->recvoff[h->nrecv];
  PetscBool             ok = h->allow_ipc;
  MatGPUMatHaloAddress  mine, *theirs;
  MPI_Request          *reqs;
  cudaError_t           err = cudaSuccess;

  PetscFunctionBegin;
  if (ok) PetscCall(MatGPUMatHaloNeighboursOnNode(h, &ok));
  if (ok && nr) {
    err = cudaMalloc((void **)&h->d_ipcrecv, 2 * nr * sizeof(PetscScalar));
    /* NaN until the senders write: a value that never arrived shows in the product (and compute-sanitizer's
       initcheck, which cannot see another process's writes, has nothing to report). The memset must be done
       before the handle goes out: queued behind this rank's pending work, it once ran after a sender's first
       values had arrived and wiped them (the intermittent NaN of GAMG on 2 ranks, issue #13) */
    if (err == cudaSuccess) err = cudaMemsetAsync(h->d_ipcrecv, 0xff, 2 * nr * sizeof(PetscScalar), (cudaStream_t)stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)stream); /* the memset done, behind what was queued */
    if (err == cudaSuccess) err = cudaIpcGetMemHandle(&mine.handle, h->d_ipcrecv);
    if (err != cudaSuccess) (void)cudaGetLastError();
    ok = (PetscBool)(err == cudaSuccess);
  }
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &ok, 1, PETSCGPUMAT_MPI_BOOL, MPI_LAND, h->comm));
  if (!ok) {
    PetscCall(MatGPUMatDeviceFree((void **)&h->d_ipcrecv));
    PetscFunctionReturn(PETSC_SUCCESS);
  }
  PetscCall(PetscCalloc3(h->nsend, &h->peerbase, h->nsend, &h->peerdst, h->nsend, &h->peerstride));
  PetscCall(PetscMalloc2(h->nsend, &theirs, h->nsend + h->nrecv, &reqs));
  mine.stride = nr;
  for (PetscMPIInt j = 0; j < h->nsend; j++) PetscCallMPI(MPI_Irecv(&theirs[j], (PetscMPIInt)sizeof(MatGPUMatHaloAddress), MPI_BYTE, h->sendranks[j], h->tag, h->comm, &reqs[j]));
  {
    MatGPUMatHaloAddress *to;

    PetscCall(PetscMalloc1(h->nrecv, &to));
    for (PetscMPIInt i = 0; i < h->nrecv; i++) {
      to[i]        = mine;
      to[i].offset = h->recvoff[i];
      PetscCallMPI(MPI_Isend(&to[i], (PetscMPIInt)sizeof(MatGPUMatHaloAddress), MPI_BYTE, h->recvranks[i], h->tag, h->comm, &reqs[h->nsend + i]));
    }
    PetscCallMPI(MPI_Waitall(h->nsend + h->nrecv, reqs, MPI_STATUSES_IGNORE));
    PetscCall(PetscFree(to));
  }
  for (PetscMPIInt j = 0; j < h->nsend && err == cudaSuccess; j++) {
    void *base = NULL;

    PetscCheck(theirs[j].offset + h->sendoff[j + 1] - h->sendoff[j] <= theirs[j].stride, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Halo: rank %d expects fewer values than this rank sends it", h->sendranks[j]);
    err = cudaIpcOpenMemHandle(&base, theirs[j].handle, cudaIpcMemLazyEnablePeerAccess);
    if (err == cudaSuccess) {
      h->peerbase[j]   = (PetscScalar *)base;
      h->peerdst[j]    = (PetscScalar *)base + theirs[j].offset;
      h->peerstride[j] = theirs[j].stride;
    } else (void)cudaGetLastError();
  }
  PetscCall(PetscFree2(theirs, reqs));
  ok = (PetscBool)(err == cudaSuccess);
  PetscCallMPI(MPIU_Allreduce(MPI_IN_PLACE, &ok, 1, PETSCGPUMAT_MPI_BOOL, MPI_LAND, h->comm));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->consumed[0], cudaEventDisableTiming));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->consumed[1], cudaEventDisableTiming));
  h->ipc = PETSC_TRUE; /* on every rank, so that the clean-up below and in MatGPUMatHaloDestroy() stays collective */
  if (!ok) PetscCall(MatGPUMatHaloDestroyIPC(h));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* Collective (at the first device product) */
static PetscErrorCode MatGPUMatHaloSetUpDevice(Mat A, MatGPUMatHalo *h)
{
  const PetscInt ns = h->sendoff[h->nsend], nr = h->recvoff[h->nrecv];
  int            least, greatest;
  void          *stream;

  PetscFunctionBegin;
  if (h->device_ready) PetscFunctionReturn(PETSC_SUCCESS);
  PetscCall(MatGPUMatGetStream(&stream));
  PetscCall(PetscLogEventBegin(MAT_GPUMatHaloSetUp, A, 0, 0, 0));
  PetscCall(MatGPUMatDeviceMalloc(A, ns * sizeof(PetscInt), (void **)&h->d_sendidx));
  PetscCall(MatGPUMatDeviceMalloc(A, ns * sizeof(PetscScalar), (void **)&h->d_sendbuf));
  PetscCall(MatGPUMatCopyToDevice(h->d_sendidx, h->sendidx, ns * sizeof(PetscInt), stream));
  if (!h->recv_identity) {
    PetscCall(MatGPUMatDeviceMalloc(A, nr * sizeof(PetscInt), (void **)&h->d_recvidx));
    PetscCall(MatGPUMatDeviceMalloc(A, nr * sizeof(PetscScalar), (void **)&h->d_recvbuf));
    PetscCall(MatGPUMatCopyToDevice(h->d_recvidx, h->recvidx, nr * sizeof(PetscInt), stream));
  }
  PetscCallCUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  PetscCallCUDA(cudaStreamCreateWithPriority(&h->stream, cudaStreamNonBlocking, greatest));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->xready, cudaEventDisableTiming));
  PetscCallCUDA(cudaEventCreateWithFlags(&h->arrived, cudaEventDisableTiming));
  /* no host synchronization for the index copies: the halo's stream waits for xready, which HaloBegin records on
     `stream` behind them */
  h->device_ready = PETSC_TRUE;
  PetscCall(MatGPUMatHaloSetUpIPC(h, stream));
  if (!h->ipc) { /* only the staged path copies through the host buffers: pin them (a millisecond or so each) */
    PetscCall(MatGPUMatHaloFreeHostBuffers(h));
    PetscCallCUDA(cudaMallocHost((void **)&h->hsend, PetscMax(ns, 1) * sizeof(PetscScalar)));
    PetscCallCUDA(cudaMallocHost((void **)&h->hrecv, PetscMax(nr, 1) * sizeof(PetscScalar)));
    h->pinned = PETSC_TRUE;
  }
  PetscCall(PetscLogEventEnd(MAT_GPUMatHaloSetUp, A, 0, 0, 0));
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
  IPC, start of product k (half k mod 2): the half this rank used two products ago is free once that product's
  off-diagonal block has read it; say so to the senders, and ask the receivers the same. Then wait for "arrived".
*/
static PetscErrorCode MatGPUMatHaloBeginIPC(MatGPUMatHalo *h)
{
  PetscFunctionBegin;
  if (h->round >= 2) {
    PetscCallCUDA(cudaEventSynchronize(h->consumed[h->round % 2]));
    for (PetscMPIInt i = 0; i < h->nrecv; i++) PetscCallMPI(MPI_Isend(NULL, 0, MPI_BYTE, h->recvranks[i], h->tag_free, h->comm, &h->freereqs[i]));
    for (PetscMPIInt j = 0; j < h->nsend; j++) PetscCallMPI(MPI_Irecv(NULL, 0, MPI_BYTE, h->sendranks[j], h->tag_free, h->comm, &h->freereqs[h->nrecv + j]));
  }
  for (PetscMPIInt i = 0; i < h->nrecv; i++) PetscCallMPI(MPI_Irecv(NULL, 0, MPI_BYTE, h->recvranks[i], h->tag_arrived, h->comm, &h->reqs[i]));
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* IPC: the packed values go straight into the receivers' halves; the ghost vector then reads this rank's half */
static PetscErrorCode MatGPUMatHaloEndIPC(MatGPUMatHalo *h, Vec ghost, cudaStream_t stream)
{
  const PetscInt b = (PetscInt)(h->round % 2), nr = h->recvoff[h->nrecv];

  PetscFunctionBegin;
  if (h->round >= 2) PetscCallMPI(MPI_Waitall(h->nsend, h->freereqs + h->nrecv, MPI_STATUSES_IGNORE));
  for (PetscMPIInt j = 0; j < h->nsend; j++) {
    const PetscInt n = h->sendoff[j + 1] - h->sendoff[j];

    if (n) PetscCallCUDA(cudaMemcpyAsync(h->peerdst[j] + b * h->peerstride[j], h->d_sendbuf + h->sendoff[j], n * sizeof(PetscScalar), cudaMemcpyDefault, h->stream));
  }
  PetscCallCUDA(cudaStreamSynchronize(h->stream)); /* the values are in the receivers' memory before they hear of it */
  for (PetscMPIInt j = 0; j < h->nsend; j++) PetscCallMPI(MPI_Isend(NULL, 0, MPI_BYTE, h->sendranks[j], h->tag_arrived, h->comm, &h->reqs[h->nrecv + j]));
  PetscCallMPI(MPI_Waitall(h->nrecv + h->nsend, h->reqs, MPI_STATUSES_IGNORE));
  if (h->round >= 2) PetscCallMPI(MPI_Waitall(h->nrecv, h->freereqs, MPI_STATUSES_IGNORE));
  if (!nr) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->recv_identity) {
    PetscCall(VecCUDAPlaceArray(ghost, h->d_ipcrecv + b * nr));
    h->placed = PETSC_TRUE;
  } else {
    PetscScalar *ga;

    PetscCall(VecCUDAGetArrayWrite(ghost, &ga));
    PetscCall(MatGPUMatLaunchScatterRows(stream, nr, h->d_recvidx, h->d_ipcrecv + b * nr, ga));
    PetscCall(VecCUDARestoreArrayWrite(ghost, &ga));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  Before the diagonal block's product: the receives are posted and, on the device, the point where x is ready on
  `stream` (the product's) is marked. Host vectors are exchanged here, whole.
*/
PetscErrorCode MatGPUMatHaloBegin(Mat A, MatGPUMatHalo *h, Vec x, PetscBool device, void *stream)
{
  PetscFunctionBegin;
  /* on the staged path, pinned buffers replace the host ones before any message uses them */
  if (device) PetscCall(MatGPUMatHaloSetUpDevice(A, h));
  if (device && h->ipc) PetscCall(MatGPUMatHaloBeginIPC(h));
  else {
    /* the receive buffer may still feed the previous product's copy to the device */
    if (h->device_ready) PetscCallCUDA(cudaEventSynchronize(h->arrived));
    PetscCall(MatGPUMatHaloPostReceives(h));
  }
  if (device) PetscCallCUDA(cudaEventRecord(h->xready, (cudaStream_t)stream));
  else {
    const PetscScalar *xa;

    PetscCall(VecGetArrayRead(x, &xa));
    for (PetscInt k = 0; k < h->sendoff[h->nsend]; k++) h->hsend[k] = xa[h->sendidx[k]];
    PetscCall(VecRestoreArrayRead(x, &xa));
    PetscCall(MatGPUMatHaloSendAndWait(h));
  }
  PetscFunctionReturn(PETSC_SUCCESS);
}

/*
  After the diagonal block's product was queued: pack x's entries on the halo's stream, exchange them, and leave
  the ghost values in `ghost` for `stream` (no host synchronization of `stream`).
*/
PetscErrorCode MatGPUMatHaloEnd(MatGPUMatHalo *h, Vec x, Vec ghost, PetscBool device, void *stream)
{
  PetscScalar   *ga;
  PetscMemType   mt;
  const PetscInt ns = h->sendoff[h->nsend], nr = h->recvoff[h->nrecv];

  PetscFunctionBegin;
  if (device) {
    const PetscScalar *xa;

    PetscCall(VecGetArrayReadAndMemType(x, &xa, &mt));
    PetscCallCUDA(cudaStreamWaitEvent(h->stream, h->xready, 0));
    PetscCall(MatGPUMatLaunchGatherRows(h->stream, ns, h->d_sendidx, xa, h->d_sendbuf));
    PetscCall(VecRestoreArrayReadAndMemType(x, &xa));
    if (h->ipc) {
      PetscCall(MatGPUMatHaloEndIPC(h, ghost, (cudaStream_t)stream));
      PetscFunctionReturn(PETSC_SUCCESS);
    }
    if (ns) PetscCallCUDA(cudaMemcpyAsync(h->hsend, h->d_sendbuf, ns * sizeof(PetscScalar), cudaMemcpyDeviceToHost, h->stream));
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

/* After the off-diagonal block's product: with IPC, this rank's half is free once `stream` gets here */
PetscErrorCode MatGPUMatHaloRelease(MatGPUMatHalo *h, Vec ghost, PetscBool device, void *stream)
{
  PetscFunctionBegin;
  if (!device || !h->ipc) PetscFunctionReturn(PETSC_SUCCESS);
  if (h->placed) PetscCall(VecCUDAResetArray(ghost));
  h->placed = PETSC_FALSE;
  PetscCallCUDA(cudaEventRecord(h->consumed[h->round % 2], (cudaStream_t)stream));
  h->round++;
  PetscFunctionReturn(PETSC_SUCCESS);
}

/* How forward products exchange, for MatView() */
PetscErrorCode MatGPUMatHaloDescribe(MatGPUMatHalo *h, const char **what)
{
  PetscFunctionBegin;
  if (!h) *what = "PETSc VecScatter";
  else if (h->ipc) *what = "CUDA IPC: device to device between the ranks' GPUs, no host copies";
  else if (h->device_ready) *what = h->allow_ipc ? "staged through pinned host buffers (CUDA IPC not possible: a neighbour on another node, or no IPC between the devices)" : "staged through pinned host buffers (-mat_gpumat_halo_ipc 0)";
  else *what = h->allow_ipc ? "CUDA IPC where every neighbour is on this node, else staged through pinned host buffers (decided at the first device product)" : "staged through pinned host buffers";
  PetscFunctionReturn(PETSC_SUCCESS);
}
