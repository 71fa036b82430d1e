/* cmd-workloads.c — `cuco workloads [--json]`: the workloads found in
 * $CUCO_WORKLOADS, ./workloads and the installed data folder. */
#include <cjson/cJSON.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "eval/eval.h"

static const char *const family_names[] = { "cpu-mpi", "cuda-nccl", "cuda" };

/* One workload as a row or a JSON object; one that does not load is
 * listed with its error rather than hidden. */
static void list_one(const char *name, bool json, cJSON *array)
{
	cuco_workload *wl = NULL;
	cuco_err err = { 0 };
	bool ok = cuco_workload_load(name, &wl, &err) == CUCO_OK;
	if (json) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddItemToArray(array, o);
		cJSON_AddStringToObject(o, "name", name);
		if (ok) {
			cJSON_AddStringToObject(o, "family", family_names[wl->family]);
			cJSON_AddNumberToObject(o, "ranks", wl->ranks);
			cJSON_AddStringToObject(o, "title", wl->title);
			cJSON_AddStringToObject(o, "dir", wl->dir);
		} else {
			cJSON_AddStringToObject(o, "error", err.msg);
		}
	} else if (ok) {
		printf("%-24s %-10s %5d  %s\n", name, family_names[wl->family], wl->ranks, wl->title);
	} else {
		printf("%-24s %-10s %5s  (invalid: %s)\n", name, "?", "?", err.msg);
	}
	cuco_workload_free(wl);
}

static int workloads_exec(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	bool json = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'h':
			cmd_print_usage(&cmd_workloads, "  --json      print a JSON array, nothing else\n");
			return CUCO_OK;
		default: return cmd_bad_option(&cmd_workloads, longopts, argv);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_workloads, "unexpected argument '%s'", argv[optind]);
	char **names = NULL;
	size_t n = 0;
	cuco_err err = { 0 };
	if (cuco_workload_list(&names, &n, &err) != CUCO_OK)
		return cmd_fail(&err);
	cJSON *array = json ? cJSON_CreateArray() : NULL;
	if (!json)
		printf("%-24s %-10s %5s  %s\n", "NAME", "FAMILY", "RANKS", "TITLE");
	for (size_t i = 0; i < n; i++) {
		list_one(names[i], json, array);
		free(names[i]);
	}
	free(names);
	if (json) {
		char *text = cJSON_Print(array);
		printf("%s\n", text);
		free(text);
		cJSON_Delete(array);
	}
	return CUCO_OK;
}

const cuco_cmd cmd_workloads = { "workloads", "[--json]",
	"list the workloads found: name, family, ranks, title", workloads_exec };
