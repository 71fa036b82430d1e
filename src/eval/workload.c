/* workload.c — loading and checking workload.json (docs/workloads.md).
 *
 * One parser serves both `load` and `check`: it reports every problem it
 * finds as "<file>: <field>: <problem>" and keeps going, so `cuco check`
 * lists them all at once while load returns the first. */
#include "eval/eval_int.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST "workload.json"
#define MANIFEST_MAX (1 << 20)
#define MAX_RANKS 4096  /* a bound for the int; far past any launch here */

typedef struct wl_report {
	const char *path;  /* the manifest, as every message starts */
	void (*fn)(const char *line, void *arg);
	void *arg;
	int count;
	char first[512];
} wl_report;

static void problem(wl_report *r, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report_line(wl_report *r, const char *line)
{
	if (r->count++ == 0)
		cuco_strlcpy(r->first, line, sizeof r->first);
	if (r->fn)
		r->fn(line, r->arg);
}

static void problem(wl_report *r, const char *field, const char *fmt, ...)
{
	char what[384], line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	snprintf(line, sizeof line, "%s: %s: %s", r->path, field, what);
	/* A report is one line even when a key or value quoted in it holds
	 * control characters (found by tests/fuzz/fuzz_manifest). */
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
	report_line(r, line);
}

/* ---- typed field access ------------------------------------------------ */

static const cJSON *field(wl_report *r, const cJSON *obj, const char *key, const char *path, bool required)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!v && required)
		problem(r, path, "missing");
	return v;
}

static bool get_string(wl_report *r, const cJSON *obj, const char *key, const char *path,
	char *dst, size_t size, bool required)
{
	const cJSON *v = field(r, obj, key, path, required);
	if (!v)
		return false;
	if (!cJSON_IsString(v)) {
		problem(r, path, "expected a string");
		return false;
	}
	if (!cuco_strlcpy(dst, v->valuestring, size)) {
		problem(r, path, "too long (at most %zu characters)", size - 1);
		return false;
	}
	return true;
}

static bool get_number(wl_report *r, const cJSON *obj, const char *key, const char *path,
	double min, double *dst, bool required)
{
	const cJSON *v = field(r, obj, key, path, required);
	if (!v)
		return false;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) {
		problem(r, path, "expected a number");
		return false;
	}
	if (v->valuedouble < min) {
		problem(r, path, "%g: must be at least %g", v->valuedouble, min);
		return false;
	}
	*dst = v->valuedouble;
	return true;
}

static bool is_integer(const cJSON *v)
{
	return cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9e15;
}

static bool get_int(wl_report *r, const cJSON *obj, const char *key, const char *path,
	long min, long *dst, bool required)
{
	const cJSON *v = field(r, obj, key, path, required);
	if (!v)
		return false;
	if (!is_integer(v)) {
		problem(r, path, "expected an integer");
		return false;
	}
	if ((long)v->valuedouble < min) {
		problem(r, path, "%ld: must be at least %ld", (long)v->valuedouble, min);
		return false;
	}
	*dst = (long)v->valuedouble;
	return true;
}

static const cJSON *get_object(wl_report *r, const cJSON *obj, const char *key, const char *path, bool required)
{
	const cJSON *v = field(r, obj, key, path, required);
	if (v && !cJSON_IsObject(v)) {
		problem(r, path, "expected an object");
		return NULL;
	}
	return v;
}

static void unknown_keys(wl_report *r, const cJSON *obj, const char *prefix, const char *const *known)
{
	const cJSON *it;
	cJSON_ArrayForEach(it, obj) {
		bool ok = false;
		for (int i = 0; known[i] && !ok; i++)
			ok = strcmp(it->string, known[i]) == 0;
		if (!ok) {
			char path[160];
			snprintf(path, sizeof path, "%s%s", prefix, it->string);
			problem(r, path, "unknown field");
		}
	}
}

static bool is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return false;
	return true;
}

/* ---- sections ------------------------------------------------------------- */

static void parse_sizes(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *sizes = get_object(r, root, "sizes", "sizes", true);
	if (!sizes)
		return;
	get_string(r, sizes, "default", "sizes.default", wl->default_size, sizeof wl->default_size, true);
	const cJSON *it;
	cJSON_ArrayForEach(it, sizes) {
		if (strcmp(it->string, "default") == 0)
			continue;
		char path[160];
		snprintf(path, sizeof path, "sizes.%s", it->string);
		if (!cJSON_IsObject(it)) {
			problem(r, path, "expected an object of size variables");
			continue;
		}
		if (wl->nsizes == CUCO_MAX_SIZES) {
			problem(r, path, "too many sizes (at most %d)", CUCO_MAX_SIZES);
			return;
		}
		cuco_size *sz = &wl->sizes[wl->nsizes];
		if (!cuco_strlcpy(sz->name, it->string, sizeof sz->name)) {
			problem(r, path, "name too long");
			continue;
		}
		wl->nsizes++;
		const cJSON *var;
		cJSON_ArrayForEach(var, it) {
			char vpath[200];
			snprintf(vpath, sizeof vpath, "%s.%s", path, var->string);
			if (!is_identifier(var->string) || strlen(var->string) >= sizeof sz->vars[0].name)
				problem(r, vpath, "not a C identifier of at most %zu characters", sizeof sz->vars[0].name - 1);
			else if (!is_integer(var))
				problem(r, vpath, "expected an integer");
			else if (var->valuedouble < 0)  /* a count or a length: -DN=-5 is no size */
				problem(r, vpath, "%g: a size is at least 0", var->valuedouble);
			else if (sz->nvars == CUCO_MAX_SIZE_VARS)
				problem(r, vpath, "too many variables (at most %d)", CUCO_MAX_SIZE_VARS);
			else {
				cuco_strlcpy(sz->vars[sz->nvars].name, var->string, sizeof sz->vars[0].name);
				sz->vars[sz->nvars++].value = (long)var->valuedouble;
			}
		}
	}
	if (wl->nsizes == 0)
		problem(r, "sizes", "no size declared");
	else if (*wl->default_size && !cuco_workload_size(wl, wl->default_size))
		problem(r, "sizes.default", "\"%s\": no such size", wl->default_size);
}

