/* store.c — the LMDB environment, its tables and transactions.
 *
 * DESIGN. One environment per run directory (RUN/data.mdb, RUN/lock.mdb)
 * with named tables:
 *
 *   meta        string key → JSON          schema, workload, strategy, …
 *   candidates  u64 id (big-endian) → JSON the full candidate record
 *   summaries   u64 id → cuco_summary      fixed-size digest for listings
 *   children    u64 parent → u64 child     dupsort; the lineage edges
 *   by_score    sortable(score) ‖ id → ∅   done, non-rejected candidates
 *   sources     hex hash → text            content-addressed, deduplicated
 *   events      u64 seq → JSON             append-only log
 *   commands    u64 seq → JSON             human actions, acknowledged
 *   islands     u32 id → JSON
 *   memory      u64 id → JSON              optimization memory
 *   calls       u64 id → JSON              every model call, used or refused
 *   refusals    u64 id → JSON              proposals no candidate came of
 *
 * Integer keys are big-endian so LMDB's byte order is numeric order and
 * mdb_dump stays portable. A candidate, its summary, its edges and its
 * score entry change in the same transaction, so no reader ever sees one
 * without the others — also after a crash, since LMDB commits are atomic.
 *
 * Growth. When a write fills the map, the whole write callback is aborted,
 * the map doubled and the callback run again. LMDB forbids resizing while
 * any transaction of this process is open, so every transaction holds
 * `resize` shared and a resize takes it exclusive. Another process that
 * grew the map shows up as MDB_MAP_RESIZED at txn begin; we adopt its size.
 */
#include "store/store.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "store/store_int.h"

#define INITIAL_MAP (16u << 20)
#define MAX_ATTEMPTS 24

static int mdb_fail(cuco_err *err, const char *dir, const char *what, int rc)
{
	int code = store_mdb_damage(rc) ? CUCO_EDATA : CUCO_EENV;
	return cuco_errf(err, code, "%s: %s: %s", dir, what,
		code == CUCO_EDATA ? "store is corrupt or not a cuco store" : mdb_strerror(rc));
}

/* Within this of the end, a file system or a file-size limit counts as
 * reached: a write that ran out is cut at the last page that fitted. */
#define FULL_MARGIN (1u << 20)

/* LMDB reports a short write as EIO, which is what running out of disk
 * or past RLIMIT_FSIZE usually looks like; say which, so the user knows
 * what to free or raise. Returns an errno value. */
static int write_failure(const cuco_store *st, int rc)
{
	if (rc != EIO)
		return rc;
	struct statvfs vfs;
	if (statvfs(st->dir, &vfs) == 0 && (unsigned long long)vfs.f_bavail * vfs.f_frsize < FULL_MARGIN)
		return ENOSPC;
	char path[4200];
	struct stat sb;
	struct rlimit rl;
	snprintf(path, sizeof path, "%s/data.mdb", st->dir);
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && stat(path, &sb) == 0 &&
	    (rlim_t)sb.st_size + FULL_MARGIN >= rl.rlim_cur)
		return EFBIG;
	return rc;
}

/* A commit that could not write: name the file and the reason. The store
 * keeps its last commit (LMDB writes the new meta page last). */
static int commit_fail(cuco_err *err, const cuco_store *st, const char *what, int rc)
{
	if (rc != EIO && rc != ENOSPC && rc != EFBIG && rc != EDQUOT)
		return mdb_fail(err, st->dir, what, rc);
	int why = write_failure(st, rc);
	return cuco_errf(err, CUCO_EENV, "%s/data.mdb: %s: %s%s", st->dir, what, strerror(why),
		why == EFBIG ? " (the file-size limit, ulimit -f, is reached)" : "");
}

static const char *const table_names[TABLE_COUNT] = {
	[T_META] = "meta", [T_CANDIDATES] = "candidates", [T_SUMMARIES] = "summaries",
	[T_CHILDREN] = "children", [T_BY_SCORE] = "by_score", [T_SOURCES] = "sources",
	[T_EVENTS] = "events", [T_COMMANDS] = "commands", [T_ISLANDS] = "islands",
	[T_MEMORY] = "memory", [T_MEASUREMENTS] = "measurements", [T_CALLS] = "calls",
	[T_REFUSALS] = "refusals",
};

