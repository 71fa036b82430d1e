/* hosts.c — lists of hosts as users and schedulers write them: Slurm's
 * hostlist expressions ("gpu[01-04,07],login1", what $SLURM_JOB_NODELIST
 * holds), Open MPI hostfiles ("node1 slots=4"), and grouping hosts into
 * slots for workloads that span several of them. Every parse error names
 * the text or file:line and what is wrong with it. */
#include "eval/eval_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANGE_DIGITS 9  /* keeps every number well inside a long */

static int add_host(const char *name, size_t len, int slots, eval_host *out, int max, int *n,
	const char *what, cuco_err *err)
{
	if (len == 0)
		return cuco_errf(err, CUCO_EDATA, "%s: an empty host name", what);
	if (len >= sizeof out->name)
		return cuco_errf(err, CUCO_EDATA, "%s: a host name longer than %zu characters", what,
			sizeof out->name - 1);
	for (int i = 0; i < *n; i++)
		if (strlen(out[i].name) == len && memcmp(out[i].name, name, len) == 0)
			return cuco_errf(err, CUCO_EDATA, "%s: %.*s is listed twice", what, (int)len, name);
	if (*n >= max)
		return cuco_errf(err, CUCO_EDATA, "%s: more than %d hosts", what, max);
	memcpy(out[*n].name, name, len);
	out[*n].name[len] = '\0';
	out[*n].slots = slots;
	(*n)++;
	return CUCO_OK;
}

/* A number of a range inside brackets: digits only, not too many. */
static bool range_number(const char *s, size_t len, long *v)
{
	if (len == 0 || len > MAX_RANGE_DIGITS)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	*v = strtol(s, NULL, 10);
	return true;
}

static int expand_item(const char *prefix, size_t plen, const char *rest, eval_host *out, int max,
	int *n, const char *what, cuco_err *err);

/* One bracket group: every number of "1-3,07-09,5" in turn, zero-padded
 * to the width of the range's first number (Slurm's rule), then what
 * follows the bracket. */
static int expand_bracket(const char *prefix, size_t plen, const char *open, eval_host *out,
	int max, int *n, const char *what, cuco_err *err)
{
	const char *close = strchr(open, ']');
	if (!close || memchr(open + 1, '[', (size_t)(close - open - 1)))
		return cuco_errf(err, CUCO_EDATA, "%s: a [ without its ]", what);
	/* Every part between commas is a range, an empty one too ("n[]", "n[1,]"). */
	for (const char *r = open + 1; r <= close; r++) {
		size_t len = strcspn(r, ",]");
		const char *dash = memchr(r, '-', len);
		size_t lo_len = dash ? (size_t)(dash - r) : len;
		long lo, hi;
		if (!range_number(r, lo_len, &lo) ||
				!(dash ? range_number(dash + 1, len - lo_len - 1, &hi) : (hi = lo, true)) || hi < lo)
			return cuco_errf(err, CUCO_EDATA, "%s: [%.*s]: not a range of numbers (1-4,7)", what,
				(int)(close - open - 1), open + 1);
		if (hi - lo >= max)
			return cuco_errf(err, CUCO_EDATA, "%s: more than %d hosts", what, max);
		for (long v = lo; v <= hi; v++) {
			char head[512];
			int hl = snprintf(head, sizeof head, "%.*s%0*ld", (int)plen, prefix, (int)lo_len, v);
			if (hl < 0 || (size_t)hl >= sizeof head)
				return cuco_errf(err, CUCO_EDATA, "%s: a host name too long", what);
			int rc = expand_item(head, (size_t)hl, close + 1, out, max, n, what, err);
			if (rc != CUCO_OK)
				return rc;
		}
		r += len;
	}
	return CUCO_OK;
}

/* prefix + rest, where rest may hold more bracket groups ("r[1-2]n[1-3]"). */
static int expand_item(const char *prefix, size_t plen, const char *rest, eval_host *out, int max,
	int *n, const char *what, cuco_err *err)
{
	const char *open = strchr(rest, '[');
	if (strchr(rest, ']') && (!open || strchr(rest, ']') < open))
		return cuco_errf(err, CUCO_EDATA, "%s: a ] without its [", what);
	if (!open) {
		char name[512];
		int len = snprintf(name, sizeof name, "%.*s%s", (int)plen, prefix, rest);
		if (len < 0 || (size_t)len >= sizeof name)
			return cuco_errf(err, CUCO_EDATA, "%s: a host name too long", what);
		return add_host(name, (size_t)len, 0, out, max, n, what, err);
	}
	char head[512];
	int hl = snprintf(head, sizeof head, "%.*s%.*s", (int)plen, prefix, (int)(open - rest), rest);
	if (hl < 0 || (size_t)hl >= sizeof head)
		return cuco_errf(err, CUCO_EDATA, "%s: a host name too long", what);
	return expand_bracket(head, (size_t)hl, open, out, max, n, what, err);
}