/* Whether real path file lies under the folder that holds the workload's
 * folder (its siblings: "../common/x.h"). */
/* Whether file (a real path) lies below dir. */
static bool below_dir(const char *file, const char *dir)
{
	size_t n = strlen(dir);
	return n > 0 && strncmp(file, dir, n) == 0 && (file[n] == '/' || n == 1);
}

/* The workload's own: beside it (its folder's parent), or cuco's shared
 * sources (the frame, the referee's runtime), which any workload may name. */
static bool beside(const cuco_workload *wl, const char *file)
{
	char parent[PATH_MAX + 4], real[PATH_MAX], common[PATH_MAX];
	snprintf(parent, sizeof parent, "%s/..", wl->dir);
	return (realpath(parent, real) && below_dir(file, real))
		|| (eval_common_dir(common) && below_dir(file, common));
}

static void check_file(wl_report *r, const cuco_workload *wl, const char *path, const char *rel)
{
	/* Relative to the workload's folder; "../common/x.h" shares a file
	 * with a sibling, but nothing outside the folder that holds them is
	 * the workload's (a manifest could name /etc/passwd as its baseline). */
	char full[PATH_MAX], real[PATH_MAX];
	snprintf(full, sizeof full, "%s%s%s", rel[0] == '/' ? "" : wl->dir, rel[0] == '/' ? "" : "/", rel);
	struct stat sb;
	if (stat(full, &sb) != 0)
		problem(r, path, "%s: no such file", rel);
	else if (!S_ISREG(sb.st_mode) || access(full, R_OK) != 0)
		problem(r, path, "%s: not a readable file", rel);
	else if (!realpath(full, real) || !beside(wl, real))
		problem(r, path, "%s: outside the workload's folder and its siblings", rel);
}

static void parse_files(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *files = get_object(r, root, "files", "files", true);
	if (!files)
		return;
	static const char *const known[] = { "baseline", "seed", "harness", "extras", NULL };
	unknown_keys(r, files, "files.", known);
	if (get_string(r, files, "baseline", "files.baseline", wl->baseline_file, sizeof wl->baseline_file, true))
		check_file(r, wl, "files.baseline", wl->baseline_file);
	/* No seed: the fast path makes the first one (docs/workloads.md). */
	if (get_string(r, files, "seed", "files.seed", wl->seed_file, sizeof wl->seed_file, false))
		check_file(r, wl, "files.seed", wl->seed_file);
	if (get_string(r, files, "harness", "files.harness", wl->harness_file, sizeof wl->harness_file, false))
		check_file(r, wl, "files.harness", wl->harness_file);
	const cJSON *extras = field(r, files, "extras", "files.extras", false);
	if (extras && !cJSON_IsArray(extras)) {
		problem(r, "files.extras", "expected an array of file names");
		return;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, extras) {
		char path[64];
		snprintf(path, sizeof path, "files.extras[%d]", wl->nextras);
		if (wl->nextras == 8) {
			problem(r, path, "too many extras (at most 8)");
			return;
		}
		if (!cJSON_IsString(it) || !cuco_strlcpy(wl->extras[wl->nextras], it->valuestring, sizeof wl->extras[0]))
			problem(r, path, "expected a file name of at most %zu characters", sizeof wl->extras[0] - 1);
		else
			check_file(r, wl, path, wl->extras[wl->nextras]);
		wl->nextras++;
	}
}

static void parse_int_dim(wl_report *r, const cJSON *spec, const char *path, cuco_dim *d)
{
	char sub[200];
	d->kind = CUCO_DIM_INT;
	d->step = 1;
	snprintf(sub, sizeof sub, "%s.int.min", path);
	bool ok = get_int(r, spec, "min", sub, LONG_MIN, &d->min, true);
	snprintf(sub, sizeof sub, "%s.int.max", path);
	ok = get_int(r, spec, "max", sub, LONG_MIN, &d->max, true) && ok;
	snprintf(sub, sizeof sub, "%s.int.step", path);
	get_int(r, spec, "step", sub, 1, &d->step, false);
	const cJSON *pow2 = cJSON_GetObjectItemCaseSensitive(spec, "pow2");
	snprintf(sub, sizeof sub, "%s.int.pow2", path);
	if (pow2 && !cJSON_IsBool(pow2))
		problem(r, sub, "expected true or false");
	d->pow2 = cJSON_IsTrue(pow2);
	snprintf(sub, sizeof sub, "%s.int", path);
	if (ok && d->min > d->max)
		problem(r, sub, "min %ld is above max %ld", d->min, d->max);
	if (ok && d->pow2 && d->min < 1)
		problem(r, sub, "pow2 needs min >= 1");
}