/* The schema version that added each table (0: there from the first);
 * opening an older store for writing adds them (store_upgrade). */
static const int table_since[TABLE_COUNT] = { [T_MEASUREMENTS] = 2, [T_CALLS] = 2, [T_REFUSALS] = 2 };

const char *store_table_name(int table)
{
	return table_names[table];
}

static unsigned table_flags(int t)
{
	return t == T_CHILDREN ? MDB_DUPSORT | MDB_DUPFIXED : 0;
}

/* Parse {"format":"cuco-store","version":N}; N must be an integer. */
static int parse_schema(const void *data, size_t len, int *version)
{
	cJSON *j = cJSON_ParseWithLength(data, len);
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(j, "format");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "version");
	int rc = CUCO_EDATA;
	if (cJSON_IsString(f) && strcmp(f->valuestring, "cuco-store") == 0 && cJSON_IsNumber(v)
			&& v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e9) {
		*version = (int)v->valuedouble;
		rc = CUCO_OK;
	}
	cJSON_Delete(j);
	return rc;
}

/* Read the schema record into *version; CUCO_ENOTFOUND when the env has
 * no meta table and is empty (a new store). Only the versions this cuco
 * knows are read: an older one it has no reader for, or a newer one whose
 * records it would misread or overwrite, is refused. */
static int validate(cuco_store *st, MDB_txn *t, int *version, cuco_err *err)
{
	MDB_dbi meta;
	int rc = mdb_dbi_open(t, "meta", 0, &meta);
	if (rc == MDB_NOTFOUND) {
		MDB_stat ms;
		MDB_dbi main_dbi;
		if (mdb_dbi_open(t, NULL, 0, &main_dbi) == 0 && mdb_stat(t, main_dbi, &ms) == 0 &&
		    ms.ms_entries == 0)
			return CUCO_ENOTFOUND;
		return cuco_errf(err, CUCO_EDATA, "%s: not a cuco store (LMDB without a meta table)", st->dir);
	}
	if (rc)
		return mdb_fail(err, st->dir, "meta table", rc);
	MDB_val k = { 6, "schema" }, v;
	rc = mdb_get(t, meta, &k, &v);
	if (rc == MDB_NOTFOUND)
		return cuco_errf(err, CUCO_EDATA, "%s: not a cuco store (meta has no schema record)", st->dir);
	if (rc)
		return mdb_fail(err, st->dir, "schema record", rc);
	if (parse_schema(v.mv_data, v.mv_size, version) != CUCO_OK)
		return cuco_errf(err, CUCO_EDATA, "%s: not a cuco store (schema record is not cuco's)", st->dir);
	if (*version > CUCO_SCHEMA_VERSION)
		return cuco_errf(err, CUCO_EDATA,
			"%s: store schema version %d is newer than this cuco's (%d); upgrade cuco",
			st->dir, *version, CUCO_SCHEMA_VERSION);
	if (*version < CUCO_SCHEMA_OLDEST)
		return cuco_errf(err, CUCO_EDATA,
			"%s: store schema version %d is not one this cuco reads (%d to %d)",
			st->dir, *version, CUCO_SCHEMA_OLDEST, CUCO_SCHEMA_VERSION);
	return CUCO_OK;
}

/* Open every table; a table newer than the store's schema may be missing
 * (marked absent: it reads as empty until store_upgrade adds it). Any
 * other missing table is damage: a flipped bit in the main table can hide
 * one, and LMDB says only MDB_NOTFOUND, which is no fault of the machine. */
static int open_tables(cuco_store *st, MDB_txn *t, bool create, int version, cuco_err *err)
{
	for (int i = 0; i < TABLE_COUNT; i++) {
		int rc = mdb_dbi_open(t, table_names[i], table_flags(i) | (create ? MDB_CREATE : 0), &st->dbi[i]);
		st->absent[i] = rc == MDB_NOTFOUND && version < table_since[i];
		if (rc == MDB_NOTFOUND && !st->absent[i])
			return cuco_errf(err, CUCO_EDATA, "%s: %s table is missing: store is corrupt or not a "
				"cuco store", st->dir, table_names[i]);
		if (rc && !st->absent[i])
			return mdb_fail(err, st->dir, table_names[i], rc);
	}
	return CUCO_OK;
}

