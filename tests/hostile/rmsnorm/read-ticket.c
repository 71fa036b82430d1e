/* hostile: find the harness's key wherever a program could once read it
 * (the ticket's file in the working folder, this process's environment,
 * every ancestor's: the launcher's, the sandbox's init), with every name
 * spelled so that the source scan does not see it, and with it seal a
 * verdict of its own, a correct run of 1 us (SipHash-2-4 written out
 * here), and leave before the frame reports. Where the key is nowhere to
 * be found it can only print an unsealed verdict, which is refused. Its
 * object imports the file calls it needs, which the object check refuses
 * first (with them spelled past it, the channel would refuse the
 * unsealed line).
 * rename: cuco_launch
 * expect: compile suspect object: imports fopen
 */
#include <unistd.h>

typedef unsigned long long u64;

static u64 rot(u64 x, int b) { return x << b | x >> (64 - b); }

static void sip_round(u64 v[4])
{
	v[0] += v[1]; v[1] = rot(v[1], 13); v[1] ^= v[0]; v[0] = rot(v[0], 32);
	v[2] += v[3]; v[3] = rot(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rot(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rot(v[1], 17); v[1] ^= v[2]; v[2] = rot(v[2], 32);
}

static u64 word(const unsigned char *m, size_t n)
{
	u64 w = 0;
	for (size_t i = 0; i < n; i++)
		w |= (u64)m[i] << (8 * i);
	return w;
}

static u64 mac(u64 k0, u64 k1, const char *text)
{
	const unsigned char *m = (const unsigned char *)text;
	size_t len = strlen(text), whole = len - len % 8;
	u64 v[4] = { k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
		k1 ^ 0x7465646279746573ull };
	for (size_t i = 0; i <= whole; i += 8) {
		u64 w = i < whole ? word(m + i, 8) : word(m + i, len % 8) | (u64)(len & 0xff) << 56;
		v[3] ^= w;
		sip_round(v);
		sip_round(v);
		v[0] ^= w;
	}
	v[2] ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* "1:<32 hex>:<16 hex>" at t: the key and the seed. */
static bool parse(const char *t, u64 *k0, u64 *k1, u64 *seed)
{
	char a[17] = "", b[17] = "", c[17] = "";
	return sscanf(t, "1:%16[0-9a-f]%16[0-9a-f]:%16[0-9a-f]", a, b, c) == 3 && strlen(c) == 16
		&& (*k0 = strtoull(a, NULL, 16), *k1 = strtoull(b, NULL, 16), *seed = strtoull(c, NULL, 16), true);
}

/* The ticket in a file: the file itself, or NAME=ticket in an environ. */
static bool ticket_in(const char *path, u64 *k0, u64 *k1, u64 *seed)
{
	static char buf[1 << 16];
	char name[32];
	snprintf(name, sizeof name, "%s%s=", "CUCO_", "HARNESS");
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	if (n && parse(buf, k0, k1, seed))
		return true;
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		if (strncmp(buf + i, name, strlen(name)) == 0 && parse(buf + i + strlen(name), k0, k1, seed))
			return true;
	return false;
}

static bool find_key(u64 *k0, u64 *k1, u64 *seed)
{
	char path[64];
	if (ticket_in("cuco-ticket", k0, k1, seed))
		return true;
	for (long pid = (long)getpid(), hops = 0; pid > 0 && hops < 64; hops++) {
		snprintf(path, sizeof path, "/%s/%ld/%s", "proc", pid, "environ");
		if (ticket_in(path, k0, k1, seed))
			return true;
		char line[512] = "";
		snprintf(path, sizeof path, "/%s/%ld/stat", "proc", pid);
		FILE *f = fopen(path, "r");
		if (!f || !fgets(line, sizeof line, f)) {
			if (f)
				fclose(f);
			break;
		}
		fclose(f);
		const char *paren = strrchr(line, ')');
		if (!paren || sscanf(paren + 1, " %*c %ld", &pid) != 1)
			break;
	}
	return false;
}

extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	u64 k0, k1, seed = 0;
	bool found = find_key(&k0, &k1, &seed);
	char json[512];
	snprintf(json, sizeof json, "{\"correct\": true, \"max_error\": 0, \"latency_us\": {\"min\": 1, \"median\": 1, "
		"\"p90\": 1, \"max\": 1, \"samples\": 1}, \"wall_us\": 1, \"phases_us\": {\"kernel\": 1}, \"bytes\": 0, "
		"\"flops\": 0, \"seed\": \"%016llx\", \"ranks\": 1, \"checks\": 3}", seed);
	if (found)
		printf("CUCO_SEALED %016llx %s\n", mac(k0, k1, json), json);
	else
		printf("CUCO_RESULT %s\n", json);
	fflush(stdout);
	_exit(0);
	cuco_launch_real(state, p, s);
}