static void parse_values(wl_report *r, const cJSON *values, const char *path, cuco_dim *d)
{
	char sub[200];
	snprintf(sub, sizeof sub, "%s.values", path);
	if (!cJSON_IsArray(values) || cJSON_GetArraySize(values) == 0) {
		problem(r, sub, "expected a non-empty array");
		return;
	}
	/* Strings make an enum; numbers an integer dimension listing its values. */
	d->kind = cJSON_IsNumber(cJSON_GetArrayItem(values, 0)) ? CUCO_DIM_INT : CUCO_DIM_ENUM;
	const cJSON *it;
	cJSON_ArrayForEach(it, values) {
		if (d->nvalues == CUCO_MAX_VALUES) {
			problem(r, sub, "too many values (at most %d)", CUCO_MAX_VALUES);
			return;
		}
		char *v = d->values[d->nvalues];
		if (d->kind == CUCO_DIM_INT && is_integer(it))
			snprintf(v, sizeof d->values[0], "%ld", (long)it->valuedouble);
		else if (d->kind == CUCO_DIM_ENUM && cJSON_IsString(it) && *it->valuestring
			&& cuco_strlcpy(v, it->valuestring, sizeof d->values[0])) {
			for (const char *c = v; *c; c++)
				if (!isalnum((unsigned char)*c) && !strchr("_-.", *c)) {
					problem(r, sub, "\"%s\": use letters, digits, _ - .", v);
					return;
				}
		} else {
			problem(r, sub, d->kind == CUCO_DIM_INT ? "expected integers only"
				: "expected non-empty strings of at most 31 characters");
			return;
		}
		/* A value listed twice would be drawn twice as often, and is a typo. */
		for (int k = 0; k < d->nvalues; k++)
			if (strcmp(d->values[k], v) == 0) {
				problem(r, sub, "\"%s\": given twice", v);
				return;
			}
		d->nvalues++;
	}
}

static void parse_dim(wl_report *r, const char *name, const cJSON *spec, const char *path,
	bool directive, cuco_workload *wl)
{
	if (!cJSON_IsObject(spec)) {
		problem(r, path, "expected an object with values or int");
		return;
	}
	if (wl->ndims == CUCO_MAX_DIMS) {
		problem(r, path, "too many dimensions (at most %d)", CUCO_MAX_DIMS);
		return;
	}
	if (!is_identifier(name) || strlen(name) >= sizeof wl->dims[0].name) {
		problem(r, path, "not an identifier of at most 31 characters");
		return;
	}
	if (cuco_workload_dim(wl, name)) {
		problem(r, path, "declared twice");
		return;
	}
	static const char *const known[] = { "values", "int", "define", "slot", "help", NULL };
	char prefix[200];
	snprintf(prefix, sizeof prefix, "%s.", path);
	unknown_keys(r, spec, prefix, known);
	cuco_dim *d = &wl->dims[wl->ndims];
	memset(d, 0, sizeof *d);
	cuco_strlcpy(d->name, name, sizeof d->name);
	d->directive = directive;
	const cJSON *values = cJSON_GetObjectItemCaseSensitive(spec, "values");
	const cJSON *range = cJSON_GetObjectItemCaseSensitive(spec, "int");
	if (values && range)
		problem(r, path, "give values or int, not both");
	else if (values)
		parse_values(r, values, path, d);
	else if (cJSON_IsObject(range) && cJSON_GetObjectItemCaseSensitive(range, "values")) {
		char sub[200];
		snprintf(sub, sizeof sub, "%s.int", path);
		parse_values(r, cJSON_GetObjectItemCaseSensitive(range, "values"), sub, d);
		if (d->kind != CUCO_DIM_INT)
			problem(r, sub, "values: expected integers only");
	} else if (cJSON_IsObject(range))
		parse_int_dim(r, range, path, d);
	else
		problem(r, path, "needs values (a list) or int (an object with min and max)");
	char sub[200];
	snprintf(sub, sizeof sub, "%s.define", path);
	if (get_string(r, spec, "define", sub, d->define, sizeof d->define, false) && !is_identifier(d->define))
		problem(r, sub, "\"%s\": not a C identifier", d->define);
	snprintf(sub, sizeof sub, "%s.slot", path);
	if (get_string(r, spec, "slot", sub, d->slot, sizeof d->slot, false) && !is_identifier(d->slot))
		problem(r, sub, "\"%s\": not an identifier", d->slot);
	snprintf(sub, sizeof sub, "%s.help", path);
	get_string(r, spec, "help", sub, d->help, sizeof d->help, false);
	wl->ndims++;
}

static void parse_design_space(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *ds = get_object(r, root, "design_space", "design_space", true);
	if (!ds)
		return;
	for (int i = 0; i < CUCO_DIRDIM_COUNT; i++) {
		const char *name = cuco_dirdim_name((cuco_dirdim)i);
		char path[64];
		snprintf(path, sizeof path, "design_space.%s", name);
		const cJSON *spec = field(r, ds, name, path, true);
		if (spec)
			parse_dim(r, name, spec, path, true, wl);
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, ds) {
		bool known = strcmp(it->string, "knobs") == 0 || cuco_dirdim_find(it->string) >= 0;
		if (!known) {
			char path[160];
			snprintf(path, sizeof path, "design_space.%s", it->string);
			problem(r, path, "not a directive dimension (free knobs go under design_space.knobs)");
		}
	}
	const cJSON *knobs = get_object(r, ds, "knobs", "design_space.knobs", false);
	int nknobs = 0;
	cJSON_ArrayForEach(it, knobs) {
		char path[160];
		snprintf(path, sizeof path, "design_space.knobs.%s", it->string);
		if (++nknobs > CUCO_MAX_KNOBS) {
			problem(r, path, "too many knobs (at most %d)", CUCO_MAX_KNOBS);
			return;
		}
		parse_dim(r, it->string, it, path, false, wl);
	}
}

static bool dim_allows(const cuco_dim *d, const char *value)
{
	if (d->nvalues > 0) {
		for (int i = 0; i < d->nvalues; i++)
			if (strcmp(d->values[i], value) == 0)
				return true;
		return false;
	}
	char *end;
	long v = strtol(value, &end, 10);
	if (!*value || *end || v < d->min || v > d->max)
		return false;
	if (d->pow2)
		return (v & (v - 1)) == 0;
	return (v - d->min) % d->step == 0;
}

