/* verify.c — refusing a data.mdb that LMDB cannot read safely.
 *
 * LMDB trusts its file: it reads pages through a memory map and follows
 * the page numbers, offsets and sizes it finds in them. A file cut short
 * is a SIGBUS at the first page past its end; a flipped bit in a page is a
 * read out of bounds or a NULL dereference inside LMDB (issue 18: a third
 * of random truncations killed every command, and about one random bit
 * flip in 2 500 crashed a reader). So before LMDB reads a tree, the store
 * checks, without LMDB:
 *
 *  - the file (store_check_file, before mapping): LMDB's magic and format
 *    version in both meta pages, and a size that holds every page the newer
 *    meta says is in use;
 *  - the trees (store_verify, in the first read transaction, whose reader
 *    slot keeps the snapshot's pages from being reused under the walk):
 *    every page of every table's B-tree is visited once — its number where
 *    the parent says, its kind as the depth says, its offsets and sizes
 *    inside the page, every page number inside the file, no page reached
 *    twice, node flags that the table's kind allows, and each table's
 *    entry count as its header says. Overflow pages (large values) are
 *    bounds-checked from the node, not read.
 *
 * The layout is LMDB's data format version 1 (every LMDB since 0.9.0);
 * the offsets below are named after mdb.c's structures. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

/* ---- the layout --------------------------------------------------------- */

#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define PAGE_HDR 16           /* MDB_page: pgno u64, pad u16, flags u16, lower u16, upper u16 */
#define PG_FLAGS 10
#define PG_LOWER 12
#define PG_UPPER 14
#define NODE_HDR 8            /* MDB_node: lo u16, hi u16, flags u16, ksize u16 */
#define DB_BYTES 48           /* MDB_db: pad u32, flags u16, depth u16, 4 × u64 counts, root u64 */
#define DB_PAD 0
#define DB_FLAGS 4
#define DB_DEPTH 6
#define DB_ENTRIES 32
#define DB_ROOT 40
#define META_MAGIC (PAGE_HDR + 0)  /* MDB_meta follows the page header */
#define META_VERSION (PAGE_HDR + 4)
#define META_FREE_DB (PAGE_HDR + 24)
#define META_MAIN_DB (PAGE_HDR + 24 + DB_BYTES)
#define META_LAST_PG (PAGE_HDR + 120)
#define META_TXNID (PAGE_HDR + 128)
#define META_BYTES (PAGE_HDR + 136)

#define P_BRANCH 0x01
#define P_LEAF 0x02
#define P_LEAF2 0x20
#define P_SUBP 0x40
#define F_BIGDATA 0x01
#define F_SUBDATA 0x02
#define F_DUPDATA 0x04
#define MDB_DUPSORT_FLAG 0x04
#define MDB_DUPFIXED_FLAG 0x10
#define NO_ROOT (~0ull)
#define MAX_DEPTH 32          /* LMDB's cursor stack */

static uint16_t u16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint32_t u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static uint64_t u64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* ---- the file ------------------------------------------------------------- */

typedef struct meta {
	uint32_t magic, version, psize;
	uint64_t last_pg, txnid;
} meta;

/* The page size is kept in the free table's pad word. */
static meta meta_decode(const unsigned char *b)
{
	return (meta){ u32(b + META_MAGIC), u32(b + META_VERSION), u32(b + META_FREE_DB + DB_PAD),
		u64(b + META_LAST_PG), u64(b + META_TXNID) };
}

static bool meta_sane(const meta *m)
{
	return m->magic == LMDB_MAGIC && m->version == LMDB_DATA_VERSION && m->psize >= 512
		&& m->psize <= 65536 && (m->psize & (m->psize - 1)) == 0 && m->last_pg < (1ull << 40);
}

