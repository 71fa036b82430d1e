/* cuco_referee.c — the referee: where a refereed workload's verdict is
 * decided, in a process no candidate code runs in (docs/trust.md, "The
 * referee").
 *
 * DESIGN. A candidate is hostile and runs with every byte of its own
 * process in reach: a clock, a verifier, a key or a seed kept there can
 * be read or rewritten. So the referee keeps all of them in a process of
 * its own, which the candidate's ranks cannot see (cuco starts it outside
 * their sandbox and their PID namespace), and trusts from them only what
 * it can check:
 *
 * - Inputs. Every step's inputs are drawn here from seeds drawn here
 *   (getrandom) just before the step, each rank's apart, and written into
 *   the ranks' channel files (cuco_channel.h). Nothing a rank saw before
 *   tells it the next step's values, so no answer can be kept or computed
 *   ahead; nor do its values tell another rank's (a rank can recover the
 *   seed of its own: cuco_referee.h).
 * - Outputs. Poisoned before every step; after it, while the stage is
 *   frozen, each rank's outputs are checked against the workload's own
 *   reference (ref_check), on rows drawn after the step. Every step is
 *   checked, warm-ups too.
 * - Time. A step's time is this process's monotonic clock from the
 *   release (inputs in place) to the moment the last rank said it was
 *   done, and at that moment the stage's control group is frozen, until
 *   the next step's release: nothing of it runs past "done" (work a rank
 *   left running is cut off, its outputs checked as they are), nor while
 *   the referee checks and draws, so no work can hide in the gaps, no
 *   output be finished late, no input be read early.
 * - The channels. A rank's channel header is this process's: the layout
 *   is read from its own copy, and a rank that rewrites it is refused.
 *   No process of the stage may hold two ranks' channel files, nor one
 *   rank's file outside that rank's family of processes: another rank's
 *   inputs are not the program's to read (check_holders).
 * - A GPU workload's arrays (the layout's `device`) are device memory of
 *   this process's own CUDA context, which the rank maps by IPC handles:
 *   filled and poisoned here, and at the rank's "done" the rows to check
 *   are captured on this context (ref_capture) before the stage is
 *   frozen. The GPU runs one context at a time, so the capture waits for
 *   any work the rank left running: that wait, beyond an idle capture's,
 *   is added to the step's time, and past CUCO_REF_LEFT_BOUND_S it is
 *   work left running. What runs after the capture writes nothing the
 *   referee reads; and once the stage is frozen (it can launch nothing
 *   more), a probe kernel must not wait past the bound either, after the
 *   step and again before the next release, so no work of the stage's
 *   stays on the GPU into the gap, to see the next step's inputs before
 *   its release. The stage is refused once CUCO_REF_OVER_STEPS probes were
 *   past the bound (over_bound: one alone can be another process's).
 * - The verdict: one line on stdout, `CUCO_REFEREE {json}`, read by cuco
 *   from a pipe the stage never holds.
 *
 * What the ranks write into the channel besides outputs and "done" (the
 * phases they mark, the host calls their interposer counted) is their
 * own account, passed on as such.
 *
 * Two ways to run:
 *   referee --channel DIR --ranks N --warmup W --reps R --tolerance T [--owner UID:GID]
 *           [--trace] [--ready]
 *       beside a stage cuco starts (--owner: the user its ranks run as,
 *       who alone gets their channel files); stdin carries one line, the stage's
 *       control group ("cgroup v1 FREEZER_DIR", anything after it unread,
 *       "cgroup v2 DIR" or "cgroup none"), and its end of file says the
 *       stage ended. --ready: a line `CUCO_REFEREE_READY` on stdout once the
 *       channel files are made (over ssh, cuco starts the stage after it).
 *   referee [--channel DIR] ... --run COMMAND...
 *       by hand: runs the command itself (its output to stderr), with no
 *       control group, so the gaps are not frozen (the verdict says so).
 * Exit status: 0 a verdict was given (correct or not), 1 no verdict (the
 * stage ended first, or a rank misbehaved in the handshake), 2 bad usage
 * or no channel could be made. */
#include "cuco_referee.h"

/* A GPU workload's referee links these (../gpu-common/cuco_referee_gpu.cu
 * and its own ref_capture); a CPU workload's does not. */
#pragma weak ref_capture
#pragma weak ref_tolerance
#pragma weak cuco_ref_gpu_init
#pragma weak cuco_ref_gpu_alloc
#pragma weak cuco_ref_gpu_poison
#pragma weak cuco_ref_gpu_sync
#pragma weak cuco_ref_gpu_probe

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RANKS CUCO_REF_RANKS
#define MAX_STEPS 1000
#define WAIT_SLICE_NS 50000000L        /* look at the stage's end every 50 ms */
#define STALL_S 600.0                  /* a rank silent this long with the stage alive: give up */

typedef enum { CG_NONE, CG_V1, CG_V2 } cg_kind;

