/* bench/store-txns/count.c — preloaded into `cuco run`: counts LMDB transactions
 * (read-only and write) and appends one line to $TXNCOUNT_OUT at exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <lmdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
static atomic_long n_read, n_write;
static void report(void)
{
	const char *out = getenv("TXNCOUNT_OUT");
	FILE *f = out ? fopen(out, "a") : stderr;
	if (!f) return;
	fprintf(f, "txn read %ld write %ld\n", (long)n_read, (long)n_write);
	if (f != stderr) fclose(f);
}
int mdb_txn_begin(MDB_env *env, MDB_txn *parent, unsigned int flags, MDB_txn **txn)
{
	static int (*real)(MDB_env *, MDB_txn *, unsigned int, MDB_txn **);
	static atomic_int once;
	if (!real) real = (int (*)(MDB_env *, MDB_txn *, unsigned int, MDB_txn **))dlsym(RTLD_NEXT, "mdb_txn_begin");
	if (!atomic_exchange(&once, 1)) atexit(report);
	if (flags & MDB_RDONLY) n_read++; else n_write++;
	return real(env, parent, flags, txn);
}
