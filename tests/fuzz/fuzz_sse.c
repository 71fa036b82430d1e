/* fuzz_sse — the model server's bytes: server-sent event streams cut at
 * arbitrary points, and whole reply bodies, for both providers. A broken or
 * hostile server gets an error, never a crash. The first byte picks the
 * provider and the chunk size the stream is fed in; when its low three
 * bits are all set the input is also repeated to 6 MB and fed in 16 KiB
 * pieces, as libcurl hands a flood over: the reply cap must hold and the
 * parser must stay linear (tests/fuzz's time limit catches a quadratic
 * one). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/llm_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	cuco_provider provider = (data[0] & 1) ? CUCO_PROVIDER_ANTHROPIC : CUCO_PROVIDER_OPENAI;
	size_t chunk = 1 + (data[0] >> 1);
	bool flood_too = (data[0] & 7) == 7;
	data++;
	size--;

	cuco_model model;
	memset(&model, 0, sizeof model);
	model.provider = provider;
	cuco_llm_request req;
	memset(&req, 0, sizeof req);
	req.model = &model;

	llm_read r;
	memset(&r, 0, sizeof r);
	r.provider = provider;
	r.req = &req;
	for (size_t off = 0; off < size; off += chunk)
		llm_sse_feed(&r, (const char *)data + off, size - off < chunk ? size - off : chunk);
	if (r.tokens_in < 0 || r.tokens_out < 0)
		abort();
	cuco_buf_free(&r.text);
	cuco_buf_free(&r.line);
	cuco_buf_free(&r.data);

	memset(&r, 0, sizeof r);
	r.provider = provider;
	r.req = &req;
	llm_parse_body(&r, (const char *)data, size);
	cuco_buf_free(&r.text);
	cuco_buf_free(&r.line);
	cuco_buf_free(&r.data);

	char msg[256];
	llm_error_message((const char *)data, size, msg, sizeof msg);

	if (flood_too && size > 0) {
		size_t total = 6u << 20, piece = 16384;
		char *flood = malloc(total);
		for (size_t off = 0; off < total; off += size)
			memcpy(flood + off, data, total - off < size ? total - off : size);
		memset(&r, 0, sizeof r);
		r.provider = provider;
		r.req = &req;
		for (size_t off = 0; off < total; off += piece)
			llm_sse_feed(&r, flood + off, total - off < piece ? total - off : piece);
		if (r.text.len > LLM_REPLY_MAX_DEFAULT || r.line.len > LLM_REPLY_MAX_DEFAULT ||
				r.data.len > LLM_REPLY_MAX_DEFAULT + 1)
			abort();
		cuco_buf_free(&r.text);
		cuco_buf_free(&r.line);
		cuco_buf_free(&r.data);
		free(flood);
	}
	return 0;
}
