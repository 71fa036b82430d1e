/* llm_check.c — before a run: is each model's server up, does it serve
 * the model, and how long is its context?
 *
 * A dead port or a misspelt model found here costs a second; found after
 * the baseline and the seed were measured it cost minutes. The context is
 * what the prompts are fitted to. Where each server says it:
 *
 *   llama.cpp  GET /v1/models: data[].meta.n_ctx (the slot's window), or
 *              GET /props: default_generation_settings.n_ctx (older ones)
 *   vLLM       GET /v1/models: data[].max_model_len
 *   Ollama     POST /api/show: num_ctx in its parameters, else Ollama's
 *              default window (OLLAMA_DEFAULT_CTX); the model's trained
 *              length (model_info.*.context_length) is only its ceiling,
 *              since Ollama cuts a longer prompt instead of refusing it
 *   others     nothing: the config's `context`, or none (no fitting until
 *              a context-exceeded reply names the length)
 *
 * llama-server answers any model name with the one model it loaded, so a
 * name it does not list is no error there; the log says what it serves.
 */
#include "models/llm_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_BODY_MAX (1u << 20)
#define OLLAMA_DEFAULT_CTX 4096   /* Ollama's num_ctx when a model sets none */

typedef struct fetched {
	cuco_buf body;
	bool too_big;
} fetched;

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	fetched *f = arg;
	if (f->body.len + size * n > CHECK_BODY_MAX) {
		f->too_big = true;
		return 0;
	}
	cuco_buf_append(&f->body, p, size * n);
	return size * n;
}

/* GET (or POST, with post) base+path; the HTTP status, or -1 with why. */
static long fetch(const cuco_llm_config *cfg, const cuco_model *m, const char *url,
	const char *post, fetched *f, char *why, size_t size)
{
	CURL *k = curl_easy_init();
	if (!k) {
		snprintf(why, size, "libcurl could not start a request");
		return -1;
	}
	struct curl_slist *h = llm_headers(m);
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	if (post)
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, post);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, (long)(cfg->connect_timeout_s * 1000));
	/* A listing is small and quick; a server loading its model answers 503. */
	curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, (long)(cfg->connect_timeout_s * 1000) + 20000);
	curl_easy_setopt(k, CURLOPT_USERAGENT, "cuco/" CUCO_VERSION);
	CURLcode rc = curl_easy_perform(k);
	long status = -1;
	if (rc == CURLE_OK)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
	else
		snprintf(why, size, "%s", f->too_big ? "answer larger than 1 MiB" : curl_easy_strerror(rc));
	curl_easy_cleanup(k);
	curl_slist_free_all(h);
	return status;
}

/* The URL without its trailing slashes and, for the server's own routes
 * (/props, /api/show), without the "/v1" of the OpenAI-style ones. */
static void base_url(const cuco_model *m, bool root, char *out, size_t size)
{
	size_t n = strlen(m->url);
	while (n > 0 && m->url[n - 1] == '/')
		n--;
	if (root && n >= 3 && strncmp(m->url + n - 3, "/v1", 3) == 0)
		n -= 3;
	snprintf(out, size, "%.*s", (int)n, m->url);
}

static int64_t number(const cJSON *j)
{
	return cJSON_IsNumber(j) && j->valuedouble > 0 && j->valuedouble < 1e9 ? (int64_t)j->valuedouble
		: 0;
}

/* What /models lists; the entry for m->model, or NULL. */
static const cJSON *read_listing(const cJSON *root, const cuco_model *m, cuco_llm_served *out)
{
	const cJSON *item, *mine = NULL;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(root, "data")) {
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(item, "id");
		const cJSON *owner = cJSON_GetObjectItemCaseSensitive(item, "owned_by");
		if (!cJSON_IsString(id))
			continue;
		size_t n = strlen(out->serves);
		if (n + strlen(id->valuestring) + 3 < sizeof out->serves)
			snprintf(out->serves + n, sizeof out->serves - n, "%s%s", n ? ", " : "",
				id->valuestring);
		if (cJSON_IsString(owner) && strcmp(owner->valuestring, "llamacpp") == 0)
			out->any_name = true;
		if (!mine && strcmp(id->valuestring, m->model) == 0)
			mine = item;
	}
	return mine;
}

static void context_from(cuco_llm_served *out, int64_t n, const char *where)
{
	if (out->context || n <= 0)
		return;
	out->context = n;
	cuco_strlcpy(out->context_from, where, sizeof out->context_from);
}

