/* init.c — `cuco init`: a workload from a user's own host-driven program.
 *
 * The program is read lexically (analyze.c) and becomes the baseline; the
 * family comes from what it includes and calls, the design space is the
 * family's standard one (below, one row per directive dimension of
 * vocab.h's table), the sizes are the values it declares under #ifndef
 * (what a build's -D overrides), the protocol is native when it uses
 * cuco's harness and compat when it prints CUCo's lines, and everything
 * guessed is said, one line each, to the person and into context.md.
 * There is no seed: the fast path makes the first device-initiated program
 * (a one-GPU program, with nothing to make device-initiated, starts from
 * itself). The folder is made whole or not at all, never over an existing
 * one, and the baseline is built once before cuco says yes.
 */
#include "analyze/analyze.h"
#include "text.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* Each family's standard design space, in the order of vocab.h's
 * CUCO_DIRECTIVE_DIMS: enum values (space-separated), or "int MIN MAX"
 * for powers of two, and what they mean for that family (vocab.h's help
 * is the same for all). The first value of each is the baseline's. */
typedef struct dim_row { const char *values, *help; } dim_row;

static const dim_row spaces[][CUCO_DIRDIM_COUNT] = {
	[CUCO_FAMILY_CPU_MPI] = {
		{ "msg rma shm", "how data moves: two-sided messages | MPI_Put into a window (GIN's "
			"analogue) | loads from a shared-memory window (LSA's analogue)" },
		{ "one several", "who moves it: the compute thread | a helper thread per rank" },
		{ "after interleave prefetch", "communication after the compute | interleaved with it "
			"chunk by chunk | the next chunk started before this one is used" },
		{ "fence flag pscw", "what makes data visible: a barrier or fence over all | a flag per "
			"chunk | post-start-complete-wait epochs" },
		{ "int 1 64", "chunks the exchanged data is cut into" },
	},
	[CUCO_FAMILY_CUDA_NCCL] = {
		{ "lsa gin", "how bytes move: NVLink stores through peer pointers (LSA) | GPU-initiated "
			"RDMA puts with signals (GIN, needs an InfiniBand or RoCE NIC)" },
		{ "cta warp thread", "the NCCL coop that moves a share and meets its peers at a barrier "
			"slot: a CTA | a warp | a thread" },
		{ "after overlap pipelined", "communication after the compute | beside it on the SMs it "
			"leaves free | chunk by chunk as the data lands" },
		{ "barrier flag", "LSA barriers between phases | a flag per chunk raised on the peer" },
		{ "int 1 16", "chunks the data is pushed in" },
	},
	[CUCO_FAMILY_CUDA] = {
		{ "cuda", "one GPU: no communication" },
		{ "cta warp thread", "who does one row's work: a CTA | a warp | a thread" },
		{ "direct staged", "data straight from global memory | staged through shared memory" },
		{ "none shuffle smem", "how threads combine: not at all | warp shuffles | shared memory" },
		{ "int 1 8", "rows (or elements) per group of threads" },
	},
};

/* The defines each dimension reaches the source as. */
static const char *const defines[CUCO_DIRDIM_COUNT] = { "CUCO_BACKEND", "CUCO_ISSUER",
	"CUCO_PLACEMENT", "CUCO_SYNC", "CUCO_CHUNKS" };

/* cuco's harnesses: a program that includes one speaks the native protocol. */
static const struct { const char *header, *folder; cuco_family family; } harnesses[] = {
	{ "cuco_harness.h", "common", CUCO_FAMILY_CPU_MPI },
	{ "cuco_gpu.h", "gpu-common", CUCO_FAMILY_CUDA_NCCL },
};

typedef struct init {
	const cuco_init_spec *s;
	cuco_program *p;
	cuco_buf *said;
	cuco_family family;
	int ranks;
	int harness;             /* index in harnesses[], -1: compat */
	char time_re[128];
	double time_scale;
	char pass[64];
	char ext[16];
	char dir[PATH_MAX];
	char build[1024], run[512];
	cJSON *extras;
	bool made;               /* mkdir made the folder */
} init;