int store_check_file(const char *dir, bool *exists, cuco_err *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT) {
			*exists = false;
			return CUCO_OK;
		}
		return cuco_errf(err, CUCO_EENV, "%s: cannot open: %s", path, strerror(errno));
	}
	*exists = true;
	unsigned char head[META_BYTES];
	struct stat sb;
	ssize_t n = pread(fd, head, sizeof head, 0);
	meta m0 = meta_decode(head), m1 = { 0 };
	bool second = n == (ssize_t)sizeof head && meta_sane(&m0)
		&& pread(fd, head, sizeof head, m0.psize) == (ssize_t)sizeof head;
	if (second)
		m1 = meta_decode(head);
	int st = fstat(fd, &sb);
	close(fd);
	if (n < META_MAGIC + 4)
		return cuco_errf(err, CUCO_EDATA, "%s: not a cuco store (too short to be LMDB)", path);
	if (m0.magic != LMDB_MAGIC)
		return cuco_errf(err, CUCO_EDATA, "%s: not a cuco store (not an LMDB file)", path);
	if (!meta_sane(&m0) || !second || !meta_sane(&m1) || m1.psize != m0.psize)
		return cuco_errf(err, CUCO_EDATA, "%s: corrupt store (its meta pages are damaged or cut off)",
			path);
	/* LMDB reads the meta page with the higher transaction id. */
	const meta *m = m1.txnid > m0.txnid ? &m1 : &m0;
	unsigned long long need = (m->last_pg + 1) * (unsigned long long)m->psize;
	if (st != 0 || (unsigned long long)sb.st_size < need)
		return cuco_errf(err, CUCO_EDATA, "%s: truncated store: %lld bytes, but its last page "
			"(%llu) ends at byte %llu; restore the file from a copy",
			path, st == 0 ? (long long)sb.st_size : -1LL, (unsigned long long)m->last_pg, need);
	return CUCO_OK;
}

/* ---- the trees -------------------------------------------------------------- */

typedef struct walk {
	const unsigned char *map;
	uint64_t psize, last_pg;
	unsigned char *seen;      /* one bit per page */
	const char *table;        /* the named table walked, for the message */
	char why[160];
} walk;

/* What a tree holds: a table's records, one key's duplicates (keys
 * only), the main table's named tables, or the free pages' lists. */
typedef struct tree {
	uint16_t flags;           /* the table's MDB_db flags */
	bool dups;                /* a key's duplicates (a sub-tree or sub-page) */
	bool names;               /* the main table: one MDB_db per named table */
	bool freelist;            /* the free table: txn id → page numbers */
	uint32_t dupsize;         /* DUPFIXED: the size of each duplicate */
	uint64_t entries;         /* counted */
} tree;

/* Pages that are on disk as LMDB leaves them: P_DIRTY and P_KEEP are
 * a writer's notes and may be set in a page written out. */
#define P_TRANSIENT (0x10 | 0x8000)