/* llama.cpp: /props, for its slots (how many requests it runs at once)
 * and, before meta.n_ctx, its context. */
static void ask_props(const cuco_llm_config *cfg, const cuco_model *m, cuco_llm_served *out)
{
	char url[600], why[256];
	base_url(m, true, url, sizeof url);
	cuco_strlcpy(url + strlen(url), "/props", sizeof url - strlen(url));
	fetched f = { 0 };
	if (fetch(cfg, m, url, NULL, &f, why, sizeof why) == 200) {
		cJSON *j = cJSON_ParseWithLength(f.body.data, f.body.len);
		context_from(out, number(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(j, "default_generation_settings"), "n_ctx")), "/props");
		out->slots = (int)number(cJSON_GetObjectItemCaseSensitive(j, "total_slots"));
		cJSON_Delete(j);
	}
	cuco_buf_free(&f.body);
}

/* Ollama: the window it runs the model with, from /api/show. */
static void ask_ollama(const cuco_llm_config *cfg, const cuco_model *m, cuco_llm_served *out)
{
	char url[600], why[256];
	base_url(m, true, url, sizeof url);
	cuco_strlcpy(url + strlen(url), "/api/show", sizeof url - strlen(url));
	cJSON *q = cJSON_CreateObject();
	cJSON_AddStringToObject(q, "model", m->model);
	char *post = cJSON_PrintUnformatted(q);
	cJSON_Delete(q);
	fetched f = { 0 };
	if (fetch(cfg, m, url, post, &f, why, sizeof why) == 200) {
		cJSON *j = cJSON_ParseWithLength(f.body.data, f.body.len);
		const cJSON *params = cJSON_GetObjectItemCaseSensitive(j, "parameters");
		const char *num = cJSON_IsString(params) ? strstr(params->valuestring, "num_ctx") : NULL;
		int64_t trained = 0;
		const cJSON *info;
		cJSON_ArrayForEach(info, cJSON_GetObjectItemCaseSensitive(j, "model_info"))
			if (info->string && strstr(info->string, ".context_length"))
				trained = number(info);
		int64_t ctx = num ? strtoll(num + 7, NULL, 10) : OLLAMA_DEFAULT_CTX;
		context_from(out, trained > 0 && trained < ctx ? trained : ctx, "/api/show");
		cJSON_Delete(j);
	}
	cuco_buf_free(&f.body);
	free(post);
}

static int check_fail(const cuco_model *m, const char *url, const char *what, cuco_err *err)
{
	char text[800];
	snprintf(text, sizeof text, "model %s: %.300s: %.400s", m->name, url, what);
	llm_scrub(m, text);
	return cuco_errf(err, CUCO_EENV, "%s", text);
}

/* One line in the run log: what the server is and will be asked. */
static void log_served(const cuco_model *m, const cuco_llm_served *sv, bool listed)
{
	char ctx[128] = "context not stated: prompts are fitted once a reply names it";
	if (sv->context)
		snprintf(ctx, sizeof ctx, "context %lld tokens (%s)", (long long)sv->context,
			sv->context_from);
	if (sv->slots > 0)
		snprintf(ctx + strlen(ctx), sizeof ctx - strlen(ctx), "; %d slot%s", sv->slots,
			sv->slots == 1 ? "" : "s");
	if (sv->any_name && !listed)
		cuco_log(CUCO_LOG_INFO, "llm: %s: %s answers any model name with the one it serves: %s; "
			"%s", m->name, m->url, sv->serves, ctx);
	else
		cuco_log(CUCO_LOG_INFO, "llm: %s: %s %s `%s`; %s", m->name, m->url,
			listed ? "serves" : "lists no models; asking for", m->model, ctx);
}