static void say(init *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(init *in, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char line[768];
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	cuco_buf_printf(in->said, "- %s\n", line);
}

/* ---- guesses ---------------------------------------------------------------- */

static int guess_family(init *in, cuco_err *err)
{
	const cuco_program *p = in->p;
	if (in->s->family >= 0) {
		in->family = (cuco_family)in->s->family;
		say(in, "family: %s, as --family says", cuco_family_name(in->family));
		return CUCO_OK;
	}
	if (p->nccl) {
		in->family = CUCO_FAMILY_CUDA_NCCL;
		say(in, "family: cuda-nccl, since the program includes nccl.h or calls NCCL");
	} else if (p->cuda && p->mpi) {
		in->family = CUCO_FAMILY_CUDA_NCCL;
		say(in, "family: cuda-nccl, since the program is CUDA with MPI ranks but no NCCL: the "
			"fast path brings NCCL's Device API in (pass --family to say otherwise)");
	} else if (p->cuda) {
		in->family = CUCO_FAMILY_CUDA;
		say(in, "family: cuda (one GPU), since the program is CUDA and calls neither MPI nor NCCL");
	} else if (p->mpi) {
		in->family = CUCO_FAMILY_CPU_MPI;
		say(in, "family: cpu-mpi, since the program includes mpi.h or calls MPI and no CUDA");
	} else {
		return cuco_errf(err, CUCO_EDATA, "%s: neither MPI, NCCL nor CUDA in it (no mpi.h, nccl.h "
			"or cuda_runtime.h, no MPI_, nccl or cuda call, no kernel): pass --family", p->path);
	}
	return CUCO_OK;
}

/* What a "Time: %.4f ms" literal prints, as a pattern anchored like
 * CUCo's evaluator's, and the unit's scale to microseconds. */
static bool time_line(const cuco_program *p, init *in, int *line)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ms", 1000 }, { "us", 1 }, { "s", 1e6 } };
	if (!cuco_program_prints(p, "Time:", line))
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		char probe[32];
		snprintf(probe, sizeof probe, "f %s", units[i].unit);
		char probe2[32];
		snprintf(probe2, sizeof probe2, "f%s", units[i].unit);
		if (cuco_program_prints(p, probe, NULL) || cuco_program_prints(p, probe2, NULL)) {
			snprintf(in->time_re, sizeof in->time_re, "^Time: *([0-9.]+) *%s", units[i].unit);
			in->time_scale = units[i].scale;
			return true;
		}
	}
	snprintf(in->time_re, sizeof in->time_re, "^Time: *([0-9.]+) *ms");
	in->time_scale = 1000;
	return true;
}

static int guess_protocol(init *in, cuco_err *err)
{
	const cuco_program *p = in->p;
	in->harness = -1;
	for (size_t i = 0; i < sizeof harnesses / sizeof harnesses[0]; i++)
		if (cuco_program_includes(p, harnesses[i].header)) {
			in->harness = (int)i;
			say(in, "protocol: native, since the program includes cuco's harness %s (it prints "
				"the verdict)", harnesses[i].header);
			return CUCO_OK;
		}
	int tline = 0, vline = 0;
	bool timed = time_line(p, in, &tline);
	bool verified = cuco_program_prints(p, "Verification: PASS", &vline) ||
		(cuco_program_prints(p, "Verification: %s", &vline) && cuco_program_prints(p, "PASS", NULL));
	if (timed && verified) {
		cuco_strlcpy(in->pass, "Verification: PASS", sizeof in->pass);
		say(in, "protocol: compat, since the program prints CUCo's lines: \"Time:\" (line %d), "
			"read as %s, and \"Verification: PASS\" (line %d); a FAIL anywhere is a wrong answer, "
			"and a time per rank counts as its slowest rank's", tline, in->time_re, vline);
		return CUCO_OK;
	}
	if (cuco_program_prints(p, "CUCO_RESULT", NULL))
		return cuco_errf(err, CUCO_EDATA, "%s: prints a CUCO_RESULT line of its own: the native "
			"verdict comes from cuco's harness (include workloads/common/cuco_harness.h) — or print "
			"CUCo's \"Time: X ms\" and \"Verification: PASS\" lines", p->path);
	if (timed)
		return cuco_errf(err, CUCO_EDATA, "%s: prints \"Time:\" (line %d) but never \"Verification: "
			"PASS\": a run counts as correct only when the program says so after checking its "
			"result", p->path, tline);
	if (verified)
		return cuco_errf(err, CUCO_EDATA, "%s: prints \"Verification: PASS\" (line %d) but no "
			"\"Time: X ms\" line: there is nothing to measure", p->path, vline);
	return cuco_errf(err, CUCO_EDATA, "%s: no result lines: it prints neither cuco's verdict (through "
		"workloads/common/cuco_harness.h) nor CUCo's \"Time: X ms\" and \"Verification: PASS\" "
		"lines (docs/workloads.md, Result protocols, shows both)", p->path);
}