static void parse_constraints(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *list = field(r, root, "constraints", "constraints", false);
	if (list && !cJSON_IsArray(list)) {
		problem(r, "constraints", "expected an array");
		return;
	}
	int idx = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, list) {
		char path[64], sub[200];
		snprintf(path, sizeof path, "constraints[%d]", idx++);
		if (wl->nconstraints == CUCO_MAX_CONSTRAINTS) {
			problem(r, path, "too many constraints (at most %d)", CUCO_MAX_CONSTRAINTS);
			return;
		}
		cuco_constraint *c = &wl->constraints[wl->nconstraints];
		memset(c, 0, sizeof *c);
		snprintf(sub, sizeof sub, "%s.forbid", path);
		const cJSON *forbid = get_object(r, it, "forbid", sub, true);
		snprintf(sub, sizeof sub, "%s.why", path);
		get_string(r, it, "why", sub, c->why, sizeof c->why, false);
		if (!forbid)
			continue;
		bool ok = true;
		const cJSON *term;
		cJSON_ArrayForEach(term, forbid) {
			snprintf(sub, sizeof sub, "%s.forbid.%s", path, term->string);
			const cuco_dim *d = cuco_workload_dim(wl, term->string);
			if (!d) {
				problem(r, sub, "no such dimension");
				ok = false;
				continue;
			}
			if (c->nterms == 4 || !cJSON_IsArray(term) || cJSON_GetArraySize(term) == 0
				|| cJSON_GetArraySize(term) > 8) {
				problem(r, sub, c->nterms == 4 ? "at most 4 dimensions per constraint"
					: "expected an array of 1 to 8 values");
				ok = false;
				continue;
			}
			cuco_strlcpy(c->terms[c->nterms].dim, d->name, sizeof c->terms[0].dim);
			const cJSON *v;
			cJSON_ArrayForEach(v, term) {
				char text[32] = "";
				if (cJSON_IsString(v))
					cuco_strlcpy(text, v->valuestring, sizeof text);
				else if (is_integer(v))
					snprintf(text, sizeof text, "%ld", (long)v->valuedouble);
				if (!*text || !dim_allows(d, text)) {
					problem(r, sub, "%s: not a value of %s", *text ? text : "(non-scalar)", d->name);
					ok = false;
					continue;
				}
				int k = c->terms[c->nterms].nvalues++;
				cuco_strlcpy(c->terms[c->nterms].values[k], text, sizeof c->terms[0].values[0]);
			}
			c->nterms++;
		}
		if (ok && c->nterms == 0)
			problem(r, sub, "forbids nothing");
		if (ok && c->nterms > 0)
			wl->nconstraints++;
	}
}

static void check_template(wl_report *r, const cuco_workload *wl, const char *path, const char *tmpl)
{
	eval_vars v = { .wl = wl };
	cuco_err err = { 0 };
	cuco_argv out = { 0 };
	if (strspn(tmpl, " \t") == strlen(tmpl)) {
		problem(r, path, "empty: the command that %s", strcmp(path, "build") == 0
			? "builds {source} into {output}" : "runs {output}");
		return;
	}
	if (eval_expand(tmpl, &v, &out, &err) != CUCO_OK)
		problem(r, path, "%s", err.msg);
	cuco_argv_free(&out);
	if (!strstr(tmpl, "{output}"))
		problem(r, path, "must name the program as {output}");
	if (strcmp(path, "build") == 0 && !strstr(tmpl, "{source}"))
		problem(r, path, "must name the candidate as {source}");
}

static void parse_commands(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	if (!get_string(r, root, "compiler", "compiler", wl->compiler, sizeof wl->compiler, false))
		cuco_strlcpy(wl->compiler, wl->family == CUCO_FAMILY_CPU_MPI ? "mpicc" : "nvcc", sizeof wl->compiler);
	/* Templates are checked after the design space: {<dimension>} is legal. */
	get_string(r, root, "build", "build", wl->build_cmd, sizeof wl->build_cmd, true);
	get_string(r, root, "run", "run", wl->run_cmd, sizeof wl->run_cmd, true);
	/* A frame: the trusted main() the program's object is linked with
	 * (build then compiles the program to an object; docs/workloads.md). */
	bool frame = get_string(r, root, "frame", "frame", wl->frame_file, sizeof wl->frame_file, false);
	if (frame)
		check_file(r, wl, "frame", wl->frame_file);
	bool link = get_string(r, root, "link", "link", wl->link_cmd, sizeof wl->link_cmd, false);
	if (frame != link)
		problem(r, frame ? "link" : "frame", "a frame and its link go together: give both or neither");
}

#define LIMIT_MAX_S 86400

static void parse_limits(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *limits = get_object(r, root, "limits", "limits", true);
	if (limits) {
		static const char *const known[] = { "compile_s", "run_s", "bench_s", NULL };
		unknown_keys(r, limits, "limits.", known);
		double *dst[] = { &wl->limit_compile_s, &wl->limit_run_s, &wl->limit_bench_s };
		for (int i = 0; known[i]; i++) {
			char path[32];
			snprintf(path, sizeof path, "limits.%s", known[i]);
			/* A stage limit past a day is no limit: a hung stage would hold its slot. */
			if (get_number(r, limits, known[i], path, 0.1, dst[i], true) && *dst[i] > LIMIT_MAX_S)
				problem(r, path, "%g: at most %d s (a day)", *dst[i], LIMIT_MAX_S);
		}
	}
	const cJSON *bench = get_object(r, root, "bench", "bench", true);
	if (bench) {
		static const char *const known[] = { "warmup", "reps", "max_spread", NULL };
		unknown_keys(r, bench, "bench.", known);
		long warmup = 0, reps = 1;
		get_int(r, bench, "warmup", "bench.warmup", 0, &warmup, true);
		get_int(r, bench, "reps", "bench.reps", 1, &reps, true);
		wl->warmup = (int)(warmup > 100000 ? 100000 : warmup);
		wl->reps = (int)(reps > 100000 ? 100000 : reps);
		get_number(r, bench, "max_spread", "bench.max_spread", 0, &wl->max_spread, true);
	}
	get_number(r, root, "tolerance", "tolerance", 0, &wl->tolerance, true);
}

