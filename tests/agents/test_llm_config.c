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

#include "agents/agents.h"

static char path[] = "/tmp/cuco-test-config-XXXXXX";

static int load(const char *text, cuco_llm_config *cfg, cuco_err *err)
{
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(cuco_write_file(path, text, strlen(text), err), CUCO_OK);
	cuco_llm_config_defaults(cfg);
	int rc = cuco_llm_config_load(path, cfg, err);
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
		"\n"
		"[model fast]\n"
		"provider = vllm\n"
		"model = qwen2.5-coder-32b\n"
		"url = http://gpu1:8000/v1\n"
		"weight = 3\n"
		"price_in = 0.1\n"
		"price_out = 0.3\n"
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
	assert_int_equal(cfg.nmodels, 3);
	const cuco_model *f = &cfg.models[0], *g = &cfg.models[1], *d = &cfg.models[2];
	assert_string_equal(f->name, "fast");
	assert_int_equal(f->provider, CUCO_PROVIDER_OPENAI);
	assert_string_equal(f->url, "http://gpu1:8000/v1");
	assert_string_equal(f->api_key_env, "");  /* vllm: no key by default */
	assert_float_equal(f->weight, 3, 0);
	assert_true(isnan(f->temperature));
	assert_float_equal(cuco_model_cost(f, 1000000, 2000000), 0.1 + 0.6, 1e-12);
	assert_false(f->completion_tokens);
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

static void test_file_errors(void **state)
{
	(void)state;
	expect_error("retries = 2\n\nretrys = 3\n", ":3: retrys: unknown key");
	expect_error("retries = many\n", ":1: retries: not an integer >= 0");
	expect_error("choice = random\n", ":1: choice: not weight or bandit");
	expect_error("budget_tokens = 1.5\n", ":1: budget_tokens: not a whole number");
	expect_error("[models x]\n", ":1: [models x]: unknown section");
	expect_error("[model]\n", ":1: [model]: unknown section");
	expect_error("[model a]\nmodel = m\n[model a]\n", ":3: [model a]: model defined twice");
	expect_error("[model a]\nprovider = azure\n", ":2: provider: unknown provider");
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
	cuco_llm_config cfg;
	cuco_err err = { 0 };
	cuco_llm_config_defaults(&cfg);
	/* The screen's theme lives in the same file, in [screen]. */
	assert_int_equal(load("retries = 1\n[screen]\ntheme = light  # for the projector\n", &cfg, &err), CUCO_OK);
	assert_string_equal(cfg.theme, "light");
	assert_int_equal(cfg.sandbox, CUCO_SANDBOX_DEFAULT);
	/* So does the evaluator's sandbox, in [eval]. */
	assert_int_equal(load("[eval]\nsandbox = bwrap\n", &cfg, &err), CUCO_OK);
	assert_int_equal(cfg.sandbox, CUCO_SANDBOX_BWRAP);
	/* And where stages run, in [runner]. */
	assert_int_equal(cfg.runner.kind, CUCO_RUNNER_LOCAL);
	assert_int_equal(load("[runner]\nkind = slurm\npartition = gpu\ntime_limit = 20\n"
		"options = --mpi=pmix  # the cluster's MPI\n", &cfg, &err), CUCO_OK);
	assert_int_equal(cfg.runner.kind, CUCO_RUNNER_SLURM);
	assert_string_equal(cfg.runner.partition, "gpu");
	assert_int_equal(cfg.runner.time_limit_min, 20);
	assert_string_equal(cfg.runner.options, "--mpi=pmix");
	cuco_llm_config_defaults(&cfg);
	assert_int_equal(cuco_llm_config_load("/nonexistent/cuco/config", &cfg, &err), CUCO_ENOTFOUND);
}

static void test_config_path(void **state)
{
	(void)state;
	char buf[256];
	setenv("XDG_CONFIG_HOME", "/x/conf", 1);
	assert_true(cuco_llm_config_path(buf, sizeof buf));
	assert_string_equal(buf, "/x/conf/cuco/config");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/home/u", 1);
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
		{ "azure:gpt", "unknown provider `azure`" },
		{ "openai:gpt*0", "weight `0` is not a number > 0" },
		{ "openai:gpt*x", "weight `x`" },
		{ "vllm:m", "vllm needs @URL" },
		{ "openai:@http://h/v1", "missing or too long MODEL" },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_file_errors),
		cmocka_unit_test(test_config_path),
		cmocka_unit_test(test_specs),
		cmocka_unit_test(test_weighted_choice),
		cmocka_unit_test(test_bandit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