static void guess_ranks(init *in)
{
	if (in->s->ranks > 0) {
		in->ranks = in->s->ranks;
		say(in, "ranks: %d, as --ranks says", in->ranks);
	} else if (in->family == CUCO_FAMILY_CUDA) {
		in->ranks = 1;
		say(in, "ranks: 1, a one-GPU program");
	} else {
		in->ranks = 2;
		say(in, "ranks: 2, the fewest that communicate (pass --ranks N for more)");
	}
}

/* ---- the manifest ------------------------------------------------------------- */

static void add_dim(cJSON *space, cuco_dirdim d, const dim_row *row)
{
	const char *spec = row->values;
	cJSON *dim = cJSON_AddObjectToObject(space, cuco_dirdim_name(d));
	long lo, hi;
	if (sscanf(spec, "int %ld %ld", &lo, &hi) == 2) {
		cJSON *r = cJSON_AddObjectToObject(dim, "int");
		cJSON_AddNumberToObject(r, "min", (double)lo);
		cJSON_AddNumberToObject(r, "max", (double)hi);
		cJSON_AddTrueToObject(r, "pow2");
	} else {
		cJSON *values = cJSON_AddArrayToObject(dim, "values");
		char copy[128];
		cuco_strlcpy(copy, spec, sizeof copy);
		for (char *save, *v = strtok_r(copy, " ", &save); v; v = strtok_r(NULL, " ", &save))
			cJSON_AddItemToArray(values, cJSON_CreateString(v));
	}
	cJSON_AddStringToObject(dim, "define", defines[d]);
	cJSON_AddStringToObject(dim, "help", row->help);
}

static void add_space(init *in, cJSON *root)
{
	cJSON *space = cJSON_AddObjectToObject(root, "design_space");
	char line[512];
	size_t n = 0;
	for (int d = 0; d < CUCO_DIRDIM_COUNT; d++) {
		add_dim(space, (cuco_dirdim)d, &spaces[in->family][d]);
		n += (size_t)snprintf(line + n, sizeof line - n, "%s%s %s", d ? "; " : "",
			cuco_dirdim_name((cuco_dirdim)d), spaces[in->family][d].values);
		if (n >= sizeof line)
			n = sizeof line - 1;
	}
	cJSON_AddObjectToObject(space, "knobs");
	say(in, "design space: %s's standard one (%s), no knobs: the program reads none of these "
		"defines yet, a candidate does", cuco_family_name(in->family), line);
	if (in->family == CUCO_FAMILY_CPU_MPI) {
		cJSON *cs = cJSON_AddArrayToObject(root, "constraints");
		cJSON *c = cJSON_CreateObject();
		cJSON *forbid = cJSON_AddObjectToObject(c, "forbid");
		cJSON *b = cJSON_AddArrayToObject(forbid, "backend");
		cJSON_AddItemToArray(b, cJSON_CreateString("msg"));
		cJSON_AddItemToArray(b, cJSON_CreateString("shm"));
		cJSON *sy = cJSON_AddArrayToObject(forbid, "sync");
		cJSON_AddItemToArray(sy, cJSON_CreateString("pscw"));
		cJSON_AddStringToObject(c, "why", "post-start-complete-wait is an RMA epoch");
		cJSON_AddItemToArray(cs, c);
	}
}

