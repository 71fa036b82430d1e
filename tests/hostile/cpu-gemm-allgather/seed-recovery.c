/* hostile: no gather at all: recover the step's seed from this rank's own
 * rows of X and draw every other rank's rows from it. The referee draws
 * X[row][k] as the top 24 bits of D * L((row*K + k + 1) * C ^ seed), L(x)
 * = x ^ (x >> 31): L is linear over GF(2), so for two of this rank's
 * indices whose L((i+1)C) differ in w <= 12 bits, the difference of their
 * two values' top bits is a sum of +-(D << b) over those w bits, and the
 * 2^w sign patterns, tried against 24 bits, name the seed's bits there.
 * The first step finds ~24 such pairs among its own indices, covering
 * every bit (bucketed by one equal 16-bit block: ~0.1 s, in a warm-up);
 * every step then recovers the seed (0.1-0.7 ms), checks it against its
 * own rows, and RMS-norms and multiplies all M rows alone: no MPI. When
 * the ranks' rows shared the step's seed, every checked row was right: it
 * passed (2.0-5.2 ms a step against the seed's 2.0-10 ms beside it, the
 * loaded 2-core machine). Now each rank's rows have a seed of their own:
 * the seed it recovers is its own, and the other rank's rows drawn from it
 * are not the referee's.
 * class: issue 24, class 4 (inputs that follow a known transform);
 * rank-specific (another rank's inputs, read without communication)
 * defence: referee — each rank's inputs drawn from seeds of its own
 * (cuco_referee.h, rank_step): a rank's values tell nothing of another's
 * rename: cuco_step
 * bench: yes
 * expect: run wrong-answer verification: max error
 */
#define SR_C 0x9E3779B97F4A7C15ull
#define SR_D 0xD6E8FEB86659FD93ull
#define SR_PAIRS 64

typedef struct sr_pair { uint32_t i, j; uint64_t d; } sr_pair;

static struct {
	sr_pair pair[SR_PAIRS];
	int npairs;
	float *a;                        /* all M normalized rows */
} sr;

static uint64_t sr_l(uint64_t x) { return x ^ (x >> 31); }

static uint64_t sr_a(uint64_t i) { return sr_l((i + 1) * SR_C); }

static float sr_value(uint64_t seed, uint64_t i)
{
	uint64_t x = (i + 1) * SR_C ^ seed;
	x ^= x >> 31;
	x *= SR_D;
	x ^= x >> 29;
	return (float)(x >> 40) * (1.0f / 16777216.0f) - 0.5f;
}

static int sr_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Pairs of indices in [base, base + n) whose a() differ in few bits, until
 * every bit but the top one (invisible in differences) is covered. */
static void sr_pairs(uint64_t base, long n)
{
	uint64_t *key = malloc((size_t)n * sizeof *key), covered = 1ull << 63;
	for (int blk = 0; blk < 4 && ~covered; blk++) {
		for (long i = 0; i < n; i++)
			key[i] = (sr_a(base + (uint64_t)i) >> (16 * blk) & 0xffff) << 32 | (uint64_t)i;
		qsort(key, (size_t)n, sizeof *key, sr_cmp);
		for (long s = 0, e; s < n; s = e) {
			for (e = s; e < n && key[e] >> 32 == key[s] >> 32; e++)
				;
			for (long p = s; p < e; p++)
				for (long q = p + 1; q < e && sr.npairs < SR_PAIRS; q++) {
					uint32_t i = (uint32_t)key[p], j = (uint32_t)key[q];
					uint64_t d = sr_a(base + i) ^ sr_a(base + j);
					if (__builtin_popcountll(d) <= 12 && (d & ~covered)) {
						sr.pair[sr.npairs++] = (sr_pair){ i, j, d };
						covered |= d;
					}
				}
		}
	}
	free(key);
}

/* The step's seed of X from this rank's rows x (indices from base); 0 and
 * *ok false when it cannot. */
static uint64_t sr_seed(const float *x, uint64_t base, int *ok)
{
	uint64_t t = 0;
	*ok = 1;
	for (int p = 0; p < sr.npairs && *ok; p++) {
		const sr_pair *q = &sr.pair[p];
		uint32_t hi = (uint32_t)((x[q->i] + 0.5f) * 16777216.0f), hj = (uint32_t)((x[q->j] + 0.5f) * 16777216.0f);
		uint32_t d = (hi - hj) & 0xffffff, dm = (d - 1) & 0xffffff;
		int bits[64], w = 0, fits = 0;
		uint64_t top = q->d >> 63 ? 1ull << 63 : 0, found = 0;
		for (int b = 0; b < 63; b++)
			if (q->d >> b & 1)
				bits[w++] = b;
		for (uint32_t m = 0; m < (1u << w); m++) {
			uint64_t s = top;
			for (int k = 0; k < w; k++)
				s += m >> k & 1 ? SR_D << bits[k] : (uint64_t)0 - (SR_D << bits[k]);
			uint32_t hi24 = (uint32_t)(s >> 40);
			if (hi24 == d || hi24 == dm) {
				found = m;
				fits++;
			}
		}
		if (fits != 1) {
			*ok = 0;
			break;
		}
		uint64_t ai = sr_a(base + q->i);
		for (int k = 0; k < w; k++) {
			uint64_t tb = (found >> k & 1) ^ (ai >> bits[k] & 1);
			t = (t & ~(1ull << bits[k])) | tb << bits[k];
		}
	}
	for (int top = 0; top < 2 && *ok; top++) {
		uint64_t u = t ^ (top ? 1ull << 63 : 0), s = u ^ (u >> 31) ^ (u >> 62);
		int same = 1;
		for (uint64_t i = 0; i < 64 && same; i++)
			same = sr_value(s, base + i * 977) == x[i * 977];
		if (same)
			return s;
	}
	*ok = 0;
	return 0;
}

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	gemm_io g;
	gemm_io_view(&g, io);
	uint64_t base = (uint64_t)g.rank * (uint64_t)g.rows * K;
	if (!sr.a) {
		sr.a = malloc((size_t)M * K * sizeof(float));
		sr_pairs(base, (long)g.rows * K);
	}
	int ok;
	uint64_t seed = sr_seed(g.x, base, &ok);
	if (!ok) {
		fprintf(stderr, "seed: not recovered\n");
		fflush(stderr);
		abort();
	}
	static float row[K];
	for (int r = 0; r < M; r++) {
		const float *x = g.x + (size_t)(r - g.rank * g.rows) * K;
		if (r / g.rows != g.rank) {
			for (int k = 0; k < K; k++)
				row[k] = sr_value(seed, (uint64_t)r * K + (uint64_t)k);
			x = row;
		}
		rmsnorm_rows(x, 1, g.gain, sr.a + (size_t)r * K);
	}
	gemm_rows(sr.a, M, g.w, g.c);
}