typedef struct referee {
	const char *dir;
	int nranks, warmup, reps;
	double tolerance;
	cuco_chan *chan[MAX_RANKS];
	cuco_chan head[MAX_RANKS];         /* each channel's header as written here */
	dev_t dev[MAX_RANKS];              /* each channel's file */
	ino_t ino[MAX_RANKS];
	cuco_ref_layout layout[MAX_RANKS];
	void *dev_in[MAX_RANKS][CUCO_CHAN_ARRAYS], *dev_out[MAX_RANKS][CUCO_CHAN_ARRAYS];
	bool gpu;                          /* the CUDA context is made */
	int sets;                          /* launches a step (the layout's sets): a sample is a launch's */
	double idle_capture_s;             /* an idle GPU's capture */
	double left_max_s;                 /* the most work left running past a "done", for the log */
	int over;                          /* GPU probes (capture, frozen) past the bound so far */
	char first_over[320];              /* the first of them, said (fits suspect with its words) */
	char environment[300];             /* why there is no GPU to referee on */
	char path[MAX_RANKS][PATH_MAX];
	cuco_ref_seeds seeds;
	/* the stage */
	pid_t child;                       /* --run: the command; else 0 */
	bool ended;                        /* the stage is gone */
	cg_kind cg;
	char freeze[PATH_MAX], frozen[PATH_MAX], procs[PATH_MAX];
	/* what was found */
	double sample[MAX_STEPS];
	int nsamples;
	double max_error;
	long checks;
	char why[400], suspect[400], incomplete[300];
	double freeze_s;                   /* time spent freezing and thawing, for the record */
	bool trace;                        /* --trace: a line per step on stderr */
	bool ready;                        /* --ready: say so on stdout once the channels are made */
	bool owned;                        /* --owner: the ranks' user, who gets their files */
	uid_t uid;
	gid_t gid;
	bool attached;                     /* every rank mapped its channel: the stage started */
} referee;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t fresh(void)
{
	uint64_t x;
	if (getrandom(&x, sizeof x, 0) != (ssize_t)sizeof x) {
		perror("referee: getrandom");
		exit(2);
	}
	return x;
}

/* ---- the stage's control group --------------------------------------------------- */

static bool write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

static bool read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n > 0;
}

/* Freeze (or thaw) the stage and wait until it is: v1's freezer.state
 * says FROZEN, v2's cgroup.events says "frozen 1". */
static bool stage_freeze(referee *r, bool on)
{
	if (r->cg == CG_NONE)
		return true;
	double t0 = now();
	const char *want = r->cg == CG_V1 ? (on ? "FROZEN" : "THAWED") : (on ? "frozen 1" : "frozen 0");
	if (!write_text(r->freeze, r->cg == CG_V1 ? (on ? "FROZEN" : "THAWED") : (on ? "1" : "0")))
		return false;
	char buf[512];
	for (int i = 0; i < 200000; i++) {
		if (!read_text(r->frozen, buf, sizeof buf))
			return false;
		if (strstr(buf, want)) {
			r->freeze_s += now() - t0;
			return true;
		}
		if (i > 100)
			nanosleep(&(struct timespec){ 0, 20000L }, NULL);
	}
	return false;
}

/* The first line of stdin: where the stage's control group is. */
static void read_cgroup(referee *r)
{
	char line[3 * PATH_MAX], kind[8] = "", a[PATH_MAX] = "";
	if (!fgets(line, sizeof line, stdin)) {
		r->ended = true;
		return;
	}
	int n = sscanf(line, "cgroup %7s %4095s", kind, a);
	if (n >= 2 && strcmp(kind, "v2") == 0) {
		r->cg = CG_V2;
		snprintf(r->freeze, sizeof r->freeze, "%s/cgroup.freeze", a);
		snprintf(r->frozen, sizeof r->frozen, "%s/cgroup.events", a);
		snprintf(r->procs, sizeof r->procs, "%s/cgroup.procs", a);
	} else if (n == 2 && strcmp(kind, "v1") == 0) {
		r->cg = CG_V1;
		snprintf(r->freeze, sizeof r->freeze, "%s/freezer.state", a);
		snprintf(r->frozen, sizeof r->frozen, "%s/freezer.state", a);
		snprintf(r->procs, sizeof r->procs, "%s/cgroup.procs", a);
	}
}

/* Whether the stage has ended: its command exited (--run), or cuco
 * closed stdin. */
static bool stage_ended(referee *r)
{
	if (r->ended)
		return true;
	if (r->child > 0) {
		int status;
		r->ended = waitpid(r->child, &status, WNOHANG) == r->child;
	} else {
		struct pollfd p = { .fd = 0, .events = POLLIN };
		char c;
		r->ended = poll(&p, 1, 0) > 0 && read(0, &c, 1) <= 0;
	}
	return r->ended;
}

/* ---- the channel ----------------------------------------------------------------------- */

static size_t page_up(size_t n)
{
	return (n + CUCO_CHAN_PAGE - 1) / CUCO_CHAN_PAGE * CUCO_CHAN_PAGE;
}

/* The arrays in the file from *at on, or in device memory (dev[i]),
 * named by their handles. */
static int arrays(cuco_chan_array *dst, const cuco_ref_array *src, int n, size_t *at, void **dev,
	char *why, size_t size)
{
	for (int i = 0; i < n; i++) {
		dst[i].bytes = src[i].bytes;
		dst[i].per_step = src[i].per_step;
		snprintf(dst[i].name, sizeof dst[i].name, "%s", src[i].name);
		if (dev) {
			dst[i].device = 1;
			if (cuco_ref_gpu_alloc(src[i].bytes, &dev[i], dst[i].handle, why, size) != 0)
				return -1;
			continue;
		}
		dst[i].offset = *at;
		*at += page_up(src[i].bytes);
	}
	return 0;
}

/* The arrays, where this process put them: never where the channel's
 * header, which the rank can rewrite, says they are. */
