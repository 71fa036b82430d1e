/* test_llm_config.c — the config file, `--llm` specs, weighted choice and
 * the cost-aware bandit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strategies/strategies.h"

static char path[] = "/tmp/cuco-test-config-XXXXXX";
static cuco_config last;  /* the whole file load() read last: [screen], [eval], [runner] */

static int load(const char *text, cuco_llm_config *cfg, cuco_err *err)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cuco_write_file(path, text, strlen(text), err), CUCO_OK);
	cuco_config_defaults(&last);
	int rc = cuco_config_load(path, &last, err);
	*cfg = last.llm;
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
	return rc;
}

static void test_file(void **state)
{
	(void)state;
	cuco_llm_config cfg;
	cuco_err err = { 0 };
	int rc = load(
		"# models for the night run\n"
		"choice = bandit\n"
		"retries = 6   # generous\n"
		"idle_timeout = 90\n"
		"budget_usd = 12.5\n"
		"budget_tokens = 2000000\n"
		"retry_time = 120\n"
		"outage = 900\n"
		"max_reply = 1048576\n"
		"\n"
		"[model fast]\n"
		"provider = vllm\n"
		"model = qwen2.5-coder-32b\n"
		"url = http://gpu1:8000/v1\n"
		"weight = 3\n"
		"price_in = 0.1\n"
		"price_out = 0.3\n"
		"context = 32768\n"
		"\n"
		"[evolve]\n"                          /* the search's: skipped here */
		"islands = 3\n"
		"\n"
		"[model gpt]\n"
		"model = gpt-5\n"
		"temperature = none\n"
		"\n"
		"[model deep]\n"
		"url = https://proxy.example/v1\n"   /* before provider: kept */
		"provider = anthropic\n"
		"model = claude-opus-4\n"
		"temperature = 0.2\n"
		"max_tokens = 32768\n",
		&cfg, &err);
	assert_int_equal(rc, CUCO_OK);
	assert_int_equal(cfg.choice, CUCO_CHOICE_BANDIT);
	assert_int_equal(cfg.max_retries, 6);
	assert_float_equal(cfg.idle_timeout_s, 90, 0);
	assert_float_equal(cfg.budget_usd, 12.5, 0);
	assert_int_equal(cfg.budget_tokens, 2000000);
	assert_float_equal(cfg.retry_time_s, 120, 0);
	assert_float_equal(cfg.outage_s, 900, 0);
	assert_int_equal(cfg.max_reply_bytes, 1048576);
	assert_int_equal(cfg.nmodels, 3);
	const cuco_model *f = &cfg.models[0], *g = &cfg.models[1], *d = &cfg.models[2];
	assert_string_equal(f->name, "fast");
	assert_int_equal(f->provider, CUCO_PROVIDER_OPENAI);
	assert_string_equal(f->url, "http://gpu1:8000/v1");
	assert_string_equal(f->api_key_env, "");  /* vllm: no key by default */
	assert_float_equal(f->weight, 3, 0);
	assert_true(isnan(f->temperature));
	assert_float_equal(cuco_model_cost(f, 1000000, 0, 2000000), 0.1 + 0.6, 1e-12);
	assert_false(f->completion_tokens);
	assert_int_equal(f->context, 32768);
	assert_int_equal(f->max_tokens, 16384);
	assert_int_equal(g->context, 0);   /* not said: the server is asked */
	/* No provider line: OpenAI's own API, its key and its token field. */
	assert_string_equal(g->url, "https://api.openai.com/v1");
	assert_string_equal(g->api_key_env, "OPENAI_API_KEY");
	assert_true(g->completion_tokens);
	assert_true(g->no_temperature);
	assert_false(d->completion_tokens);
	assert_int_equal(d->provider, CUCO_PROVIDER_ANTHROPIC);
	assert_string_equal(d->url, "https://proxy.example/v1");
	assert_string_equal(d->api_key_env, "ANTHROPIC_API_KEY");
	assert_float_equal(d->temperature, 0.2, 0);
	assert_int_equal(d->max_tokens, 32768);
}