static int put_schema(cuco_store *st, MDB_txn *t, cuco_err *err)
{
	char schema[128];
	int n = snprintf(schema, sizeof schema, "{\"format\":\"cuco-store\",\"version\":%d}", CUCO_SCHEMA_VERSION);
	MDB_val k = { 6, "schema" }, v = { (size_t)n, schema };
	int rc = mdb_put(t, st->dbi[T_META], &k, &v, 0);
	return rc ? mdb_fail(err, st->dir, "schema record", rc) : CUCO_OK;
}

/* A store of an older schema opened for writing gets the tables added
 * since and the current version, in one transaction: older cuco then
 * refuses it rather than write records without what this one keeps. */
static int store_upgrade(cuco_store *st, int version, cuco_err *err)
{
	if (st->rdonly || version == CUCO_SCHEMA_VERSION)
		return CUCO_OK;
	MDB_txn *t;
	int rc = mdb_txn_begin(st->env, NULL, 0, &t);
	if (rc)
		return mdb_fail(err, st->dir, "begin", rc);
	if (open_tables(st, t, true, CUCO_SCHEMA_VERSION, err) != CUCO_OK || put_schema(st, t, err) != CUCO_OK) {
		mdb_txn_abort(t);
		return err->code;
	}
	rc = mdb_txn_commit(t);
	if (rc)
		return commit_fail(err, st, "upgrade the schema", rc);
	cuco_log(CUCO_LOG_INFO, "%s: store schema %d upgraded to %d", st->dir, version, CUCO_SCHEMA_VERSION);
	return CUCO_OK;
}

static int init_store(cuco_store *st, cuco_err *err)
{
	MDB_txn *t;
	int rc = mdb_txn_begin(st->env, NULL, 0, &t);
	if (rc)
		return mdb_fail(err, st->dir, "begin", rc);
	if (open_tables(st, t, true, CUCO_SCHEMA_VERSION, err) != CUCO_OK || put_schema(st, t, err) != CUCO_OK) {
		mdb_txn_abort(t);
		return err->code;
	}
	rc = mdb_txn_commit(t);
	return rc ? commit_fail(err, st, "initialise", rc) : CUCO_OK;
}

/* LMDB sizes its lock file with ftruncate and writes it through a shared
 * mapping, so on a full disk the first store to a page that cannot be
 * allocated is a SIGBUS, not an error. Allocating the file's blocks first
 * makes it ENOSPC here. LOCK_BYTES is LMDB's size for MAX_READERS; a larger
 * file is kept as it is. Other failures (a read-only file system, one
 * without fallocate) are LMDB's to report. */
#define MAX_READERS 254
#define LOCK_BYTES (16u << 10)

static int reserve_lock_file(const cuco_store *st, cuco_err *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/lock.mdb", st->dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return CUCO_OK;
	struct stat sb;
	off_t size = fstat(fd, &sb) == 0 && sb.st_size > LOCK_BYTES ? sb.st_size : LOCK_BYTES;
	/* fallocate(2), not posix_fallocate: where the file system cannot,
	 * glibc's stand-in writes bytes that a live run may be using. */
	int rc = fallocate(fd, 0, 0, size) == 0 ? 0 : errno;
	close(fd);
	if (rc == ENOSPC || rc == EDQUOT || rc == EFBIG)
		return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(rc));
	return CUCO_OK;
}

static int open_env(cuco_store *st, unsigned flags, cuco_err *err)
{
	int rc = mdb_env_create(&st->env);
	if (rc)
		return mdb_fail(err, st->dir, "create environment", rc);
	mdb_env_set_maxdbs(st->env, TABLE_COUNT + 2);
	mdb_env_set_maxreaders(st->env, MAX_READERS);
	mdb_env_set_mapsize(st->env, INITIAL_MAP);
	/* NOTLS: read txns are not tied to thread-local slots, so a screen
	 * thread and worker threads can each hold their own. NOMETASYNC: one
	 * flush per commit; a system crash may undo the last commit but never
	 * breaks integrity, and a killed process loses nothing committed. */
	if (reserve_lock_file(st, err) != CUCO_OK)
		return err->code;
	unsigned envflags = MDB_NOTLS | MDB_NOMETASYNC | ((flags & CUCO_STORE_RDONLY) ? MDB_RDONLY : 0);
	rc = mdb_env_open(st->env, st->dir, envflags, 0644);
	if (rc)
		return mdb_fail(err, st->dir, "open", rc);
	return CUCO_OK;
}

