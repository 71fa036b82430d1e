/* llm.c — the LLM client: one HTTP call to a model, with timeouts,
 * retries, cancellation and token accounting, over libcurl.
 *
 * Each call owns its easy handle, so threads call in parallel without
 * sharing curl state; the only shared state is the running totals, under
 * a lock. Keys are read from the environment at each call and reach only
 * the request headers: error text is built from the URL, the status and
 * the server's message (with the key cut out should a server echo it).
 */
#include "models/llm_int.h"

#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>


/* Prompt tokens a second a server reads, as its calls measured it. */
typedef struct speed {
	char model[64];       /* the config's name */
	double tokens_per_s;
} speed;

/* Before a server's first call is measured: a CPU reading a prompt, or a
 * hosted API's GPUs. */
#define LOCAL_PROMPT_SPEED 25.0
#define HOSTED_PROMPT_SPEED 2000.0

struct cuco_llm {
	cuco_llm_config cfg;
	pthread_mutex_t lock;  /* guards the totals and the speeds */
	int64_t tokens_in, tokens_out;
	double cost_usd;
	speed speeds[CUCO_MAX_MODELS];
	int nspeeds;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* curl_global_init is not thread-safe on every libcurl; do it once. */
static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int cuco_llm_new(const cuco_llm_config *cfg, cuco_llm **out, cuco_err *err)
{
	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK)
		return cuco_errf(err, CUCO_EENV, "libcurl: %s", curl_easy_strerror(curl_init_rc));
	cuco_llm *c = cuco_xcalloc(1, sizeof *c);
	c->cfg = *cfg;
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return CUCO_OK;
}

void cuco_llm_free(cuco_llm *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const cuco_llm_config *llm_config(const cuco_llm *c)
{
	return &c->cfg;
}

void cuco_llm_totals(cuco_llm *c, int64_t *tokens_in, int64_t *tokens_out, double *cost_usd)
{
	pthread_mutex_lock(&c->lock);
	*tokens_in = c->tokens_in;
	*tokens_out = c->tokens_out;
	*cost_usd = c->cost_usd;
	pthread_mutex_unlock(&c->lock);
}

bool cuco_llm_spent(cuco_llm *c, char *why, size_t size)
{
	const cuco_llm_config *cfg = &c->cfg;
	pthread_mutex_lock(&c->lock);
	int64_t tokens = c->tokens_in + c->tokens_out;
	double cost = c->cost_usd;
	pthread_mutex_unlock(&c->lock);
	if (cfg->budget_usd > 0 && cost >= cfg->budget_usd) {
		snprintf(why, size, "budget spent: $%.4f of $%.4f", cost, cfg->budget_usd);
		return true;
	}
	if (cfg->budget_tokens > 0 && tokens >= cfg->budget_tokens) {
		snprintf(why, size, "budget spent: %lld of %lld tokens", (long long)tokens,
			(long long)cfg->budget_tokens);
		return true;
	}
	return false;
}

void cuco_llm_reply_free(cuco_llm_reply *r)
{
	free(r->text);
	r->text = NULL;
}

/* ---- one attempt ----------------------------------------------------------- */

typedef struct attempt {
	CURL *curl;
	llm_read read;
	cuco_buf body;          /* non-streamed reply or error body */
	bool streaming;         /* the server answered 200 to a stream request */
	bool too_big;
	bool idle;              /* a stream made no progress past the idle limit */
	double idle_limit;      /* seconds between events; streams only, 0 for none */
	double first_wait;      /* seconds before the first event; streams only */
	double t_start, t_text; /* cuco_mono() at its start and at its first text; 0: none yet */
	double last_byte;       /* cuco_mono() of the last progress, or of the start */
	double retry_after;     /* seconds the server asked for; < 0 when not said */
	/* Set by judge: the server's context refused the request, with its
	 * counts; the temperature parameter was refused. */
	bool context_exceeded, temperature_refused, schema_refused;
	int64_t context_needed, context_size;
} attempt;

/* A whole reply's body may hold its text escaped (a quote or a newline
 * takes two bytes) plus the JSON around it. */
static size_t body_cap(const llm_read *r)
{
	size_t cap = r->max_bytes ? r->max_bytes : LLM_REPLY_MAX_DEFAULT;
	return 2 * cap + (64u << 10);
}

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	attempt *a = arg;
	size_t len = size * n;
	long status = 0;
	curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
	if (a->read.req->stream && status == 200) {
		/* Progress is an event, not a byte: a server sending only
		 * keep-alive comments is as stuck as a silent one. */
		uint64_t events = a->read.events;
		a->streaming = true;
		llm_sse_feed(&a->read, p, len);
		if (a->read.text_seen && a->t_text == 0)
			a->t_text = cuco_mono();
		if (a->read.events != events)
			a->last_byte = cuco_mono();
		return a->read.too_big || a->read.looped ? 0 : len;  /* 0 ends the transfer */
	}
	a->last_byte = cuco_mono();
	if (a->body.len + len > body_cap(&a->read)) {
		a->too_big = true;
		return 0;
	}
	cuco_buf_append(&a->body, p, len);
	return len;
}