static void *in_of(const referee *r, int q, int i)
{
	return r->layout[q].device ? r->dev_in[q][i] : (char *)r->chan[q] + r->head[q].in[i].offset;
}

static void *out_of(const referee *r, int q, int i)
{
	return r->layout[q].device ? r->dev_out[q][i] : (char *)r->chan[q] + r->head[q].out[i].offset;
}

/* A device layout's CUDA context, made once; false, with r->environment,
 * where there is no GPU (or no GPU runtime linked). */
static bool gpu_ready(referee *r)
{
	if (r->gpu)
		return true;
	if (!cuco_ref_gpu_init)
		snprintf(r->environment, sizeof r->environment, "the referee has device arrays but no GPU "
			"runtime linked (cuco_referee_gpu.cu)");
	else {
		/* What the runtime says is kept only when it failed. */
		char why[sizeof r->environment] = "";
		if (cuco_ref_gpu_init(why, sizeof why) == 0)
			r->gpu = true;
		else
			snprintf(r->environment, sizeof r->environment, "%s", why[0] ? why : "no GPU");
	}
	return r->gpu;
}

/* A rank whose channel header (the layout, up to the control words) is
 * no longer what this process wrote there, or -1. */
static int header_rewritten(const referee *r)
{
	for (int q = 0; q < r->nranks; q++)
		if (memcmp(r->chan[q], &r->head[q], offsetof(cuco_chan, go)) != 0)
			return q;
	return -1;
}

