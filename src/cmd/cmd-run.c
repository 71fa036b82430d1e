/* cmd-run.c — `cuco run WORKLOAD`: start or resume a search.
 *
 * The engine runs in background threads; this thread only waits for its
 * wake fd and for signals, prints, and ends it cleanly. SIGINT and SIGTERM
 * (and SIGHUP, unless it was ignored when cuco started, as under nohup)
 * ask the engine to stop: evaluations in flight finish, none start, and
 * the store is left consistent for a later resume, and cuco exits 4
 * (CUCO_EXIT_STOPPED), as after 'cuco stop': an interruption is not a
 * verdict. SIGPIPE is ignored: an output nobody reads any more is no
 * reason to end a run. runs/latest points at the run once it has started,
 * whichever folder it is in. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "strategies/strategies.h"
#include "tui/tui.h"

#define DEFAULT_BUDGET 24  /* when neither --budget nor --minutes is given */

#define RUN_OPTIONS(X) \
	X(O_RUN, "run", 0, "DIR", 0, "run directory (default runs/WORKLOAD); an existing one is " \
		"resumed: nothing is re-added or repeated. Once the run starts, runs/latest points to it") \
	X(O_STRATEGY, "strategy", 0, "tune|evolve|beam|sample", 0, "tune (default: the directive " \
		"tuner, no model),\nevolve (islands of model edits, after the fast path when the workload " \
		"has no seed),\nbeam (planner, executor and summarizer with a memory) or\nsample " \
		"(best-of-N edits of the seed, the control evolution is measured against)") \
	X(O_TUNER, "tuner", 0, "random|anneal|ils", 0, "the tuner: random, anneal (default) or ils") \
	X(O_BUDGET, "budget", 0, "N", 0, "candidates from the strategy in the whole run, resumed " \
		"sessions included (default 24 unless --minutes is given; 0 = no limit)") \
	X(O_MINUTES, "minutes", 0, "M", 0, "wall-clock limit of this session") \
	X(O_SIZE, "size", 0, "NAME", 0, "problem size (default: the workload's)") \
	X(O_JOBS, "jobs", 0, "N", 0, "evaluations at a time (default 2; with a remote runner, one " \
		"more than its slots, at most 16)") \
	X(O_SEED, "seed", 0, "N", 0, "seed of the strategy's RNG (default 1)") \
	X(O_HEADLESS, "headless", 0, NULL, 0, "no screen: one line per evaluated candidate, then a " \
		"summary") \
	X(O_BASELINE_EVERY, "baseline-every", 0, "K", 0, "re-measure the baseline every K benchmarks " \
		"(default 8)") \
	X(O_REBENCH, "rebench", 0, "N", 0, "contenders confirmed at the end: the best N screens, each " \
		"on fresh paired rounds against the baseline and the best (default 3)") \
	X(O_LLM, "llm", 0, "SPEC", CMD_OPT_MANY, "a model, PROVIDER:MODEL[@URL][*WEIGHT] (repeatable; " \
		"replaces the config file's models; PROVIDER: openai, anthropic, vllm, sglang, llamacpp, " \
		"ollama, openrouter); implies --strategy evolve") \
	X(O_LLM_JOBS, "llm-jobs", 0, "N", 0, "model calls in flight at once (default: the config's " \
		"[llm] concurrency, 4); evaluations go on meanwhile") \
	X(O_MAX_COST, "max-cost", 0, "USD", 0, "end the run cleanly once the models have cost this " \
		"much") \
	X(O_MAX_TOKENS, "max-tokens", 0, "N", 0, "end the run cleanly once the models have used this " \
		"many tokens") \
	X(O_GENERATIONS, "generations", 0, "N", 0, "the search's length in its own steps, after which " \
		"it ends: evolve: children on the islands (the explore/exploit phases are laid over " \
		"them); beam: iterations (default: the config's [evolve] generations / [beam] iterations)") \
	X(O_RANKS, "ranks", 0, "N", 0, "run on N ranks instead of the workload's own (default run " \
		"directory runs/WORKLOAD-Nranks), for scaling studies") \
	X(O_SANDBOX, "sandbox", 0, "auto|bwrap|off", 0, "auto (default): stages run in bubblewrap " \
		"where it works, else with resource limits only; bwrap: refuse to run without it; off " \
		"(default: $CUCO_SANDBOX, else the config file's [eval] sandbox)") \
	X(O_RUNNER, CMD_OPT_RUNNER) \
	X(O_HOSTFILE, CMD_OPT_HOSTFILE) \
	X(O_HOSTS, CMD_OPT_HOSTS) \
	X(O_THEME, CMD_OPT_THEME) \
	X(O_NO_COLOR, CMD_OPT_NO_COLOR) \
	X(O_ASCII, CMD_OPT_ASCII)