/* Retry-After is seconds or an HTTP date; some servers add retry-after-ms. */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	attempt *a = arg;
	size_t len = size * n;
	a->last_byte = cuco_mono();
	char h[256];
	snprintf(h, sizeof h, "%.*s", (int)(len < sizeof h - 1 ? len : sizeof h - 1), p);
	h[strcspn(h, "\r\n")] = '\0';
	char *colon = strchr(h, ':');
	if (!colon)
		return len;
	*colon = '\0';
	const char *v = colon + 1;
	while (*v == ' ')
		v++;
	char *end;
	if (strcasecmp(h, "retry-after") == 0) {
		double s = strtod(v, &end);
		if (end != v && *end == '\0' && s >= 0) {
			a->retry_after = s;
		} else {
			time_t when = curl_getdate(v, NULL);
			if (when > 0)
				a->retry_after = fmax(0, difftime(when, time(NULL)));
		}
	} else if (strcasecmp(h, "retry-after-ms") == 0) {
		double ms = strtod(v, &end);
		if (end != v && ms >= 0)
			a->retry_after = ms / 1000;
	}
	return len;
}

/* Called about once a second even when nothing arrives, so it is where a
 * cancel and a silent stream are noticed. (CURLOPT_LOW_SPEED_* averages
 * over a window and lets a stream that stalls after a burst hang on.) */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)dt, (void)dn, (void)ut, (void)un;
	attempt *a = arg;
	if (a->read.req->cancel && atomic_load(a->read.req->cancel))
		return 1;
	double limit = a->read.events ? a->idle_limit : a->first_wait;
	if (a->idle_limit > 0 && cuco_mono() - a->last_byte > limit) {
		a->idle = true;
		return 1;
	}
	return 0;
}

static char *endpoint(const cuco_model *m)
{
	cuco_buf b = { 0 };
	cuco_buf_puts(&b, m->url);
	while (b.len > 0 && b.data[b.len - 1] == '/')
		b.data[--b.len] = '\0';
	cuco_buf_puts(&b, m->provider == CUCO_PROVIDER_ANTHROPIC ? "/messages" : "/chat/completions");
	return b.data;
}

struct curl_slist *llm_headers(const cuco_model *m)
{
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	const char *key = m->api_key_env[0] ? getenv(m->api_key_env) : NULL;
	char line[1024];
	if (m->provider == CUCO_PROVIDER_ANTHROPIC) {
		h = curl_slist_append(h, "anthropic-version: 2023-06-01");
		if (key && *key) {
			snprintf(line, sizeof line, "x-api-key: %s", key);
			h = curl_slist_append(h, line);
		}
	} else if (key && *key) {
		snprintf(line, sizeof line, "Authorization: Bearer %s", key);
		h = curl_slist_append(h, line);
	}
	explicit_bzero(line, sizeof line);
	return h;
}