static void expect_error(const char *text, const char *needle)
{
	cuco_llm_config cfg;
	cuco_err err = { 0 };
	assert_int_equal(load(text, &cfg, &err), CUCO_EDATA);
	if (!strstr(err.msg, needle))
		fail_msg("error `%s` lacks `%s`", err.msg, needle);
}

/* Text after a NUL would be dropped silently: the file is refused instead. */
/* Which models ask for a JSON reply: `structured`, auto by the server. */
static void test_structured(void **state)
{
	(void)state;
	cuco_llm_config cfg;
	cuco_err err = { 0 };
	assert_int_equal(load("[model a]\nprovider = llamacpp\nmodel = m\nurl = http://h/v1\n"
		"[model b]\nprovider = openai\nmodel = gpt-5\n"
		"[model c]\nprovider = ollama\nmodel = q\nstructured = off\n"
		"[model d]\nprovider = anthropic\nmodel = claude-opus-4\nstructured = on\n", &cfg, &err),
		CUCO_OK);
	assert_true(cfg.models[0].structured);
	assert_int_equal(cfg.models[0].server, CUCO_SERVER_LLAMACPP);
	assert_false(cfg.models[1].structured);
	assert_int_equal(cfg.models[1].server, CUCO_SERVER_HOSTED);
	assert_false(cfg.models[2].structured);
	assert_true(cfg.models[3].structured);
	assert_int_equal(load("[model a]\nprovider = vllm\nmodel = m\nurl = http://h/v1\n"
		"structured = maybe\n", &cfg, &err), CUCO_EDATA);
	assert_non_null(strstr(err.msg, ":5: structured"));
	assert_non_null(strstr(err.msg, "not auto, on or off"));
	/* A spec takes its provider's. */
	char *specs[] = { "llamacpp:gemma@http://127.0.0.1:1/v1" };
	cuco_llm_config_defaults(&cfg);
	assert_int_equal(cuco_llm_use_specs(&cfg, specs, 1, &err), CUCO_OK);
	assert_true(cfg.models[0].structured);
}

static void test_nul_refused(void **state)
{
	(void)state;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	cuco_err err = { 0 };
	static const char text[] = "retries = 2\n\0retries = many\n";
	assert_int_equal(cuco_write_file(path, text, sizeof text - 1, &err), CUCO_OK);
	cuco_config_defaults(&last);
	assert_int_equal(cuco_config_load(path, &last, &err), CUCO_EDATA);
	if (!strstr(err.msg, ": byte 13 is NUL; a text file holds none"))
		fail_msg("error `%s` names no NUL", err.msg);
	unlink(path);
	strcpy(path + strlen(path) - 6, "XXXXXX");
}

