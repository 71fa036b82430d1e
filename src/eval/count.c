/* count.c — cuco-count.so, the host-call interposer the evaluator preloads
 * into a candidate's ranks (LD_PRELOAD; for MPI the PMPI profiling
 * interface). Each call of hostcalls.h is counted while the harness holds
 * the counting window open — only around the program's steps, so the
 * harness's own MPI_Allreduce calls between steps never count — and is
 * then passed on to the real function (dlsym RTLD_NEXT: NCCL's own, or
 * MPI's PMPI_ name).
 *
 * The trusted harnesses find it with dlsym(RTLD_DEFAULT, ...), sum each
 * count over the ranks and report them in their sealed verdict; without
 * it they report none.
 * Built without linking NCCL or MPI: the evaluator preloads it only into
 * programs whose libraries match (trust.c). */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

#if CUCO_COUNT_MPI
#include <mpi.h>
#endif

#include "hostcalls.h"

enum {
#define INDEX(kind, name, ret, params, args) COUNT_##name,
	CUCO_NCCL_CALLS(INDEX)
#if CUCO_COUNT_MPI
	CUCO_MPI_CALLS(INDEX)
#endif
#undef INDEX
	COUNT_N
};

static const char *const names[COUNT_N] = {
#define NAME(kind, name, ret, params, args) #name,
	CUCO_NCCL_CALLS(NAME)
#if CUCO_COUNT_MPI
	CUCO_MPI_CALLS(NAME)
#endif
#undef NAME
};

static atomic_long counts[COUNT_N];
static atomic_int window;

int cuco_count_window(int on);
int cuco_count_names(const char *const **out);
long cuco_count_of(int i);

/* Open (1) or close (0) the window in which calls count. */
int cuco_count_window(int on)
{
	atomic_store(&window, on);
	return 0;
}

/* The counted calls' names (the harness sums each over the ranks). */
int cuco_count_names(const char *const **out)
{
	*out = names;
	return COUNT_N;
}

/* Calls of names[i] counted so far. */
long cuco_count_of(int i)
{
	return i >= 0 && i < COUNT_N ? atomic_load(&counts[i]) : 0;
}

static void hit(int i)
{
	if (atomic_load_explicit(&window, memory_order_relaxed))
		atomic_fetch_add_explicit(&counts[i], 1, memory_order_relaxed);
}

/* The real function behind name: NCCL's own symbol further down the
 * search order, or MPI's profiling entry point. */
static void *real(const char *name, const char *pmpi)
{
	return dlsym(RTLD_NEXT, pmpi ? pmpi : name);
}

#define WRAP_NCCL(kind, name, ret, params, args) \
	ret name params; \
	ret name params \
	{ \
		static ret (*fn) params; \
		hit(COUNT_##name); \
		if (!fn) \
			*(void **)&fn = real(#name, NULL); \
		return fn ? fn args : 5; /* ncclInvalidUsage: no NCCL behind us */ \
	}
CUCO_NCCL_CALLS(WRAP_NCCL)

#if CUCO_COUNT_MPI
#define WRAP_MPI(kind, name, ret, params, args) \
	ret name params \
	{ \
		static ret (*fn) params; \
		hit(COUNT_##name); \
		if (!fn) \
			*(void **)&fn = real(#name, "P" #name); \
		return fn ? fn args : MPI_ERR_INTERN; \
	}
CUCO_MPI_CALLS(WRAP_MPI)
#endif