/* Cut every occurrence of the model's key out of a message. A "key" under
 * 8 characters is no real key and would match ordinary words; from 5 up
 * the "[key]" mark never makes the text longer. */
void llm_scrub(const cuco_model *m, char *msg)
{
	const char *key = m->api_key_env[0] ? getenv(m->api_key_env) : NULL;
	size_t kn = key ? strlen(key) : 0;
	if (kn < 8)
		return;
	for (char *p; (p = strstr(msg, key));) {
		memcpy(p, "[key]", 5);
		memmove(p + 5, p + kn, strlen(p + kn) + 1);
	}
}

/* How an attempt ended. TOO_BIG: the server answered, but past the reply
 * cap; asking again would pay for the same flood, so the caller refuses it
 * like any unusable reply. CONTEXT: the request is longer than the
 * model's context; only a shorter prompt can pass, which the caller makes. */
enum outcome { DONE, RETRY, FAIL, CANCELLED, TOO_BIG, CONTEXT, LOOPED };

static bool network_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST: case CURLE_COULDNT_CONNECT: case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR: case CURLE_RECV_ERROR: case CURLE_GOT_NOTHING: case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR: case CURLE_HTTP2: case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

static enum outcome judge(attempt *a, CURLcode rc, const char *url, char *why, size_t size)
{
	long status = 0;
	curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_ABORTED_BY_CALLBACK && a->idle) {
		if (a->read.events)
			snprintf(why, size, "%s: stream without progress for over %.0f s", url, a->idle_limit);
		else
			snprintf(why, size, "%s: no first event in %.0f s (idle_timeout and the prompt's "
				"expected reading time)", url, a->first_wait);
		return RETRY;
	}
	if (a->read.looped) {
		snprintf(why, size, "%s: %s", url, a->read.error);
		return LOOPED;
	}
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(why, size, "%s: cancelled", url);
		return CANCELLED;
	}
	if (a->too_big || a->read.too_big) {
		if (a->read.too_big)
			snprintf(why, size, "%s: %s", url, a->read.error);
		else
			snprintf(why, size, "%s: reply body larger than %zu bytes (max_reply)", url,
				body_cap(&a->read));
		return TOO_BIG;
	}
	if (rc != CURLE_OK && !(a->streaming && rc == CURLE_PARTIAL_FILE)) {
		snprintf(why, size, "%s: %s", url, curl_easy_strerror(rc));
		return network_error(rc) ? RETRY : FAIL;
	}
	if (status != 200) {
		char msg[256];
		llm_error_message(a->body.data ? a->body.data : "", a->body.len, msg, sizeof msg);
		snprintf(why, size, "%s: HTTP %ld%s%s", url, status, msg[0] ? ": " : "", msg);
		if (status == 401 || status == 403)
			snprintf(why + strlen(why), size - strlen(why), " (is the key variable set?)");
		if ((status == 400 || status == 413) &&
				llm_context_exceeded(msg, &a->context_needed, &a->context_size)) {
			a->context_exceeded = true;
			return CONTEXT;
		}
		if (status == 400 && llm_temperature_refused(msg)) {
			a->temperature_refused = true;
			return FAIL;
		}
		if (status == 400 && a->read.req->schema && llm_schema_refused(msg)) {
			a->schema_refused = true;
			return FAIL;
		}
		return status == 408 || status == 429 || status >= 500 ? RETRY : FAIL;
	}
	if (a->streaming) {
		if (a->read.error[0]) {
			snprintf(why, size, "%s: %s", url, a->read.error);
			return RETRY;
		}
		if (!a->read.done) {
			snprintf(why, size, "%s: stream ended before its end event (cut off)", url);
			return RETRY;
		}
		if (!a->read.text.data)
			cuco_buf_append(&a->read.text, "", 0);
		return DONE;
	}
	if (!llm_parse_body(&a->read, a->body.data ? a->body.data : "", a->body.len)) {
		snprintf(why, size, "%s: %s", url, a->read.error);
		return a->read.too_big ? TOO_BIG : RETRY;
	}
	return DONE;
}

