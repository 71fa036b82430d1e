/* test-hostile.c — the hostile-candidate corpus, through the evaluator.
 *
 * tests/hostile/<workload>/<case>.c is a candidate that games the
 * evaluator one way. It replaces one function of the workload's seed,
 * which stays callable as <function>_real, and its header comment says
 * how it is evaluated and which defence must refuse it:
 *
 *   rename: FUNCTION            the seed's function it takes the place of
 *   directive: DIM=VALUE ...    (optional) the directive it runs under
 *   size: NAME                  (optional) the workload's size it runs at,
 *                               else the smallest (tiny or small)
 *   ranks: N                    (optional) the fewest ranks it needs
 *   expect: STAGE CLASS TEXT    the failed stage, the failure class, and
 *                               text the one-line reason must contain
 *
 * Then the workload's baseline and seed must still pass (benchmarked),
 * and so must the seed at each directive point given after the workload
 * ("backend=rma,sync=flag"), at every size a case runs at (the points at
 * the smallest). Every verdict is printed, one line each. Each size runs
 * in a process of its own, with its own evaluator and run folder.
 *
 * A GPU workload's cases all compile here; the verdicts of those refused
 * at run time need a GPU: without one the run must stop on the
 * environment, and the test exits 77 (skipped) once everything that can be
 * checked here passed. With fewer GPUs than a multi-rank workload's ranks
 * its cases run at one rank, as `cuco run --ranks 1` would, and a case
 * that needs more ranks is skipped. Cases are evaluated two at a time (compiles
 * overlap; run stages take the evaluator's device lock one at a time).
 * Usage: test-hostile WORKLOAD [POINT...] */
#include "eval/eval.h"
#include "../eval/util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

typedef struct hostile {
	char name[64];
	char rename[64];
	char directive[256];
	char size[32];
	int ranks;               /* the fewest it needs; 0: any */
	char stage[16], cls[24], text[400];
	char *code;
	cuco_buf report;         /* what one_case() says about it */
	bool failed, skipped;
} hostile;

/* The value after "key: " in the header comment, to the end of its line. */
static bool header(const char *code, const char *key, char *out, size_t size)
{
	char tag[32];
	snprintf(tag, sizeof tag, " * %s: ", key);
	const char *at = strstr(code, tag), *end = strstr(code, "*/");
	if (!at || (end && at > end))
		return false;
	at += strlen(tag);
	size_t n = strcspn(at, "\n");
	snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), at);
	return true;
}

static bool load_case(const char *dir, const char *file, hostile *h)
{
	char path[1600], expect[480];
	size_t len;
	cuco_err err = { 0 };
	memset(h, 0, sizeof *h);
	snprintf(path, sizeof path, "%s/%s", dir, file);
	snprintf(h->name, sizeof h->name, "%.*s", (int)(strlen(file) - 2), file);
	if (cuco_read_file(path, 1 << 20, &h->code, &len, &err) != CUCO_OK
		|| !header(h->code, "rename", h->rename, sizeof h->rename)
		|| !header(h->code, "expect", expect, sizeof expect)
		|| sscanf(expect, "%15s %23s %399[^\n]", h->stage, h->cls, h->text) != 3) {
		fprintf(stderr, "%s: needs `rename:` and `expect: STAGE CLASS TEXT` in its header%s%s\n",
			path, *err.msg ? ": " : "", err.msg);
		free(h->code);
		return false;
	}
	header(h->code, "directive", h->directive, sizeof h->directive);
	header(h->code, "size", h->size, sizeof h->size);
	char ranks[16] = "";
	if (header(h->code, "ranks", ranks, sizeof ranks))
		h->ranks = atoi(ranks);
	return true;
}

/* The seed with its function renamed and the case's code put in before
 * the end of the EVOLVE-BLOCK. The function is the first "void NAME(" of
 * the seed: a static one, or an entry point its frame calls (extern "C"
 * void cuco_launch(, in a one-GPU seed). */