CMD_TABLE(options, RUN_OPTIONS);

static const char notes[] =
	"SIGINT/SIGTERM stop the search after the evaluations in flight; so does SIGHUP\n"
	"unless cuco was started with it ignored (nohup cuco run ... &), and so does 'cuco stop'.\n"
	"A run stopped so exits 4; the same command resumes it (and confirms its best).\n";

/* The signal handler's only channel: a pipe the main thread polls. */
static int signal_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;
	char b = (char)sig;
	if (write(signal_pipe[1], &b, 1) < 0) {
		/* a full pipe already carries a signal */
	}
	errno = saved;
}

static int catch_signals(cuco_err *err)
{
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return cuco_errf(err, CUCO_EENV, "signal pipe: %s", strerror(errno));
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct sigaction old;
	if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
		sigaction(SIGHUP, &sa, NULL);
	/* `cuco run | tee log` over SSH: the disconnect takes tee away, and
	 * the next progress line would kill a run that is stopping cleanly,
	 * or one started under nohup. Lines to nowhere are only lost. */
	signal(SIGPIPE, SIG_IGN);
	return CUCO_OK;
}

static void restore_signals(void)
{
	struct sigaction sa = { .sa_handler = SIG_DFL }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler == on_signal)
		sigaction(SIGHUP, &sa, NULL);
	for (int i = 0; i < 2; i++)
		if (signal_pipe[i] >= 0) {
			close(signal_pipe[i]);
			signal_pipe[i] = -1;
		}
}

/* runs/latest -> the run directory, replacing an older link (never a
 * real file): NAME under runs/ itself, else the directory's absolute
 * path. Only once the run has started: a run refused before its first
 * evaluation leaves the link where it was. */
static void link_latest(const char *dir)
{
	char real[PATH_MAX], runs[PATH_MAX], target[PATH_MAX];
	cuco_err err = { 0 };
	if (cuco_mkdir_p("runs/", &err) != CUCO_OK || !realpath(dir, real) || !realpath("runs", runs)) {
		cuco_log(CUCO_LOG_WARN, "run: runs/latest not pointed at %s: %s", dir,
			err.msg[0] ? err.msg : strerror(errno));
		return;
	}
	size_t n = strlen(runs);
	bool inside = strncmp(real, runs, n) == 0 && real[n] == '/' && !strchr(real + n + 1, '/');
	cuco_strlcpy(target, inside ? real + n + 1 : real, sizeof target);
	struct stat sb;
	if (lstat("runs/latest", &sb) == 0) {
		if (!S_ISLNK(sb.st_mode)) {
			cuco_log(CUCO_LOG_WARN, "run: runs/latest is not a symbolic link; left alone");
			return;
		}
		unlink("runs/latest");
	}
	if (symlink(target, "runs/latest") != 0)
		cuco_log(CUCO_LOG_WARN, "run: runs/latest: %s", strerror(errno));
}

