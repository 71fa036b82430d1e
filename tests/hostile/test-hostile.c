/* test-hostile.c — the hostile-candidate corpus, through the evaluator.
 *
 * tests/hostile/<workload>/<case>.c is a candidate that games the
 * evaluator one way, changing only text inside the seed's EVOLVE-BLOCK as
 * a model's reply could: it replaces one function defined in the block
 * (static or not), which stays callable as <function>_real, and its
 * header comment says how it is evaluated and which defence must refuse
 * it:
 *
 *   rename: FUNCTION            the seed's function it takes the place of
 *   directive: DIM=VALUE ...    (optional) the directive it runs under
 *   size: NAME                  (optional) the workload's size it runs at,
 *                               else the smallest (tiny or small)
 *   ranks: N                    (optional) the fewest ranks it needs
 *   bench: yes                  (optional) benchmarked too, not only run
 *                               once: for attacks on the steps after the
 *                               first
 *   sandbox: off                (optional) evaluated with no sandbox, as
 *                               where bwrap cannot run (in a process of its
 *                               own, like each size)
 *   cpus: N                     (optional) evaluated by an evaluator
 *                               confined to the first N of the CPUs this
 *                               test may use, as `taskset` confines cuco (in
 *                               a process of its own, like each size)
 *   timed: yes                  (optional) for work moved past "done": the
 *                               attack is also defeated when it passes with
 *                               all its work timed — the referee's fastest
 *                               step at least the shortest span of work (from
 *                               entering cuco_step to its last write) the case
 *                               saw in a timed step, less TIMED_SLACK_US. The
 *                               case reports that span as its sync phase, on
 *                               one rank, times ranks and timed steps, so that
 *                               the verdict's phases_us.sync (the average
 *                               over ranks and steps) is that span
 *   gain: none                  (optional) for work moved before the clock
 *                               starts: the attack is also defeated when it
 *                               passes no faster than the seed evaluated
 *                               beside it (its median at least the seed's
 *                               less NOGAIN_SHARE)
 *   expect: STAGE CLASS TEXT    the failed stage, the failure class, and
 *                               text the one-line reason must contain (up
 *                               to MAX_EXPECT such lines: where a defence
 *                               refuses in more than one way, any of them)
 *   xfail: DEFENCE: REASON      (optional) a known hole: the attack gets
 *                               through today and DEFENCE, not yet there,
 *                               must refuse it as `expect:` says
 *
 * A case is refused when its evaluation fails at the expected stage, in
 * the expected class, with the text in its reason (or, with `timed:`,
 * passes timed); anything else (passing included) is getting through, a
 * FAIL. An xfail case that gets through is reported EXPECTED-OPEN with its
 * reason (never as a pass); one that is refused is a FAIL until its
 * `xfail:` line is removed, so a closed hole cannot stay marked open.
 *
 * Then the workload's baseline and seed must still pass (benchmarked),
 * and so must the seed at each directive point given after the workload
 * ("backend=rma,sync=flag"), at every size a case runs at (the points at
 * the smallest). Every verdict is printed, one line each (and the whole
 * failure of one that fails, for the log). Each size (and
 * sandbox setting) runs in a process of its own, with its own evaluator
 * and run folder.
 *
 * A GPU workload's cases all compile here; the verdicts of those refused
 * at run time need a GPU: without one the run must stop on the
 * environment, and the test exits 77 (skipped) once everything that can be
 * checked here passed. With fewer GPUs than a multi-rank workload's ranks
 * its cases run at one rank, as `cuco run --ranks 1` would, and a case
 * that needs more ranks is skipped. Cases are evaluated two at a time (compiles
 * overlap; run stages take the evaluator's device lock one at a time).
 * Usage: test-hostile [--case GLOB]... WORKLOAD [POINT...]
 *   --case GLOB: only the cases whose name matches (fnmatch), and none of
 *   the genuine programs (for working on a case; the suite runs all). */
#include "eval/eval.h"
#include "../eval/util.h"

#include <dirent.h>
#include <fnmatch.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

enum { MAX_EXPECT = 3 };

