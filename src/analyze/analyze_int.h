/* analyze_int.h — private to src/analyze: the lexer (lex.c), what
 * analyze.c finds in a program and analyze_report.c writes out, and what
 * apiref.c reads headers with. */
#ifndef CUCO_ANALYZE_INT_H
#define CUCO_ANALYZE_INT_H

#include "analyze/analyze.h"

#include <limits.h>

/* ---- lex.c: source as tokens ------------------------------------------------- */

typedef enum an_tok_kind {
	AN_TK_IDENT, AN_TK_NUMBER, AN_TK_STRING, AN_TK_CHAR, AN_TK_PUNCT
} an_tok_kind;

typedef struct an_tok {
	an_tok_kind kind;
	int line;
	const char *s;            /* into the text; a literal keeps its quotes */
	int len;
	int match;                /* ( [ {: the partner's index; -1 none */
} an_tok;

#define AN_LEX_INCLUDES 64
#define AN_LEX_MACROS 256

typedef struct an_lexed {
	const char *text;
	an_tok *toks;
	int ntoks, cap;
	int lines;
	int nincludes;
	cuco_include includes[AN_LEX_INCLUDES];
	int nmacros;              /* object-like #defines */
	cuco_macro macros[AN_LEX_MACROS];
} an_lexed;

/* Tokens of text (which must outlive lx); never fails. */
int an_lex(const char *text, size_t len, an_lexed *lx);
void an_lexed_free(an_lexed *lx);
bool an_tok_is(const an_tok *t, const char *s);

/* ---- analyze.c: what a program's tokens say ----------------------------------- */

#define MAX_FILES 16          /* the program and the local headers it reaches */
#define MAX_PARAMS 24
#define MAX_ARGS 24
#define MAX_BASES 12
#define MAX_SHOWN 6           /* producers or consumers listed per call */
#define FILE_MAX (4u << 20)

/* The host communication calls: X(name, kind, send, recv, count,
 * datatype, peer, stream), the last six as argument indices (-1: none).
 * MPI_IN_PLACE as a send buffer means the receive buffer. */
#define COMM_CALLS(X) \
	X(ncclAllGather, NCCL, 0, 1, 2, 3, -1, 5) \
	X(ncclAllReduce, NCCL, 0, 1, 2, 3, -1, 6) \
	X(ncclReduceScatter, NCCL, 0, 1, 2, 3, -1, 6) \
	X(ncclBroadcast, NCCL, 0, 1, 2, 3, 4, 6) \
	X(ncclBcast, NCCL, 0, 0, 1, 2, 3, 5) \
	X(ncclReduce, NCCL, 0, 1, 2, 3, 5, 7) \
	X(ncclAlltoAll, NCCL, 0, 1, 2, 3, -1, 5) \
	X(ncclGather, NCCL, 0, 1, 2, 3, 4, 6) \
	X(ncclScatter, NCCL, 0, 1, 2, 3, 4, 6) \
	X(ncclSend, NCCL_P2P, 0, -1, 1, 2, 3, 5) \
	X(ncclRecv, NCCL_P2P, -1, 0, 1, 2, 3, 5) \
	X(MPI_Allgather, MPI, 0, 3, 1, 2, -1, -1) \
	X(MPI_Allgatherv, MPI, 0, 3, 1, 2, -1, -1) \
	X(MPI_Iallgather, MPI, 0, 3, 1, 2, -1, -1) \
	X(MPI_Alltoall, MPI, 0, 3, 1, 2, -1, -1) \
	X(MPI_Alltoallv, MPI, 0, 4, 1, 3, -1, -1) \
	X(MPI_Ialltoall, MPI, 0, 3, 1, 2, -1, -1) \
	X(MPI_Bcast, MPI, 0, 0, 1, 2, 3, -1) \
	X(MPI_Ibcast, MPI, 0, 0, 1, 2, 3, -1) \
	X(MPI_Gather, MPI, 0, 3, 1, 2, 6, -1) \
	X(MPI_Scatter, MPI, 0, 3, 1, 2, 6, -1) \
	X(MPI_Reduce, MPI, 0, 1, 2, 3, 5, -1) \
	X(MPI_Allreduce, MPI, 0, 1, 2, 3, -1, -1) \
	X(MPI_Iallreduce, MPI, 0, 1, 2, 3, -1, -1) \
	X(MPI_Reduce_scatter_block, MPI, 0, 1, 2, 3, -1, -1) \
	X(MPI_Send, MPI_P2P, 0, -1, 1, 2, 3, -1) \
	X(MPI_Ssend, MPI_P2P, 0, -1, 1, 2, 3, -1) \
	X(MPI_Isend, MPI_P2P, 0, -1, 1, 2, 3, -1) \
	X(MPI_Recv, MPI_P2P, -1, 0, 1, 2, 3, -1) \
	X(MPI_Irecv, MPI_P2P, -1, 0, 1, 2, 3, -1) \
	X(MPI_Sendrecv, MPI_P2P, 0, 5, 1, 2, 3, -1) \
	X(MPI_Put, MPI_RMA, 0, -1, 1, 2, 3, -1) \
	X(MPI_Get, MPI_RMA, -1, 0, 1, 2, 3, -1) \
	X(MPI_Accumulate, MPI_RMA, 0, -1, 1, 2, 3, -1)