/* Wait for the engine, printing nothing itself (the engine's progress
 * stream does), and turn signals into a stop request. */
static void run_headless(cuco_engine *e)
{
	bool asked = false;
	while (!cuco_engine_done(e)) {
		struct pollfd fds[2] = {
			{ .fd = cuco_engine_wake_fd(e), .events = POLLIN },
			{ .fd = signal_pipe[0], .events = POLLIN },
		};
		if (poll(fds, 2, 500) < 0 && errno != EINTR)
			break;
		char buf[64];
		if (fds[0].revents & POLLIN)
			while (read(fds[0].fd, buf, sizeof buf) > 0)
				continue;
		if (fds[1].revents & POLLIN) {
			while (read(fds[1].fd, buf, sizeof buf) > 0)
				continue;
			if (!asked)
				fprintf(stderr, "cuco: stopping after the evaluations in flight "
					"(the run can be resumed)\n");
			asked = true;
			cuco_engine_request_stop(e);
		}
	}
}

/* The workbench screen over the running engine. Quitting asks whether to
 * stop the search; kept running, it goes on headless (run_headless). */
static void run_screen(cuco_engine *e, cuco_store *st, const cuco_tui_options *look)
{
	char author[32];
	cmd_author(author, sizeof author);
	cuco_tui_options o = *look;
	o.in_process = true;
	o.author = author;
	bool stop = false;
	cuco_err err = { 0 };
	if (cuco_tui_run(st, cuco_engine_wake_fd(e), &o, &stop, &err) != CUCO_OK) {
		fprintf(stderr, "cuco: %s; going on without the screen\n", err.msg);
		return;
	}
	if (stop) {
		cuco_engine_request_stop(e);
		printf("cuco: stopping after the evaluations in flight (the run can be resumed)\n");
	} else {
		printf("cuco: the search goes on without the screen, a line per candidate (Ctrl-C "
		       "stops it; 'cuco tui' watches it)\n");
	}
	fflush(stdout);
	/* Over SSH a run that prints nothing for minutes looks hung. */
	cuco_engine_set_progress(e, stdout);
}

/* ---- the final summary -------------------------------------------------- */

typedef struct summary_arg {
	cuco_candidate base, best, closest;
	bool have_base, have_best, have_closest;
	size_t by_status[CUCO_STATUS_COUNT];
	size_t strategy;
	char noise[256];
	cmd_verdicts v;          /* the last session's confirmation, the crowns' revisits */
} summary_arg;

/* The closest contender confirmed and not crowned. */
static int summary_scan(const cuco_candidate *c, void *arg)
{
	summary_arg *a = arg;
	if (c->origin == CUCO_ORIGIN_BASELINE || c->rounds < 2)
		return 0;
	if (c->id != a->best.id && c->status == CUCO_STATUS_DONE &&
			(!a->have_closest || c->speedup > a->closest.speedup)) {
		a->closest = *c;
		a->have_closest = true;
	}
	return 0;
}

static int summary_txn(cuco_txn *txn, void *arg)
{
	summary_arg *a = arg;
	cuco_summary *sums = NULL, best;
	size_t n = 0;
	int rc = cuco_summary_all(txn, &sums, &n);
	if (rc != CUCO_OK)
		return rc;
	uint64_t base_id = 0;
	for (size_t i = 0; i < n; i++) {
		if (sums[i].origin == CUCO_ORIGIN_BASELINE)
			base_id = sums[i].id;
		else if (sums[i].origin != CUCO_ORIGIN_SEED && sums[i].origin != CUCO_ORIGIN_HUMAN) {
			a->strategy++;
			if (sums[i].status < CUCO_STATUS_COUNT)
				a->by_status[sums[i].status]++;
		}
	}
	free(sums);
	a->have_base = base_id && cuco_cand_get(txn, base_id, &a->base) == CUCO_OK;
	a->have_best = cuco_best(txn, &best) == CUCO_OK &&
		cuco_cand_get(txn, best.id, &a->best) == CUCO_OK;
	cuco_meta_noise_get(txn, a->noise, sizeof a->noise);
	rc = cmd_verdicts_read(txn, &a->v);
	return rc == CUCO_OK ? cuco_cand_each(txn, 1, summary_scan, a) : rc;
}