static bool build_source(const char *seed, const hostile *h, cuco_buf *out)
{
	char decl[96];
	snprintf(decl, sizeof decl, "void %s(", h->rename);
	const char *fn = strstr(seed, decl), *end = strstr(seed, "// EVOLVE-BLOCK-END");
	if (!end)
		end = strstr(seed, "/* EVOLVE-BLOCK-END */");
	if (!fn || !end || fn > end)
		return false;
	size_t at = (size_t)(fn - seed) + strlen(decl) - 1;
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

enum { MAX_SIZES = 4 };

typedef struct run {
	const cuco_workload *wl;
	cuco_evaluator *ev;
	const char *size;        /* the cases of this size ("": none given) */
	const char *seed;
	bool gpu_family, have_gpu;
	int failures, skipped;
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
	bool ok = build_source(seed, h, &src)
		&& evaluate(r, src.data, src.len, *h->directive ? h->directive : NULL, false, &res);
	if (ok && res.ok)
		snprintf(line, sizeof line, "%.2f us median", res.latency_median_us);
	else if (ok)
		first_line(res.excerpt, line, sizeof line);
	/* Without a GPU a GPU workload stops at the run stage: only what is
	 * refused at compile time can be told here. */
	bool here = !r->gpu_family || r->have_gpu || strcmp(h->stage, "compile") == 0;
	const char *verdict = "ok";
	if (!ok) {
		verdict = "FAIL (could not evaluate)";
	} else if (here) {
		if (res.ok || strcmp(res.failed_stage, h->stage) != 0 || strcmp(res.error_class, h->cls) != 0
			|| !strstr(res.excerpt, h->text))
			verdict = "FAIL";
	} else if (res.ok || !res.environment || strcmp(res.failed_stage, "run") != 0) {
		verdict = "FAIL (compiles?)";
	} else {
		verdict = "compiled; its verdict needs a GPU";
		h->skipped = true;
	}
	h->failed = strncmp(verdict, "FAIL", 4) == 0;
	cuco_buf_printf(&h->report, "hostile %s/%-22s%s%s %s %s: %s\n  -> %s\n", r->wl->name, h->name,
		*h->size ? " at " : "", h->size,
		ok ? (res.ok ? "passed" : res.failed_stage) : "-", ok ? res.error_class : "", line, verdict);
	if (h->failed && here)
		cuco_buf_printf(&h->report, "  expected %s %s \"%s\"\n", h->stage, h->cls, h->text);
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
		if (strcmp(r->cases[i].size, r->size) == 0)
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
		first_line(res.excerpt, line, sizeof line);
	bool pass = ok && (res.ok || (r->gpu_family && !r->have_gpu && res.environment
		&& strcmp(res.failed_stage, "run") == 0));
	r->failures += !pass;
	printf("genuine %s/%s%s%s%s%s: %s %s%s%s\n", r->wl->name, what, directive ? " " : "", directive ? directive : "",
		*r->size ? " at " : "", r->size,
		!ok ? "-" : res.ok ? "passed" : res.failed_stage, ok && !res.ok ? res.error_class : "",
		*line ? ": " : "", line);
	if (ok && res.ok)
		printf("  -> ok, %.1f us median, %ld host calls counted\n", res.latency_median_us, res.host_calls);
	else
		printf("  -> %s\n", pass ? "compiled; its run needs a GPU" : "FAIL");
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

/* The cases of r->size, then the genuine programs at it: 0 (all passed),
 * 1 (a failure) or 77 (what could be checked here passed). */
static int run_size(run *r, int npoints, char **points)
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
	snprintf(cfg.size, sizeof cfg.size, "%s", *r->size ? r->size : small);
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
	for (int i = 0; i < r->ncases; i++) {
		hostile *h = &r->cases[i];
		fputs(h->report.data ? h->report.data : "", stdout);
		r->failures += h->failed;
		r->skipped += h->skipped;
	}
	fflush(stdout);
	genuine(r, "baseline", base, base_len, NULL, true);
	genuine(r, "seed", seed, seed_len, NULL, true);
	for (int i = 0; i < npoints; i++)
		genuine(r, "seed", seed, seed_len, points[i], false);
	free(seed);
	free(base);
	cuco_evaluator_free(r->ev);
	rm_rf(run_dir);
	return r->failures ? 1 : r->skipped ? 77 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test-hostile WORKLOAD [DIM=VALUE,...]...\n");
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
		.have_gpu = gpu && cuco_hardware_fits(&hw, wl, why_not, sizeof why_not) };
	snprintf(dir, sizeof dir, "%s/tests/hostile/%s", getenv("CUCO_SOURCE_ROOT"), wl->name);
	struct dirent **files = NULL;
	int n = scandir(dir, &files, NULL, by_name);  /* none: the genuine ones only */
	const char *sizes[MAX_SIZES] = { "" };
	int nsizes = 1, failures = 0;
	r.cases = cuco_xcalloc(n > 0 ? (size_t)n : 1, sizeof *r.cases);
	for (int i = 0; i < n; i++) {
		size_t l = strlen(files[i]->d_name);
		hostile *h = &r.cases[r.ncases];
		if (l > 2 && strcmp(files[i]->d_name + l - 2, ".c") == 0 && !load_case(dir, files[i]->d_name, h)) {
			failures++;
		} else if (l > 2 && strcmp(files[i]->d_name + l - 2, ".c") == 0) {
			int k = 0;
			while (k < nsizes && strcmp(sizes[k], h->size) != 0)
				k++;
			if (k == nsizes && (nsizes == MAX_SIZES || !cuco_workload_size(wl, h->size))) {
				fprintf(stderr, "%s/%s: size %s is not one of %s's, or more than %d sizes are asked "
					"for\n", dir, files[i]->d_name, h->size, wl->name, MAX_SIZES - 1);
				free(h->code);
				failures++;
				free(files[i]);
				continue;
			}
			if (k == nsizes)
				sizes[nsizes++] = h->size;
			r.ncases++;
		}
		free(files[i]);
	}
	free(files);
	bool skipped = false;
	for (int k = 0; k < nsizes; k++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			r.size = sizes[k];
			int rc = run_size(&r, k == 0 ? argc - 2 : 0, argv + 2);
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
