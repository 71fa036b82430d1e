/* util.h — what the store's tests share: scratch folders, a fresh store,
 * and raw LMDB writes that go around the store to plant damage. */
#ifndef CUCO_TEST_STORE_UTIL_H
#define CUCO_TEST_STORE_UTIL_H

#include <stddef.h>

#include "store/store.h"

void tmpdir(char d[64]);     /* a fresh /tmp/cuco-test-store-XXXXXX */
void rmtree(const char *d);
cuco_store *open_new(const char *dir);  /* fails the test when it cannot */
/* Put key → val into table db (NULL: LMDB's main table) of the LMDB at dir,
 * as another program would: no schema, no checks. */
void raw_lmdb_put(const char *dir, const char *db, const void *key, size_t klen, const void *val,
	size_t vlen);
/* Delete a whole table, as a store of an older schema never had it. */
void raw_lmdb_drop(const char *dir, const char *db);
/* Ids as the store keys them: big-endian. */
void key_be64(unsigned long long v, unsigned char out[8]);

#endif