static void speedup_of(const cuco_candidate *c, char *buf, size_t size)
{
	cuco_speedup_text(c->speedup, c->speedup_lo, c->speedup_hi, c->rounds, !cuco_utf8_locale(),
		buf, size);
}

/* The best and how sure the run is of it; or that nothing beat the
 * baseline and how close the nearest contender came — only when this
 * session's confirmation judged one: a stop, an error or contenders left
 * without a verdict are said as such, never as a verdict. */
static void print_verdict(const summary_arg *a)
{
	char sp[64], dir[160];
	double rate = 100 * CUCO_TRUST_ALPHA;
	const cuco_confirmation *c = &a->v.conf;
	if (a->have_best && a->have_base && a->best.id != a->base.id) {
		cuco_directive_short(&a->best.directive, dir, sizeof dir);
		speedup_of(&a->best, sp, sizeof sp);
		printf("best      #%-5llu %s %s: %s the baseline, %d paired rounds\n",
			(unsigned long long)a->best.id, cuco_origin_name(a->best.origin), dir, sp,
			a->best.rounds);
		printf("          faster at %.4g%% confidence, %.1f us in its median round; a run "
			"crowns noise at most %.1f%% of the time (docs/trust.md)\n",
			100 * a->best.confidence, a->best.timing.median_us, rate);
	} else if (!a->v.have_conf) {
		printf("best      not judged: no confirmation on record\n");
	} else if (c->judged == 0 && c->state != CUCO_CONFIRM_DONE) {
		printf("best      not judged\n");  /* and why, below */
	} else if (c->contenders == 0) {
		printf("best      nothing beat the baseline: no screen was faster, none to confirm\n");
	} else if (c->judged == 0) {
		printf("best      no verdict: %d contender%s went to confirmation, none was judged\n",
			c->contenders, c->contenders == 1 ? "" : "s");
	} else {
		printf("best      nothing beat the baseline: %d contender%s judged on fresh paired "
			"rounds, none crowned\n", c->judged, c->judged == 1 ? "" : "s");
	}
	bool judged = a->v.have_conf && c->judged > 0;
	if (a->have_closest && judged && !(a->have_best && a->best.id != a->base.id)) {
		speedup_of(&a->closest, sp, sizeof sp);
		printf("          the closest, #%llu: %s, %s (%d rounds, %.4g%% interval)\n",
			(unsigned long long)a->closest.id, sp, cuco_verdict_name(a->closest.verdict),
			a->closest.rounds, 100 * a->closest.confidence);
	}
	cmd_verdicts_print(&a->v, 9);
}

static void print_summary(cuco_store *st)
{
	summary_arg *a = cuco_xcalloc(1, sizeof *a);
	cuco_err err = { 0 };
	if (cuco_store_read(st, summary_txn, a, &err) != CUCO_OK) {
		fprintf(stderr, "cuco: %s\n", err.msg);
		cmd_verdicts_free(&a->v);
		free(a);
		return;
	}
	printf("\n%zu candidates from the strategy: %zu done, %zu failed, %zu rejected\n",
		a->strategy, a->by_status[CUCO_STATUS_DONE], a->by_status[CUCO_STATUS_FAILED],
		a->by_status[CUCO_STATUS_REJECTED]);
	if (a->have_base && !isnan(a->base.timing.median_us))
		printf("baseline  #%-5llu %10.1f us median (spread %.1f%%, %d samples), latest measurement\n",
			(unsigned long long)a->base.id, a->base.timing.median_us, 100 * a->base.timing.spread,
			a->base.timing.samples);
	else
		printf("baseline  not measured\n");
	print_verdict(a);
	if (a->noise[0])
		printf("noise     the machine was noisy: %s\n", a->noise);
	cmd_verdicts_free(&a->v);
	free(a);
}