static int make_rank(referee *r, int q)
{
	cuco_ref_layout *l = &r->layout[q];
	memset(l, 0, sizeof *l);
	ref_layout(q, r->nranks, l);
	l->sets = l->sets > 1 ? l->sets : 1;
	r->sets = l->sets;  /* every rank's is the workload's */
	if (l->nin > CUCO_CHAN_ARRAYS || l->nout > CUCO_CHAN_ARRAYS) {
		fprintf(stderr, "referee: rank %d: more than %d arrays\n", q, CUCO_CHAN_ARRAYS);
		return -1;
	}
	size_t bytes = page_up(sizeof(cuco_chan));
	cuco_chan head = { .magic = CUCO_CHAN_MAGIC, .version = CUCO_CHAN_VERSION, .rank = (uint32_t)q,
		.nranks = (uint32_t)r->nranks, .nin = (uint32_t)l->nin, .nout = (uint32_t)l->nout,
		.warmup = (uint32_t)r->warmup, .steps = (uint32_t)(r->warmup + r->reps), .host_calls = -1 };
	/* Device memory first: the file, once there, is the rank's to read. */
	if (l->device && !gpu_ready(r))
		return -1;
	char why[200] = "";
	if (arrays(head.in, l->in, l->nin, &bytes, l->device ? r->dev_in[q] : NULL, why, sizeof why) != 0
		|| arrays(head.out, l->out, l->nout, &bytes, l->device ? r->dev_out[q] : NULL, why, sizeof why) != 0) {
		snprintf(r->environment, sizeof r->environment, "rank %d's device arrays: %s", q, why);
		return -1;
	}
	head.bytes = bytes;
	snprintf(r->path[q], sizeof r->path[q], "%s/%d", r->dir, q);
	/* A new name (nothing placed there before is opened or followed), its
	 * ranks' user's alone: the stage user's when they run as one (--owner),
	 * never anyone's by the mode's group or world bits. */
	int fd = open(r->path[q], O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat sb;
	if (fd < 0 || (r->owned && fchown(fd, r->uid, r->gid) != 0) || ftruncate(fd, (off_t)bytes) != 0
			|| fstat(fd, &sb) != 0) {
		fprintf(stderr, "referee: %s: %s\n", r->path[q], strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "referee: %s: mmap: %s\n", r->path[q], strerror(errno));
		return -1;
	}
	memcpy(p, &head, sizeof head);
	r->head[q] = head;
	r->dev[q] = sb.st_dev;
	r->ino[q] = sb.st_ino;
	r->chan[q] = p;
	for (int i = 0; i < l->nin; i++)
		if (!l->in[i].per_step)
			ref_fill(q, r->nranks, i, &r->seeds, in_of(r, q, i));
	return 0;
}

static uint32_t word(cuco_chan_word *w)
{
	return __atomic_load_n(&w->v, __ATOMIC_ACQUIRE);
}

static void put(cuco_chan_word *w, uint32_t v)
{
	__atomic_store_n(&w->v, v, __ATOMIC_RELEASE);
	syscall(SYS_futex, &w->v, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Wait until every rank's state is at least want. False when the stage
 * ended first, or a rank stayed silent past STALL_S; *late then names it. */
static bool await_all(referee *r, uint32_t want, int *late)
{
	double start = now();
	for (int q = 0; q < r->nranks; q++) {
		uint32_t v;
		while ((v = word(&r->chan[q]->state)) < want) {
			if (stage_ended(r) || now() - start > STALL_S) {
				*late = q;
				return false;
			}
			struct timespec slice = { 0, WAIT_SLICE_NS };
			syscall(SYS_futex, &r->chan[q]->state.v, FUTEX_WAIT, v, &slice, NULL, 0);
		}
	}
	return true;
}

static void release_all(referee *r, uint32_t v)
{
	for (int q = 0; q < r->nranks; q++)
		put(&r->chan[q]->release, v);
}

/* ---- steps ------------------------------------------------------------------------------ */

/* The seeds as rank q's fill and check see them: step[] its own. */
static const cuco_ref_seeds *seeds_of(referee *r, int q)
{
	memcpy(r->seeds.step, r->seeds.rank_step[q], sizeof r->seeds.step);
	return &r->seeds;
}

static void draw_step(referee *r)
{
	for (int q = 0; q < r->nranks; q++)
		for (int k = 0; k < CUCO_REF_STREAMS; k++)
			r->seeds.rank_step[q][k] = fresh();
	for (int q = 0; q < r->nranks; q++) {
		const cuco_ref_layout *l = &r->layout[q];
		for (int i = 0; i < l->nin; i++)
			if (l->in[i].per_step)
				ref_fill(q, r->nranks, i, seeds_of(r, q), in_of(r, q, i));
		for (int i = 0; i < l->nout; i++) {
			if (l->device)
				cuco_ref_gpu_poison(out_of(r, q, i), l->out[i].bytes);
			else
				memset(out_of(r, q, i), 0xff, l->out[i].bytes);  /* NaN for floats */
		}
	}
	if (r->gpu)
		cuco_ref_gpu_sync();  /* in place before the release */
}

static const char *step_words(const referee *r, int step, char *buf, size_t size)
{
	snprintf(buf, size, "step %d of %d (%s)", step + 1, r->warmup + r->reps,
		step < r->warmup ? "a warm-up" : "timed");
	return buf;
}

/* Check every rank's outputs of the step just done, on the rows pick
 * chooses (drawn after the step). */
static void check_step(referee *r, int step, uint64_t pick)
{
	for (int q = 0; q < r->nranks && !*r->why && !*r->suspect; q++) {
		void *outs[CUCO_CHAN_ARRAYS];
		for (int i = 0; i < r->layout[q].nout; i++)
			outs[i] = out_of(r, q, i);
		long checked = 0;
		double e = ref_check(q, r->nranks, seeds_of(r, q), outs, pick, &checked);
		if (isnan(e))
			e = INFINITY;
		r->checks += checked > 0;
		if (e > r->max_error)
			r->max_error = e;
		if (!(e > r->tolerance))
			continue;
		char s[64], what[96];
		if (isinf(e))
			snprintf(what, sizeof what, "output left unwritten (poison or NaN in it)");
		else
			snprintf(what, sizeof what, "max error %.3g", e);
		if (step == 0)
			snprintf(r->why, sizeof r->why, "verification: %s on rank %d, %s", what, q,
				step_words(r, step, s, sizeof s));
		else
			snprintf(r->suspect, sizeof r->suspect, "verification: %s, on fresh inputs: %s on rank "
				"%d, though step 1 was right: work skipped, or results kept from other steps", step_words(r,
				step, s, sizeof s), what, q);
	}
}

/* The channels' headers, after the step just done: the layout in them is
 * this process's, and a rank that rewrote it was after the referee's
 * reads and writes (which no longer follow it: in_of, out_of). */
static void check_headers(referee *r, int step)
{
	int q = header_rewritten(r);
	char s[64];
	if (q >= 0 && !*r->suspect)
		snprintf(r->suspect, sizeof r->suspect, "channel: rank %d rewrote its channel's header (the layout "
			"the referee wrote there), by the end of %s", q, step_words(r, step, s, sizeof s));
}

/* A process of the stage, and the ranks whose channel files it holds
 * open or mapped (a bit a rank). */
typedef struct holder {
	long pid, ppid;
	uint64_t files;
} holder;

/* The rank whose channel file is dev:ino, or -1. */
static int rank_of_file(const referee *r, dev_t dev, ino_t ino)
{
	for (int q = 0; q < r->nranks; q++)
		if (r->dev[q] == dev && r->ino[q] == ino)
			return q;
	return -1;
}

/* The channel files process h->pid holds: its descriptors, its mappings.
 * False when its /proc entries could not be read (a zombie, which holds
 * nothing, or a process beyond this one's permissions). */
static bool held_files(const referee *r, holder *h)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%ld/stat", h->pid);
	const char *p = read_text(path, line, sizeof line) ? strrchr(line, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %ld", &h->ppid) != 1)
		return false;
	snprintf(path, sizeof path, "/proc/%ld/fd", h->pid);
	DIR *d = opendir(path);
	if (!d)
		return false;
	for (struct dirent *e; (e = readdir(d));) {
		char fd[PATH_MAX];
		struct stat sb;
		snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
		int q = e->d_name[0] != '.' && stat(fd, &sb) == 0 ? rank_of_file(r, sb.st_dev, sb.st_ino) : -1;
		if (q >= 0)
			h->files |= 1ull << q;
	}
	closedir(d);
	snprintf(path, sizeof path, "/proc/%ld/maps", h->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof line, f)) {
		unsigned maj, mnr;
		unsigned long long ino;
		int q = sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &mnr, &ino) == 3
			? rank_of_file(r, makedev(maj, mnr), (ino_t)ino) : -1;
		if (q >= 0)
			h->files |= 1ull << q;
	}
	fclose(f);
	return true;
}

/* The first of h[0..n) whose parent chain, through processes that hold a
 * channel file, leads to h[i]'s: its family's root. */
static int family_of(const holder *h, int n, int i)
{
	for (int hops = 0; hops < n; hops++) {
		int up = -1;
		for (int k = 0; k < n && up < 0; k++)
			if (h[k].pid == h[i].ppid && h[k].files)
				up = k;
		if (up < 0)
			return i;
		i = up;
	}
	return i;
}

/* Whether every rank's channel is reached by its own rank only: no
 * process holds two ranks' files, and the processes that hold one rank's
 * file are one family (a rank and what it forked). Another rank's inputs
 * read from its channel are communication nothing paid for; the files
 * are unlinked before any program code runs, so they were opened by code
 * run before main (a constructor, a libc function the frame calls,
 * defined by the program) or through /proc. Says why not into
 * r->suspect; a process whose /proc entries cannot be read is passed
 * over. */
static void check_holders(referee *r, int step)
{
	holder *h = NULL;
	int n = 0, cap = 0;
	long pid;
	FILE *f = r->cg != CG_NONE ? fopen(r->procs, "re") : NULL;
	while (f && fscanf(f, "%ld", &pid) == 1) {
		if (n == cap && !(h = realloc(h, (size_t)(cap = 2 * cap + 64) * sizeof *h))) {
			perror("referee: realloc");
			exit(2);
		}
		h[n] = (holder){ .pid = pid };
		n += held_files(r, &h[n]);
	}
	if (f)
		fclose(f);
	char s[64], why[160] = "";
	for (int i = 0; i < n && !*why; i++)
		if (h[i].files & (h[i].files - 1)) {
			int a = __builtin_ctzll(h[i].files), b = __builtin_ctzll(h[i].files & (h[i].files - 1));
			snprintf(why, sizeof why, "a process of the stage holds the channel files of ranks %d and %d", a,
				b);
		}
	for (int i = 0; i < n && !*why; i++)
		for (int k = 0; k < n && !*why; k++)
			if ((h[i].files & h[k].files) && family_of(h, n, i) != family_of(h, n, k))
				snprintf(why, sizeof why, "rank %d's channel file is held by two processes of the stage "
					"that are not one rank's", __builtin_ctzll(h[i].files & h[k].files));
	if (*why && !*r->suspect)
		snprintf(r->suspect, sizeof r->suspect, "channel: %s (after %s): a rank's channel reached from "
			"outside that rank (another rank reading its arrays, or a process put outside its family)", why,
			step < 0 ? "the setup" : step_words(r, step, s, sizeof s));
	free(h);
}

/* Freeze or thaw, or say why not. */
static bool hold(referee *r, bool on)
{
	if (stage_freeze(r, on))
		return true;
	snprintf(r->incomplete, sizeof r->incomplete, "the stage's control group could not be %s: %s",
		on ? "frozen" : "thawed", strerror(errno));
	return false;
}

/* The last rank said step `step` was done at t_done: freeze the stage
 * there, so that nothing of it runs past "done" — a rank that says it
 * early and works on is cut off, and the outputs are checked as they
 * stand. False when it cannot be frozen. */
static bool stop_at_done(referee *r, int step, double t_release, double t_done)
{
	if (!hold(r, true))
		return false;
	if (r->trace && r->cg != CG_NONE)
		fprintf(stderr, "referee: step %d: %.1f us from release to done (%d launches), frozen %.1f us "
			"after done\n", step + 1, (t_done - t_release) * 1e6, r->sets, (now() - t_done) * 1e6);
	else if (r->trace)  /* "cgroup none": nothing to freeze */
		fprintf(stderr, "referee: step %d: %.1f us from release to done (%d launches), not frozen\n",
			step + 1, (t_done - t_release) * 1e6, r->sets);
	return true;
}

/* Every rank's rows to check, out of the ranks' reach (ref_capture). */
static void capture_all(referee *r, uint64_t pick)
{
	for (int q = 0; q < r->nranks; q++) {
		void *outs[CUCO_CHAN_ARRAYS];
		for (int i = 0; i < r->layout[q].nout; i++)
			outs[i] = out_of(r, q, i);
		ref_capture(q, r->nranks, outs, pick);
	}
}

/* A GPU probe past the bound (what: said). One is not a refusal: the
 * wait of work left running is the step's time anyway, and another
 * process's moment on the GPU can make an honest step's capture wait
 * (573 us once in a `cuco run rmsnorm` on an H200, against ~150-200 us
 * for the rest). A stage is refused once CUCO_REF_OVER_STEPS of its probes
 * were past the bound, or every step's where it has fewer: an attack
 * that wins in fewer steps than that cannot move the median. */
static void over_bound(referee *r, const char *what)
{
	int steps = r->warmup + r->reps;
	if (r->over++ == 0)
		snprintf(r->first_over, sizeof r->first_over, "%s", what);
	if (r->over >= (steps < CUCO_REF_OVER_STEPS ? steps : CUCO_REF_OVER_STEPS) && !*r->suspect)
		snprintf(r->suspect, sizeof r->suspect, "probe: %s%s", r->first_over,
			r->over > 1 ? " (and again past the bound since)" : "");
}

/* A GPU step just said done at t_done: capture what will be checked
 * (every rank's, in turn) and time the capture's wait. Work the ranks
 * left running is the step's, and past the bound refuses it. The step's
 * time. */
static double capture(referee *r, int step, double t_release, double t_done, uint64_t pick)
{
	capture_all(r, pick);
	double left, t = cuco_ref_gpu_step(t_release, t_done, now(), r->idle_capture_s, &left);
	char s[64];
	if (left > r->left_max_s)
		r->left_max_s = left;
	if (r->trace)
		fprintf(stderr, "referee: step %d: the capture waited %.1f us beyond an idle one's\n", step + 1,
			left * 1e6);
	if (left > CUCO_REF_LEFT_BOUND_S) {
		char what[300];
		snprintf(what, sizeof what, "the referee's capture waited %.0f us beyond an idle GPU's after %s "
			"was said done (bound %.0f us): work left running on the GPU past done", left * 1e6,
			step_words(r, step, s, sizeof s), CUCO_REF_LEFT_BOUND_S * 1e6);
		over_bound(r, what);
	}
	return t;
}

/* With the stage frozen: nothing of its may run on the GPU, where it
 * could read a step's inputs before the release. Probed after a step (a
 * kernel a thread of the stage launched after the capture) and again once
 * the next step's inputs and poison are in place (work the stage queued
 * behind a wait on memory the referee writes: it runs in the gap, on the
 * GPU, whatever the freezer holds). `when` says which. */
static void probe_frozen(referee *r, int step, const char *when)
{
	double t = cuco_ref_gpu_probe();
	char s[64];
	if (r->trace)
		fprintf(stderr, "referee: step %d: the probe with the stage frozen %s took %.1f us\n", step + 1,
			when, t * 1e6);
	if (t > CUCO_REF_LEFT_BOUND_S) {
		char what[300];
		snprintf(what, sizeof what, "%s %s, with the stage frozen, the referee's probe kernel waited %.0f "
			"us (bound %.0f us): work of the stage's on the GPU between steps", when,
			step_words(r, step, s, sizeof s), t * 1e6, CUCO_REF_LEFT_BOUND_S * 1e6);
		over_bound(r, what);
	}
}

/* How long a capture takes on an idle GPU (the fastest of a few, on
 * poisoned outputs, before any of the stage's code runs): the part of a
 * capture's wait that is the referee's own. The kernels of the capture and
 * the probe are loaded on the way. */
static void calibrate(referee *r)
{
	double best = INFINITY;
	for (int k = 0; k < CUCO_REF_CALIBRATE; k++) {
		for (int q = 0; q < r->nranks; q++)
			for (int i = 0; i < r->layout[q].nout; i++)
				cuco_ref_gpu_poison(out_of(r, q, i), r->layout[q].out[i].bytes);
		cuco_ref_gpu_sync();
		double t0 = now();
		capture_all(r, fresh());
		best = fmin(best, now() - t0);
		cuco_ref_gpu_probe();  /* loaded now, not in a step (CUDA loads a kernel at its first launch) */
	}
	r->idle_capture_s = best;
	if (r->trace)
		fprintf(stderr, "referee: an idle GPU's capture takes %.1f us\n", best * 1e6);
}

static bool run_steps(referee *r)
{
	int late = 0, steps = r->warmup + r->reps;
	char s[64];
	for (int step = 0; step < steps; step++) {
		if (!hold(r, true))
			return false;
		if (step == 0)
			check_holders(r, -1);
		if (*r->suspect)
			break;
		double g0 = now();
		draw_step(r);
		if (r->trace)
			fprintf(stderr, "referee: step %d: inputs drawn in %.1f us\n", step + 1, (now() - g0) * 1e6);
		if (r->gpu)
			probe_frozen(r, step, "before the release of");
		if (*r->suspect)
			break;
		/* The clock runs from before the thaw: a stage that watches for
		 * the thaw (its clock jumps) may start then, inside the time. */
		double t0 = now();
		if (!hold(r, false))
			return false;
		release_all(r, (uint32_t)step + 1);
		if (!await_all(r, CUCO_CHAN_DONE + (uint32_t)step, &late)) {
			snprintf(r->incomplete, sizeof r->incomplete, "rank %d never said %s was done%s", late,
				step_words(r, step, s, sizeof s), r->ended ? " (the stage ended)" : "");
			return false;
		}
		double t1 = now(), t = t1 - t0;
		uint64_t pick = fresh();
		if (r->gpu)
			t = capture(r, step, t0, t1, pick);
		if (!stop_at_done(r, step, t0, t1))
			return false;
		if (r->gpu)
			probe_frozen(r, step, "after");
		if (step >= r->warmup)
			r->sample[r->nsamples++] = t / r->sets;
		check_headers(r, step);
		check_step(r, step, pick);
		if (step == steps - 1)
			check_holders(r, step);
		if (*r->why || *r->suspect)
			break;
	}
	release_all(r, CUCO_CHAN_STOP);
	stage_freeze(r, false);
	return true;
}

/* ---- the verdict ---------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(const double *v, int n, double q)
{
	int i = (int)ceil(q * n) - 1;
	return v[i < 0 ? 0 : (i >= n ? n - 1 : i)];
}

/* JSON string contents: quotes, backslashes and control bytes become '. */
static void plain(char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\' || (unsigned char)*s < ' ')
			*s = '\'';
}

/* The ranks' own account of host calls: their totals, and "name=N" summed
 * by name. */
static long host_calls(const referee *r, char *by, size_t size)
{
	long total = 0;
	char names[64][48];
	long counts[64];
	int n = 0;
	for (int q = 0; q < r->nranks; q++) {
		if (r->chan[q]->host_calls < 0)
			return -1;
		total += (long)r->chan[q]->host_calls;
		char copy[sizeof r->chan[q]->host_calls_by];
		memcpy(copy, r->chan[q]->host_calls_by, sizeof copy);
		copy[sizeof copy - 1] = '\0';
		for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			char name[48];
			long v;
			if (sscanf(tok, "%47[A-Za-z_]=%ld", name, &v) != 2)
				continue;
			int i = 0;
			while (i < n && strcmp(names[i], name) != 0)
				i++;
			if (i == n && n < 64) {
				snprintf(names[n], sizeof names[n], "%s", name);
				counts[n++] = 0;
			}
			if (i < n)
				counts[i] += v;
		}
	}
	size_t used = 0;
	by[0] = '\0';
	for (int i = 0; i < n && used < size; i++) {
		int w = snprintf(by + used, size - used, "%s%s=%ld", used ? " " : "", names[i], counts[i]);
		used += w > 0 ? (size_t)w : 0;
	}
	return total;
}

