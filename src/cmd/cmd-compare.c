/* cmd-compare.c — `cuco compare`: strategies side by side on one workload
 * at the same budget, one table.
 *
 * Each strategy is a `cuco run` of its own (this program again), into its
 * own run directory, with the same budget of evaluations and the same
 * models and run options; then its `cuco report --json` and `cuco ls
 * --json` are read back. The table: the crowned speedup with its interval,
 * the candidates by origin and failure class, the model calls, tokens,
 * wall time, and dollars per verified improvement (a candidate that
 * passed verification and ran faster than the baseline). A search that
 * does not beat the tuner and best-of-N sampling at an equal budget has
 * shown nothing (issue 26; openevolve #100). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "strategies/strategies.h"

#define COMPARE_OPTIONS(X) \
	X(O_STRATEGIES, "strategies", 0, "LIST", 0, "strategies to run, comma-separated (default " \
		"tune,sample,evolve,beam)") \
	X(O_BUDGET, "budget", 0, "N", 0, "evaluations each (default 24)") \
	X(O_RUNS, "runs", 0, "DIR", 0, "where the runs go, one folder per strategy (default " \
		"runs/compare-WORKLOAD); an existing one is resumed") \
	X(O_LLM, "llm", 0, "SPEC", CMD_OPT_MANY, "a model, as cuco run takes it (repeatable)") \
	X(O_JSON, "json", 0, NULL, 0, "one JSON object per strategy, nothing else")
CMD_TABLE(options, COMPARE_OPTIONS);

#define COMPARE_MAX 8

typedef struct row {
	char strategy[32];
	int exit;
	double wall_s;
	cJSON *report;         /* cuco report --json, or NULL */
	int improvements;      /* done and faster than the baseline */
} row;

/* Run argv (this program), its output to out_path or, when captured is
 * not NULL, into *captured; the exit status (128 and more: a signal). */
static int spawn(char *const argv[], const char *out_path, char **captured)
{
	int fds[2] = { -1, -1 };
	if (captured && pipe(fds) != 0)
		return 127;
	pid_t pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		FILE *f = out_path ? freopen(out_path, "w", stdout) : NULL;
		if (out_path && !f)
			_exit(127);
		if (out_path)
			dup2(fileno(stdout), 2);
		if (captured) {
			dup2(fds[1], 1);
			close(fds[0]);
			close(fds[1]);
		}
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	cuco_buf b = { 0 };
	if (captured) {
		close(fds[1]);
		char chunk[4096];
		ssize_t n;
		while ((n = read(fds[0], chunk, sizeof chunk)) > 0)
			cuco_buf_append(&b, chunk, (size_t)n);
		close(fds[0]);
		*captured = b.data ? b.data : cuco_xstrdup("");
	}
	int status = 0;
	if (waitpid(pid, &status, 0) < 0)
		return 127;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* `cuco CMD --run DIR --json` parsed; NULL when it failed. */
static cJSON *json_of(const char *cmd, const char *dir)
{
	char *argv[] = { "cuco", (char *)cmd, "--run", (char *)dir, "--json", NULL };
	char *text = NULL;
	int rc = spawn(argv, NULL, &text);
	cJSON *j = rc == 0 ? cJSON_Parse(text) : NULL;
	free(text);
	return j;
}

static double num(const cJSON *j, const char *a, const char *b, const char *c)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, a);
	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	if (c)
		v = cJSON_GetObjectItemCaseSensitive(v, c);
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* "name 3, other 1" from an object of counts, the zero ones left out. */
static void counts(const cJSON *o, char *out, size_t size)
{
	size_t n = 0;
	out[0] = '\0';
	const cJSON *v;
	cJSON_ArrayForEach(v, o) {
		if (!cJSON_IsNumber(v) || v->valuedouble <= 0 || n + 1 >= size)
			continue;
		n += (size_t)snprintf(out + n, size - n, "%s%s %.0f", n ? ", " : "", v->string,
			v->valuedouble);
	}
	if (!n)
		snprintf(out, size, "-");
}