int cuco_llm_check(cuco_llm *c, cuco_model *m, cuco_llm_served *out, cuco_err *err)
{
	const cuco_llm_config *cfg = llm_config(c);
	memset(out, 0, sizeof *out);
	char url[600], why[256], what[512];
	base_url(m, false, url, sizeof url);
	cuco_strlcpy(url + strlen(url), "/models", sizeof url - strlen(url));
	/* A provider's service takes nothing without its key: said as that,
	 * not as whatever asking without one runs into. */
	const char *key = m->api_key_env[0] ? getenv(m->api_key_env) : NULL;
	bool keyless = m->api_key_env[0] && !(key && *key);
	if (keyless && cuco_model_hosted(m)) {
		snprintf(what, sizeof what, "no API key: $%s is not set (export it; cuco reads it from "
			"the environment and never stores it)", m->api_key_env);
		return check_fail(m, url, what, err);
	}
	fetched f = { 0 };
	long status = fetch(cfg, m, url, NULL, &f, why, sizeof why);
	cJSON *root = status == 200 ? cJSON_ParseWithLength(f.body.data, f.body.len) : NULL;
	char msg[256] = "";
	if (status > 0 && status != 200)
		llm_error_message(f.body.data ? f.body.data : "", f.body.len, msg, sizeof msg);
	cuco_buf_free(&f.body);
	int rc = CUCO_OK;
	if (status < 0) {
		snprintf(what, sizeof what, "cannot reach the server (%s); is it running?%s%s%s", why,
			keyless ? " ($" : "", keyless ? m->api_key_env : "", keyless ? " is not set either)" : "");
		rc = check_fail(m, url, what, err);
	} else if (status == 401 || status == 403) {
		snprintf(what, sizeof what, "HTTP %ld%s%s (is %s set?)", status, msg[0] ? ": " : "", msg,
			m->api_key_env[0] ? m->api_key_env : "the key variable");
		rc = check_fail(m, url, what, err);
	} else if (status != 200 && status != 404 && status != 405 && status != 501) {
		/* 404 and friends: a server without a listing, which is fine. */
		snprintf(what, sizeof what, "HTTP %ld%s%s", status, msg[0] ? ": " : "", msg);
		rc = check_fail(m, url, what, err);
	}
	const cJSON *mine = rc == CUCO_OK && root ? read_listing(root, m, out) : NULL;
	if (rc == CUCO_OK && out->serves[0] && !mine && !out->any_name) {
		snprintf(what, sizeof what, "serves no model `%s`; it serves: %s", m->model, out->serves);
		rc = check_fail(m, url, what, err);
	}
	if (rc == CUCO_OK) {
		const cJSON *entry = mine ? mine : cJSON_GetArrayItem(
			cJSON_GetObjectItemCaseSensitive(root, "data"), 0);
		if (m->context > 0)
			context_from(out, m->context, "config");
		context_from(out, number(cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(entry, "meta"), "n_ctx")), "/models");
		context_from(out, number(cJSON_GetObjectItemCaseSensitive(entry, "max_model_len")),
			"/models");
		const cJSON *owner = cJSON_GetObjectItemCaseSensitive(entry, "owned_by");
		if (out->any_name || m->server == CUCO_SERVER_LLAMACPP)
			ask_props(cfg, m, out);
		if (!out->context && cJSON_IsString(owner) && (strcmp(owner->valuestring, "library") == 0
				|| strcmp(owner->valuestring, "ollama") == 0))
			ask_ollama(cfg, m, out);
		if (!m->context)
			m->context = out->context;
		m->slots = out->slots;
		log_served(m, out, mine != NULL);
	}
	cJSON_Delete(root);
	return rc;
}

int cuco_llm_tokenize(cuco_llm *c, const cuco_model *m, const char *text, int64_t *tokens,
	cuco_err *err)
{
	*tokens = 0;
	if (m->server != CUCO_SERVER_LLAMACPP)
		return CUCO_ENOTFOUND;
	char url[600], why[256] = "";
	base_url(m, true, url, sizeof url);
	cuco_strlcpy(url + strlen(url), "/tokenize", sizeof url - strlen(url));
	cJSON *q = cJSON_CreateObject();
	char *clean = cuco_utf8_clean(text);  /* as the request it measures will carry it */
	cJSON_AddStringToObject(q, "content", clean);
	free(clean);
	char *post = cJSON_PrintUnformatted(q);
	cJSON_Delete(q);
	fetched f = { 0 };
	long status = fetch(llm_config(c), m, url, post, &f, why, sizeof why);
	free(post);
	cJSON *j = status == 200 ? cJSON_ParseWithLength(f.body.data, f.body.len) : NULL;
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "tokens");
	int rc = cJSON_IsArray(list) ? CUCO_OK : cuco_errf(err, CUCO_EENV, "%s: %s", url,
		why[0] ? why : "no token list");
	*tokens = cJSON_GetArraySize(list);
	cJSON_Delete(j);
	cuco_buf_free(&f.body);
	return rc;
}
