/* cmd-workloads.c — `cuco workloads [--json]`: the workloads found in
 * $CUCO_WORKLOADS, ./workloads and the installed data folder. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "eval/eval.h"


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
			cJSON_AddStringToObject(o, "family", cuco_family_name(wl->family));
			cJSON_AddNumberToObject(o, "ranks", wl->ranks);
			cJSON_AddStringToObject(o, "title", wl->title);
			cJSON_AddStringToObject(o, "dir", wl->dir);
		} else {
			cJSON_AddStringToObject(o, "error", err.msg);
		}
	} else if (ok) {
		printf("%-24s %-10s %5d  %s\n", name, cuco_family_name(wl->family), wl->ranks, wl->title);
	} else {
		printf("%-24s %-10s %5s  (invalid: %s)\n", name, "?", "?", err.msg);
	}
	cuco_workload_free(wl);
}

static const cmd_option options[] = { { "json", 0, NULL, 0, "print a JSON array, nothing else" } };

static int workloads_exec(int argc, char **argv)
{
	bool json = false;
	cmd_args a = CMD_ARGS(&cmd_workloads, argc, argv);
	while (cmd_option_next(&a) >= 0)
		json = true;
	if (!cmd_operands(&a, 0, 0, NULL))
		return a.rc;
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

const cuco_cmd cmd_workloads = { "workloads", "",
	"list the workloads found: name, family, ranks, title", workloads_exec, CMD_OPTIONS(options) };