typedef struct hostile {
	char name[64];
	char rename[64];
	char directive[256];
	char size[32];
	int ranks;               /* the fewest it needs; 0: any */
	bool bench;              /* benchmarked, not only run once */
	bool timed;              /* also defeated when it passes with its work timed */
	bool nogain;             /* also defeated when it passes no faster than the seed */
	bool nosandbox;          /* evaluated with the sandbox off */
	int cpus;                /* the evaluator's CPUs; 0: all this test has */
	struct expect { char stage[16], cls[24], text[400]; } expect[MAX_EXPECT];
	int nexpect;
	char xfail[400];         /* "DEFENCE: REASON" of a known hole, or "" */
	char *code;
	cuco_buf report;         /* what one_case() says about it */
	bool failed, skipped, open;
} hostile;

/* The value after the nth "key: " in the header comment, to the end of
 * its line. */
static bool header_nth(const char *code, const char *key, int nth, char *out, size_t size)
{
	char tag[32];
	snprintf(tag, sizeof tag, " * %s: ", key);
	const char *at = strstr(code, tag), *end = strstr(code, "*/");
	for (int i = 0; i < nth && at; i++)
		at = strstr(at + 1, tag);
	if (!at || (end && at > end))
		return false;
	at += strlen(tag);
	size_t n = strcspn(at, "\n");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), at);
	return true;
}

static bool header(const char *code, const char *key, char *out, size_t size)
{
	return header_nth(code, key, 0, out, size);
}

static bool load_case(const char *dir, const char *file, hostile *h)
{
	char path[1600], line[480];
	size_t len;
	cuco_err err = { 0 };
	memset(h, 0, sizeof *h);
	snprintf(path, sizeof path, "%s/%s", dir, file);
	snprintf(h->name, sizeof h->name, "%.*s", (int)(strlen(file) - 2), file);
	if (cuco_read_file(path, 1 << 20, &h->code, &len, &err) != CUCO_OK
		|| !header(h->code, "rename", h->rename, sizeof h->rename)) {
		fprintf(stderr, "%s: needs `rename:` and `expect: STAGE CLASS TEXT` in its header%s%s\n",
			path, *err.msg ? ": " : "", err.msg);
		free(h->code);
		return false;
	}
	for (; h->nexpect < MAX_EXPECT && header_nth(h->code, "expect", h->nexpect, line, sizeof line); h->nexpect++) {
		struct expect *e = &h->expect[h->nexpect];
		if (sscanf(line, "%15s %23s %399[^\n]", e->stage, e->cls, e->text) != 3)
			break;
	}
	if (h->nexpect == 0 || header_nth(h->code, "expect", h->nexpect, line, sizeof line)) {
		fprintf(stderr, "%s: needs one to %d lines `expect: STAGE CLASS TEXT` in its header\n", path,
			MAX_EXPECT);
		free(h->code);
		return false;
	}
	header(h->code, "directive", h->directive, sizeof h->directive);
	header(h->code, "size", h->size, sizeof h->size);
	header(h->code, "xfail", h->xfail, sizeof h->xfail);
	char ranks[16] = "", yes[8] = "";
	if (header(h->code, "ranks", ranks, sizeof ranks))
		h->ranks = atoi(ranks);
	h->bench = header(h->code, "bench", yes, sizeof yes) && strcmp(yes, "yes") == 0;
	h->timed = header(h->code, "timed", yes, sizeof yes) && strcmp(yes, "yes") == 0;
	h->nogain = header(h->code, "gain", yes, sizeof yes) && strcmp(yes, "none") == 0;
	h->nosandbox = header(h->code, "sandbox", yes, sizeof yes) && strcmp(yes, "off") == 0;
	if (header(h->code, "cpus", ranks, sizeof ranks))
		h->cpus = atoi(ranks);
	return true;
}

/* Where, in seed[from, to), the definition of function `name` puts its
 * name: a line that starts in column 0 with its type ("static void",
 * "void", "int") and then has `name(`. NULL when none. */
static const char *definition(const char *seed, const char *from, const char *to, const char *name)
{
	size_t n = strlen(name);
	for (const char *at = from; (at = strstr(at, name)) && at < to; at += n) {
		if (at[n] != '(' || at == seed || (at[-1] != ' ' && at[-1] != '*'))
			continue;
		const char *line = at;
		while (line > seed && line[-1] != '\n')
			line--;
		if (line < at && (line[0] == '_' || (line[0] >= 'a' && line[0] <= 'z'))
			&& !memchr(line, ';', (size_t)(at - line)) && !memchr(line, '(', (size_t)(at - line)))
			return at;
	}
	return NULL;
}

/* The seed with its function renamed and the case's code put in before
 * the end of the EVOLVE-BLOCK: what changes is block text only. */