static void parse_peak(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *peak = get_object(r, root, "peak", "peak", false);
	if (!peak)
		return;
	static const char *const known[] = { "bytes", "flops", "bandwidth_gbs", "gflops", NULL };
	unknown_keys(r, peak, "peak.", known);
	get_string(r, peak, "bytes", "peak.bytes", wl->peak_bytes, sizeof wl->peak_bytes, false);
	get_string(r, peak, "flops", "peak.flops", wl->peak_flops, sizeof wl->peak_flops, false);
	get_number(r, peak, "bandwidth_gbs", "peak.bandwidth_gbs", 0, &wl->peak_bandwidth_gbs, false);
	get_number(r, peak, "gflops", "peak.gflops", 0, &wl->peak_gflops, false);
	/* Every size must evaluate: a variable missing from one is a typo. */
	for (int i = 0; i < wl->nsizes; i++) {
		double v;
		cuco_err err = { 0 };
		if (*wl->peak_bytes && cuco_expr(wl->peak_bytes, &wl->sizes[i], wl->ranks, &v, &err) != CUCO_OK)
			problem(r, "peak.bytes", "size %s: %s", wl->sizes[i].name, err.msg);
		if (*wl->peak_flops && cuco_expr(wl->peak_flops, &wl->sizes[i], wl->ranks, &v, &err) != CUCO_OK)
			problem(r, "peak.flops", "size %s: %s", wl->sizes[i].name, err.msg);
	}
}

/* protocol.kind referee: the referee's source and build (docs/workloads.md,
 * "The referee"); it needs a frame to talk to. */
static void parse_referee(wl_report *r, const cJSON *proto, cuco_workload *wl)
{
	wl->protocol = CUCO_PROTO_REFEREE;
	if (wl->family == CUCO_FAMILY_CUDA_NCCL)
		problem(r, "protocol.kind", "referee: the cuda-nccl family has no referee's frame yet");
	if (!*wl->frame_file)
		problem(r, "protocol.kind", "referee: the program needs a frame (\"frame\" and \"link\")");
	if (get_string(r, proto, "referee", "protocol.referee", wl->referee_file, sizeof wl->referee_file, true))
		check_file(r, wl, "protocol.referee", wl->referee_file);
	get_string(r, proto, "referee_build", "protocol.referee_build", wl->referee_cmd,
		sizeof wl->referee_cmd, true);
}

static void parse_protocol(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	wl->protocol = CUCO_PROTO_NATIVE;
	wl->compat_time_scale = 1;
	const cJSON *proto = get_object(r, root, "protocol", "protocol", false);
	if (!proto)
		return;
	static const char *const known[] = { "kind", "pass", "fail", "time", "time_scale",
		"referee", "referee_build", NULL };
	unknown_keys(r, proto, "protocol.", known);
	char kind[16] = "";
	if (!get_string(r, proto, "kind", "protocol.kind", kind, sizeof kind, true))
		return;
	if (strcmp(kind, "native") == 0)
		return;
	if (strcmp(kind, "referee") == 0) {
		parse_referee(r, proto, wl);
		return;
	}
	if (strcmp(kind, "compat") != 0) {
		problem(r, "protocol.kind", "\"%s\": expected referee, native or compat", kind);
		return;
	}
	wl->protocol = CUCO_PROTO_COMPAT;
	get_string(r, proto, "pass", "protocol.pass", wl->compat_pass, sizeof wl->compat_pass, true);
	get_string(r, proto, "fail", "protocol.fail", wl->compat_fail, sizeof wl->compat_fail, false);
	if (get_string(r, proto, "time", "protocol.time", wl->compat_time, sizeof wl->compat_time, true)) {
		regex_t re;
		char why[128];
		if (eval_compile_time_re(wl->compat_time, &re, why, sizeof why) != CUCO_OK)
			problem(r, "protocol.time", "%s", why);
		else
			regfree(&re);
	}
	get_number(r, proto, "time_scale", "protocol.time_scale", 1e-12, &wl->compat_time_scale, false);
}

static void parse_context(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	const cJSON *ctx = field(r, root, "context", "context", false);
	if (ctx && !cJSON_IsArray(ctx)) {
		problem(r, "context", "expected an array of file names");
		return;
	}
	const cJSON *it;
	cJSON_ArrayForEach(it, ctx) {
		char path[32];
		snprintf(path, sizeof path, "context[%d]", wl->ncontext);
		if (wl->ncontext == CUCO_MAX_CONTEXT) {
			problem(r, path, "too many context documents (at most %d)", CUCO_MAX_CONTEXT);
			return;
		}
		if (!cJSON_IsString(it) || !cuco_strlcpy(wl->context[wl->ncontext], it->valuestring, sizeof wl->context[0]))
			problem(r, path, "expected a file name of at most %zu characters", sizeof wl->context[0] - 1);
		else
			check_file(r, wl, path, wl->context[wl->ncontext]);
		wl->ncontext++;
	}
}