static void verdict(referee *r)
{
	char json[4096], by[256];
	int n = 0, k = r->nsamples;
	if (*r->environment) {
		plain(r->environment);
		printf("CUCO_REFEREE {\"environment\": \"referee: %s\"}\n", r->environment);
		fflush(stdout);
		return;
	}
	if (*r->incomplete && !*r->why && !*r->suspect) {
		plain(r->incomplete);
		printf("CUCO_REFEREE {\"incomplete\": \"%s\", \"attached\": %s}\n", r->incomplete,
			r->attached ? "true" : "false");
		fflush(stdout);
		return;
	}
	qsort(r->sample, (size_t)k, sizeof r->sample[0], cmp_double);
	bool correct = !*r->why && !*r->suspect && r->max_error <= r->tolerance;
	n += snprintf(json + n, sizeof json - (size_t)n, "{\"correct\": %s, \"max_error\": %.6g",
		correct ? "true" : "false", isfinite(r->max_error) ? r->max_error : 1e300);
	if (k > 0)
		n += snprintf(json + n, sizeof json - (size_t)n, ", \"latency_us\": {\"min\": %.3f, "
			"\"median\": %.3f, \"p90\": %.3f, \"max\": %.3f, \"samples\": %d}", r->sample[0] * 1e6,
			quantile(r->sample, k, 0.5) * 1e6, quantile(r->sample, k, 0.9) * 1e6, r->sample[k - 1] * 1e6, k);
	double ph[CUCO_CHAN_PHASES] = { 0 }, per = k > 0 ? 1.0 / ((double)k * r->nranks) : 0, sum = 0;
	/* The ranks' own account, in a form the verdict's JSON can carry
	 * whatever a rank wrote there. */
	for (int q = 0; q < r->nranks; q++)
		for (int p = 0; p < CUCO_CHAN_PHASES; p++) {
			double v = r->chan[q]->phase[p];
			ph[p] += (isfinite(v) ? fmin(fmax(v, 0), 1e6) : 0) * per;
		}
	for (int i = 0; i < k; i++)
		sum += r->sample[i];
	static const char *const names[CUCO_CHAN_PHASES] = { "compute", "comm", "sync" };
	if (k > 0 && !r->gpu) {  /* a GPU frame marks no phases */
		n += snprintf(json + n, sizeof json - (size_t)n, ", \"phases_us\": {");
		for (int p = 0; p < CUCO_CHAN_PHASES; p++)
			n += snprintf(json + n, sizeof json - (size_t)n, "\"%s\": %.3f, ", names[p], ph[p] * 1e6);
		double exposed = fmax(0, sum / k - ph[0]);
		n += snprintf(json + n, sizeof json - (size_t)n, "\"exposed_comm\": %.3f}", exposed * 1e6);
	}
	long calls = host_calls(r, by, sizeof by);
	plain(by);
	plain(r->why);
	plain(r->suspect);
	n += snprintf(json + n, sizeof json - (size_t)n, ", \"seed\": \"%016llx\", \"ranks\": %d, "
		"\"checks\": %ld, \"referee\": true, \"frozen\": %s",
		(unsigned long long)r->seeds.run[0], r->nranks, r->checks, r->cg != CG_NONE ? "true" : "false");
	if (calls >= 0)
		n += snprintf(json + n, sizeof json - (size_t)n, ", \"host_calls\": %ld, \"host_calls_by\": \"%s\"",
			calls, by);
	if (r->gpu)
		n += snprintf(json + n, sizeof json - (size_t)n, ", \"gpu\": {\"idle_capture_us\": %.1f, "
			"\"left_running_max_us\": %.1f, \"probes_past_bound\": %d, \"launches_a_step\": %d}",
			r->idle_capture_s * 1e6, r->left_max_s * 1e6, r->over, r->sets);
	if (*r->why)
		n += snprintf(json + n, sizeof json - (size_t)n, ", \"why\": \"%s\"", r->why);
	if (*r->suspect)
		n += snprintf(json + n, sizeof json - (size_t)n, ", \"suspect\": \"%s\"", r->suspect);
	snprintf(json + n, sizeof json - (size_t)n, "}");
	printf("CUCO_REFEREE %s\n", json);
	fflush(stdout);
}

