/* cuco_frame.c — the trusted frame of a refereed CPU (Open MPI) workload:
 * main(), MPI, the channel to the referee, and the calls into the
 * program (cuco_step.h). Compiled apart from the program and linked with
 * its checked object, so no text of the program comes before or after a
 * line of it.
 *
 * The frame runs in the program's process, so the program can reach all
 * of it: nothing the verdict rests on is here. It maps this rank's
 * channel file (cuco_channel.h), says it is attached, waits until the
 * referee has unlinked every rank's file, runs the program's setup, and
 * then, step by step, waits for the referee's release, runs the step and
 * says it is done. The referee draws the inputs, keeps the time and
 * checks the outputs, in a process the program cannot reach, and holds
 * the stage frozen between steps (docs/trust.md, "The referee").
 *
 * Its own account — the phases the program marks and the host calls the
 * interposer (cuco-count.so, when preloaded) counts inside steps — goes
 * to the channel for people to read, never for the verdict.
 *
 * Exit status: 0 after the referee's STOP, 2 when the channel is missing
 * or malformed (run it through cuco, or scripts/referee), 1 when the
 * program's setup failed. */
#include "cuco_chan_rank.h"
#include "cuco_step.h"

#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#define ATTACH_TRIES 400                /* 10 ms apart: the referee makes the files first */

const int cuco_mpi_thread __attribute__((weak)) = MPI_THREAD_SINGLE;

static cuco_chan *chan;
static int timing;
static double phase_start[CUCO_PH_COUNT];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cuco_phase_begin(cuco_phase_id p)
{
	if ((unsigned)p < CUCO_PH_COUNT)
		phase_start[p] = now();
}

void cuco_phase_end(cuco_phase_id p)
{
	if (timing && (unsigned)p < CUCO_PH_COUNT)
		chan->phase[p] += now() - phase_start[p];
}

/* ---- the channel ------------------------------------------------------------- */

static void fail(int code, const char *fmt, const char *arg)
{
	fprintf(stderr, "frame: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	MPI_Abort(MPI_COMM_WORLD, code);
	exit(code);
}

static cuco_chan *attach(int rank, int nranks)
{
	const char *why = NULL;
	char path[4096];
	cuco_chan *c = cuco_chan_attach(rank, nranks, CUCO_IO_MAX, ATTACH_TRIES, &why, path, sizeof path);
	if (!c)
		fail(2, why, path);
	return c;
}

static void view(cuco_chan *c, cuco_io *io)
{
	io->nin = (int)c->nin;
	io->nout = (int)c->nout;
	for (uint32_t i = 0; i < c->nin; i++) {
		io->in[i] = (const char *)c + c->in[i].offset;
		io->in_bytes[i] = (size_t)c->in[i].bytes;
	}
	for (uint32_t i = 0; i < c->nout; i++) {
		io->out[i] = (char *)c + c->out[i].offset;
		io->out_bytes[i] = (size_t)c->out[i].bytes;
	}
}

/* ---- host calls, as the interposer counts them --------------------------------- */

typedef struct counter {
	int (*window)(int on);
	int (*names)(const char *const **names);
	long (*of)(int i);
} counter;

static void counter_find(counter *k)
{
	*(void **)&k->window = dlsym(RTLD_DEFAULT, "cuco_count_window");
	*(void **)&k->names = dlsym(RTLD_DEFAULT, "cuco_count_names");
	*(void **)&k->of = dlsym(RTLD_DEFAULT, "cuco_count_of");
	if (!k->names || !k->of)
		k->window = NULL;
}

static void counter_report(const counter *k, cuco_chan *c)
{
	const char *const *names;
	int n = k->window ? k->names(&names) : 0;
	c->host_calls = n > 0 ? 0 : -1;
	size_t used = 0;
	c->host_calls_by[0] = '\0';
	for (int i = 0; i < n; i++) {
		long v = k->of(i);
		c->host_calls += v;
		if (v && used < sizeof c->host_calls_by) {
			int w = snprintf(c->host_calls_by + used, sizeof c->host_calls_by - used, "%s%s=%ld",
				used ? " " : "", names[i], v);
			used += w > 0 ? (size_t)w : 0;
		}
	}
}

/* ---- main -------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	int provided, rank, nranks;
	/* Not dumpable: another rank of the same user cannot read this one's
	 * memory under /proc (its inputs, for one) without CAP_SYS_PTRACE. So
	 * Open MPI's single copy between ranks (cross-memory attach, the
	 * same access) is off, before MPI_Init reads it. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
	MPI_Init_thread(&argc, &argv, cuco_mpi_thread, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (argc > 1)
		fail(2, "takes no arguments (the referee sets the steps), not '%s'", argv[1]);
	if (provided < cuco_mpi_thread)
		fail(2, "MPI gives a lower thread level than the program asks for (%s)",
			cuco_mpi_thread == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "cuco_mpi_thread");
	chan = attach(rank, nranks);
	cuco_chan_put(&chan->state, CUCO_CHAN_ATTACHED);
	cuco_chan_await(&chan->go, 0);

	cuco_io io = { .rank = rank, .nranks = nranks, .step = -1 };
	view(chan, &io);
	void *state = NULL;
	if (cuco_setup(&io, &state) != 0)
		fail(1, "%s", "the program's setup failed");
	counter k;
	counter_find(&k);
	cuco_chan_put(&chan->state, CUCO_CHAN_READY);

	for (uint32_t seen = 0;;) {
		uint32_t r = seen = cuco_chan_await(&chan->release, seen);
		if (r == CUCO_CHAN_STOP)
			break;
		io.step = (int)(r - 1);
		timing = r > chan->warmup;
		if (k.window)
			k.window(1);
		cuco_step(state, &io);
		if (k.window)
			k.window(0);
		timing = 0;
		counter_report(&k, chan);
		cuco_chan_put(&chan->state, CUCO_CHAN_DONE + r - 1);
	}
	cuco_teardown(state, &io);
	MPI_Finalize();
	return 0;
}