static void parse_head(wl_report *r, const cJSON *root, cuco_workload *wl)
{
	static const char *const known[] = { "name", "title", "description", "family", "ranks", "sizes",
		"files", "compiler", "build", "run", "frame", "link", "design_space", "constraints", "tolerance",
		"limits", "bench", "peak", "protocol", "context", NULL };
	unknown_keys(r, root, "", known);
	if (get_string(r, root, "name", "name", wl->name, sizeof wl->name, true)) {
		const char *base = strrchr(wl->dir, '/');
		base = base ? base + 1 : wl->dir;
		if (strcmp(base, wl->name) != 0)
			problem(r, "name", "\"%s\": must be the folder's name (%s)", wl->name, base);
	}
	get_string(r, root, "title", "title", wl->title, sizeof wl->title, true);
	get_string(r, root, "description", "description", wl->description, sizeof wl->description, true);
	char family[32] = "";
	if (get_string(r, root, "family", "family", family, sizeof family, true)) {
		int f = cuco_family_parse(family);
		if (f >= 0)
			wl->family = (cuco_family)f;
		else
			problem(r, "family", "\"%s\": expected cpu-mpi, cuda-nccl or cuda", family);
	}
	long ranks = 1;
	if (get_int(r, root, "ranks", "ranks", 1, &ranks, true) && ranks > MAX_RANKS) {
		problem(r, "ranks", "%ld: must be at most %d", ranks, MAX_RANKS);  /* not cut silently */
		ranks = 1;
	}
	wl->ranks = (int)ranks;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A key given twice in one object: cJSON keeps both and every lookup sees
 * the first, so the second would be ignored silently. Sorted names find
 * it in n log n, whatever a hostile manifest holds. */
static void duplicate_keys(wl_report *r, const cJSON *node, const char *path)
{
	int n = cJSON_GetArraySize(node);
	if (n == 0 || (!cJSON_IsObject(node) && !cJSON_IsArray(node)))
		return;
	if (cJSON_IsObject(node)) {
		const char **names = cuco_xmalloc((size_t)n * sizeof *names);
		int i = 0;
		const cJSON *it;
		cJSON_ArrayForEach(it, node)
			names[i++] = it->string;
		qsort(names, (size_t)n, sizeof *names, cmp_name);
		for (i = 1; i < n; i++)
			if (strcmp(names[i - 1], names[i]) == 0) {
				char sub[256];
				snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", names[i]);
				problem(r, sub, "given twice");
				break;
			}
		free(names);
	}
	int idx = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, node) {
		char sub[256];
		if (cJSON_IsObject(node))
			snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", it->string);
		else
			snprintf(sub, sizeof sub, "%s[%d]", path, idx++);
		duplicate_keys(r, it, sub);
	}
}

static int parse_manifest(const char *path, cuco_workload *wl, wl_report *r)
{
	char *text = NULL;
	size_t len = 0;
	cuco_err err = { 0 };
	if (cuco_read_text(path, MANIFEST_MAX, &text, &len, &err) != CUCO_OK) {
		report_line(r, err.msg);
		return r->count;
	}
	/* The error position comes back through parse_end, not cJSON's global. */
	const char *at = NULL;
	cJSON *root = cJSON_ParseWithLengthOpts(text, len, &at, false);
	if (!root || !cJSON_IsObject(root)) {
		int line = 1;
		for (const char *p = text; at && p < at && p < text + len; p++)
			line += *p == '\n';
		problem(r, "(json)", root ? "expected an object" : "invalid JSON near line %d", line);
		cJSON_Delete(root);
		free(text);
		return r->count;
	}
	duplicate_keys(r, root, "");
	parse_head(r, root, wl);
	parse_sizes(r, root, wl);
	parse_files(r, root, wl);
	parse_commands(r, root, wl);
	parse_design_space(r, root, wl);
	parse_constraints(r, root, wl);
	parse_limits(r, root, wl);
	parse_peak(r, root, wl);
	parse_protocol(r, root, wl);
	parse_context(r, root, wl);
	/* An empty string is checked too: it is present, and runs nothing. */
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "build")))
		check_template(r, wl, "build", wl->build_cmd);
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(root, "run")))
		check_template(r, wl, "run", wl->run_cmd);
	if (*wl->link_cmd)
		check_template(r, wl, "link", wl->link_cmd);
	if (*wl->referee_cmd)
		check_template(r, wl, "protocol.referee_build", wl->referee_cmd);
	cJSON_Delete(root);
	free(text);
	return r->count;
}

/* ---- finding workloads ---------------------------------------------------- */