static void add_sizes(init *in, cJSON *root)
{
	cJSON *sizes = cJSON_AddObjectToObject(root, "sizes");
	cJSON_AddStringToObject(sizes, "default", "program");
	cJSON *prog = cJSON_AddObjectToObject(sizes, "program");
	cuco_buf kept = { 0 }, left = { 0 };
	int n = 0;
	for (int i = 0; i < in->p->nmacros && n < CUCO_MAX_SIZE_VARS; i++) {
		const cuco_macro *m = &in->p->macros[i];
		double v;
		if (cuco_expr(m->value, NULL, in->ranks, &v, NULL) == CUCO_OK && v == floor(v) &&
				fabs(v) < 9e15 && strlen(m->name) < sizeof ((cuco_size *)0)->vars[0].name) {
			cJSON_AddNumberToObject(prog, m->name, v);
			cuco_buf_printf(&kept, "%s%s=%.0f", n++ ? ", " : "", m->name, v);
		} else {
			cuco_buf_printf(&left, "%s%s (%s)", left.len ? ", " : "", m->name, m->value);
		}
	}
	if (n)
		say(in, "sizes: one, \"program\", with the values the program declares under #ifndef, which "
			"a build's -D overrides: %s; add sizes in workload.json to search at others", kept.data);
	else
		say(in, "sizes: one, \"program\", with no variables: the program declares no value under "
			"#ifndef NAME that a build's -D could change");
	if (left.len)
		say(in, "not sizes, as cuco cannot read them as integers: %s", left.data);
	cuco_buf_free(&kept);
	cuco_buf_free(&left);
}

static const char *compiler_of(const init *in)
{
	if (in->family != CUCO_FAMILY_CPU_MPI)
		return "nvcc";
	return strcmp(in->ext, ".c") == 0 ? "mpicc" : "mpicxx";
}

static void make_templates(init *in)
{
	const cuco_program *p = in->p;
	const char *harness_inc = in->harness >= 0 ? harnesses[in->harness].folder : NULL;
	char extra[160] = "";
	if (harness_inc)
		snprintf(extra, sizeof extra, " -I{workload}/../%s", harness_inc);
	if (in->family == CUCO_FAMILY_CPU_MPI)
		snprintf(in->build, sizeof in->build, "{compiler} -O2%s -I{workload}%s -o {output} {source} "
			"{defines} -lm%s", harness_inc ? " -std=c11 -D_GNU_SOURCE" : "", extra,
			harness_inc ? " -pthread" : "");
	else
		snprintf(in->build, sizeof in->build, "{compiler} -O3 -arch=sm_90 -std=c++17%s -I{workload}%s"
			"%s -o {output} {source} {defines}%s%s", p->mpi ? " -ccbin mpicxx" : "", extra,
			in->family == CUCO_FAMILY_CUDA_NCCL ? " -isystem {nccl_home}/include" : "",
			in->family == CUCO_FAMILY_CUDA_NCCL ? " -L{nccl_home}/lib -L{nccl_home}/lib64 "
			"-Xlinker -rpath -Xlinker {nccl_home}/lib -l:libnccl.so.2" : "",
			p->cublas ? " -lcublas" : "");
	if (in->s->build) {
		cuco_strlcpy(in->build, in->s->build, sizeof in->build);
		say(in, "build: %s, as --build says", in->build);
	} else {
		say(in, "build: %s (%s's default, with %s%s%s)", in->build, cuco_family_name(in->family),
			compiler_of(in), in->family != CUCO_FAMILY_CPU_MPI ? " for an H200 (-arch=sm_90: "
			"change it for another GPU)" : "", p->cublas ? "; cuBLAS linked, as the program "
			"uses it" : "");
	}
	if (in->harness >= 0)
		cuco_strlcpy(in->run, "{output} --warmup {warmup} --reps {reps}", sizeof in->run);
	else
		cuco_strlcpy(in->run, "{output}", sizeof in->run);
	if (in->s->run)
		cuco_strlcpy(in->run, in->s->run, sizeof in->run);
	say(in, "run: %s%s", in->s->run ? "as --run says" : in->run, in->ranks > 1 &&
		in->family != CUCO_FAMILY_CUDA ? " (under mpirun with the ranks)" : "");
}