/* ---- the command ------------------------------------------------------------ */

static bool parse_long(const char *text, long min, long max, long *out)
{
	char *end = NULL;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (!*text || *end || errno || v < min || v > max)
		return false;
	*out = v;
	return true;
}

/* --runner, --hostfile and --hosts, applied over the config file's
 * [runner] once it is read; and whether --jobs was given. */
typedef struct runner_flags {
	cmd_runner_flags given;
	bool jobs_given;
} runner_flags;

#define MAX_LLM_SPECS CUCO_MAX_MODELS

/* Check one --llm spec now, so a typo is a usage error before any work. */
static bool llm_spec_ok(char *spec, cuco_err *err)
{
	cuco_llm_config scratch;
	cuco_llm_config_defaults(&scratch);
	char *one[1] = { spec };
	return cuco_llm_use_specs(&scratch, one, 1, err) == CUCO_OK;
}

static int parse_run_options(int argc, char **argv, cuco_engine_config *cfg, const char **workload,
	const char **run, bool *headless, runner_flags *rf, cuco_tui_options *look)
{
	static char *specs[MAX_LLM_SPECS];
	bool budget_given = false, strategy_given = false;
	long v;
	int opt;
	cuco_err err = { 0 };
	cmd_args a = CMD_ARGS(&cmd_run, argc, argv);
	while ((opt = cmd_option_next(&a)) >= 0) {
		switch (opt) {
		case O_RUN: *run = a.value; break;
		case O_STRATEGY:
			if (!cuco_strlcpy(cfg->strategy, a.value, sizeof cfg->strategy) ||
					!cuco_strategy_find(a.value))
				return cmd_usage_error(&cmd_run, "--strategy %s: unknown strategy", a.value);
			strategy_given = true;
			break;
		case O_LLM:
			if (cfg->nllm_specs == MAX_LLM_SPECS)
				return cmd_usage_error(&cmd_run, "--llm: at most %d models", MAX_LLM_SPECS);
			if (!llm_spec_ok(a.value, &err))
				return cmd_usage_error(&cmd_run, "%s", err.msg);
			specs[cfg->nllm_specs++] = a.value;
			cfg->llm_specs = specs;
			break;
		case O_MAX_COST: {
			char *end = NULL;
			cfg->max_cost_usd = strtod(a.value, &end);
			if (!*a.value || *end || !(cfg->max_cost_usd > 0))
				return cmd_usage_error(&cmd_run, "--max-cost %s: not a positive amount", a.value);
			break;
		}
		case O_MAX_TOKENS:
			if (!parse_long(a.value, 1, LONG_MAX, &v))
				return cmd_usage_error(&cmd_run, "--max-tokens %s: not a positive count", a.value);
			cfg->max_tokens = v;
			break;
		case O_TUNER: {
			cuco_tuner_algo algo;
			if (cuco_tuner_algo_parse(a.value, &algo) != CUCO_OK)
				return cmd_usage_error(&cmd_run, "--tuner %s: not random, anneal or ils", a.value);
			cuco_strlcpy(cfg->tuner, a.value, sizeof cfg->tuner);
			break;
		}
		case O_BUDGET:
			if (!parse_long(a.value, 0, INT_MAX, &v))
				return cmd_usage_error(&cmd_run, "--budget %s: not a count", a.value);
			cfg->budget = (int)v;
			budget_given = true;
			break;
		case O_MINUTES: {
			char *end = NULL;
			cfg->minutes = strtod(a.value, &end);
			if (!*a.value || *end || !(cfg->minutes > 0))
				return cmd_usage_error(&cmd_run, "--minutes %s: not a positive number", a.value);
			break;
		}
		case O_SIZE:
			if (!cuco_strlcpy(cfg->size, a.value, sizeof cfg->size))
				return cmd_usage_error(&cmd_run, "--size %s: name too long", a.value);
			break;
		case O_JOBS:
			if (!parse_long(a.value, 1, 16, &v))
				return cmd_usage_error(&cmd_run, "--jobs %s: not 1 to 16", a.value);
			cfg->jobs = (int)v;
			rf->jobs_given = true;
			break;
		case O_SEED:
			if (!parse_long(a.value, 0, LONG_MAX, &v))
				return cmd_usage_error(&cmd_run, "--seed %s: not a number", a.value);
			cfg->seed = (uint64_t)v;
			break;
		case O_BASELINE_EVERY:
			if (!parse_long(a.value, 1, INT_MAX, &v))
				return cmd_usage_error(&cmd_run, "--baseline-every %s: not a positive count", a.value);
			cfg->baseline_every = (int)v;
			break;
		case O_REBENCH:
			if (!parse_long(a.value, 0, 64, &v))
				return cmd_usage_error(&cmd_run, "--rebench %s: not 0 to 64", a.value);
			cfg->rebench_top = (int)v;
			break;
		case O_LLM_JOBS:
			if (!parse_long(a.value, 1, CUCO_MAX_CONCURRENCY, &v))
				return cmd_usage_error(&cmd_run, "--llm-jobs %s: not 1 to %d", a.value,
					CUCO_MAX_CONCURRENCY);
			cfg->llm_jobs = (int)v;
			break;
		case O_GENERATIONS:
			if (!parse_long(a.value, 1, 10000000, &v))
				return cmd_usage_error(&cmd_run, "--generations %s: not a positive count", a.value);
			cfg->generations = (int)v;
			break;
		case O_RANKS:
			if (!parse_long(a.value, 1, 4096, &v))
				return cmd_usage_error(&cmd_run, "--ranks %s: not 1 to 4096", a.value);
			cfg->ranks = (int)v;
			break;
		case O_SANDBOX:
			if (!cuco_sandbox_mode_parse(a.value, &cfg->eval.sandbox))
				return cmd_usage_error(&cmd_run, "--sandbox %s: not auto, bwrap or off", a.value);
			break;
		case O_RUNNER:
		case O_HOSTFILE:
		case O_HOSTS:
			if (cmd_runner_option(&a, opt, &rf->given) != CUCO_OK)
				return CUCO_EUSAGE;
			break;
		case O_HEADLESS: *headless = true; break;
		case O_THEME: look->theme = a.value; break;
		case O_NO_COLOR: look->no_color = true; break;
		case O_ASCII: look->ascii = true; break;
		}
	}
	if (!cmd_operands(&a, 1, 1, "expected one WORKLOAD"))
		return a.rc == CUCO_OK ? -1 : a.rc;
	if (!budget_given && cfg->minutes <= 0)
		cfg->budget = DEFAULT_BUDGET;
	if (cfg->nllm_specs > 0 && !strategy_given)
		cuco_strlcpy(cfg->strategy, "evolve", sizeof cfg->strategy);
	*workload = a.args[0];
	return CUCO_OK;
}