static bool build_source(const char *seed, const hostile *h, cuco_buf *out)
{
	const char *start = strstr(seed, "EVOLVE-BLOCK-START"), *end = strstr(seed, "// EVOLVE-BLOCK-END");
	if (!end)
		end = strstr(seed, "/* EVOLVE-BLOCK-END */");
	const char *fn = start && end ? definition(seed, start, end, h->rename) : NULL;
	if (!fn)
		return false;
	size_t at = (size_t)(fn - seed) + strlen(h->rename);
	cuco_buf_append(out, seed, at);
	cuco_buf_puts(out, "_real");
	cuco_buf_append(out, seed + at, (size_t)(end - seed) - at);
	cuco_buf_puts(out, h->code);
	cuco_buf_puts(out, "\n");
	cuco_buf_puts(out, end);
	return true;
}

/* "a=b c=d" or "a=b,c=d" onto d. */
static bool apply_directive(cuco_directive *d, const char *spec)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", spec);
	for (char *save = NULL, *kv = strtok_r(buf, " ,", &save); kv; kv = strtok_r(NULL, " ,", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			return false;
		*eq = '\0';
		if (cuco_directive_set(d, kv, eq + 1) != 0)
			return false;
	}
	return true;
}

static void first_line(const char *text, char *out, size_t size)
{
	snprintf(out, size, "%.*s", (int)strcspn(text, "\n"), text);
}

enum { MAX_GROUPS = 4 };
#define NOGAIN_SHARE 0.01     /* a GPU median's noise, step to step (bench/results/trust.md) */
#define TIMED_SLACK_US 100.0  /* what runs while the kernel freezes the stage, one task at a time */

/* Cases evaluated by one evaluator, in a process of their own. */
typedef struct group {
	const char *size;        /* "": the smallest */
	bool nosandbox;
	int cpus;                /* the first this many CPUs only; 0: all */
} group;

static bool same_group(const group *g, const hostile *h)
{
	return strcmp(g->size, h->size) == 0 && g->nosandbox == h->nosandbox && g->cpus == h->cpus;
}

/* This process, and the evaluator it makes, on the first n of its CPUs. */
static void confine(int n)
{
	cpu_set_t have, keep;
	CPU_ZERO(&keep);
	if (n <= 0 || sched_getaffinity(0, sizeof have, &have) != 0)
		return;
	for (int c = 0; c < CPU_SETSIZE && n > 0; c++)
		if (CPU_ISSET(c, &have)) {
			CPU_SET(c, &keep);
			n--;
		}
	sched_setaffinity(0, sizeof keep, &keep);
}

typedef struct run {
	const cuco_workload *wl;
	cuco_evaluator *ev;
	group group;             /* the cases evaluated here */
	const char *seed;
	bool gpu_family, have_gpu;
	int failures, skipped;
	bool filtered;           /* --case: some cases only, no genuine programs */
	hostile *cases;
	int ncases, next;
	pthread_mutex_t lock;
} run;

static bool evaluate(const run *r, const char *src, size_t len, const char *directive, bool bench,
	cuco_eval_result *res)
{
	cuco_directive d;
	cuco_directive_default(r->wl, &d);
	cuco_err err = { 0 };
	if (directive && !apply_directive(&d, directive)) {
		fprintf(stderr, "directive %s: not in %s's design space\n", directive, r->wl->name);
		return false;
	}
	if (cuco_eval_candidate(r->ev, src, len, &d, bench, res, &err) != CUCO_OK) {
		fprintf(stderr, "the evaluator failed: %s\n", err.msg);
		return false;
	}
	return true;
}

/* The "sync" phase of a verdict, in us per step; NaN when none. */
static double sync_phase(const cuco_eval_result *res)
{
	for (int i = 0; i < res->timing.nphases; i++)
		if (strcmp(res->timing.phases[i].name, "sync") == 0)
			return res->timing.phases[i].us;
	return NAN;
}

/* A `gain: none` case that passed: the seed, evaluated now as the case
 * was, and whether the case was no faster than it (less NOGAIN_SHARE). */
static bool no_gain(const run *r, const hostile *h, const cuco_eval_result *res, char *line, size_t size)
{
	cuco_eval_result seed;
	if (!evaluate(r, r->seed, strlen(r->seed), *h->directive ? h->directive : NULL, h->bench, &seed)
		|| !seed.ok) {
		snprintf(line, size, "%.2f us median; the seed beside it did not pass", res->timing.median_us);
		return false;
	}
	bool none = res->timing.median_us >= seed.timing.median_us * (1 - NOGAIN_SHARE);
	snprintf(line, size, "%.2f us median, the seed's beside it %.2f us: %s", res->timing.median_us,
		seed.timing.median_us, none ? "no gain" : "faster");
	return none;
}

