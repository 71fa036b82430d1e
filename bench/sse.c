/* bench/sse — the stream parser's time per megabyte (issue 18 item 5).
 *
 * Feeds llm_sse_feed the two floods a hostile server can send, in the
 * 16 KiB pieces libcurl hands over, at 6, 12, 24 and 48 MB: one line with
 * no newline, and valid OpenAI events of 1 KiB of text each. The reply cap
 * is raised past the input so the whole input is parsed (with the default
 * cap the parser stops at 4 MB). Linear means the same seconds per MB at
 * every size.
 *
 *   build/bench/sse
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/llm_int.h"

static double feed(const char *bytes, size_t n, size_t *text)
{
	cuco_model model = { .provider = CUCO_PROVIDER_OPENAI };
	cuco_llm_request req = { .model = &model };
	llm_read r = { .provider = CUCO_PROVIDER_OPENAI, .req = &req, .max_bytes = n + 1 };
	double t0 = cuco_mono();
	for (size_t off = 0; off < n; off += 16384)
		llm_sse_feed(&r, bytes + off, n - off < 16384 ? n - off : 16384);
	double s = cuco_mono() - t0;
	*text = r.text.len;
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

int main(void)
{
	printf("%-8s %-22s %10s %10s %12s\n", "MB", "input", "seconds", "s per MB", "text bytes");
	for (int mb = 6; mb <= 48; mb *= 2) {
		size_t n = (size_t)mb << 20;
		char *line = cuco_xmalloc(n);
		memset(line, 'a', n);
		size_t text;
		double s = feed(line, n, &text);
		printf("%-8d %-22s %10.3f %10.4f %12zu\n", mb, "one line, no newline", s, s / mb, text);
		free(line);
		char *ev = events(n);
		s = feed(ev, n, &text);
		printf("%-8d %-22s %10.3f %10.4f %12zu\n", mb, "1 KiB text events", s, s / mb, text);
		free(ev);
	}
	return 0;
}