/* The sandbox's mode: --sandbox, else $CUCO_SANDBOX (the evaluator reads
 * it), else the config file's [eval] sandbox, else auto. Then say once how
 * stages will run, before any does; the evaluator settles the same way. */
static int sandbox_mode(const cmd_config *file, cuco_eval_config *ec, cuco_err *err)
{
	bool on;
	char status[640];
	int rc = cmd_sandbox_mode(file, &ec->sandbox, err);
	if (rc == CUCO_OK)
		rc = cuco_sandbox_check(ec->sandbox, &on, status, sizeof status, err);
	if (rc != CUCO_OK)
		return rc;
	/* A warning reaches stderr by itself; the good news goes to stdout. */
	if (on)
		printf("cuco: %s\n", status);
	cuco_log(on ? CUCO_LOG_INFO : CUCO_LOG_WARN, "%s", status);
	return CUCO_OK;
}

/* The slots of a remote runner or of this machine's GPU sets
 * (cmd_runner_config chose the runner), listed once here so that one that
 * cannot start (no hostfile, Slurm not answering) is said before any work;
 * a worker per slot and one to compile ahead, unless --jobs says. */
static int runner_slots(cuco_engine_config *cfg, const runner_flags *rf, int ranks, cuco_err *err)
{
	const cuco_runner_config *r = &cfg->eval.runner;
	if (r->kind == CUCO_RUNNER_LOCAL && r->slots_per_host <= 1)
		return CUCO_OK;
	cuco_slot_spec *slots = cuco_xcalloc(CUCO_MAX_SLOTS, sizeof *slots);
	int n = 0;
	char where[256];
	int rc = cuco_runner_slots(r, ranks, slots, CUCO_MAX_SLOTS, &n, where, sizeof where, err);
	if (rc == CUCO_OK) {
		printf("cuco: %s runner: %d slot%s, %s:", cuco_runner_name(r->kind), n, n == 1 ? "" : "s", where);
		for (int i = 0; i < n; i++)
			printf(" %s", slots[i].name);
		printf("\n");
		if (!rf->jobs_given)
			cfg->jobs = n + 1 < 2 ? 2 : n + 1 > 16 ? 16 : n + 1;
	}
	free(slots);
	return rc;
}