static void one_case(const run *r, const char *seed, hostile *h)
{
	if (h->ranks > r->wl->ranks) {
		cuco_buf_printf(&h->report, "hostile %s/%-22s needs %d ranks; it runs at %d here\n  -> skipped\n",
			r->wl->name, h->name, h->ranks, r->wl->ranks);
		h->skipped = true;
		return;
	}
	cuco_buf src = { 0 };
	cuco_eval_result res;
	char line[400] = "";
	bool built = build_source(seed, h, &src);
	bool ok = built && evaluate(r, src.data, src.len, *h->directive ? h->directive : NULL, h->bench, &res);
	if (ok && res.ok)
		snprintf(line, sizeof line, "%.2f us median", res.timing.median_us);
	else if (ok)
		first_line(res.failure.excerpt, line, sizeof line);
	/* Without a GPU a GPU workload stops at the run stage: only what is
	 * refused at compile time can be told here. */
	bool here = !r->gpu_family || r->have_gpu, refused = false;
	for (int i = 0; i < h->nexpect; i++) {
		const struct expect *e = &h->expect[i];
		here |= strcmp(e->stage, "compile") == 0;
		refused |= ok && !res.ok && strcmp(res.failure.stage, e->stage) == 0
			&& strcmp(res.failure.error_class, e->cls) == 0 && strstr(res.failure.excerpt, e->text);
	}
	double span = ok && res.ok ? sync_phase(&res) : NAN;
	if (h->timed && res.ok && span > 0 && res.timing.min_us >= span - TIMED_SLACK_US) {
		refused = true;
		snprintf(line, sizeof line, "%.2f us fastest step, its work timed (its shortest span: %.2f us)",
			res.timing.min_us, span);
	} else if (h->timed && ok && res.ok) {
		snprintf(line, sizeof line, "%.2f us fastest step, below its shortest span of work (%.2f us)",
			res.timing.min_us, span);
	}
	if (h->nogain && ok && res.ok)
		refused = no_gain(r, h, &res, line, sizeof line);
	const char *verdict = "ok";
	if (!built) {
		verdict = "FAIL (no function of that name in the seed's EVOLVE-BLOCK)";
	} else if (!ok) {
		verdict = "FAIL (could not evaluate)";
	} else if (here && *h->xfail && refused) {
		verdict = "FAIL (refused now: remove its xfail: line)";
	} else if (here && *h->xfail) {
		verdict = "EXPECTED-OPEN";
		h->open = true;
	} else if (here) {
		if (!refused)
			verdict = "FAIL";
	} else if (res.ok || !res.environment || strcmp(res.failure.stage, "run") != 0) {
		verdict = "FAIL (compiles?)";
	} else {
		verdict = "compiled; its verdict needs a GPU";
		h->skipped = true;
	}
	h->failed = strncmp(verdict, "FAIL", 4) == 0;
	cuco_buf_printf(&h->report, "hostile %s/%-22s%s%s %s %s: %s\n  -> %s\n", r->wl->name, h->name,
		*h->size ? " at " : "", h->size,
		ok ? (res.ok ? "passed" : res.failure.stage) : "-", ok ? res.failure.error_class : "",
		line, verdict);
	if (h->open)
		cuco_buf_printf(&h->report, "  open until %s\n", h->xfail);
	if (h->failed && here)
		for (int i = 0; i < h->nexpect; i++)
			cuco_buf_printf(&h->report, "  expected %s %s \"%s\"\n", h->expect[i].stage, h->expect[i].cls,
				h->expect[i].text);
	if ((r->filtered || h->failed) && ok && !res.ok)
		cuco_buf_printf(&h->report, "  excerpt:\n%s\n", res.failure.excerpt);
	cuco_buf_free(&src);
}

/* A worker: take the next case until none is left. */
static void *worker(void *arg)
{
	run *r = arg;
	for (;;) {
		pthread_mutex_lock(&r->lock);
		int i = r->next < r->ncases ? r->next++ : -1;
		pthread_mutex_unlock(&r->lock);
		if (i < 0)
			return NULL;
		if (same_group(&r->group, &r->cases[i]))
			one_case(r, r->seed, &r->cases[i]);
	}
}