static void test_file_errors(void **state)
{
	(void)state;
	expect_error("retries = 2\n\nretrys = 3\n", ":3: retrys: unknown key");
	expect_error("retries = many\n", ":1: retries: not an integer >= 0");
	expect_error("choice = random\n", ":1: choice: not weight or bandit");
	expect_error("[model m]\nprovider = openai\nurl = file:///etc/passwd\n",
		":3: url: expected an http:// or https:// URL");
	expect_error("budget_tokens = 1.5\n", ":1: budget_tokens: not a whole number");
	expect_error("[models x]\n", ":1: [models x]: unknown section");
	expect_error("[model]\n", ":1: [model]: unknown section");
	expect_error("[model a]\nmodel = m\n[model a]\n", ":3: [model a]: model defined twice");
	expect_error("retries = 2\nretries = 3\n", ":2: retries: given twice");
	expect_error("[eval]\nsandbox = off\n[screen]\ntheme = light\n[eval]\nsandbox = bwrap\n",
		":6: sandbox: given twice");
	expect_error("[model a]\nmodel = m\nmodel = n\n", ":3: model: given twice");
	expect_error("[model a]\nprovider = azure\n", ":2: provider: unknown provider (openai, "
		"anthropic, openrouter, ollama, vllm, sglang, llamacpp)");
	expect_error("[model a]\nmodel = m\ntemperature = 3\n", ":3: temperature: not a temperature");
	expect_error("[model a]\nmodel = m\ntemperature = off\n", ":3: temperature: not a temperature");
	expect_error("[model a]\nurl = http://x/v1\n", "[model a]: model: missing");
	expect_error("[model a]\nprovider = sglang\nmodel = m\n", "[model a]: url: missing");
	expect_error("just words\n", ":1: just words: expected key = value");
	expect_error("[screen]\ncolour = red\n", ":2: colour: unknown key in [screen]");
	expect_error("[eval]\nsandbox = docker\n", ":2: sandbox: docker: not auto, bwrap or off");
	expect_error("[eval]\nnetwork = on\n", ":2: network: unknown key in [eval] (sandbox)");
	expect_error("[runner]\nkind = pbs\n", ":2: kind: pbs: not local, hostfile, slurm or ssh");
	expect_error("[runner]\nkind = slurm\nslots = 0\n", ":3: slots: 0: not 1 to 64 slots");
	expect_error("[runner]\npartition = a b\n", ":2: partition: a b: not a Slurm name");
	expect_error("[runner]\nqueue = long\n", ":2: queue: unknown key in [runner]");
	expect_error("max_reply = 100\n", ":1: max_reply: not a whole number of bytes in [4096");
	expect_error("outage = 0\n", ":1: outage: not a number in range");
	expect_error("[model a]\nmodel = m\ncontext = 8k\n", ":3: context: not a whole number of "
		"tokens >= 256");
	expect_error("[model a]\nmodel = m\ncontext = 100\n", ":3: context: not a whole number");
	cuco_llm_config cfg;
	cuco_err err = { 0 };
	cuco_llm_config_defaults(&cfg);
	/* The screen's theme lives in the same file, in [screen]. */
	assert_int_equal(load("retries = 1\n[screen]\ntheme = light  # for the projector\n", &cfg, &err), CUCO_OK);
	assert_string_equal(last.theme, "light");
	assert_int_equal(last.sandbox, CUCO_SANDBOX_DEFAULT);
	/* So does the evaluator's sandbox, in [eval]. */
	assert_int_equal(load("[eval]\nsandbox = bwrap\n", &cfg, &err), CUCO_OK);
	assert_int_equal(last.sandbox, CUCO_SANDBOX_BWRAP);
	/* And where stages run, in [runner]. */
	assert_int_equal(last.runner.kind, CUCO_RUNNER_LOCAL);
	assert_int_equal(load("[runner]\nkind = slurm\npartition = gpu\ntime_limit = 20\n"
		"options = --mpi=pmix  # the cluster's MPI\n", &cfg, &err), CUCO_OK);
	assert_int_equal(last.runner.kind, CUCO_RUNNER_SLURM);
	assert_string_equal(last.runner.partition, "gpu");
	assert_int_equal(last.runner.time_limit_min, 20);
	assert_string_equal(last.runner.options, "--mpi=pmix");
	/* The laptop servers ask for fewer output tokens unless told. */
	assert_int_equal(load("[model l]\nprovider = llamacpp\nmodel = m\nurl = http://h/v1\n"
		"[model o]\nprovider = ollama\nmodel = m\n[model o2]\nprovider = ollama\nmodel = m\n"
		"max_tokens = 9000\n", &cfg, &err), CUCO_OK);
	assert_int_equal(cfg.models[0].max_tokens, 4096);
	assert_int_equal(cfg.models[1].max_tokens, 4096);
	assert_int_equal(cfg.models[2].max_tokens, 9000);
	assert_int_equal(cfg.retry_time_s, 300);
	assert_int_equal(cfg.max_reply_bytes, 4u << 20);
	cuco_config_defaults(&last);
	assert_int_equal(cuco_config_load("/nonexistent/cuco/config", &last, &err), CUCO_ENOTFOUND);
}

