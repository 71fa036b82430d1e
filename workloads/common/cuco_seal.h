/* cuco_seal.h — the seal on a harness's verdict line, shared by the trusted
 * harnesses (cuco_harness.h, gpu-common/cuco_gpu.h) and the evaluator
 * (src/eval/trust.c), so both compute it one way.
 *
 * The evaluator draws a fresh 128-bit key for every stage and hands it to
 * the harness in $CUCO_HARNESS, or, to a framed program (the one-GPU
 * family, whose frame's main() runs before any candidate code), in the
 * file CUCO_SEAL_FILE of the stage's working folder, which the frame
 * empties and removes first thing; the harness prints its verdict as
 *
 *   CUCO_SEALED <tag> <json>
 *
 * where tag is SipHash-2-4 (Aumasson and Bernstein's keyed 64-bit MAC) of
 * the JSON text under that key, in 16 hex digits. The evaluator accepts
 * only lines whose tag it can recompute: a line a candidate prints itself,
 * or one replayed from another run, carries no valid tag. For the
 * programs under mpirun the key travels through the environment because
 * Open MPI's mpirun closes every inherited file descriptor above 2 in the
 * ranks it starts, but passes its own environment on to them.
 *
 * Plain C99 that also compiles as C++ (nvcc), header-only. */
#ifndef CUCO_SEAL_H
#define CUCO_SEAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUCO_SEAL_ENV "CUCO_HARNESS"
#define CUCO_SEAL_FILE "cuco-ticket"
#define CUCO_SEAL_TAG "CUCO_SEALED "
#define CUCO_SEAL_KEY_HEX 32
#define CUCO_SEAL_HEX 16

static inline uint64_t cuco_seal_rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

/* One SipRound over the four state words. */
static inline void cuco_seal_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = cuco_seal_rotl(v[1], 13); v[1] ^= v[0]; v[0] = cuco_seal_rotl(v[0], 32);
	v[2] += v[3]; v[3] = cuco_seal_rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = cuco_seal_rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = cuco_seal_rotl(v[1], 17); v[1] ^= v[2]; v[2] = cuco_seal_rotl(v[2], 32);
}

static inline uint64_t cuco_seal_load(const unsigned char *p, size_t n)
{
	uint64_t w = 0;
	for (size_t i = 0; i < n; i++)
		w |= (uint64_t)p[i] << (8 * i);
	return w;
}

/* SipHash-2-4 of msg[0..len) under the key k0 (bytes 0-7), k1 (8-15). */
static inline uint64_t cuco_seal(uint64_t k0, uint64_t k1, const void *msg, size_t len)
{
	const unsigned char *m = (const unsigned char *)msg;
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull,
		k0 ^ 0x6c7967656e657261ull, k1 ^ 0x7465646279746573ull };
	size_t whole = len - len % 8;
	for (size_t i = 0; i < whole; i += 8) {
		uint64_t w = cuco_seal_load(m + i, 8);
		v[3] ^= w;
		cuco_seal_round(v);
		cuco_seal_round(v);
		v[0] ^= w;
	}
	uint64_t last = cuco_seal_load(m + whole, len % 8) | ((uint64_t)(len & 0xff) << 56);
	v[3] ^= last;
	cuco_seal_round(v);
	cuco_seal_round(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		cuco_seal_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* Parse n hex digits into *out; 0 on success. */
static inline int cuco_seal_hex(const char *s, int n, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* $CUCO_HARNESS, and the ticket file, hold "1:<32 hex: the key>:<16 hex:
 * the input seed>". */
typedef struct cuco_seal_ticket {
	uint64_t k0, k1, seed;
} cuco_seal_ticket;

static inline int cuco_seal_ticket_parse(const char *s, cuco_seal_ticket *t)
{
	const size_t len = 2 + CUCO_SEAL_KEY_HEX + 1 + CUCO_SEAL_HEX;
	if (!s || strlen(s) != len)  /* then no read passes the string's end */
		return -1;
	const char *k = s + 2, *seed = k + CUCO_SEAL_KEY_HEX + 1;
	if (s[0] != '1' || s[1] != ':' || seed[-1] != ':')
		return -1;
	return cuco_seal_hex(k, 16, &t->k0) || cuco_seal_hex(k + 16, 16, &t->k1)
		|| cuco_seal_hex(seed, CUCO_SEAL_HEX, &t->seed) ? -1 : 0;
}

/* The verdict line of a harness of one's own (the tests' stand-ins use
 * it): the JSON object {body, "seed": ...} sealed with the ticket in
 * $CUCO_HARNESS, or `CUCO_RESULT {...}` without one. body holds every
 * member of the verdict (docs/workloads.md) but the seed. */
static inline void cuco_seal_print(const char *body)
{
	cuco_seal_ticket t = { 0, 0, 0 };
	int sealed = cuco_seal_ticket_parse(getenv(CUCO_SEAL_ENV), &t) == 0;
	char json[4096];
	snprintf(json, sizeof json, "{%s, \"seed\": \"%016llx\"}", body, (unsigned long long)t.seed);
	if (sealed)
		printf("%s%016llx %s\n", CUCO_SEAL_TAG,
			(unsigned long long)cuco_seal(t.k0, t.k1, json, strlen(json)), json);
	else
		printf("CUCO_RESULT %s\n", json);
	fflush(stdout);
}

#endif