/* Open the run directory, its log and its store, once no other session
 * drives it (the engine takes the lock: engine.h). */
static int open_run(const char *dir, cuco_store **st, cuco_err *err)
{
	char log[2048];
	int rc = cuco_mkdir_p(dir, err);
	if (rc == CUCO_OK)
		rc = cuco_engine_can_drive(dir, err);
	if (rc != CUCO_OK)
		return rc;
	snprintf(log, sizeof log, "%s/cuco.log", dir);
	if ((rc = cuco_log_open(log, err)) != CUCO_OK)
		return rc;
	return cuco_store_open(dir, CUCO_STORE_CREATE, st, err);
}

/* A GPU workload that wants more GPUs than this machine shows would only
 * collect environment failures: refuse it up front (exit 3). */
static int check_fits(const cuco_workload *wl, const cuco_eval_config *ec)
{
	if (ec->runner.kind != CUCO_RUNNER_LOCAL)
		return CUCO_OK;  /* the stages run elsewhere */
	const cuco_hardware *hw = cuco_hardware_get();  /* the engine's too: detected once */
	char why[256];
	if (cuco_hardware_fits(hw, wl, why, sizeof why))
		return CUCO_OK;
	cuco_err err = { 0 };
	if (hw->ngpus > 0)
		cuco_errf(&err, CUCO_EENV, "%s: try --ranks %d (cuco doctor lists what fits here)", why, hw->ngpus);
	else
		cuco_errf(&err, CUCO_EENV, "%s (cuco doctor says what this machine has)", why);
	return cmd_fail(&err);
}