static size_t prompt_bytes(const cuco_llm_request *req)
{
	size_t n = req->system ? strlen(req->system) : 0;
	for (int i = 0; i < req->nmsgs; i++)
		n += strlen(req->msgs[i].content);
	return n;
}

static speed *speed_of(cuco_llm *c, const cuco_model *m)
{
	for (int i = 0; i < c->nspeeds; i++)
		if (strcmp(c->speeds[i].model, m->name) == 0)
			return &c->speeds[i];
	return NULL;
}

/* How long a stream may wait for its first event: the idle limit, and
 * twice the time the server takes to read the prompt at the speed its
 * calls have shown. */
static double first_wait(cuco_llm *c, const cuco_llm_request *req)
{
	const cuco_model *m = req->model;
	double tps = m->server == CUCO_SERVER_HOSTED ? HOSTED_PROMPT_SPEED : LOCAL_PROMPT_SPEED;
	pthread_mutex_lock(&c->lock);
	const speed *sp = speed_of(c, m);
	if (sp)
		tps = sp->tokens_per_s;
	pthread_mutex_unlock(&c->lock);
	double tokens = (double)prompt_bytes(req) / CUCO_BYTES_PER_TOKEN;
	return c->cfg.idle_timeout_s + 2 * tokens / tps;
}

/* A measured prompt speed: llama.cpp's timings, else the tokens the
 * server read over the time to the first piece of text. */
static void note_speed(cuco_llm *c, const cuco_model *m, const llm_read *r, double to_first)
{
	double tps = 0;
	if (r->timed_prompt >= 64 && r->timed_prompt_ms > 0)
		tps = r->timed_prompt / (r->timed_prompt_ms / 1000);
	else if (r->tokens_in - r->tokens_cached >= 64 && to_first > 0)
		tps = (double)(r->tokens_in - r->tokens_cached) / to_first;
	if (!(tps > 0))
		return;
	pthread_mutex_lock(&c->lock);
	speed *sp = speed_of(c, m);
	if (!sp && c->nspeeds < CUCO_MAX_MODELS) {
		sp = &c->speeds[c->nspeeds++];
		cuco_strlcpy(sp->model, m->name, sizeof sp->model);
		sp->tokens_per_s = tps;
	}
	if (sp)
		sp->tokens_per_s = 0.5 * sp->tokens_per_s + 0.5 * tps;
	pthread_mutex_unlock(&c->lock);
}