static bool is_file(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

bool eval_common_dir(char out[PATH_MAX])
{
	const cuco_paths *p = cuco_paths_get();
	for (int i = 0; i < p->nworkloads; i++) {
		const char *dir = p->workloads[i].path;
		char seal[PATH_MAX + 32];
		int len = snprintf(seal, sizeof seal, "%.*s/common/cuco_seal.h", PATH_MAX - 1, dir);
		if (len > 0 && (size_t)len < sizeof seal && is_file(seal) && realpath(dir, out)) {
			size_t n = strlen(out);
			if (n + sizeof "/common" <= PATH_MAX) {
				memcpy(out + n, "/common", sizeof "/common");
				return true;
			}
		}
	}
	out[0] = '\0';
	return false;
}

/* A name no folder holds: the nearest name that one does, if any is near. */
static int not_found(const char *name, cuco_err *err)
{
	char **names = NULL;
	size_t n = 0;
	cuco_workload_list(&names, &n, NULL);
	const char *near = cuco_nearest(name, (const char *const *)names, n);
	if (near)
		cuco_errf(err, CUCO_ENOTFOUND, "%s: no such workload; did you mean %s? (cuco workloads "
			"lists them)", name, near);
	else
		cuco_errf(err, CUCO_ENOTFOUND, "%s: no such workload (cuco workloads lists them, "
			"cuco doctor says where they are looked for)", name);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return CUCO_ENOTFOUND;
}

/* Resolve a name or path to the manifest's path and the folder's real path. */
static int resolve(const char *name_or_path, char manifest[PATH_MAX], char dir[PATH_MAX], cuco_err *err)
{
	struct stat sb;
	char candidate[PATH_MAX] = "";
	if (strchr(name_or_path, '/') || strcmp(name_or_path, ".") == 0) {
		if (stat(name_or_path, &sb) == 0 && S_ISDIR(sb.st_mode))
			snprintf(candidate, sizeof candidate, "%s/" MANIFEST, name_or_path);
		else
			snprintf(candidate, sizeof candidate, "%s", name_or_path);
		if (!is_file(candidate))
			return cuco_errf(err, CUCO_ENOTFOUND, "%s: no such workload (no %s)", name_or_path, candidate);
	} else {
		const cuco_paths *p = cuco_paths_get();
		for (int i = 0; i < p->nworkloads && !*candidate; i++) {
			int len = snprintf(candidate, sizeof candidate, "%s/%s/" MANIFEST,
				p->workloads[i].path, name_or_path);
			if (len >= (int)sizeof candidate || !is_file(candidate))
				candidate[0] = '\0';
		}
		if (!*candidate)
			return not_found(name_or_path, err);
	}
	char real[PATH_MAX];
	if (!realpath(candidate, real))
		return cuco_errf(err, CUCO_EENV, "%s: %s", candidate, strerror(errno));
	cuco_strlcpy(manifest, real, PATH_MAX);
	char *slash = strrchr(real, '/');
	*slash = '\0';
	cuco_strlcpy(dir, real, PATH_MAX);
	return CUCO_OK;
}

static int load_into(const char *name_or_path, cuco_workload *wl, wl_report *r, cuco_err *err)
{
	char manifest[PATH_MAX], dir[PATH_MAX];
	int rc = resolve(name_or_path, manifest, dir, err);
	if (rc != CUCO_OK)
		return rc;
	if (!cuco_strlcpy(wl->dir, dir, sizeof wl->dir))
		return cuco_errf(err, CUCO_EDATA, "%s: folder path too long", dir);
	r->path = manifest;
	if (parse_manifest(manifest, wl, r) > 0)
		return cuco_errf(err, CUCO_EDATA, "%s", r->first);
	return CUCO_OK;
}

int cuco_workload_load(const char *name_or_path, cuco_workload **out, cuco_err *err)
{
	cuco_workload *wl = cuco_xcalloc(1, sizeof *wl);
	wl_report r = { 0 };
	int rc = load_into(name_or_path, wl, &r, err);
	if (rc != CUCO_OK) {
		free(wl);
		return rc;
	}
	*out = wl;
	return CUCO_OK;
}

void cuco_workload_free(cuco_workload *wl)
{
	free(wl);
}

int cuco_workload_check(const char *name_or_path, void (*report)(const char *line, void *arg), void *arg)
{
	cuco_workload *wl = cuco_xcalloc(1, sizeof *wl);
	wl_report r = { .fn = report, .arg = arg };
	cuco_err err = { 0 };
	if (load_into(name_or_path, wl, &r, &err) != CUCO_OK && r.count == 0) {
		report(err.msg, arg);
		r.count = 1;
	}
	free(wl);
	return r.count;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int cuco_workload_list(char ***names, size_t *n, cuco_err *err)
{
	(void)err;  /* unreadable folders are skipped: listing is best effort */
	const cuco_paths *p = cuco_paths_get();
	char **list = NULL;
	size_t count = 0, cap = 0;
	for (int i = 0; i < p->nworkloads; i++) {
		const char *dir = p->workloads[i].path;
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d))) {
			char path[PATH_MAX + 300];
			if (e->d_name[0] == '.')
				continue;
			if (snprintf(path, sizeof path, "%s/%s/" MANIFEST, dir, e->d_name) >= (int)sizeof path)
				continue;
			bool seen = false;
			for (size_t k = 0; k < count && !seen; k++)
				seen = strcmp(list[k], e->d_name) == 0;
			if (seen || !is_file(path))
				continue;
			if (count == cap) {
				cap = cap ? cap * 2 : 16;
				list = cuco_xrealloc(list, cap * sizeof *list);
			}
			list[count++] = cuco_xstrdup(e->d_name);
		}
		closedir(d);
	}
	if (count > 1)
		qsort(list, count, sizeof *list, cmp_names);
	*names = list;
	*n = count;
	return CUCO_OK;
}

/* ---- lookups and directives ------------------------------------------------ */

static const char *const family_names[CUCO_FAMILY_COUNT] = {
#define X(e, name) name,
	CUCO_FAMILIES(X)
#undef X
};

const char *cuco_family_name(cuco_family f)
{
	return (unsigned)f < CUCO_FAMILY_COUNT ? family_names[f] : "?";
}

int cuco_family_parse(const char *name)
{
	return cuco_name_index(family_names, CUCO_FAMILY_COUNT, name);
}

const cuco_size *cuco_workload_size(const cuco_workload *wl, const char *name)
{
	if (!name || !*name)
		name = wl->default_size;
	for (int i = 0; i < wl->nsizes; i++)
		if (strcmp(wl->sizes[i].name, name) == 0)
			return &wl->sizes[i];
	return NULL;
}

const cuco_dim *cuco_workload_dim(const cuco_workload *wl, const char *name)
{
	for (int i = 0; i < wl->ndims; i++)
		if (strcmp(wl->dims[i].name, name) == 0)
			return &wl->dims[i];
	return NULL;
}