int cuco_store_open(const char *dir, unsigned flags, cuco_store **out, cuco_err *err)
{
	*out = NULL;
	struct stat sb;
	if (stat(dir, &sb) != 0) {
		if (!(flags & CUCO_STORE_CREATE))
			return cuco_errf(err, CUCO_EDATA, "%s: no run directory here", dir);
		if (cuco_mkdir_p(dir, err) != CUCO_OK)
			return err->code;
	} else if (!S_ISDIR(sb.st_mode)) {
		return cuco_errf(err, CUCO_EDATA, "%s: not a directory", dir);
	}
	bool exists = false;
	if (store_check_file(dir, &exists, err) != CUCO_OK)
		return err->code;
	if (!exists && !(flags & CUCO_STORE_CREATE))
		return cuco_errf(err, CUCO_EDATA, "%s: no cuco store here (data.mdb missing)", dir);
	if (!exists && (flags & CUCO_STORE_RDONLY))
		return cuco_errf(err, CUCO_EDATA, "%s: no cuco store here", dir);

	cuco_store *st = cuco_xcalloc(1, sizeof *st);
	cuco_strlcpy(st->dir, dir, sizeof st->dir);
	st->rdonly = (flags & CUCO_STORE_RDONLY) != 0;
	pthread_rwlock_init(&st->resize, NULL);
	if (open_env(st, flags, err) != CUCO_OK) {
		cuco_store_close(st);
		return err->code;
	}

	MDB_txn *t;
	int v = CUCO_EAGAIN;
	for (int attempt = 0; v == CUCO_EAGAIN && attempt < MAX_ATTEMPTS; attempt++) {
		int rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &t);
		if (rc) {
			mdb_fail(err, st->dir, "begin", rc);
			cuco_store_close(st);
			return err->code;
		}
		if ((v = store_verify_open(st, t, err)) == CUCO_OK)
			v = store_verify_table(st, t, "meta", err);
		if (v != CUCO_OK)
			mdb_txn_abort(t);
	}
	if (v != CUCO_OK) {
		if (v == CUCO_EAGAIN)
			cuco_errf(err, CUCO_EENV, "%s: the store changed too fast to be checked", st->dir);
		cuco_store_close(st);
		return err->code;
	}
	int version = 0;
	v = validate(st, t, &version, err);
	if (v == CUCO_OK)
		v = open_tables(st, t, false, version, err);
	if (v == CUCO_OK) {
		mdb_txn_commit(t);  /* keeps the table handles */
		v = store_upgrade(st, version, err);
	} else {
		mdb_txn_abort(t);
		if (v == CUCO_ENOTFOUND && (flags & CUCO_STORE_CREATE) && !st->rdonly)
			v = init_store(st, err);
		else if (v == CUCO_ENOTFOUND)
			v = cuco_errf(err, CUCO_EDATA, "%s: no cuco store here (empty)", dir);
	}
	if (v != CUCO_OK) {
		cuco_store_close(st);
		return err->code;
	}
	*out = st;
	return CUCO_OK;
}

void cuco_store_close(cuco_store *st)
{
	if (!st)
		return;
	if (st->env)
		mdb_env_close(st->env);
	pthread_rwlock_destroy(&st->resize);
	free(st);
}

const char *cuco_store_dir(const cuco_store *st)
{
	return st->dir;
}

void cuco_store_sizes(cuco_store *st, size_t *map_bytes, size_t *used_bytes)
{
	MDB_envinfo info;
	MDB_stat ms;
	pthread_rwlock_rdlock(&st->resize);
	mdb_env_info(st->env, &info);
	mdb_env_stat(st->env, &ms);
	pthread_rwlock_unlock(&st->resize);
	if (map_bytes)
		*map_bytes = info.me_mapsize;
	if (used_bytes)
		*used_bytes = (info.me_last_pgno + 1) * (size_t)ms.ms_psize;
}

