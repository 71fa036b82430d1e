/* analyze.h — a program read without compiling it, and a workload made
 * from one.
 *
 * The analyzer reads C, C++ and CUDA source as tokens (lex.c: no
 * preprocessor) and finds its host communication (analyze.c), written out
 * for people and prompts (analyze_report.c); it reads the communication
 * API a candidate may use instead from the headers installed here
 * (apiref.c); it makes a workload from a user's program (init.c) and says
 * what a run would find in one before it starts (try.c). It stands on the
 * evaluator's public side (workloads, sizes, one evaluation) and never
 * meets the cascade: `cuco analyze`, `cuco init`, `cuco check --try` and
 * the fast path's prompts call it.
 */
#ifndef CUCO_ANALYZE_H
#define CUCO_ANALYZE_H

#include "eval/eval.h"

/* ---- a program's source, read lexically (lex.c, analyze.c) --------------- */

/* What `cuco init` and the fast path learn from a C, C++ or CUDA program
 * without compiling it: its includes, the sizes it lets a build's -D
 * override, whether it has a main(), which libraries it talks to, and its
 * host communication: each NCCL and MPI call with its buffers, count and
 * datatype, its loop, the kernels and functions that write its send
 * buffer before it and read its receive buffer after it, and the streams.
 * The program's local headers (#include "…", beside it) are read too, for
 * the functions they define. What a lexical reading cannot see is said in
 * the report. */

#define CUCO_PROGRAM_INCLUDES 48
#define CUCO_PROGRAM_MACROS 32

typedef struct cuco_include {
	char name[128];          /* as written between the quotes or brackets */
	bool local;              /* "…" rather than <…> */
	int line;
} cuco_include;

typedef struct cuco_macro {
	char name[32];
	char value[96];          /* the text after the name */
	int line;
	bool guarded;            /* under #ifndef NAME: a build's -DNAME= overrides it */
} cuco_macro;

typedef struct cuco_program {
	char path[1024];
	int lines;
	int main_line;           /* 0: no main() */
	bool mpi, nccl, cuda, cublas;  /* included or called */
	bool device_api;         /* already uses the NCCL Device API (LSA/GIN) */
	int nincludes;
	cuco_include includes[CUCO_PROGRAM_INCLUDES];
	int nmacros;             /* #define NAME VALUE under #ifndef NAME: -D overrides it */
	cuco_macro macros[CUCO_PROGRAM_MACROS];
	int ncomm;               /* host communication calls found */
	struct an_analysis *an;    /* the tokens and findings behind the report */
} cuco_program;

/* Read and analyse the program at path (and its local headers). */
int cuco_program_read(const char *path, cuco_program **out, cuco_err *err);
/* The same on text in memory; dir is where its local headers are ("" none). */
int cuco_program_parse(const char *name, const char *dir, const char *text, size_t len,
	cuco_program **out, cuco_err *err);
void cuco_program_free(cuco_program *p);
/* The analysis for people and prompts: one numbered entry per call. The
 * size's variables (may be NULL) turn counts into bytes where they can. */
void cuco_program_report(const cuco_program *p, const cuco_size *size, int ranks, cuco_buf *out);
/* Whether it includes a header of that file name (in any folder). */
bool cuco_program_includes(const cuco_program *p, const char *name);
/* Whether a string literal of the program contains needle; *line where. */
bool cuco_program_prints(const cuco_program *p, const char *needle, int *line);

/* ---- the communication API's reference (apiref.c) ------------------------ */

/* Where NCCL is: $CUCO_NCCL_HOME, else $CUCO_CUDA_HOME, else /usr/local/cuda. */
void cuco_nccl_home(char *out, size_t size);
/* The declarations a program needs to communicate without the host, read
 * from the headers installed here, for the model: for the GPU families
 * NCCL's Device API (nccl_device.h and what it includes, plus nccl.h's
 * memory and window calls), trimmed to the backend ("lsa", "gin"; any
 * other value or NULL: both); for cpu-mpi, mpi.h's one-sided calls
 * ("rma": put/get windows, "shm": shared-memory windows, else both).
 * *from says which library and folder. CUCO_EENV when the headers are
 * missing; CUCO_ENOTFOUND for the one-GPU family, which has none. */
int cuco_api_reference(const cuco_workload *wl, const char *backend, cuco_buf *out, char *from,
	size_t size, cuco_err *err);

/* ---- a workload from a user's program (init.c) ---------------------------- */

typedef struct cuco_init_spec {
	const char *name;        /* the workload's name, and its folder's */
	const char *program;     /* the host-driven program: it becomes the baseline */
	const char *dir;         /* the folder to make; NULL: workloads/NAME */
	const char *seed;        /* the user's own first device-initiated version; NULL: none */
	const char *build, *run; /* the command templates; NULL: the family's */
	int ranks;               /* 0: guessed */
	int family;              /* a cuco_family, or -1: detected */
	bool trial_build;        /* build the baseline once before saying yes */
} cuco_init_spec;

/* Make a workload folder from a program (docs/workloads.md, "A user's own
 * program"): workload.json, the baseline, the local headers it includes,
 * the seed when one is given, context.md. Never over an existing folder; on an error nothing is left.
 * said gets one "- …" line per guess; *dir the folder made. */
int cuco_workload_init(const cuco_init_spec *s, cuco_buf *said, char *dir, size_t size,
	cuco_err *err);

/* What a run would find, found before one (try.c; cuco init, cuco check
 * --try): the baseline evaluated once as a run's first evaluation is
 * (built, run and verified, benchmarked), the seed run and verified under
 * its own directive, in a scratch run directory. Each finding is one line
 * for fn: a problem (the run would fail the baseline, or every candidate
 * of the seed's: a build error, a defence's refusal, a wrong answer), a
 * warning (one timed sample per run; a seed blind to most of the
 * directive), or what this machine could not run (no mpirun, no GPU).
 * CUCO_EENV with *err when it cannot even build them. */
typedef enum cuco_try_what { CUCO_TRY_BASELINE, CUCO_TRY_SEED } cuco_try_what;
typedef enum cuco_try_kind { CUCO_TRY_PROBLEM, CUCO_TRY_WARNING, CUCO_TRY_NOT_RUN } cuco_try_kind;
typedef void (*cuco_try_fn)(cuco_try_what what, cuco_try_kind kind, const char *line, void *arg);
int cuco_workload_try(const cuco_workload *wl, cuco_try_fn fn, void *arg, cuco_err *err);
/* Whether the seed reads fewer than half of the design space's defines
 * (itself and the local headers it includes): the tuner's children would
 * then be one program under many names. *why says which it does not
 * read. A seed that is the baseline (an A/A control) is never blind. */
bool cuco_seed_blind(const cuco_workload *wl, char *why, size_t size);

#endif
