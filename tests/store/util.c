/* util.c — see util.h. */
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <cmocka.h>

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tmpdir(char d[64])
{
	strcpy(d, "/tmp/cuco-test-store-XXXXXX");
	assert_non_null(mkdtemp(d));
}

void rmtree(const char *d)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	assert_int_equal(system(cmd), 0);
}

cuco_store *open_new(const char *dir)
{
	cuco_store *st = NULL;
	cuco_err err = { 0 };
	int rc = cuco_store_open(dir, CUCO_STORE_CREATE, &st, &err);
	if (rc)
		fail_msg("open %s: %s", dir, err.msg);
	return st;
}

static void raw_txn(const char *dir, const char *db, const MDB_val *k, const MDB_val *v, bool drop)
{
	MDB_env *env;
	MDB_txn *t;
	MDB_dbi dbi;
	assert_int_equal(mdb_env_create(&env), 0);
	mdb_env_set_maxdbs(env, 16);
	mdb_env_set_mapsize(env, 64u << 20);
	assert_int_equal(mdb_env_open(env, dir, 0, 0644), 0);
	assert_int_equal(mdb_txn_begin(env, NULL, 0, &t), 0);
	assert_int_equal(mdb_dbi_open(t, db, drop ? 0 : MDB_CREATE, &dbi), 0);
	if (drop)
		assert_int_equal(mdb_drop(t, dbi, 1), 0);
	else
		assert_int_equal(mdb_put(t, dbi, (MDB_val *)k, (MDB_val *)v, 0), 0);
	assert_int_equal(mdb_txn_commit(t), 0);
	mdb_env_close(env);
}

void raw_lmdb_put(const char *dir, const char *db, const void *key, size_t klen, const void *val,
	size_t vlen)
{
	MDB_val k = { klen, (void *)key }, v = { vlen, (void *)val };
	raw_txn(dir, db, &k, &v, false);
}

void raw_lmdb_drop(const char *dir, const char *db)
{
	raw_txn(dir, db, NULL, NULL, true);
}

void key_be64(unsigned long long v, unsigned char out[8])
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		out[i] = (unsigned char)v;
}