/* Candidates that passed verification and ran faster than the baseline. */
static int improvements(const cJSON *list)
{
	int n = 0;
	const cJSON *c;
	cJSON_ArrayForEach(c, list) {
		const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "status");
		double sp = num(c, "speedup", "value", NULL);
		n += cJSON_IsString(st) && strcmp(st->valuestring, "done") == 0 && sp > 1;
	}
	return n;
}

static void crowned(const row *r, char *out, size_t size)
{
	const cJSON *best = cJSON_GetObjectItemCaseSensitive(r->report, "best");
	double v = num(best, "speedup", "value", NULL), lo = num(best, "speedup", "lo", NULL),
		hi = num(best, "speedup", "hi", NULL);
	if (r->exit)
		snprintf(out, size, "exit %d", r->exit);
	else if (!isfinite(v))
		snprintf(out, size, "-");
	else if (isfinite(lo) && isfinite(hi))
		snprintf(out, size, "%.2fx [%.2f-%.2f]", v, lo, hi);
	else
		snprintf(out, size, "%.2fx (1 measurement)", v);
}

static void print_table(const row *rows, int n, const char *workload, int budget)
{
	printf("%s, %d evaluations each\n%-8s %-22s %6s %9s %8s %10s  %s\n", workload, budget,
		"STRATEGY", "CROWNED", "CALLS", "TOKENS", "WALL", "$/IMPROVED", "CANDIDATES (ORIGIN; "
		"FAILURES)");
	for (int i = 0; i < n; i++) {
		const row *r = &rows[i];
		char best[48], origin[256], fail[256], per[24] = "-";
		crowned(r, best, sizeof best);
		const cJSON *cands = cJSON_GetObjectItemCaseSensitive(r->report, "candidates");
		counts(cJSON_GetObjectItemCaseSensitive(cands, "by_origin"), origin, sizeof origin);
		counts(cJSON_GetObjectItemCaseSensitive(cands, "by_failure"), fail, sizeof fail);
		double calls = num(r->report, "calls", "total", NULL);
		double tokens = num(r->report, "tokens", "prompt", NULL) +
			num(r->report, "tokens", "completion", NULL);
		double cost = num(r->report, "cost_usd", NULL, NULL);
		if (r->improvements > 0 && isfinite(cost))
			snprintf(per, sizeof per, "$%.4f", cost / r->improvements);
		printf("%-8s %-22s %6.0f %9.0f %7.0fs %10s  %s; %s\n", r->strategy, best,
			isfinite(calls) ? calls : 0, isfinite(tokens) ? tokens : 0, r->wall_s, per, origin,
			fail);
	}
}

static void print_json(const row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "strategy", rows[i].strategy);
		cJSON_AddNumberToObject(o, "exit", rows[i].exit);
		cJSON_AddNumberToObject(o, "wall_s", rows[i].wall_s);
		cJSON_AddNumberToObject(o, "improvements", rows[i].improvements);
		cJSON_AddItemToObject(o, "report", rows[i].report ? cJSON_Duplicate(rows[i].report, 1)
			: cJSON_CreateNull());
		char *text = cJSON_PrintUnformatted(o);
		puts(text);
		free(text);
		cJSON_Delete(o);
	}
}

/* One strategy's run and what it left. */
static void run_one(row *r, const char *workload, const char *dir, int budget, char **llm,
	int nllm, char **extra, int nextra)
{
	char budget_s[16], out[1200];
	snprintf(budget_s, sizeof budget_s, "%d", budget);
	snprintf(out, sizeof out, "%s.out", dir);
	char **argv = cuco_xcalloc((size_t)(12 + 2 * nllm + nextra), sizeof *argv);
	int k = 0;
	argv[k++] = "cuco";
	argv[k++] = "run";
	argv[k++] = (char *)workload;
	argv[k++] = "--run";
	argv[k++] = (char *)dir;
	argv[k++] = "--strategy";
	argv[k++] = r->strategy;
	argv[k++] = "--budget";
	argv[k++] = budget_s;
	argv[k++] = "--headless";
	for (int i = 0; i < nllm; i++) {
		argv[k++] = "--llm";
		argv[k++] = llm[i];
	}
	for (int i = 0; i < nextra; i++)
		argv[k++] = extra[i];
	fprintf(stderr, "compare: %s: cuco run %s --strategy %s --budget %d (output in %s)\n",
		r->strategy, workload, r->strategy, budget, out);
	double t0 = cuco_mono();
	r->exit = spawn(argv, out, NULL);
	r->wall_s = cuco_mono() - t0;
	free(argv);
	r->report = json_of("report", dir);
	cJSON *list = json_of("ls", dir);
	r->improvements = improvements(list);
	cJSON_Delete(list);
	fprintf(stderr, "compare: %s: exit %d after %.0f s\n", r->strategy, r->exit, r->wall_s);
}