static cJSON *manifest(init *in)
{
	const cuco_program *p = in->p;
	cJSON *root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "name", in->s->name);
	char text[1024];
	const char *prog = strrchr(p->path, '/') ? strrchr(p->path, '/') + 1 : p->path;
	snprintf(text, sizeof text, "%.80s, made a workload by cuco init", prog);
	cJSON_AddStringToObject(root, "title", text);
	snprintf(text, sizeof text, "A user's own program (%.200s): its host-driven communication (%d "
		"host call%s, cuco analyze lists them) is what a search replaces with communication the "
		"%s start themselves, overlapped with the computation.", prog, p->ncomm,
		p->ncomm == 1 ? "" : "s", in->family == CUCO_FAMILY_CPU_MPI ? "ranks" : "GPUs");
	cJSON_AddStringToObject(root, "description", text);
	cJSON_AddStringToObject(root, "family", cuco_family_name(in->family));
	cJSON_AddNumberToObject(root, "ranks", in->ranks);
	add_sizes(in, root);
	cJSON *files = cJSON_AddObjectToObject(root, "files");
	char baseline[32];
	snprintf(baseline, sizeof baseline, "baseline%s", in->ext);
	cJSON_AddStringToObject(files, "baseline", baseline);
	if (in->s->seed) {
		char seed[32];
		snprintf(seed, sizeof seed, "seed%s", in->ext);
		cJSON_AddStringToObject(files, "seed", seed);
		say(in, "seed: %s, copied as %s: the directive tuner (no model) and the islands start "
			"from it, and the fast path is not needed", in->s->seed, seed);
	} else if (in->family == CUCO_FAMILY_CUDA) {
		cJSON_AddStringToObject(files, "seed", baseline);
		say(in, "seed: the program itself: a one-GPU program has no communication for the fast "
			"path to make device-initiated, so the search starts from it");
	} else {
		say(in, "seed: none: the fast path (cuco run --strategy evolve or beam, with a model) "
			"makes the first device-initiated program from the baseline");
	}
	if (in->harness >= 0) {
		char h[128];
		snprintf(h, sizeof h, "../%s/%s", harnesses[in->harness].folder, harnesses[in->harness].header);
		cJSON_AddStringToObject(files, "harness", h);
	}
	cJSON_AddItemToObject(files, "extras", in->extras);
	in->extras = NULL;
	cJSON_AddStringToObject(root, "compiler", compiler_of(in));
	cJSON_AddStringToObject(root, "build", in->build);
	cJSON_AddStringToObject(root, "run", in->run);
	add_space(in, root);
	cJSON_AddNumberToObject(root, "tolerance", 1e-3);
	cJSON *limits = cJSON_AddObjectToObject(root, "limits");
	bool gpu = in->family != CUCO_FAMILY_CPU_MPI;
	cJSON_AddNumberToObject(limits, "compile_s", gpu ? 300 : 120);
	cJSON_AddNumberToObject(limits, "run_s", 60);
	cJSON_AddNumberToObject(limits, "bench_s", 120);
	cJSON *bench = cJSON_AddObjectToObject(root, "bench");
	cJSON_AddNumberToObject(bench, "warmup", 3);
	cJSON_AddNumberToObject(bench, "reps", 15);
	cJSON_AddNumberToObject(bench, "max_spread", 0.25);
	cJSON *proto = cJSON_AddObjectToObject(root, "protocol");
	cJSON_AddStringToObject(proto, "kind", in->harness >= 0 ? "native" : "compat");
	if (in->harness < 0) {
		cJSON_AddStringToObject(proto, "pass", in->pass);
		cJSON_AddStringToObject(proto, "time", in->time_re);
		cJSON_AddNumberToObject(proto, "time_scale", in->time_scale);
	}
	say(in, "no peak model: a candidate is scored by its speedup over the baseline (add peak.bytes "
		"and peak.flops to workload.json to score it by the fraction of the hardware's peak)");
	cJSON *ctx = cJSON_AddArrayToObject(root, "context");
	cJSON_AddItemToArray(ctx, cJSON_CreateString("context.md"));
	return root;
}