/* A genuine program must pass: where no GPU is, a GPU one must compile. */
static void genuine(run *r, const char *what, const char *src, size_t len, const char *directive, bool bench)
{
	cuco_eval_result res;
	char line[400] = "";
	bool ok = evaluate(r, src, len, directive, bench, &res);
	if (ok)
		first_line(res.failure.excerpt, line, sizeof line);
	bool pass = ok && (res.ok || (r->gpu_family && !r->have_gpu && res.environment
		&& strcmp(res.failure.stage, "run") == 0));
	r->failures += !pass;
	printf("genuine %s/%s%s%s%s%s: %s %s%s%s\n", r->wl->name, what, directive ? " " : "", directive ? directive : "",
		*r->group.size ? " at " : "", r->group.size,
		!ok ? "-" : res.ok ? "passed" : res.failure.stage, ok && !res.ok ? res.failure.error_class : "",
		*line ? ": " : "", line);
	if (ok && res.ok)
		printf("  -> ok, %.1f us median, %lld host calls counted\n", res.timing.median_us,
			(long long)res.timing.host_calls);
	else
		printf("  -> %s\n", pass ? "compiled; its run needs a GPU" : "FAIL");
	if (!pass && ok && !res.ok)
		printf("  excerpt:\n%s\n", res.failure.excerpt);
	fflush(stdout);
}