static int compare_exec(int argc, char **argv)
{
	char list[256] = "tune,sample,evolve,beam";
	const char *runs = NULL;
	int budget = 24, nllm = 0, o;
	char *llm[CUCO_MAX_MODELS];
	bool json = false;
	cmd_args a = CMD_ARGS(&cmd_compare, argc, argv);
	while ((o = cmd_option_next(&a)) >= 0) {
		const char *v = a.value;
		switch (o) {
		case O_STRATEGIES:
			if (!cuco_strlcpy(list, v, sizeof list))
				return cmd_usage_error(&cmd_compare, "--strategies: too long");
			break;
		case O_BUDGET: {
			char *end;
			long n = strtol(v, &end, 10);
			if (*end || n < 1 || n > 100000)
				return cmd_usage_error(&cmd_compare, "--budget %s: not 1 to 100000", v);
			budget = (int)n;
			break;
		}
		case O_RUNS: runs = v; break;
		case O_LLM:
			if (nllm == CUCO_MAX_MODELS)
				return cmd_usage_error(&cmd_compare, "--llm: at most %d models", CUCO_MAX_MODELS);
			llm[nllm++] = a.value;
			break;
		case O_JSON: json = true; break;
		}
	}
	if (!cmd_operands(&a, 1, argc, "expected a workload"))
		return a.rc;
	const char *workload = a.args[0];
	char **extra = a.args + 1;
	int nextra = a.nargs - 1;
	if (nextra > 0 && strcmp(extra[0], "--") == 0)
		extra++, nextra--;
	char dir[1024];
	snprintf(dir, sizeof dir, "%s", runs ? runs : "runs/compare-");
	if (!runs)
		cuco_strlcpy(dir + strlen(dir), workload, sizeof dir - strlen(dir));
	cuco_err err = { 0 };
	if (cuco_mkdir_p(dir, &err) != CUCO_OK)
		return cmd_fail(&err);
	row rows[COMPARE_MAX];
	int n = 0;
	for (char *save = NULL, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
		if (n == COMPARE_MAX)
			return cmd_usage_error(&cmd_compare, "--strategies: at most %d", COMPARE_MAX);
		if (!cuco_strategy_find(s))
			return cmd_usage_error(&cmd_compare, "--strategies: unknown strategy %s", s);
		memset(&rows[n], 0, sizeof rows[n]);
		cuco_strlcpy(rows[n++].strategy, s, sizeof rows[0].strategy);
	}
	for (int i = 0; i < n; i++) {
		char sub[1100];
		snprintf(sub, sizeof sub, "%s/%s", dir, rows[i].strategy);
		run_one(&rows[i], workload, sub, budget, llm, nllm, extra, nextra);
	}
	if (json)
		print_json(rows, n);
	else
		print_table(rows, n, workload, budget);
	int rc = CUCO_OK;
	for (int i = 0; i < n; i++) {
		if (rows[i].exit && !rc)
			rc = rows[i].exit == 1 || rows[i].exit == 2 || rows[i].exit == 3 ? rows[i].exit
				: CUCO_EENV;
		cJSON_Delete(rows[i].report);
	}
	return rc;
}

const cuco_cmd cmd_compare = { "compare", "WORKLOAD [-- RUN ARGS...]",
	"run strategies side by side on one workload at the same budget: one table", compare_exec,
	CMD_OPTIONS(options),
	"After --, every further argument goes to each cuco run (--seed, --jobs,\n"
	"--generations, --max-tokens, …).\n" };
