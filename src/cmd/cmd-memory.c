/* cmd-memory.c — `cuco memory`: the optimization memory a beam search
 * learned (AccelOpt's lessons), for a reviewer: each lesson's speedup,
 * whether it says "undo this", the candidates it was drawn from (the
 * first candidate holding each program, whose sources `cuco export`
 * writes out) and its text. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

static const char memory_options[] =
	"  --run DIR          run directory (default $CUCO_RUN, else runs/latest)\n"
	"  --workload NAME    only this workload's lessons (a shared memory holds several)\n";

typedef struct lesson {
	cuco_memory m;
	uint64_t slow, fast;   /* first candidate with each program; 0 if none */
} lesson;

typedef struct memory_arg {
	const char *workload;
	lesson *l;
	size_t n;
} memory_arg;

static int collect(const cuco_memory *m, void *arg)
{
	memory_arg *a = arg;
	if (a->workload && strcmp(m->workload, a->workload) != 0)
		return 0;
	a->l = cuco_xrealloc(a->l, (a->n + 1) * sizeof *a->l);
	a->l[a->n] = (lesson){ .m = *m };
	a->n++;
	return 0;
}

static int resolve(const cuco_candidate *c, void *arg)
{
	memory_arg *a = arg;
	for (size_t i = 0; i < a->n; i++) {
		lesson *l = &a->l[i];
		if (!l->slow && strcmp(c->source_hash, l->m.slow_hash) == 0)
			l->slow = c->id;
		if (!l->fast && strcmp(c->source_hash, l->m.fast_hash) == 0)
			l->fast = c->id;
	}
	return 0;
}

static int memory_txn(cuco_txn *txn, void *arg)
{
	memory_arg *a = arg;
	free(a->l);
	a->l = NULL;
	a->n = 0;
	int rc = cuco_memory_each(txn, collect, a);
	return rc == CUCO_OK && a->n > 0 ? cuco_cand_each(txn, 1, resolve, a) : rc;
}

static void print_lesson(const lesson *l)
{
	printf("lesson %llu  %s  %.2fx %s  #%llu -> #%llu\n", (unsigned long long)l->m.id,
		l->m.workload, l->m.speedup, l->m.negative ? "slower: undo this" : "faster",
		(unsigned long long)(l->m.negative ? l->fast : l->slow),
		(unsigned long long)(l->m.negative ? l->slow : l->fast));
	/* The summary, indented, line by line. */
	for (const char *p = l->m.summary; *p;) {
		size_t len = strcspn(p, "\n");
		printf("    %.*s\n", (int)len, p);
		p += len + (p[len] == '\n');
	}
}

static int memory_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run", required_argument, NULL, 'r' },
		{ "workload", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *run = NULL;
	memory_arg a = { 0 };
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r': run = optarg; break;
		case 'w': a.workload = optarg; break;
		case 'h':
			cmd_print_usage(&cmd_memory, memory_options);
			return CUCO_OK;
		default:
			return cmd_bad_option(&cmd_memory, longopts, argv);
		}
	}
	if (optind != argc)
		return cmd_usage_error(&cmd_memory, "unexpected argument %s", argv[optind]);
	cuco_store *st = NULL;
	int rc = cmd_open_store(cmd_run_dir(run), CUCO_STORE_RDONLY, &st);
	if (rc != CUCO_OK)
		return rc;
	cuco_err err = { 0 };
	rc = cuco_store_read(st, memory_txn, &a, &err);
	cuco_store_close(st);
	if (rc != CUCO_OK) {
		free(a.l);
		return cmd_fail(&err);
	}
	if (a.n == 0)
		printf("no lessons yet (the beam strategy writes them after each iteration)\n");
	for (size_t i = 0; i < a.n; i++)
		print_lesson(&a.l[i]);
	free(a.l);
	return CUCO_OK;
}

const cuco_cmd cmd_memory = { "memory", "[--run DIR] [--workload NAME]",
	"show the optimization memory: lessons a beam search drew from its rewrites", memory_exec };