static char *workload_file(const cuco_workload *wl, const char *file, size_t *len)
{
	char path[1400], *text = NULL;
	cuco_err err = { 0 };
	snprintf(path, sizeof path, "%s/%s", wl->dir, file);
	if (cuco_read_file(path, 4u << 20, &text, len, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		exit(1);
	}
	return text;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The cases of r->group, then the genuine programs at its size (with
 * the sandbox as configured: a group with it off, or confined to fewer
 * CPUs, has none): 0 (all passed),
 * 1 (a failure) or 77 (what could be checked here passed). */
static int run_group(run *r, int npoints, char **points)
{
	char run_dir[256];
	cuco_err err = { 0 };
	make_tmpdir(run_dir, sizeof run_dir);
	cuco_eval_config cfg = { .jobs = 2 };
	snprintf(cfg.run_dir, sizeof cfg.run_dir, "%s", run_dir);
	/* The smallest size each workload has, unless a case asks for another
	 * (a defence that needs work longer than a launch: the stream probe). */
	const cuco_workload *wl = r->wl;
	const char *small = cuco_workload_size(wl, "tiny") ? "tiny" : cuco_workload_size(wl, "small") ? "small" : "";
	snprintf(cfg.size, sizeof cfg.size, "%s", *r->group.size ? r->group.size : small);
	if (r->group.nosandbox)
		cfg.sandbox = CUCO_SANDBOX_OFF;
	if (cuco_evaluator_new(wl, &cfg, &r->ev, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	size_t seed_len, base_len;
	char *seed = workload_file(wl, wl->seed_file, &seed_len);
	char *base = workload_file(wl, wl->baseline_file, &base_len);
	r->seed = seed;
	pthread_mutex_init(&r->lock, NULL);
	pthread_t workers[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&workers[i], NULL, worker, r);
	for (int i = 0; i < 2; i++)
		pthread_join(workers[i], NULL);
	cuco_buf open = { 0 };
	int nopen = 0;
	for (int i = 0; i < r->ncases; i++) {
		hostile *h = &r->cases[i];
		fputs(h->report.data ? h->report.data : "", stdout);
		r->failures += h->failed;
		r->skipped += h->skipped;
		if (h->open)
			cuco_buf_printf(&open, "%s%s", nopen++ ? " " : "", h->name);
	}
	if (nopen)
		printf("test-hostile: %d case(s) EXPECTED-OPEN, holes for defences not yet there: %s\n", nopen,
			open.data);
	cuco_buf_free(&open);
	fflush(stdout);
	if (!r->filtered && !r->group.nosandbox && !r->group.cpus) {
		genuine(r, "baseline", base, base_len, NULL, true);
		genuine(r, "seed", seed, seed_len, NULL, true);
		for (int i = 0; i < npoints; i++)
			genuine(r, "seed", seed, seed_len, points[i], false);
	}
	free(seed);
	free(base);
	cuco_evaluator_free(r->ev);
	rm_rf(run_dir);
	return r->failures ? 1 : r->skipped ? 77 : 0;
}

int main(int argc, char **argv)
{
	const char *only[64];
	int nonly = 0;
	while (argc > 2 && strcmp(argv[1], "--case") == 0 && nonly < 64) {
		only[nonly++] = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: test-hostile [--case GLOB]... WORKLOAD [DIM=VALUE,...]...\n");
		return 1;
	}
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	if (cuco_workload_load(argv[1], &wl, &err) != CUCO_OK) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	/* A GPU here, and as many as the workload's ranks need: else its run
	 * verdicts wait for a machine that has them (the cases still compile). */
	cuco_hardware hw;
	cuco_hardware_detect(&hw);
	char why_not[256] = "no GPU here", dir[1200];
	bool gpu = access("/dev/nvidiactl", F_OK) == 0;
	if (gpu && wl->family == CUCO_FAMILY_CUDA_NCCL && hw.ngpus >= 1 && hw.ngpus < wl->ranks) {
		printf("test-hostile: %d GPU(s) for %s's %d ranks: its cases run at 1 rank\n", hw.ngpus, wl->name,
			wl->ranks);
		wl->ranks = 1;
	}
	run r = { .wl = wl, .gpu_family = wl->family != CUCO_FAMILY_CPU_MPI,
		.have_gpu = gpu && cuco_hardware_fits(&hw, wl, why_not, sizeof why_not), .filtered = nonly > 0 };
	snprintf(dir, sizeof dir, "%s/tests/hostile/%s", getenv("CUCO_SOURCE_ROOT"), wl->name);
	struct dirent **files = NULL;
	int n = scandir(dir, &files, NULL, by_name);  /* none: the genuine ones only */
	group groups[MAX_GROUPS] = { { "", false, 0 } };
	int ngroups = 1, failures = 0;
	r.cases = cuco_xcalloc(n > 0 ? (size_t)n : 1, sizeof *r.cases);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(files[i]->d_name);
		hostile *h = &r.cases[r.ncases];
		bool wanted = nonly == 0;
		for (int k = 0; k < nonly && l > 2; k++) {
			char name[256];
			snprintf(name, sizeof name, "%.*s", (int)(l - 2), files[i]->d_name);
			wanted |= fnmatch(only[k], name, 0) == 0;
		}
		if (!wanted) {
			free(files[i]);
			continue;
		}
		if (l > 2 && strcmp(files[i]->d_name + l - 2, ".c") == 0 && !load_case(dir, files[i]->d_name, h)) {
			failures++;
		} else if (l > 2 && strcmp(files[i]->d_name + l - 2, ".c") == 0) {
			int k = 0;
			while (k < ngroups && !same_group(&groups[k], h))
				k++;
			if (k == ngroups && (ngroups == MAX_GROUPS || (*h->size && !cuco_workload_size(wl, h->size)))) {
				fprintf(stderr, "%s/%s: size %s is not one of %s's, or more than %d sizes and sandbox "
					"settings and CPU counts are asked for\n", dir, files[i]->d_name, h->size, wl->name, MAX_GROUPS - 1);
				free(h->code);
				failures++;
				free(files[i]);
				continue;
			}
			if (k == ngroups)
				groups[ngroups++] = (group){ h->size, h->nosandbox, h->cpus };
			r.ncases++;
		}
		free(files[i]);
	}
	free(files);
	if (nonly && !r.ncases) {
		fprintf(stderr, "test-hostile: no case of %s in %s matches --case\n", wl->name, dir);
		failures++;
	}
	bool skipped = false;
	for (int k = 0; k < ngroups; k++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			r.group = groups[k];
			confine(r.group.cpus);
			int rc = run_group(&r, k == 0 ? argc - 2 : 0, argv + 2);
			fflush(stdout);
			_exit(rc);
		}
		int status = 0;
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
			|| (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 77))
			failures++;
		else
			skipped |= WEXITSTATUS(status) == 77;
	}
	for (int i = 0; i < r.ncases; i++)
		free(r.cases[i].code);
	free(r.cases);
	int ranks = wl->ranks;
	cuco_workload_free(wl);
	if (failures) {
		printf("test-hostile: %d size(s) or case(s) FAILED\n", failures);
		return 1;
	}
	if (skipped && r.have_gpu) {
		printf("test-hostile: %s runs at %d rank(s) here: a case that needs more was skipped\n", argv[1],
			ranks);
		return 77;
	}
	if (skipped) {
		printf("test-hostile: %s: its cases compiled, their verdicts need a machine that fits the "
			"workload\n", why_not);
		return 77;
	}
	return 0;
}
