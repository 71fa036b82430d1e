/* store_int.h — what the store's own files share; not for other parts. */
#ifndef CUCO_STORE_INT_H
#define CUCO_STORE_INT_H

#include <lmdb.h>
#include <pthread.h>

#include "store/store.h"

enum {
	T_META, T_CANDIDATES, T_SUMMARIES, T_CHILDREN, T_BY_SCORE, T_SOURCES,
	T_EVENTS, T_COMMANDS, T_ISLANDS, T_MEMORY,
	/* Added after schema 1 was fixed: a store made before them gets them when
	 * opened for writing, and reads as empty when opened read-only. */
	T_CALLS, T_REFUSALS,
	TABLE_COUNT
};
#define T_FIRST_LATE T_CALLS

struct cuco_store {
	MDB_env *env;
	MDB_dbi dbi[TABLE_COUNT];
	bool absent[TABLE_COUNT];  /* a late table this read-only handle did not find */
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

/* Record an LMDB failure in the txn; returns the CUCO_E* code. */
int store_mdb_error(cuco_txn *txn, const char *what, int rc);
/* Note a lookup miss (message only; the txn stays usable). */
int store_notfound(cuco_txn *txn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Parse {"format":"cuco-store","version":N}. */
int store_parse_schema(const void *data, size_t len, int *version);

/* JSON codecs of the records other than candidates (record.c). */
struct cJSON;
struct cJSON *store_event_to_json(const cuco_event *ev);
int store_event_from_json(const struct cJSON *j, cuco_event *ev);
struct cJSON *store_command_to_json(const cuco_command *c);
int store_command_from_json(const struct cJSON *j, cuco_command *c);
struct cJSON *store_island_to_json(const cuco_island *isl);
int store_island_from_json(const struct cJSON *j, cuco_island *isl);
struct cJSON *store_memory_to_json(const cuco_memory *m);
int store_memory_from_json(const struct cJSON *j, cuco_memory *m);
int store_call_from_json(const struct cJSON *j, cuco_call *c);
int store_refusal_from_json(const struct cJSON *j, cuco_refusal *r);

#endif