/* ---- files ---------------------------------------------------------------------- */

static int write_in(const init *in, const char *rel, const char *text, size_t len, cuco_err *err)
{
	char path[PATH_MAX + 256];
	snprintf(path, sizeof path, "%s/%s", in->dir, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	int rc = cuco_mkdir_p(path, err);
	*slash = '/';
	return rc == CUCO_OK ? cuco_write_file(path, text, len, err) : rc;
}

/* The user's seed beside the baseline, as seed.EXT. It must mark what a
 * search may change: the tuner and the islands vary only that. */
static int copy_seed(const init *in, cuco_err *err)
{
	char *text, name[32];
	size_t len;
	int rc = cuco_read_file(in->s->seed, 16u << 20, &text, &len, err);
	if (rc != CUCO_OK)
		return rc;
	cuco_block *b;
	size_t n;
	rc = cuco_text_blocks(text, len, in->s->seed, &b, &n, err);
	free(b);
	if (rc == CUCO_OK && n == 0)
		rc = cuco_errf(err, CUCO_EDATA, "%s: no EVOLVE-BLOCK-START / EVOLVE-BLOCK-END lines: a seed "
			"marks the code a search may change", in->s->seed);
	snprintf(name, sizeof name, "seed%s", in->ext);
	if (rc == CUCO_OK)
		rc = write_in(in, name, text, len, err);
	free(text);
	return rc;
}

/* The local headers the program includes, at the same paths beside the
 * baseline, and each header's own local includes; each an extra. */
static int copy_headers(init *in, cuco_err *err)
{
	char src_dir[PATH_MAX];
	cuco_strlcpy(src_dir, in->s->program, sizeof src_dir);
	char *slash = strrchr(src_dir, '/');
	if (slash)
		*slash = '\0';
	else
		cuco_strlcpy(src_dir, ".", sizeof src_dir);
	in->extras = cJSON_CreateArray();
	char todo[16][128];
	int ntodo = 0;
	for (int i = 0; i < in->p->nincludes && ntodo < 16; i++)
		if (in->p->includes[i].local)
			cuco_strlcpy(todo[ntodo++], in->p->includes[i].name, sizeof todo[0]);
	for (int k = 0; k < ntodo; k++) {
		const char *rel = todo[k];
		bool harness = false;
		for (size_t h = 0; h < sizeof harnesses / sizeof harnesses[0]; h++)
			harness = harness || strcmp(strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel,
				harnesses[h].header) == 0;
		char path[2 * PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", src_dir, rel);
		if (harness || access(path, R_OK) != 0)
			continue;  /* cuco's own harness, or a header found on the build's -I */
		if (rel[0] == '/' || strstr(rel, ".."))
			return cuco_errf(err, CUCO_EDATA, "%s: includes \"%s\", outside its folder: put the "
				"header beside the program (cuco init copies the program's folder's headers)",
				in->s->program, rel);
		char *text;
		size_t len;
		int rc = cuco_read_file(path, 4u << 20, &text, &len, err);
		if (rc == CUCO_OK)
			rc = write_in(in, rel, text, len, err);
		if (rc != CUCO_OK) {
			free(text);
			return rc;
		}
		cJSON_AddItemToArray(in->extras, cJSON_CreateString(rel));
		say(in, "copied %s beside the baseline, as the program includes it", rel);
		cuco_text_includes(text, len, todo, &ntodo, 16);
		free(text);
	}
	return CUCO_OK;
}

static int write_context(const init *in, cuco_err *err)
{
	cuco_buf b = { 0 };
	cuco_buf_printf(&b, "# %s: what cuco init found\n\n`cuco init %s --from %s` made this workload "
		"from a program of its user's. What it guessed:\n\n%s\nThe communication analysis of the "
		"baseline (`cuco analyze baseline%s`) goes into the fast path's prompts.\n", in->s->name,
		in->s->name, in->s->program, in->said->data, in->ext);
	int rc = write_in(in, "context.md", b.data, b.len, err);
	cuco_buf_free(&b);
	return rc;
}

/* ---- the trial build ------------------------------------------------------------- */

/* ---- the trial ------------------------------------------------------------------- */

struct trial {
	init *in;
	cuco_err *err;
	int rc;       /* the first problem, as the error init returns */
	bool ran;     /* nothing was left unrun for want of mpirun or a GPU */
};

static void trial_finding(cuco_try_what what, cuco_try_kind kind, const char *line, void *arg)
{
	struct trial *t = arg;
	const char *file = what == CUCO_TRY_SEED ? t->in->s->seed : t->in->s->program;
	t->ran &= kind != CUCO_TRY_NOT_RUN;
	if (kind != CUCO_TRY_PROBLEM)
		say(t->in, "%s%s: %s", kind == CUCO_TRY_WARNING ? "warning: " : "", file, line);
	else if (t->rc == CUCO_OK)
		t->rc = cuco_errf(t->err, CUCO_EDATA, "%s: %s", file, line);
}

/* The baseline and the seed evaluated once, as a run's first evaluations
 * (try.c): a problem refuses the workload, a warning is said, and so is
 * what this machine could not run (no mpirun, no GPU). */
static int trial(init *in, cuco_err *err)
{
	cuco_workload *wl;
	int rc = cuco_workload_load(in->dir, &wl, err);
	if (rc != CUCO_OK)
		return rc;
	struct trial t = { in, err, CUCO_OK, true };
	rc = cuco_workload_try(wl, trial_finding, &t, err);
	cuco_workload_free(wl);
	if (rc != CUCO_OK)
		return rc;
	if (t.rc != CUCO_OK)
		return t.rc;
	say(in, "the baseline%s %s as a run's first evaluations do (tried once)", in->s->seed ?
		" and the seed" : "", t.ran ? "built and ran" : "built");
	return CUCO_OK;
}

/* ---- the whole ------------------------------------------------------------------- */

static bool good_name(const char *name)
{
	if (!isalnum((unsigned char)*name) || strlen(name) >= sizeof ((cuco_workload *)0)->name)
		return false;
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.')
			return false;
	return true;
}

/* A native program builds against cuco's harness in workloads/common (or
 * gpu-common), which its build reaches as {workload}/../common. */
static int harness_beside(const init *in, cuco_err *err)
{
	char path[PATH_MAX + 200];
	const char *slash = strrchr(in->dir, '/');
	snprintf(path, sizeof path, "%.*s%s%s/%s", slash ? (int)(slash - in->dir) : 1,
		slash ? in->dir : ".", "/", harnesses[in->harness].folder, harnesses[in->harness].header);
	if (access(path, R_OK) == 0)
		return CUCO_OK;
	return cuco_errf(err, CUCO_EUSAGE, "%s: uses cuco's harness %s, which a workload reaches as "
		"../%s/%s: make it beside cuco's workloads (leave --dir out, in cuco's folder); %s is "
		"missing", in->s->program, harnesses[in->harness].header, harnesses[in->harness].folder,
		harnesses[in->harness].header, path);
}

static int make(init *in, cuco_err *err)
{
	int rc = guess_family(in, err);
	if (rc == CUCO_OK)
		rc = guess_protocol(in, err);
	if (rc != CUCO_OK)
		return rc;
	if (in->harness >= 0 && (rc = harness_beside(in, err)) != CUCO_OK)
		return rc;
	guess_ranks(in);
	make_templates(in);
	if (mkdir(in->dir, 0755) != 0)
		return cuco_errf(err, errno == EEXIST ? CUCO_EUSAGE : CUCO_EENV, "%s: %s", in->dir,
			errno == EEXIST ? "already exists: cuco init never overwrites (remove it, or give "
			"another NAME or --dir)" : strerror(errno));
	in->made = true;
	char *text;
	size_t len;
	char baseline[32];
	snprintf(baseline, sizeof baseline, "baseline%s", in->ext);
	rc = cuco_read_file(in->s->program, 16u << 20, &text, &len, err);
	if (rc == CUCO_OK) {
		rc = write_in(in, baseline, text, len, err);
		free(text);
	}
	if (rc == CUCO_OK && in->s->seed)
		rc = copy_seed(in, err);
	if (rc == CUCO_OK)
		rc = copy_headers(in, err);
	cJSON *root = rc == CUCO_OK ? manifest(in) : NULL;
	if (root) {
		char *json = cJSON_Print(root);
		cJSON_Delete(root);
		rc = write_in(in, "workload.json", json, strlen(json), err);
		free(json);
	}
	/* Written twice: the workload loads for the trial build only with it. */
	if (rc == CUCO_OK)
		rc = write_context(in, err);
	if (rc == CUCO_OK && in->s->trial_build && (rc = trial(in, err)) == CUCO_OK)
		rc = write_context(in, err);
	return rc;
}

int cuco_workload_init(const cuco_init_spec *s, cuco_buf *said, char *dir, size_t size,
	cuco_err *err)
{
	if (!good_name(s->name))
		return cuco_errf(err, CUCO_EUSAGE, "%s: a workload's name is letters, digits and - _ . "
			"(starting with a letter or digit)", s->name);
	init in = { .s = s, .said = said };
	const char *ext = strrchr(s->program, '.');
	if (!ext || strchr(ext, '/') || strlen(ext) >= sizeof in.ext)
		return cuco_errf(err, CUCO_EDATA, "%s: no file extension (.c, .cc, .cpp, .cu)", s->program);
	cuco_strlcpy(in.ext, ext, sizeof in.ext);
	if (s->dir)
		cuco_strlcpy(in.dir, s->dir, sizeof in.dir);
	else
		snprintf(in.dir, sizeof in.dir, "workloads/%s", s->name);
	char *slash = strrchr(in.dir, '/');
	const char *leaf = slash ? slash + 1 : in.dir;
	if (strcmp(leaf, s->name) != 0)
		return cuco_errf(err, CUCO_EUSAGE, "--dir %s: its last part must be the workload's name (%s)",
			in.dir, s->name);
	int rc = cuco_program_read(s->program, &in.p, err);
	if (rc != CUCO_OK)
		return rc;
	if (!in.p->main_line) {
		cuco_program_free(in.p);
		return cuco_errf(err, CUCO_EDATA, "%s: no main(): cuco init needs a whole program, which "
			"becomes the baseline and runs as it is", s->program);
	}
	if (slash) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%.*s", (int)(slash - in.dir), in.dir);
		if ((rc = cuco_mkdir_p(parent, err)) != CUCO_OK) {
			cuco_program_free(in.p);
			return rc;
		}
	}
	struct stat sb;
	if (stat(in.dir, &sb) == 0) {
		cuco_program_free(in.p);
		return cuco_errf(err, CUCO_EUSAGE, "%s: already exists: cuco init never overwrites (remove "
			"it, or give another NAME or --dir)", in.dir);
	}
	rc = make(&in, err);
	/* Nothing half made stays: the folder is this call's own (mkdir made it). */
	if (rc != CUCO_OK && stat(in.dir, &sb) == 0 && in.made)
		cuco_remove_tree(in.dir);
	cJSON_Delete(in.extras);
	cuco_program_free(in.p);
	if (rc == CUCO_OK)
		cuco_strlcpy(dir, in.dir, size);
	return rc;
}