/* Double the map (or adopt another process's larger one: size 0). */
static int resize_map(cuco_store *st, bool adopt, cuco_err *err)
{
	pthread_rwlock_wrlock(&st->resize);
	MDB_envinfo info;
	mdb_env_info(st->env, &info);
	int rc = mdb_env_set_mapsize(st->env, adopt ? 0 : info.me_mapsize * 2);
	pthread_rwlock_unlock(&st->resize);
	if (rc)
		return mdb_fail(err, st->dir, "grow the map", rc);
	if (!adopt)
		cuco_log(CUCO_LOG_DEBUG, "store map grown to %zu MiB", info.me_mapsize * 2 >> 20);
	return CUCO_OK;
}

static int run_txn(cuco_store *st, bool write, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err)
{
	if (write && st->rdonly)
		return cuco_errf(err, CUCO_EENV, "%s: store opened read-only", st->dir);
	for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
		cuco_txn tx = { .st = st };
		pthread_rwlock_rdlock(&st->resize);
		int rc = mdb_txn_begin(st->env, NULL, write ? 0 : MDB_RDONLY, &tx.t);
		if (rc == MDB_MAP_RESIZED) {
			pthread_rwlock_unlock(&st->resize);
			if (resize_map(st, true, err) != CUCO_OK)
				return err->code;
			continue;
		}
		if (rc) {
			pthread_rwlock_unlock(&st->resize);
			return mdb_fail(err, st->dir, "begin transaction", rc);
		}
		int r = fn(&tx, arg);
		if (r == CUCO_OK && tx.code == CUCO_OK) {
			rc = write ? mdb_txn_commit(tx.t) : (mdb_txn_abort(tx.t), 0);
			pthread_rwlock_unlock(&st->resize);
			if (rc == 0)
				return CUCO_OK;
			if (rc == MDB_MAP_FULL) {
				if (resize_map(st, false, err) != CUCO_OK)
					return err->code;
				continue;
			}
			return commit_fail(err, st, "commit", rc);
		}
		mdb_txn_abort(tx.t);
		pthread_rwlock_unlock(&st->resize);
		if (tx.mdb_rc == MDB_MAP_FULL) {
			if (resize_map(st, false, err) != CUCO_OK)
				return err->code;
			continue;
		}
		if (tx.code == CUCO_OK)  /* a lookup miss the callback passed up */
			return cuco_errf(err, r, "%s", tx.msg[0] ? tx.msg : "lookup failed");
		return cuco_errf(err, tx.code, "%s", tx.msg);
	}
	return cuco_errf(err, CUCO_EENV, "%s: store kept filling while growing", st->dir);
}

int cuco_store_write(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err)
{
	return run_txn(st, true, fn, arg, err);
}

int cuco_store_read(cuco_store *st, int (*fn)(cuco_txn *, void *), void *arg, cuco_err *err)
{
	return run_txn(st, false, fn, arg, err);
}

int cuco_txn_fail(cuco_txn *txn, int code, const char *fmt, ...)
{
	if (txn->code == CUCO_OK) {  /* the first failure is the one to report */
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(txn->msg, sizeof txn->msg, fmt, ap);
		va_end(ap);
		txn->code = code;
	}
	return code;
}

int store_notfound(cuco_txn *txn, const char *fmt, ...)
{
	if (txn->code == CUCO_OK) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(txn->msg, sizeof txn->msg, fmt, ap);
		va_end(ap);
	}
	return CUCO_ENOTFOUND;
}

/* LMDB's errors that mean the file is not what it should be. A damaged
 * page shows up as any of them: a bad size read from a node, a table's
 * record of the wrong flags, a page number out of range. */
bool store_mdb_damage(int rc)
{
	return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INVALID
		|| rc == MDB_VERSION_MISMATCH || rc == MDB_INCOMPATIBLE || rc == MDB_BAD_VALSIZE
		|| rc == MDB_BAD_DBI;
}

int store_mdb_error(cuco_txn *txn, const char *what, int rc)
{
	if (rc == MDB_MAP_FULL)
		txn->mdb_rc = rc;
	int code = store_mdb_damage(rc) ? CUCO_EDATA : CUCO_EENV;
	return cuco_txn_fail(txn, code, "%s: %s: %s", txn->st->dir, what, mdb_strerror(rc));
}
