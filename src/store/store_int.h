/* store_int.h — what the store's own files share; not for other parts. */
#ifndef CUCO_STORE_INT_H
#define CUCO_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>

#include "store/store.h"

enum {
	T_META, T_CANDIDATES, T_SUMMARIES, T_CHILDREN, T_BY_SCORE, T_SOURCES,
	T_EVENTS, T_COMMANDS, T_ISLANDS, T_MEMORY,
	/* Added by schema 2 (store.c's table_since): a store made before them
	 * gets them when opened for writing, and reads as empty when opened
	 * read-only. */
	T_MEASUREMENTS, T_CALLS, T_REFUSALS,
	TABLE_COUNT
};

struct cuco_store {
	MDB_env *env;
	MDB_dbi dbi[TABLE_COUNT];
	bool absent[TABLE_COUNT];  /* a table a read-only store of an older schema lacks */
	atomic_bool verified[TABLE_COUNT];  /* its tree was walked (verify.c) */
	char dir[4096];
	bool rdonly;
	pthread_rwlock_t resize;  /* shared by every txn, exclusive to resize */
};

struct cuco_txn {
	cuco_store *st;
	MDB_txn *t;
	int code;      /* first failure (CUCO_E*), sticky: the txn is aborted */
	int mdb_rc;    /* MDB_MAP_FULL when the map must grow */
	char msg[512];
};

/* verify.c: before LMDB maps data.mdb, whether it exists and is LMDB
 * holding every page its meta page names; in the first read txn, whether
 * the free and main tables' pages are sound (CUCO_EAGAIN: t's snapshot
 * moved on while it began; begin again); and, the first time this process
 * uses a table, whether its tree is. One line in err when not. */
int store_check_file(const char *dir, bool *exists, cuco_err *err);
int store_verify_open(cuco_store *st, MDB_txn *t, cuco_err *err);
int store_verify_table(cuco_store *st, MDB_txn *t, const char *table, cuco_err *err);
/* A table's handle for LMDB, its tree walked on first use. When the walk
 * refuses it, the txn holds the error and the handle is one LMDB refuses
 * (EINVAL), so the caller's call fails instead of reading the tree. */
#define STORE_NO_DBI ((MDB_dbi)~0u)
MDB_dbi store_dbi(cuco_txn *txn, int table);
const char *store_table_name(int table);

/* Whether an LMDB error means a damaged file (CUCO_EDATA), not the system. */
bool store_mdb_damage(int rc);
/* Record an LMDB failure in the txn; returns the CUCO_E* code. */
int store_mdb_error(cuco_txn *txn, const char *what, int rc);
/* Note a lookup miss (message only; the txn stays usable). */
int store_notfound(cuco_txn *txn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

struct cJSON;

/* Encode j (and free it) and put it under key in table. */
int store_put_json(cuco_txn *txn, int table, MDB_val *key, struct cJSON *j, unsigned flags,
	const char *what);

/* Integer keys are big-endian, so LMDB's byte order is numeric order. */
void store_be64(uint64_t v, unsigned char out[8]);
uint64_t store_from_be64(const void *p);

#endif