int eval_hostlist_expand(const char *expr, eval_host *out, int max, int *n, cuco_err *err)
{
	char what[96];
	snprintf(what, sizeof what, "hosts \"%.60s%s\"", expr, strlen(expr) > 60 ? "…" : "");
	*n = 0;
	/* Items are split at commas outside brackets. */
	for (const char *s = expr; *s;) {
		size_t len = 0;
		int depth = 0;
		for (; s[len] && (depth > 0 || s[len] != ','); len++) {
			depth += s[len] == '[' ? 1 : s[len] == ']' ? -1 : 0;
			if (isspace((unsigned char)s[len]) || iscntrl((unsigned char)s[len]))
				return cuco_errf(err, CUCO_EDATA, "%s: a space or control character in a name", what);
		}
		char item[512];
		if (len >= sizeof item)
			return cuco_errf(err, CUCO_EDATA, "%s: a host name too long", what);
		memcpy(item, s, len);
		item[len] = '\0';
		int rc = expand_item("", 0, item, out, max, n, what, err);
		if (rc != CUCO_OK)
			return rc;
		s += len + (s[len] == ',');
	}
	if (*n == 0)
		return cuco_errf(err, CUCO_EDATA, "%s: no host", what);
	return CUCO_OK;
}

/* `slots=N` or `max_slots=N` of a hostfile line. */
static bool hostfile_count(const char *word, const char *key, int *out)
{
	size_t k = strlen(key);
	if (strncmp(word, key, k) != 0 || word[k] != '=')
		return false;
	char *end;
	errno = 0;
	long v = strtol(word + k + 1, &end, 10);
	*out = (!word[k + 1] || *end || errno || v < 1 || v > 1 << 20) ? -1 : (int)v;
	return true;
}

int eval_hostfile_read(const char *path, eval_host *out, int max, int *n, cuco_err *err)
{
	char *text;
	int rc = cuco_read_file(path, 1 << 20, &text, NULL, err);
	if (rc != CUCO_OK)
		return rc;
	*n = 0;
	int lineno = 0;
	for (char *line = text, *next; line && rc == CUCO_OK; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char what[1100];
		snprintf(what, sizeof what, "%s:%d", path, lineno);
		char *save = NULL, *host = strtok_r(line, " \t\r", &save);
		if (!host)
			continue;
		int slots = 0, ignored;
		for (char *w; (w = strtok_r(NULL, " \t\r", &save)) && rc == CUCO_OK;) {
			if (hostfile_count(w, "slots", &slots) ? slots < 0
					: hostfile_count(w, "max_slots", &ignored) ? ignored < 0 : true)
				rc = cuco_errf(err, CUCO_EDATA, "%s: %.80s: expected slots=N or max_slots=N "
					"(N a positive count)", what, w);
		}
		for (const char *c = host; rc == CUCO_OK && *c; c++)
			if (iscntrl((unsigned char)*c) || *c == ',' || *c == '\'' || *c == '"')
				rc = cuco_errf(err, CUCO_EDATA, "%s: %.80s: not a host name", what, host);
		if (rc == CUCO_OK)
			rc = add_host(host, strlen(host), slots, out, max, n, what, err);
	}
	free(text);
	if (rc == CUCO_OK && *n == 0)
		rc = cuco_errf(err, CUCO_EDATA, "%s: no host in the hostfile", path);
	return rc;
}

/* Hosts k .. k+count-1 as one slot: its name and the launcher's list. */
static void group_slot(const eval_host *h, int count, int ranks, cuco_runner_kind kind,
	cuco_slot_spec *s)
{
	cuco_buf name = { 0 }, list = { 0 };
	for (int i = 0; i < count; i++) {
		cuco_buf_printf(&name, "%s%s", i ? "+" : "", h[i].name);
		/* mpirun's --host takes host:slots; a host without slots= holds
		 * its share of the ranks. */
		if (kind == CUCO_RUNNER_HOSTFILE)
			cuco_buf_printf(&list, "%s%s:%d", i ? "," : "", h[i].name,
				h[i].slots > 0 ? h[i].slots : (ranks + count - 1) / count);
		else
			cuco_buf_printf(&list, "%s%s", i ? "," : "", h[i].name);
	}
	cuco_strlcpy(s->name, name.data, sizeof s->name);
	cuco_strlcpy(s->hosts, list.data, sizeof s->hosts);
	s->gpus[0] = '\0';
	cuco_buf_free(&name);
	cuco_buf_free(&list);
}

int eval_hosts_to_slots(const eval_host *h, int nhosts, int per_slot, int ranks,
	cuco_runner_kind kind, cuco_slot_spec *out, int max, int *n, cuco_err *err)
{
	*n = 0;
	for (int k = 0; k < nhosts && *n < max;) {
		int count = per_slot;
		if (count <= 0) {  /* enough hosts for the ranks, by their slots= */
			int have = 0;
			for (count = 0; k + count < nhosts && have < ranks; count++)
				have += h[k + count].slots > 0 ? h[k + count].slots : ranks;
			if (have < ranks)
				break;  /* the last hosts cannot hold a slot's ranks: left out */
		}
		if (k + count > nhosts)
			break;
		group_slot(h + k, count, ranks, kind, &out[(*n)++]);
		k += count;
	}
	if (*n == 0)
		return cuco_errf(err, CUCO_EDATA, "%d host%s cannot hold one slot of %d ranks%s", nhosts,
			nhosts == 1 ? "" : "s", ranks, per_slot > 0 ? " (hosts_per_slot is more than the hosts)"
			: " (their slots= are too few)");
	return CUCO_OK;
}