/* ---- main ---------------------------------------------------------------------------------- */

static void usage(const char *why, const char *arg)
{
	fprintf(stderr, "referee: %s%s%s\nusage: referee [--channel DIR] --ranks N --warmup W --reps R "
		"--tolerance T [--owner UID:GID] [--trace] [--ready] [--run COMMAND...]\n", why, arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static int int_arg(const char *v, int lo, int hi, const char *name)
{
	char *end;
	long x = v ? strtol(v, &end, 10) : 0;
	if (!v || *end || x < lo || x > hi)
		usage(name, v ? v : "missing");
	return (int)x;
}

/* --owner UID:GID */
static void owner(referee *r, const char *v)
{
	unsigned uid, gid;
	int end = 0;
	if (!v || sscanf(v, "%u:%u%n", &uid, &gid, &end) != 2 || v[end])
		usage("--owner wants UID:GID", v ? v : "missing");
	r->owned = true;
	r->uid = (uid_t)uid;
	r->gid = (gid_t)gid;
}

/* --run: the command, with the channel in its environment and its output
 * on stderr, so the verdict is stdout's only line. */
static void start(referee *r, char **cmd)
{
	fflush(stdout);
	r->child = fork();
	if (r->child == 0) {
		dup2(2, 1);
		setenv(CUCO_CHAN_ENV, r->dir, 1);
		execvp(cmd[0], cmd);
		fprintf(stderr, "referee: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
}

int main(int argc, char **argv)
{
	/* Not dumpable: a process of the same user cannot open this one's
	 * memory or descriptors under /proc (its stdout, the verdict's pipe)
	 * without CAP_SYS_PTRACE, nor attach to it. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	referee *r = calloc(1, sizeof *r);
	char **cmd = NULL, made[64] = "";
	r->reps = -1;
	r->warmup = -1;
	r->tolerance = -1;
	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--run") == 0) {
			cmd = argv + i + 1;
			break;
		}
		if (strcmp(argv[i], "--channel") == 0)
			r->dir = v;
		else if (strcmp(argv[i], "--ranks") == 0)
			r->nranks = int_arg(v, 1, MAX_RANKS, "--ranks");
		else if (strcmp(argv[i], "--warmup") == 0)
			r->warmup = int_arg(v, 0, MAX_STEPS, "--warmup");
		else if (strcmp(argv[i], "--reps") == 0)
			r->reps = int_arg(v, 1, MAX_STEPS, "--reps");
		else if (strcmp(argv[i], "--tolerance") == 0 && v)
			r->tolerance = strtod(v, NULL);
		else if (strcmp(argv[i], "--owner") == 0)
			owner(r, v);
		else if (strcmp(argv[i], "--trace") == 0 || strcmp(argv[i], "--ready") == 0) {
			*(argv[i][2] == 't' ? &r->trace : &r->ready) = true;
			continue;
		} else
			usage("unknown argument", argv[i]);
		i++;
	}
	if (r->nranks < 1 || r->warmup < 0 || r->reps < 1 || !(r->tolerance >= 0)
		|| r->warmup + r->reps > MAX_STEPS || (cmd && !cmd[0]) || (!cmd && !r->dir))
		usage("--ranks, --warmup, --reps and --tolerance are needed, and --channel or --run", NULL);
	if (ref_tolerance)
		r->tolerance = fmin(r->tolerance, ref_tolerance(r->tolerance));
	if (!r->dir) {
		snprintf(made, sizeof made, "/dev/shm/cuco-referee-XXXXXX");
		if (!mkdtemp(made))
			usage("cannot make a channel folder", strerror(errno));
		r->dir = made;
	}
	for (int k = 0; k < CUCO_REF_STREAMS; k++)
		r->seeds.run[k] = fresh();
	for (int q = 0; q < r->nranks; q++)
		if (make_rank(r, q) != 0) {
			if (!*r->environment)
				return 2;
			verdict(r);  /* no GPU: the environment's, and the stage's own CUDA fails alike */
			return 1;
		}
	if (r->gpu)
		calibrate(r);
	if (r->ready) {  /* over ssh cuco starts the stage only now: its ranks wait for no file */
		printf("CUCO_REFEREE_READY\n");
		fflush(stdout);
	}
	if (cmd)
		start(r, cmd);
	else
		read_cgroup(r);
	int late = 0, status = 1;
	if (!await_all(r, CUCO_CHAN_ATTACHED, &late)) {
		snprintf(r->incomplete, sizeof r->incomplete, "rank %d never opened its channel%s", late,
			r->ended ? " (the stage ended)" : "");
	} else {
		r->attached = true;
		/* No rank can open another's file from here on. */
		for (int q = 0; q < r->nranks; q++)
			unlink(r->path[q]);
		for (int q = 0; q < r->nranks; q++)
			put(&r->chan[q]->go, 1);
		if (!await_all(r, CUCO_CHAN_READY, &late))
			snprintf(r->incomplete, sizeof r->incomplete, "rank %d never finished its setup%s", late,
				r->ended ? " (the stage ended)" : "");
		else if (run_steps(r))
			status = 0;
	}
	for (int q = 0; q < r->nranks; q++)
		unlink(r->path[q]);
	if (*made)
		rmdir(made);
	verdict(r);
	/* The device arrays live as long as this process: the stage, which
	 * still maps them, ends first (its teardown must not find them gone). */
	for (double t0 = now(); r->gpu && !stage_ended(r) && now() - t0 < STALL_S;)
		nanosleep(&(struct timespec){ 0, 1000000L }, NULL);
	if (r->child > 0 && !r->ended) {
		int st;
		waitpid(r->child, &st, 0);
	}
	return *r->incomplete ? 1 : status;
}