typedef enum comm_kind { NCCL, NCCL_P2P, MPI, MPI_P2P, MPI_RMA } comm_kind;

typedef struct comm_row {
	const char *name;
	comm_kind kind;
	int send, recv, count, type, peer, stream;
} comm_row;

typedef struct src_file {
	char path[PATH_MAX];
	char *text;
	an_lexed lx;
} src_file;

typedef struct param {
	char name[64];
	bool pointer, readonly, writes, reads;
} param;

typedef struct func {
	char name[64];
	int file, line;
	bool kernel;
	int parent;               /* a lambda: the function it sits in; -1 none */
	int name_tok;             /* a lambda: the token of its name */
	int body, body_end;       /* the braces */
	int nparams;
	param params[MAX_PARAMS];
} func;

/* EV_ACCESS: the code itself subscripting a buffer that a communication
 * call sends or receives (a verification loop, the sum after a gather),
 * one per buffer, line and function. */
typedef enum ev_kind { EV_COMM, EV_LAUNCH, EV_CALL, EV_COPY, EV_SYNC, EV_ACCESS } ev_kind;

typedef struct event {
	ev_kind kind;
	int tok, line, func;      /* in file 0 */
	char name[64];
	int row;                  /* EV_COMM: comm_rows; EV_COPY: copy_rows */
	int callee;               /* EV_CALL, EV_LAUNCH: funcs index, -1 not defined */
	int nargs;
	int args[MAX_ARGS][2];    /* token ranges [from, to) */
	char stream[64];          /* "" host; "default" for a launch without one */
	int nwrites, nreads;
	char writes[MAX_BASES][96], reads[MAX_BASES][96];
} event;

typedef struct loop {
	int func, start, end, line;
	const char *kw;
} loop;

typedef struct alias {
	int func;
	char name[96], base[96];
} alias;

typedef struct an_analysis {
	src_file files[MAX_FILES];
	int nfiles;
	func *funcs;
	int nfuncs;
	event *evs;
	int nevs;
	loop *loops;
	int nloops;
	alias *aliases;
	int naliases;
} an_analysis;

extern const comm_row an_comm_rows[];

/* Tokens [from, to) as text, spaced as a person writes them. */
void an_range_text(const an_lexed *lx, int from, int to, char *out, size_t size);
/* Argument k of an event as text ("" when it has none). */
void an_arg_text(const an_analysis *a, const event *e, int k, char *out, size_t size);
/* The base of the expression [from, to) (see analyze.c). */
void an_base_of(const an_lexed *lx, int from, int to, char *out, size_t size);
/* The innermost loop of function fi around token t; NULL when none. */
const loop *an_loop_around(const an_analysis *a, int fi, int t);
/* The file name of a path, without its folders. */
const char *an_file_name(const char *path);

#endif
