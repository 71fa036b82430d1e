/* config.h — the config file (config.c): every option in one table, the
 * file read once.
 *
 * DESIGN: the command reads the file once, at its edge (cmd.c,
 * cmd_config_read), and hands the result down: the screen's theme, the
 * evaluator's sandbox and runner, and through cuco_engine_config the
 * strategies' models and knobs. No one below the command opens the file.
 * Every option is a row of CUCO_CONFIG_OPTIONS: its section, key, type,
 * field, range, default, what a bad value is not, and a line of help;
 * the parser, the defaults and the test of docs/configuration.md all read
 * that table. The format: `key = value` lines, `#` comments, `[section]`
 * and `[model NAME]` lines; every error names file:line and the key (and,
 * for a knob, the value) in one line.
 */
#ifndef CUCO_STRATEGIES_CONFIG_H
#define CUCO_STRATEGIES_CONFIG_H

#include "core.h"
#include "eval/eval.h"
#include "models/llm_config.h"
#include "strategies/search.h"

#include <stddef.h>

typedef struct cuco_config {
	cuco_llm_config llm;         /* the top, [llm] and [model NAME] */
	cuco_search_config search;   /* [evolve], [beam], [fastpath], [sample] */
	char theme[64];              /* [screen] theme = NAME; "" = not set */
	cuco_sandbox_mode sandbox;   /* [eval] sandbox = auto|bwrap|off; DEFAULT = not set */
	cuco_runner_config runner;   /* [runner] (cuco_runner_config_set); zero = local */
} cuco_config;

/* The sections, as the file names them ("" for the top, which [llm] also
 * opens). */
typedef enum cuco_config_section {
	CUCO_SEC_LLM, CUCO_SEC_MODEL, CUCO_SEC_EVOLVE, CUCO_SEC_BEAM, CUCO_SEC_FASTPATH,
	CUCO_SEC_SAMPLE, CUCO_SEC_SCREEN, CUCO_SEC_EVAL, CUCO_SEC_RUNNER, CUCO_SEC_COUNT
} cuco_config_section;

const char *cuco_config_section_name(cuco_config_section s);

/* One row of the options table. */
typedef struct cuco_config_option {
	cuco_config_section section;
	const char *key;
	int type;                    /* config.c's value types */
	size_t off, size;            /* the field, in the section's struct */
	double min, max;
	const char *def;             /* the default: a value of the type (set by
	                                cuco_config_defaults), or prose in brackets */
	const char *want;            /* what a bad value is not: "an integer >= 0" */
	const char *help;
} cuco_config_option;

/* [llm]'s defaults, and no model. */
void cuco_llm_config_defaults(cuco_llm_config *cfg);
/* The config file's path (core.h, cuco_paths: the first that exists of
 * $XDG_CONFIG_HOME/cuco/config, else ~/.config/cuco/config, and the
 * system's $XDG_CONFIG_DIRS/cuco/config). False when no folder can hold
 * one (neither HOME nor XDG_CONFIG_HOME set, and none in the system's). */
bool cuco_llm_config_path(char *buf, size_t size);
/* Make `--llm PROVIDER:MODEL[@URL][*WEIGHT]` specs the models in use. The
 * configured models then serve as a table: a spec naming the same model id
 * takes its prices, key variable, token limit, context and temperature. PROVIDER is
 * openai or anthropic, or an OpenAI-compatible server: vllm, sglang,
 * llamacpp, ollama, openrouter. n == 0 leaves cfg as it is. */
int cuco_llm_use_specs(cuco_llm_config *cfg, char *const *specs, int n, cuco_err *err);

/* The table, in the order docs/configuration.md gives it. */
const cuco_config_option *cuco_config_options(size_t *n);

void cuco_config_defaults(cuco_config *c);
/* Read a config file into c (models are appended). A missing file is
 * CUCO_ENOTFOUND; a bad line is CUCO_EDATA naming "file:line: key". */
int cuco_config_load(const char *path, cuco_config *c, cuco_err *err);
/* The config file (cuco_llm_config_path), or the defaults when there is
 * none: what a command reads at its start. */
int cuco_config_read(cuco_config *c, cuco_err *err);

#endif
