/* cmd-memory.c — `cuco memory`: the optimization memory a beam search
 * learned (AccelOpt's lessons), for a reviewer: each lesson's speedup,
 * whether it says "undo this", the candidates it was drawn from (the
 * first candidate holding each program, whose sources `cuco export`
 * writes out) and its text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

#define MEMORY_OPTIONS(X) \
	X(O_RUN, CMD_OPT_RUN) \
	X(O_WORKLOAD, "workload", 0, "NAME", 0, "only this workload's lessons (a shared memory holds several)")
CMD_TABLE(options, MEMORY_OPTIONS);

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
	memory_arg a = { 0 };
	cmd_args args = CMD_ARGS(&cmd_memory, argc, argv);
	while (cmd_option_next(&args) >= 0)
		a.workload = args.value;  /* --workload: --run is the parser's */
	if (!cmd_operands(&args, 0, 0, NULL))
		return args.rc;
	cuco_store *st = NULL;
	int rc = cmd_open_store(args.run, CUCO_STORE_RDONLY, &st);
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

const cuco_cmd cmd_memory = { "memory", "",
	"show the optimization memory: lessons a beam search drew from its rewrites", memory_exec,
	CMD_OPTIONS(options) };
