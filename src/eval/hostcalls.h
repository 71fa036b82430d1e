/* hostcalls.h — the host communication calls cuco watches for, one table
 * for both of its users: the interposer that counts them at run time
 * (count.c, preloaded into the ranks) and the evaluator that looks for
 * them in a built program's dynamic symbols (trust.c, elf.c).
 *
 * A program that says its communication is device-initiated (or, on the
 * CPU, one-sided) must make none of these calls in its steps
 * (docs/workloads.md, "Host calls"). Each row is
 *
 *   X(kind, name, return type, (parameters), (arguments))
 *
 * kind: NCCL (a host-launched NCCL collective or point-to-point call),
 * MPI_COLL (an MPI collective that moves data), MPI_P2P (two-sided MPI
 * messages). MPI_Barrier is none of them: it moves no data, and a fence is
 * the CPU analogue of a device barrier. The types are spelled out so the
 * interposer can forward calls without nccl.h; MPI's come from mpi.h. */
#ifndef CUCO_HOSTCALLS_H
#define CUCO_HOSTCALLS_H

#define CUCO_NCCL_CALLS(X) \
	X(NCCL, ncclAllGather, int, (const void *s, void *r, size_t n, int t, void *c, void *st), (s, r, n, t, c, st)) \
	X(NCCL, ncclAllReduce, int, (const void *s, void *r, size_t n, int t, int op, void *c, void *st), (s, r, n, t, op, c, st)) \
	X(NCCL, ncclReduceScatter, int, (const void *s, void *r, size_t n, int t, int op, void *c, void *st), (s, r, n, t, op, c, st)) \
	X(NCCL, ncclBroadcast, int, (const void *s, void *r, size_t n, int t, int root, void *c, void *st), (s, r, n, t, root, c, st)) \
	X(NCCL, ncclBcast, int, (void *b, size_t n, int t, int root, void *c, void *st), (b, n, t, root, c, st)) \
	X(NCCL, ncclReduce, int, (const void *s, void *r, size_t n, int t, int op, int root, void *c, void *st), (s, r, n, t, op, root, c, st)) \
	X(NCCL, ncclAlltoAll, int, (const void *s, void *r, size_t n, int t, void *c, void *st), (s, r, n, t, c, st)) \
	X(NCCL, ncclGather, int, (const void *s, void *r, size_t n, int t, int root, void *c, void *st), (s, r, n, t, root, c, st)) \
	X(NCCL, ncclScatter, int, (const void *s, void *r, size_t n, int t, int root, void *c, void *st), (s, r, n, t, root, c, st)) \
	X(NCCL, ncclSend, int, (const void *s, size_t n, int t, int peer, void *c, void *st), (s, n, t, peer, c, st)) \
	X(NCCL, ncclRecv, int, (void *r, size_t n, int t, int peer, void *c, void *st), (r, n, t, peer, c, st)) \
	X(NCCL, ncclGroupStart, int, (void), ()) \
	X(NCCL, ncclGroupEnd, int, (void), ())

#define CUCO_MPI_CALLS(X) \
	X(MPI_COLL, MPI_Allgather, int, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c)) \
	X(MPI_COLL, MPI_Allgatherv, int, (const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *d, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, d, rt, c)) \
	X(MPI_COLL, MPI_Alltoall, int, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c), (s, sn, st, r, rn, rt, c)) \
	X(MPI_COLL, MPI_Alltoallv, int, (const void *s, const int *sn, const int *sd, MPI_Datatype st, void *r, const int *rn, const int *rd, MPI_Datatype rt, MPI_Comm c), (s, sn, sd, st, r, rn, rd, rt, c)) \
	X(MPI_COLL, MPI_Bcast, int, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c)) \
	X(MPI_COLL, MPI_Gather, int, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c)) \
	X(MPI_COLL, MPI_Scatter, int, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root, MPI_Comm c), (s, sn, st, r, rn, rt, root, c)) \
	X(MPI_COLL, MPI_Reduce, int, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c), (s, r, n, t, op, root, c)) \
	X(MPI_COLL, MPI_Allreduce, int, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (s, r, n, t, op, c)) \
	X(MPI_COLL, MPI_Reduce_scatter_block, int, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (s, r, n, t, op, c)) \
	X(MPI_COLL, MPI_Iallgather, int, (const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c, MPI_Request *q), (s, sn, st, r, rn, rt, c, q)) \
	X(MPI_COLL, MPI_Ibcast, int, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *q), (b, n, t, root, c, q)) \
	X(MPI_P2P, MPI_Send, int, (const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c), (b, n, t, to, tag, c)) \
	X(MPI_P2P, MPI_Ssend, int, (const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c), (b, n, t, to, tag, c)) \
	X(MPI_P2P, MPI_Recv, int, (void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Status *s), (b, n, t, from, tag, c, s)) \
	X(MPI_P2P, MPI_Isend, int, (const void *b, int n, MPI_Datatype t, int to, int tag, MPI_Comm c, MPI_Request *q), (b, n, t, to, tag, c, q)) \
	X(MPI_P2P, MPI_Irecv, int, (void *b, int n, MPI_Datatype t, int from, int tag, MPI_Comm c, MPI_Request *q), (b, n, t, from, tag, c, q)) \
	X(MPI_P2P, MPI_Sendrecv, int, (const void *s, int sn, MPI_Datatype st, int to, int stag, void *r, int rn, MPI_Datatype rt, int from, int rtag, MPI_Comm c, MPI_Status *x), (s, sn, st, to, stag, r, rn, rt, from, rtag, c, x))

#endif