static int run_exec(int argc, char **argv)
{
	cuco_engine_config cfg;
	cuco_engine_config_init(&cfg);
	const char *run = NULL;
	bool headless = false;
	runner_flags rf = { 0 };
	/* The config file, read once: what it says is handed down from here. */
	cmd_config file;
	cmd_config_read(&file);
	cfg.config = &file.file;
	char theme_buf[64];
	const char *default_theme = cmd_default_theme(&file, theme_buf, sizeof theme_buf);
	cuco_tui_options look = { .theme = default_theme };
	const char *workload = NULL;
	int rc = parse_run_options(argc, argv, &cfg, &workload, &run, &headless, &rf, &look);
	if (rc != CUCO_OK)
		return rc < 0 ? CUCO_OK : rc;

	cuco_err err = { 0 };
	if (!look.no_color && cuco_tui_theme_check(look.theme, &err) != CUCO_OK) {
		if (look.theme != default_theme)  /* --theme */
			return cmd_usage_error(&cmd_run, "the screen's %s", err.msg);
		return cmd_fail(cmd_default_theme_error(default_theme, theme_buf, &err));
	}
	/* The whole file is checked before anything is written, so a bad
	 * [evolve] key is not found only when a strategy opens (issue 18). */
	if (file.rc != CUCO_OK)
		return cmd_fail(&file.err);
	cuco_workload *wl = NULL;
	if ((rc = cuco_workload_load(workload, &wl, &err)) != CUCO_OK)
		return cmd_fail(&err);
	if (cfg.size[0] && !cuco_workload_size(wl, cfg.size)) {
		rc = cmd_usage_error(&cmd_run, "--size %s: %s has no such size", cfg.size, wl->name);
		cuco_workload_free(wl);
		return rc;
	}
	/* Another rank count is another experiment: its own default folder, so
	 * a resume never mixes measurements taken at different scales. */
	char name[96];
	if (cfg.ranks && cfg.ranks != wl->ranks) {
		snprintf(name, sizeof name, "%s-%dranks", wl->name, cfg.ranks);
		wl->ranks = cfg.ranks;
	} else {
		snprintf(name, sizeof name, "%s", wl->name);
	}
	/* Where stages run decides what must fit here. */
	if ((rc = cmd_runner_config(&file, &rf.given, &cfg.eval.runner, &err)) != CUCO_OK) {
		cuco_workload_free(wl);
		return cmd_fail(&err);
	}
	if ((rc = check_fits(wl, &cfg.eval)) != CUCO_OK) {
		cuco_workload_free(wl);
		return rc;
	}
	char dir[1024];
	if (run)
		cuco_strlcpy(dir, run, sizeof dir);
	else
		snprintf(dir, sizeof dir, "runs/%s", name);

	cuco_store *st = NULL;
	cuco_engine *e = NULL;
	bool stopped = false;
	if ((rc = open_run(dir, &st, &err)) == CUCO_OK && (rc = catch_signals(&err)) == CUCO_OK) {
		/* In a terminal the screen runs here, on the main thread; the
		 * engine's progress lines would only scribble over it. */
		bool screen = !headless && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
		cfg.progress = screen ? NULL : stdout;
		cfg.drop_stale = true;  /* sent to a session that ended before applying them */
		printf("cuco: %s in %s: strategy %s, tuner %s, budget %d%s\n", wl->name, dir,
			cfg.strategy, cfg.tuner, cfg.budget, cfg.budget ? "" : " (none)");
		fflush(stdout);
		rc = sandbox_mode(&file, &cfg.eval, &err);
		if (rc == CUCO_OK)
			rc = runner_slots(&cfg, &rf, wl->ranks, &err);
		fflush(stdout);
		if (rc == CUCO_OK && (rc = cuco_engine_start(st, wl, cuco_strategy_find(cfg.strategy), &cfg, &e,
			&err)) == CUCO_OK) {
			link_latest(dir);
			if (screen)
				run_screen(e, st, &look);
			run_headless(e);
			stopped = cuco_engine_interrupted(e);
			rc = cuco_engine_join(e, &err);
			print_summary(st);
		}
		restore_signals();
	}
	if (st)
		cuco_store_close(st);
	cuco_log_close();
	cuco_workload_free(wl);
	if (rc != CUCO_OK)
		return cmd_fail(&err);
	return stopped ? CUCO_EXIT_STOPPED : CUCO_OK;
}

const cuco_cmd cmd_run = { "run", "WORKLOAD",
	"search for faster candidates of a workload (resumes an existing run directory)", run_exec,
	CMD_OPTIONS(options), notes };