/* The built-in prices: a dated snapshot takes its model's, another model
 * with a longer id its own, a vendor prefix is skipped, an unknown model
 * has none; the config's prices win; a server of one's own is free. */
static void test_prices(void **state)
{
	(void)state;
	const cuco_price *p = cuco_price_find("gpt-4o-2024-08-06");
	assert_non_null(p);
	assert_string_equal(p->model, "gpt-4o");
	assert_string_equal(cuco_price_find("gpt-4o-mini")->model, "gpt-4o-mini");
	assert_string_equal(cuco_price_find("anthropic/claude-sonnet-4-5-20250929")->model,
		"claude-sonnet-4");
	assert_null(cuco_price_find("o3-pro"));
	assert_null(cuco_price_find("test"));
	assert_non_null(p->read);
	assert_true(strncmp(p->from, "https://", 8) == 0);

	cuco_llm_config cfg;
	cuco_err err = { 0 };
	assert_int_equal(load("[llm]\nconcurrency = 8\n"
		"[model a]\nmodel = gpt-4o\n"
		"[model b]\nmodel = gpt-4o\nprice_in = 1\nprice_out = 2\n"
		"[model c]\nmodel = mystery\n"
		"[model d]\nprovider = llamacpp\nurl = http://127.0.0.1:8080/v1\nmodel = mystery\n",
		&cfg, &err), CUCO_OK);
	assert_int_equal(cfg.concurrency, 8);
	for (int i = 0; i < cfg.nmodels; i++)
		cuco_model_prices(&cfg.models[i]);
	const cuco_model *a = &cfg.models[0], *b = &cfg.models[1], *c = &cfg.models[2],
		*d = &cfg.models[3];
	assert_true(cuco_model_priced(a));
	/* 1M prompt tokens of which 400k cached, and 100k completion. */
	assert_float_equal(cuco_model_cost(a, 1000000, 400000, 100000),
		0.6 * 2.50 + 0.4 * 1.25 + 0.1 * 10.00, 1e-9);
	assert_float_equal(cuco_model_cost(b, 1000000, 0, 1000000), 3.0, 1e-9);
	/* b set no cached price: cached tokens cost the prompt price. */
	assert_float_equal(cuco_model_cost(b, 1000000, 500000, 0), 1.0, 1e-9);
	assert_false(cuco_model_priced(c));
	assert_float_equal(cuco_model_cost(c, 1000000, 0, 1000000), 0, 0);
	assert_true(cuco_model_priced(d));
	assert_float_equal(cuco_model_cost(d, 1000000, 0, 1000000), 0, 0);
	expect_error("concurrency = 0\n", ":1: concurrency: not an integer from 1 to 16");
	expect_error("[llm]\nconcurrency = 17\n", ":2: concurrency: not an integer from 1 to 16");
}

static void test_config_path(void **state)
{
	(void)state;
	char buf[256];
	setenv("XDG_CONFIG_HOME", "/x/conf", 1);
	setenv("XDG_CONFIG_DIRS", "/nonexistent", 1);
	cuco_paths_reread();
	assert_true(cuco_llm_config_path(buf, sizeof buf));
	assert_string_equal(buf, "/x/conf/cuco/config");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/home/u", 1);
	cuco_paths_reread();
	assert_true(cuco_llm_config_path(buf, sizeof buf));
	assert_string_equal(buf, "/home/u/.config/cuco/config");
}