void cuco_directive_default(const cuco_workload *wl, cuco_directive *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < wl->ndims; i++) {
		const cuco_dim *d = &wl->dims[i];
		char value[32];
		if (d->nvalues > 0)
			cuco_strlcpy(value, d->values[0], sizeof value);
		else
			snprintf(value, sizeof value, "%ld", d->min);
		cuco_directive_set(out, d->name, value);
	}
}

static bool constraint_matches(const cuco_constraint *c, const cuco_directive *d)
{
	for (int t = 0; t < c->nterms; t++) {
		const char *v = cuco_directive_value(d, c->terms[t].dim);
		bool hit = false;
		for (int k = 0; k < c->terms[t].nvalues && !hit; k++)
			hit = strcmp(c->terms[t].values[k], v) == 0;
		if (!hit)
			return false;
	}
	return true;
}

bool cuco_directive_valid(const cuco_workload *wl, const cuco_directive *d, cuco_err *err)
{
	for (int i = 0; i < wl->ndims; i++) {
		const cuco_dim *dim = &wl->dims[i];
		const char *v = cuco_directive_value(d, dim->name);
		if (!dim_allows(dim, v)) {
			cuco_errf(err, CUCO_EDATA, "%s: \"%s\" is outside the design space", dim->name, v);
			return false;
		}
	}
	for (int i = 0; i < d->nknobs; i++)
		if (!cuco_workload_dim(wl, d->knobs[i].name)) {
			cuco_errf(err, CUCO_EDATA, "%s: no such knob in %s", d->knobs[i].name, wl->name);
			return false;
		}
	for (int i = 0; i < wl->nconstraints; i++)
		if (constraint_matches(&wl->constraints[i], d)) {
			cuco_errf(err, CUCO_EDATA, "constraints[%d]: forbidden combination%s%s", i,
				*wl->constraints[i].why ? ": " : "", wl->constraints[i].why);
			return false;
		}
	return true;
}

#define NEAREST_VALUES CUCO_DIM_LISTED  /* values of a dimension tried, at most */

int cuco_dim_values(const cuco_dim *d, char (*out)[32])
{
	int n = 0;
	for (; n < d->nvalues && n < CUCO_DIM_LISTED; n++)
		cuco_strlcpy(out[n], d->values[n], sizeof out[n]);
	if (d->nvalues > 0 || d->kind != CUCO_DIM_INT)
		return n;
	for (long v = d->min; v <= d->max && n < CUCO_DIM_LISTED;
			v = d->pow2 ? (v > 0 ? 2 * v : 1) : v + (d->step > 0 ? d->step : 1))
		if (!d->pow2 || (v > 0 && (v & (v - 1)) == 0))
			snprintf(out[n++], sizeof out[0], "%ld", v);
	return n;
}

/* Try every value of dimensions from `from` on, `depth` of them changed;
 * each level lists its values in its own slice of vals. */
static bool nearest_search(const cuco_workload *wl, cuco_directive *d, int skip, int from,
	int depth, char (*vals)[32])
{
	if (depth == 0)
		return cuco_directive_valid(wl, d, NULL);
	for (int i = from; i < wl->ndims; i++) {
		if (i == skip)
			continue;
		const char *name = wl->dims[i].name;
		char was[64];
		cuco_strlcpy(was, cuco_directive_value(d, name), sizeof was);
		int nv = cuco_dim_values(&wl->dims[i], vals);
		for (int v = 0; v < nv; v++) {
			char value[32];
			cuco_strlcpy(value, vals[v], sizeof value);
			if (strcmp(value, was) == 0 || cuco_directive_set(d, name, value) != CUCO_OK)
				continue;
			if (nearest_search(wl, d, skip, i + 1, depth - 1, vals + NEAREST_VALUES))
				return true;
		}
		cuco_directive_set(d, name, was);
	}
	return false;
}

bool cuco_directive_nearest(const cuco_workload *wl, const cuco_directive *base,
	const char *dim, const char *value, cuco_directive *out)
{
	const cuco_dim *target = cuco_workload_dim(wl, dim);
	if (!target)
		return false;
	int skip = (int)(target - wl->dims);
	char (*vals)[32] = cuco_xmalloc(3 * NEAREST_VALUES * sizeof *vals);
	int nv = cuco_dim_values(target, vals);
	bool known = false;
	for (int v = 0; v < nv; v++)
		known |= strcmp(vals[v], value) == 0;
	cuco_directive d = *base;
	bool found = known && cuco_directive_set(&d, dim, value) == CUCO_OK;
	int depth = 0;
	while (found && depth <= 2 && !nearest_search(wl, &d, skip, 0, depth, vals))
		depth++;
	free(vals);
	if (!found || depth > 2)
		return false;
	*out = d;
	return true;
}

void cuco_workload_compiler(const cuco_workload *wl, const cuco_env *env, char *out, size_t size)
{
	const char *env_cc = wl->family == CUCO_FAMILY_CPU_MPI ? env->mpicc : env->nvcc;
	cuco_strlcpy(out, env_cc ? env_cc : wl->compiler, size);
}

int cuco_workload_peak(const cuco_workload *wl, const cuco_size *size, double *bytes, double *flops, cuco_err *err)
{
	*bytes = *flops = NAN;
	if (!size)
		size = cuco_workload_size(wl, NULL);
	int rc = CUCO_OK;
	if (*wl->peak_bytes)
		rc = cuco_expr(wl->peak_bytes, size, wl->ranks, bytes, err);
	if (rc == CUCO_OK && *wl->peak_flops)
		rc = cuco_expr(wl->peak_flops, size, wl->ranks, flops, err);
	return rc;
}