static bool bad(walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Note the first problem found; always false. */
static bool bad(walk *w, const char *fmt, ...)
{
	if (!w->why[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(w->why, sizeof w->why, fmt, ap);
		va_end(ap);
	}
	return false;
}

static bool page_ok(walk *w, uint64_t pgno)
{
	if (pgno < 2 || pgno > w->last_pg)
		return bad(w, "page %llu is outside the file (last %llu)", (unsigned long long)pgno, (unsigned long long)w->last_pg);
	if (w->seen[pgno >> 3] & (1u << (pgno & 7)))
		return bad(w, "page %llu is reached twice", (unsigned long long)pgno);
	w->seen[pgno >> 3] |= (unsigned char)(1u << (pgno & 7));
	return true;
}

/* Large values live on overflow pages after the one the node names. */
static bool overflow_ok(walk *w, uint64_t pgno, uint64_t dsize)
{
	uint64_t pages = (PAGE_HDR + dsize + w->psize - 1) / w->psize;
	if (pgno < 2 || pgno > w->last_pg || pages > w->last_pg - pgno + 1)
		return bad(w, "a large value (page %llu, %llu bytes) runs past the file", (unsigned long long)pgno, (unsigned long long)dsize);
	return true;
}

static bool tree_ok(walk *w, const unsigned char *db, tree *t);
static bool page_walk(walk *w, const unsigned char *p, uint64_t size, int depth, int leaf_depth,
	tree *t);

/* A free list: a count, then that many page numbers, each in the file. */
static bool idl_ok(walk *w, const unsigned char *idl, uint64_t dsize)
{
	uint64_t n = dsize >= 8 ? u64(idl) : 0;
	if (dsize < 8 || n > dsize / 8 - 1)
		return bad(w, "a free list of %llu pages in %llu bytes", (unsigned long long)n, (unsigned long long)dsize);
	for (uint64_t i = 1; i <= n; i++)
		if (u64(idl + 8 * i) > w->last_pg)
			return bad(w, "the free list names page %llu (last %llu)", (unsigned long long)u64(idl + 8 * i), (unsigned long long)w->last_pg);
	return true;
}

/* A leaf node's value: inline, on overflow pages, a named table, or a
 * key's duplicates (a sub-page inline, or a sub-tree). */
static bool leaf_value_ok(walk *w, const unsigned char *node, uint64_t room, tree *t)
{
	uint16_t nflags = u16(node + 4), ksize = u16(node + 6);
	uint64_t dsize = u16(node) | (uint64_t)u16(node + 2) << 16;
	const unsigned char *data = node + NODE_HDR + ksize;
	bool dupsort = t->flags & MDB_DUPSORT_FLAG;
	uint64_t inline_size = (nflags & F_BIGDATA) ? 8 : dsize;
	if (NODE_HDR + (uint64_t)ksize + inline_size > room)
		return bad(w, "a node of %llu bytes overruns its page (%llu left)",
			(unsigned long long)(NODE_HDR + ksize + inline_size), (unsigned long long)room);
	if (t->dups) {
		if (nflags || dsize)
			return bad(w, "a duplicate carries a value (flags %#x)", nflags);
		t->entries++;
		return true;
	}
	switch (nflags) {
	case 0:
		t->entries++;
		return !t->freelist || idl_ok(w, data, dsize);
	case F_BIGDATA:
		t->entries++;
		return overflow_ok(w, u64(data), dsize)
			&& (!t->freelist || idl_ok(w, w->map + u64(data) * w->psize + PAGE_HDR, dsize));
	case F_SUBDATA: {
		if (!t->names || dsize != DB_BYTES)
			return bad(w, "a named table where none belongs (%llu bytes)", (unsigned long long)dsize);
		t->entries++;  /* its tree is walked when first used (store_dbi) */
		return true;
	}
	case F_DUPDATA: {
		if (!dupsort || dsize < PAGE_HDR)
			return bad(w, "duplicates where the table has none");
		/* A DUPFIXED sub-page keeps its duplicates' size in its pad word. */
		tree sub = { .flags = t->flags, .dups = true, .dupsize = u16(data + 8) };
		if (!page_walk(w, data, dsize, 0, 0, &sub))
			return false;
		t->entries += sub.entries;
		return true;
	}
	case F_DUPDATA | F_SUBDATA: {
		if (!dupsort || dsize != DB_BYTES)
			return bad(w, "a tree of duplicates where the table has none");
		tree sub = { .flags = t->flags, .dups = true,
			.dupsize = (t->flags & MDB_DUPFIXED_FLAG) ? u32(data + DB_PAD) : 0 };
		if (!tree_ok(w, data, &sub))
			return false;
		t->entries += sub.entries;
		return true;
	}
	default:
		return bad(w, "a node with flags %#x", nflags);
	}
}

/* One page (or a sub-page of duplicates, size bytes long, depth 0). */
static bool page_walk(walk *w, const unsigned char *p, uint64_t size, int depth, int leaf_depth,
	tree *t)
{
	uint16_t flags = u16(p + PG_FLAGS) & ~P_TRANSIENT, lower = u16(p + PG_LOWER), upper = u16(p + PG_UPPER);
	bool sub = size < w->psize || (flags & P_SUBP);
	bool leaf = depth == leaf_depth;
	uint16_t want = (leaf ? P_LEAF : P_BRANCH) | (sub ? P_SUBP : 0);
	if ((flags & ~P_LEAF2) != want || ((flags & P_LEAF2) && (!leaf || !t->dups)))
		return bad(w, "a page of kind %#x where kind %#x belongs", flags, want);
	if (lower < PAGE_HDR || lower > upper || upper > size || (lower & 1))
		return bad(w, "a page's free space is %u..%u", lower, upper);
	unsigned n = (lower - PAGE_HDR) / 2;
	if (flags & P_LEAF2) {
		if (!t->dupsize || PAGE_HDR + (uint64_t)n * t->dupsize > size)
			return bad(w, "%u fixed-size duplicates do not fit their page", n);
		t->entries += n;
		return true;
	}
	if (n == 0 && !leaf)
		return bad(w, "an empty branch page");
	for (unsigned i = 0; i < n; i++) {
		uint16_t off = u16(p + PAGE_HDR + 2 * i);
		if (off < upper || (off & 1) || (uint64_t)off + NODE_HDR > size)
			return bad(w, "node %u at offset %u lies outside its page", i, off);
		const unsigned char *node = p + off;
		if (leaf) {
			if (!leaf_value_ok(w, node, size - off, t))
				return false;
			continue;
		}
		uint64_t child = u16(node) | (uint64_t)u16(node + 2) << 16 | (uint64_t)u16(node + 4) << 32;
		if ((uint64_t)off + NODE_HDR + u16(node + 6) > size)
			return bad(w, "a branch key overruns its page");
		if (!page_ok(w, child)
				|| !page_walk(w, w->map + child * w->psize, w->psize, depth + 1, leaf_depth, t))
			return false;
	}
	return true;
}

static bool tree_ok(walk *w, const unsigned char *db, tree *t)
{
	uint64_t root = u64(db + DB_ROOT), entries = u64(db + DB_ENTRIES);
	uint16_t depth = u16(db + DB_DEPTH);
	if (root == NO_ROOT)
		return depth == 0 && entries == 0 ? true : bad(w, "an empty tree of depth %u", depth);
	if (depth == 0 || depth > MAX_DEPTH)
		return bad(w, "a tree of depth %u", depth);
	uint64_t before = t->entries;
	if (!page_ok(w, root) || !page_walk(w, w->map + root * w->psize, w->psize, 0, depth - 1, t))
		return false;
	if (t->entries - before != entries)
		return bad(w, "a tree says it holds %llu entries, but holds %llu", (unsigned long long)entries, (unsigned long long)(t->entries - before));
	return true;
}


/* Map data.mdb read-only: LMDB does not say where its own map is. The
 * file holds every page of the snapshot being walked (store_check_file,
 * and it only grows), and the txn's reader slot keeps them from reuse. */
static int map_file(const cuco_store *st, walk *w, size_t *size, cuco_err *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/data.mdb", st->dir);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(e));
	}
	void *map = sb.st_size > 0 ? mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	int e = errno;
	close(fd);
	if (map == MAP_FAILED)
		return cuco_errf(err, sb.st_size > 0 ? CUCO_EENV : CUCO_EDATA, "%s: %s", path,
			sb.st_size > 0 ? strerror(e) : "empty");
	meta m0 = meta_decode(map);
	*size = (size_t)sb.st_size;
	w->map = map;
	w->psize = m0.psize;
	if (!meta_sane(&m0) || (size_t)m0.psize * 2 > *size) {
		munmap(map, *size);
		return cuco_errf(err, CUCO_EDATA, "%s: corrupt store (its meta pages are damaged)", path);
	}
	return CUCO_OK;
}

static int walked(const cuco_store *st, walk *w, size_t size, bool ok, cuco_err *err)
{
	free(w->seen);
	munmap((void *)w->map, size);
	if (ok)
		return CUCO_OK;
	return cuco_errf(err, CUCO_EDATA, "%s/data.mdb: corrupt store%s%s: %s; restore it from a copy",
		st->dir, w->table ? ", table " : "", w->table ? w->table : "", w->why);
}

int store_verify_open(cuco_store *st, MDB_txn *t, cuco_err *err)
{
	walk w = { 0 };
	size_t size;
	int rc = map_file(st, &w, &size, err);
	if (rc != CUCO_OK)
		return rc;
	/* The snapshot of t: the meta page that carries its id. */
	const unsigned char *m = NULL;
	for (int i = 0; i < 2 && !m; i++)
		if (u64(w.map + (size_t)i * w.psize + META_TXNID) == (uint64_t)mdb_txn_id(t))
			m = w.map + (size_t)i * w.psize;
	if (!m) {
		munmap((void *)w.map, size);
		return CUCO_EAGAIN;  /* a writer moved past it while t began */
	}
	w.last_pg = u64(m + META_LAST_PG);
	if (w.last_pg >= size / w.psize) {
		bad(&w, "its last page lies past the end of the file");
		return walked(st, &w, size, false, err);
	}
	w.seen = cuco_xcalloc(w.last_pg / 8 + 1, 1);
	tree free_tree = { .freelist = true }, main_tree = { .names = true };
	bool ok = tree_ok(&w, m + META_FREE_DB, &free_tree) && tree_ok(&w, m + META_MAIN_DB, &main_tree);
	return walked(st, &w, size, ok, err);
}

int store_verify_table(cuco_store *st, MDB_txn *t, const char *table, cuco_err *err)
{
	/* The table's header as t sees it, from the main table (checked at open). */
	MDB_dbi main_dbi;
	MDB_val k = { strlen(table), (void *)table }, v;
	int rc = mdb_dbi_open(t, NULL, 0, &main_dbi);
	if (rc == 0)
		rc = mdb_get(t, main_dbi, &k, &v);
	if (rc == MDB_NOTFOUND)
		return CUCO_OK;  /* a table an older schema lacks */
	if (rc)
		return cuco_errf(err, store_mdb_damage(rc) ? CUCO_EDATA : CUCO_EENV, "%s: table %s: %s",
			st->dir, table, mdb_strerror(rc));
	if (v.mv_size != DB_BYTES)
		return cuco_errf(err, CUCO_EDATA, "%s/data.mdb: corrupt store: table %s's header is %zu bytes",
			st->dir, table, v.mv_size);
	unsigned char db[DB_BYTES];
	memcpy(db, v.mv_data, DB_BYTES);
	walk w = { .table = table };
	size_t size;
	if ((rc = map_file(st, &w, &size, err)) != CUCO_OK)
		return rc;
	MDB_envinfo info;
	mdb_env_info(st->env, &info);
	w.last_pg = info.me_last_pgno;  /* the newest snapshot's: t's is no larger */
	if (w.last_pg >= size / w.psize) {
		bad(&w, "its last page lies past the end of the file");
		return walked(st, &w, size, false, err);
	}
	w.seen = cuco_xcalloc(w.last_pg / 8 + 1, 1);
	tree named = { .flags = u16(db + DB_FLAGS) };
	return walked(st, &w, size, tree_ok(&w, db, &named), err);
}

MDB_dbi store_dbi(cuco_txn *txn, int table)
{
	cuco_store *st = txn->st;
	if (atomic_load(&st->verified[table]) || st->absent[table])
		return st->dbi[table];
	cuco_err err = { 0 };
	if (store_verify_table(st, txn->t, store_table_name(table), &err) == CUCO_OK) {
		atomic_store(&st->verified[table], true);
		return st->dbi[table];
	}
	cuco_txn_fail(txn, err.code, "%s", err.msg);
	return STORE_NO_DBI;
}