static void test_specs(void **state)
{
	(void)state;
	cuco_llm_config cfg;
	cuco_err err = { 0 };
	cuco_llm_config_defaults(&cfg);
	/* A configured model is the price table for a spec naming it. */
	cfg.nmodels = 1;
	cuco_strlcpy(cfg.models[0].name, "opus", sizeof cfg.models[0].name);
	cuco_strlcpy(cfg.models[0].model, "claude-opus-4", sizeof cfg.models[0].model);
	cfg.models[0].price_in = 15;
	cfg.models[0].price_out = 75;
	char *specs[] = {
		"anthropic:claude-opus-4",
		"ollama:qwen2.5-coder:32b*2.5",
		"vllm:my/model@http://10.0.0.2:8000/v1*0.5",
	};
	assert_int_equal(cuco_llm_use_specs(&cfg, specs, 3, &err), CUCO_OK);
	assert_int_equal(cfg.nmodels, 3);
	assert_string_equal(cfg.models[0].name, "opus");
	assert_string_equal(cfg.models[0].url, "https://api.anthropic.com/v1");
	assert_float_equal(cfg.models[0].price_out, 75, 0);
	assert_string_equal(cfg.models[1].model, "qwen2.5-coder:32b");
	assert_string_equal(cfg.models[1].url, "http://127.0.0.1:11434/v1");
	assert_float_equal(cfg.models[1].weight, 2.5, 0);
	assert_float_equal(cfg.models[1].price_in, 0, 0);
	assert_string_equal(cfg.models[2].model, "my/model");
	assert_string_equal(cfg.models[2].url, "http://10.0.0.2:8000/v1");
	assert_int_equal(cfg.models[2].provider, CUCO_PROVIDER_OPENAI);

	static const struct { const char *spec, *needle; } bad[] = {
		{ "gpt-4.1", "expected PROVIDER:MODEL" },
		{ "azure:gpt", "unknown provider `azure` (openai, anthropic, openrouter, ollama, vllm, "
			"sglang, llamacpp)" },
		{ "openai:gpt*0", "weight `0` is not a number > 0" },
		{ "openai:gpt*x", "weight `x`" },
		{ "vllm:m", "vllm needs @URL" },
		{ "openai:@http://h/v1", "missing or too long MODEL" },
		{ "openai:m@file:///etc/passwd", "after @, an http:// or https:// URL" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *one[] = { (char *)bad[i].spec };
		assert_int_equal(cuco_llm_use_specs(&cfg, one, 1, &err), CUCO_EUSAGE);
		if (!strstr(err.msg, bad[i].needle))
			fail_msg("`%s`: error `%s` lacks `%s`", bad[i].spec, err.msg, bad[i].needle);
	}
	assert_int_equal(cfg.nmodels, 3);  /* a refused spec changes nothing */
	/* OpenAI's own API names the limit max_completion_tokens; a server
	 * behind an explicit URL keeps max_tokens. */
	char *openai[] = { "openai:o3", "openai:local-model@http://127.0.0.1:8000/v1" };
	assert_int_equal(cuco_llm_use_specs(&cfg, openai, 2, &err), CUCO_OK);
	assert_true(cfg.models[0].completion_tokens);
	assert_false(cfg.models[1].completion_tokens);
}

static void test_weighted_choice(void **state)
{
	(void)state;
	cuco_llm_config cfg;
	cuco_llm_config_defaults(&cfg);
	cfg.nmodels = 3;
	cfg.models[0].weight = 1;
	cfg.models[1].weight = 0;  /* never */
	cfg.models[2].weight = 3;
	int count[3] = { 0 };
	for (int i = 0; i < 1000; i++)
		count[cuco_model_pick_weighted(&cfg, i / 1000.0)]++;
	assert_int_equal(count[0], 250);
	assert_int_equal(count[1], 0);
	assert_int_equal(count[2], 750);
}

static void test_bandit(void **state)
{
	(void)state;
	assert_float_equal(cuco_bandit_reward(100, 110), 0.1, 1e-12);
	assert_float_equal(cuco_bandit_reward(100, 90), 0, 0);
	assert_float_equal(cuco_bandit_reward(1, 5), 1, 0);
	assert_float_equal(cuco_bandit_reward(-10, -5), 0.5, 1e-12);
	assert_float_equal(cuco_bandit_reward(0, 3), 1, 0);
	assert_float_equal(cuco_bandit_reward(NAN, 3), 0, 0);
	assert_float_equal(cuco_bandit_reward(2, NAN), 0, 0);

	cuco_llm_config cfg;
	cuco_llm_config_defaults(&cfg);
	cfg.nmodels = 2;
	cfg.bandit_exploration = 0.2;
	cfg.bandit_cost_weight = 0;
	cuco_bandit b;
	cuco_bandit_init(&b, &cfg);
	/* Every arm is tried once before any is preferred. */
	assert_int_equal(cuco_bandit_pick(&b), 0);
	cuco_bandit_update(&b, 0, 0.0, 0.01);
	assert_int_equal(cuco_bandit_pick(&b), 1);
	cuco_bandit_update(&b, 1, 0.5, 0.01);
	/* Arm 1 improves children, arm 0 does not: arm 1 is played far more. */
	int plays[2] = { 0 };
	for (int i = 0; i < 200; i++) {
		int arm = cuco_bandit_pick(&b);
		plays[arm]++;
		cuco_bandit_update(&b, arm, arm == 1 ? 0.5 : 0.05, 0.01);
	}
	assert_true(plays[1] > 180);
	assert_true(plays[0] > 0);  /* exploration still visits the other */

	/* Equal rewards, arm 0 ten times dearer: cost decides. */
	cfg.bandit_cost_weight = 0.5;
	cuco_bandit_init(&b, &cfg);
	for (int i = 0; i < 20; i++) {
		cuco_bandit_update(&b, 0, 0.3, 1.0);
		cuco_bandit_update(&b, 1, 0.3, 0.1);
	}
	assert_int_equal(cuco_bandit_pick(&b), 1);
	/* Without the cost weight the tie goes to the lower index. */
	b.cost_weight = 0;
	assert_int_equal(cuco_bandit_pick(&b), 0);
}

/* ---- docs/configuration.md against the options table --------------------- */

/* The section a heading or a `[NAME ...]` line names; -1: none. */
static int doc_section(const char *text)
{
	if (strstr(text, "Client settings"))
		return CUCO_SEC_LLM;
	for (int i = 0; i < CUCO_SEC_COUNT; i++) {
		char want[32];
		snprintf(want, sizeof want, "[%s", cuco_config_section_name((cuco_config_section)i));
		const char *at = strstr(text, want);
		if (at && (at[strlen(want)] == ']' || (i == CUCO_SEC_MODEL && at[strlen(want)] == ' ')))
			return i;
	}
	return -1;
}

typedef struct doc_key {
	int section;
	char key[64];
} doc_key;

static void doc_add(doc_key *keys, int *n, int section, const char *key, size_t len)
{
	if (section < 0 || *n == 512 || len == 0 || len >= sizeof keys[0].key)
		return;
	keys[*n].section = section;
	memcpy(keys[*n].key, key, len);
	keys[(*n)++].key[len] = '\0';
}

/* Every key the page documents, with its section: the rows of a table
 * whose first column is `key`, and the `key = value` lines of an example. */
static int doc_keys(const char *text, doc_key *keys)
{
	int n = 0, heading = CUCO_SEC_LLM, cur = heading;
	bool code = false, key_table = false;
	char *copy = strdup(text), *save = NULL;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "```", 3) == 0) {
			code = !code;
			cur = heading;
		} else if (code) {
			line[strcspn(line, "#")] = '\0';
			char *s = cuco_trim(line), *eq = strchr(s, '=');
			if (*s == '[')
				cur = doc_section(s);
			else if (eq && eq > s)
				doc_add(keys, &n, cur, s, strcspn(s, " ="));
		} else if (line[0] == '#') {
			heading = cur = doc_section(line);
			key_table = false;
		} else if (strncmp(line, "| key |", 7) == 0) {
			key_table = true;
		} else if (key_table && strncmp(line, "| `", 3) == 0) {
			const char *end = strchr(line + 1, '|');
			for (const char *p = strchr(line, '`'); p && p < end; p = strchr(p, '`')) {
				const char *q = strchr(p + 1, '`');
				doc_add(keys, &n, heading, p + 1, (size_t)(q - p - 1));
				p = q + 1;
			}
		} else if (line[0] != '|') {
			key_table = false;
		}
	}
	free(copy);
	return n;
}

