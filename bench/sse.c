/* bench/sse — the stream parser's time per megabyte (issue 18 item 5).
 *
 * Feeds llm_sse_feed the two floods a hostile server can send, in the
 * 16 KiB pieces libcurl hands over, at 6, 12, 24 and 48 MB: one line with
 * no newline, and valid OpenAI events of 1 KiB of text each. The reply cap
 * is raised past the input so the whole input is parsed (with the default
 * cap the parser stops at 4 MB). Linear means the same seconds per MB at
 * every size; each figure is the fastest of 3 feeds, the machine being
 * shared. Then each flood at 48 MB under the default cap (max_reply,
 * 4 MiB): where the parser stopped, and the refusal it gives.
 *
 *   build/bench/sse
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/llm_int.h"

/* Seconds to feed n bytes under the cap max_bytes (0: the default); the
 * text kept in *text, the refusal (or "") in why. */
static double feed(const char *bytes, size_t n, size_t max_bytes, size_t *text, char *why, size_t size)
{
	cuco_model model = { .provider = CUCO_PROVIDER_OPENAI };
	cuco_llm_request req = { .model = &model };
	llm_read r = { .provider = CUCO_PROVIDER_OPENAI, .req = &req, .max_bytes = max_bytes };
	double t0 = cuco_mono();
	for (size_t off = 0; off < n; off += 16384)
		llm_sse_feed(&r, bytes + off, n - off < 16384 ? n - off : 16384);
	double s = cuco_mono() - t0;
	*text = r.text.len;
	snprintf(why, size, "%s", r.too_big ? r.error : "");
	cuco_buf_free(&r.text);
	cuco_buf_free(&r.line);
	cuco_buf_free(&r.data);
	return s;
}

static char *events(size_t n)
{
	char chunk[1200], text[1025];
	memset(text, 'x', 1024);
	text[1024] = '\0';
	int len = snprintf(chunk, sizeof chunk,
		"data: {\"choices\":[{\"delta\":{\"content\":\"%s\"}}]}\n\n", text);
	char *b = cuco_xmalloc(n);
	for (size_t off = 0; off < n; off += (size_t)len)
		memcpy(b + off, chunk, n - off < (size_t)len ? n - off : (size_t)len);
	return b;
}

static char *flat(size_t n)
{
	char *line = cuco_xmalloc(n);
	memset(line, 'a', n);
	return line;
}

int main(void)
{
	static const struct { const char *name; char *(*make)(size_t); } floods[] = {
		{ "one line, no newline", flat }, { "1 KiB text events", events } };
	char why[256];
	size_t text;
	printf("%-8s %-22s %10s %10s %12s\n", "MB", "input", "seconds", "s per MB", "text bytes");
	for (int mb = 6; mb <= 48; mb *= 2)
		for (size_t f = 0; f < 2; f++) {
			size_t n = (size_t)mb << 20;
			char *b = floods[f].make(n);
			double s = feed(b, n, n + 1, &text, why, sizeof why);
			for (int k = 0; k < 2; k++) {
				double again = feed(b, n, n + 1, &text, why, sizeof why);
				s = again < s ? again : s;
			}
			printf("%-8d %-22s %10.3f %10.4f %12zu\n", mb, floods[f].name, s, s / mb, text);
			free(b);
		}
	printf("\nunder the default cap:\n");
	for (size_t f = 0; f < 2; f++) {
		size_t n = (size_t)48 << 20;
		char *b = floods[f].make(n);
		double s = feed(b, n, 0, &text, why, sizeof why);
		printf("48       %-22s %10.3f %10s %12zu  %s\n", floods[f].name, s, "", text,
			*why ? why : "not refused");
		free(b);
	}
	return 0;
}