static enum outcome run_attempt(cuco_llm *c, const cuco_llm_request *req, const char *url,
	const char *json, attempt *a, char *why, size_t size)
{
	const cuco_llm_config *cfg = &c->cfg;
	struct curl_slist *h = llm_headers(req->model);
	a->curl = curl_easy_init();
	if (!a->curl) {
		curl_slist_free_all(h);
		snprintf(why, size, "%s: libcurl could not start a request", url);
		return FAIL;
	}
	CURL *k = a->curl;
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(k, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(k, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(k, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(k, CURLOPT_XFERINFODATA, a);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, (long)(cfg->connect_timeout_s * 1000));
	/* A whole reply is silent until the model is done, so only its end to
	 * end time can bound it. A stream is bounded by its progress instead:
	 * a slow local model writing 5 000 tokens for half an hour is not
	 * cut, a stream that stops is, and the reply cap ends an endless one. */
	if (!req->stream)
		curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, (long)(cfg->total_timeout_s * 1000));
	a->idle_limit = req->stream ? cfg->idle_timeout_s : 0;
	a->first_wait = req->stream ? first_wait(c, req) : 0;
	a->read.max_bytes = cfg->max_reply_bytes;
	a->last_byte = a->t_start = cuco_mono();
	curl_easy_setopt(k, CURLOPT_USERAGENT, "cuco/" CUCO_VERSION);
	CURLcode rc = curl_easy_perform(k);
	enum outcome o = judge(a, rc, url, why, size);
	curl_easy_cleanup(k);
	curl_slist_free_all(h);
	return o;
}

static void attempt_free(attempt *a)
{
	cuco_buf_free(&a->read.text);
	cuco_buf_free(&a->read.line);
	cuco_buf_free(&a->read.data);
	cuco_buf_free(&a->body);
}

/* Sleep in short slices so a cancel is noticed; false when cancelled. */
static bool pause_for(double seconds, const atomic_bool *cancel)
{
	double until = cuco_mono() + seconds;
	for (;;) {
		if (cancel && atomic_load(cancel))
			return false;
		double left = until - cuco_mono();
		if (left <= 0)
			return true;
		double slice = left < 0.05 ? left : 0.05;
		struct timespec ts = { 0, (long)(slice * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* Exponential backoff with jitter in [d/2, d], unless the server said when. */
static double backoff(const cuco_llm_config *cfg, int retry, double retry_after, unsigned *seed)
{
	if (retry_after >= 0)
		return fmin(retry_after, cfg->backoff_max_s);
	double d = fmin(cfg->backoff_base_s * ldexp(1, retry), cfg->backoff_max_s);
	return d * (0.5 + 0.5 * rand_r(seed) / (double)RAND_MAX);
}

/* Whether a request would carry a temperature at all. */
static bool sends_temperature(const cuco_llm_request *req)
{
	double t = !isnan(req->temperature) ? req->temperature : req->model->temperature;
	return !isnan(t) && !req->model->no_temperature;
}

/* The wait before the next attempt, or < 0 when retry_time would pass
 * first: a Retry-After of a day ends the call now, not in a day. */
static double next_wait(const cuco_llm *c, int retry, double retry_after, double t0,
	unsigned *seed)
{
	double wait = backoff(&c->cfg, retry, retry_after, seed);
	return cuco_mono() - t0 + wait > c->cfg.retry_time_s ? -1 : wait;
}

int cuco_llm_complete(cuco_llm *c, const cuco_llm_request *req, cuco_llm_reply *out,
	cuco_err *err)
{
	memset(out, 0, sizeof *out);
	double t0 = cuco_mono();
	const cuco_model *m = req->model;
	char spent[128];
	if (cuco_llm_spent(c, spent, sizeof spent))
		return cuco_errf(err, CUCO_EENV, "llm %s: %s", m->name, spent);
	char *url = endpoint(m);
	int max_tokens = req->max_tokens > 0 ? req->max_tokens : m->max_tokens;
	bool temperature = sends_temperature(req), schema = req->schema != NULL;
	char *json = llm_request_json(req, max_tokens, temperature, schema);
	/* Through 64 bits: microseconds of uptime pass UINT_MAX in 72 minutes,
	 * and a double out of an unsigned's range is undefined behaviour. */
	unsigned seed = (unsigned)((uint64_t)(t0 * 1e6) ^ (uintptr_t)req);
	char why[512] = "";
	enum outcome o = FAIL;
	bool out_of_time = false;
	for (int retry = 0;; retry++) {
		attempt a = { .retry_after = -1, .read = { .provider = m->provider, .req = req } };
		if (retry > 0 && req->on_delta)
			req->on_delta(NULL, 0, req->arg);
		out->attempts++;
		o = run_attempt(c, req, url, json, &a, why, sizeof why);
		if (o == DONE) {
			out->text = a.read.text.data;
			a.read.text = (cuco_buf){ 0 };
			cuco_strlcpy(out->finish, a.read.finish, sizeof out->finish);
			note_speed(c, m, &a.read, a.t_text > 0 ? a.t_text - a.t_start : 0);
		}
		if (o == DONE || o == TOO_BIG || o == LOOPED) {  /* served, so counted */
			out->tokens_in += a.read.tokens_in ? a.read.tokens_in : a.read.prompt_read;
			out->tokens_out += a.read.tokens_out;
			out->tokens_cached += a.read.tokens_in ? a.read.tokens_cached : a.read.prompt_cache;
		} else if (a.read.prompt_read > 0) {
			/* Stopped before it was done: what the server had read counts. */
			out->tokens_in += a.read.prompt_read;
			out->tokens_cached += a.read.prompt_cache;
			cuco_log(CUCO_LOG_INFO, "llm: %s: attempt %d stopped after the server read %lld of "
				"%lld prompt tokens", m->name, out->attempts, (long long)a.read.prompt_read,
				(long long)a.read.prompt_total);
		}
		out->looped = o == LOOPED;
		out->context_exceeded = a.context_exceeded;
		out->context_needed = a.context_needed;
		out->context_size = a.context_size;
		bool drop_temperature = a.temperature_refused && temperature;
		bool drop_schema = a.schema_refused && schema;
		double wait = next_wait(c, retry, a.retry_after, t0, &seed);
		attempt_free(&a);
		if (drop_temperature || drop_schema) {
			/* Some models (OpenAI's reasoning ones) take no temperature;
			 * some servers no JSON schema. */
			llm_scrub(m, why);
			cuco_log(CUCO_LOG_WARN, "llm: %s: the server refuses %s (%s); asking again without "
				"one", m->name, drop_schema ? "a JSON schema" : "a temperature", why);
			temperature &= !drop_temperature;
			schema &= !drop_schema;
			out->schema_refused |= drop_schema;
			free(json);
			json = llm_request_json(req, max_tokens, temperature, schema);
			retry--;
			continue;
		}
		out_of_time = o == RETRY && wait < 0;
		if (o != RETRY || retry >= c->cfg.max_retries || out_of_time)
			break;
		llm_scrub(m, why);
		cuco_log(CUCO_LOG_INFO, "llm: %s: attempt %d failed (%s); retrying in %.2f s",
			m->name, out->attempts, why, wait);
		if (!pause_for(wait, req->cancel)) {
			snprintf(why, sizeof why, "%s: cancelled", url);
			o = CANCELLED;
			break;
		}
	}
	free(url);
	free(json);
	out->seconds = cuco_mono() - t0;
	out->cancelled = o == CANCELLED;
	if (o == DONE || o == TOO_BIG || o == LOOPED)
		/* One line per answered call: what the server said it served. */
		cuco_log(CUCO_LOG_INFO, "llm: %s: answered: %lld prompt + %lld completion tokens in "
			"%.1f s, %d attempt%s%s", m->name, (long long)out->tokens_in,
			(long long)out->tokens_out, cuco_mono() - t0, out->attempts,
			out->attempts == 1 ? "" : "s", req->stream ? ", streamed" : "");
	if (out->tokens_in > 0 || out->tokens_out > 0) {
		out->cost_usd = cuco_model_cost(m, out->tokens_in, out->tokens_cached, out->tokens_out);
		pthread_mutex_lock(&c->lock);
		c->tokens_in += out->tokens_in;
		c->tokens_out += out->tokens_out;
		c->cost_usd += out->cost_usd;
		pthread_mutex_unlock(&c->lock);
	}
	if (o == DONE)
		return CUCO_OK;
	llm_scrub(m, why);
	if (o == TOO_BIG || o == CONTEXT || o == LOOPED)
		return cuco_errf(err, CUCO_EDATA, "llm %s: %s", m->name, why);
	/* Retries spent on a fault that may pass: the caller may call again
	 * later, unlike a refused request or key, which would fail again. */
	if (o == RETRY)
		return cuco_errf(err, CUCO_EAGAIN, "llm %s: %s (gave up after %d attempts%s)", m->name,
			why, out->attempts, out_of_time ? ": retry_time would pass before the next" : "");
	return cuco_errf(err, CUCO_EENV, "llm %s: %s", m->name, why);
}