static void test_documented(void **state)
{
	(void)state;
	const char *root = getenv("CUCO_SOURCE_ROOT");
	char doc[1024];
	snprintf(doc, sizeof doc, "%s/docs/configuration.md", root ? root : ".");
	char *text;
	cuco_err err = { 0 };
	assert_int_equal(cuco_read_text(doc, 1 << 20, &text, NULL, &err), CUCO_OK);
	static doc_key keys[512];
	int n = doc_keys(text, keys);
	size_t nopt;
	const cuco_config_option *o = cuco_config_options(&nopt);
	for (size_t i = 0; i < nopt; i++) {
		bool found = false;
		for (int k = 0; k < n && !found; k++)
			found = keys[k].section == (int)o[i].section && strcmp(keys[k].key, o[i].key) == 0;
		if (!found)
			fail_msg("[%s] %s: not in docs/configuration.md",
				cuco_config_section_name(o[i].section), o[i].key);
	}
	for (int k = 0; k < n; k++) {
		bool found = false;
		for (size_t i = 0; i < nopt && !found; i++)
			found = keys[k].section == (int)o[i].section && strcmp(keys[k].key, o[i].key) == 0;
		if (!found)
			fail_msg("docs/configuration.md: [%s] %s: no such option",
				cuco_config_section_name((cuco_config_section)keys[k].section), keys[k].key);
	}
	/* choice's row names each value CUCO_MODEL_CHOICES spells, and each
	 * parses to its own. */
	static const char *const choices[] = {
#define X(e, name, help) name,
		CUCO_MODEL_CHOICES(X)
#undef X
	};
	const char *row = strstr(text, "| `choice` |");
	assert_non_null(row);
	size_t row_len = strcspn(row, "\n");
	for (int c = 0; c < CUCO_CHOICE_COUNT; c++) {
		char want[32];
		snprintf(want, sizeof want, "`%s`", choices[c]);
		const char *at = strstr(row, want);
		if (!at || at > row + row_len)
			fail_msg("docs/configuration.md: choice's row does not name %s", want);
		cuco_model_choice got;
		assert_int_equal(cuco_model_choice_parse(choices[c], &got), CUCO_OK);
		assert_int_equal(got, c);
	}
	/* provider's row names every alias a provider may be given. */
	char names[96];
	cuco_provider_names(names, sizeof names);
	row = strstr(text, "| `provider` |");
	assert_non_null(row);
	row_len = strcspn(row, "\n");
	for (char *save = NULL, *name = strtok_r(names, ", ", &save); name;
	     name = strtok_r(NULL, ", ", &save)) {
		char want[32];
		snprintf(want, sizeof want, "`%s`", name);
		const char *at = strstr(row, want);
		if (!at || at > row + row_len)
			fail_msg("docs/configuration.md: provider's row does not name %s", want);
		assert_non_null(cuco_provider_find(name, strlen(name)));
	}
	free(text);
	/* Each default given as a value is one its own type takes. */
	for (size_t i = 0; i < nopt; i++)
		if (o[i].def[0] != '(' && o[i].section >= CUCO_SEC_EVOLVE && o[i].section <= CUCO_SEC_SAMPLE) {
			char key[96];
			cuco_search_config k;
			snprintf(key, sizeof key, "%s.%s", cuco_config_section_name(o[i].section), o[i].key);
			if (cuco_search_config_set(&k, key, o[i].def, &err) != CUCO_OK)
				fail_msg("%s", err.msg);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_structured),
		cmocka_unit_test(test_prices),
		cmocka_unit_test(test_nul_refused),
		cmocka_unit_test(test_config_path),
		cmocka_unit_test(test_documented),
		cmocka_unit_test(test_specs),
		cmocka_unit_test(test_weighted_choice),
		cmocka_unit_test(test_bandit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
