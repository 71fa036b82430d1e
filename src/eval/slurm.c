/* slurm.c — what cuco asks Slurm: which nodes a run may use, whether a
 * stage that failed was ended by Slurm rather than by the candidate, and
 * cancelling what a killed stage left behind.
 *
 * Inside an allocation (salloc, sbatch: $SLURM_JOB_ID is set) the slots
 * are the allocation's nodes and each stage is a step of it. Outside one
 * (a login node) each stage is a job of its own, pinned to its slot's
 * node with --nodelist and given the node whole with --exclusive. Every
 * job or step cuco starts is named cuco-<run>-<slot>-<n>, so that its
 * fate can be asked for by name afterwards and nothing of a killed one
 * stays queued. */
#include "eval/eval_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QUERY_S 20.0       /* squeue, sinfo and scancel, each */
#define SETTLE_S 10.0      /* how long a job's end may stay COMPLETING before we read it */
#define SETTLE_STEP_S 0.2

bool eval_slurm_allocation(char *job_id, size_t size)
{
	const char *id = cuco_env_get()->slurm_job_id;
	const char *nodes = cuco_env_get()->slurm_job_nodelist;
	if (!id || !*id || !nodes || !*nodes)
		return false;
	if (job_id)
		cuco_strlcpy(job_id, id, size);
	return true;
}

/* The nodes of a partition (or of the default one, marked * by sinfo). */
static int partition_nodes(const char *partition, cuco_buf *expr, char *where, size_t wsize,
	cuco_err *err)
{
	cuco_buf cmd = { 0 }, out = { 0 };
	char *argv[] = { "sinfo", "-h", "-o", "%P %N", *partition ? "-p" : NULL, (char *)partition, NULL };
	cuco_argv_join(argv, &cmd);
	int status = eval_query(argv, QUERY_S, &out);
	int rc = CUCO_OK;
	if (status != 0) {
		char line[200];
		eval_first_line(out.data ? out.data : "", line, sizeof line);
		rc = cuco_errf(err, CUCO_EENV, "slurm runner: %s failed%s%s", cmd.data, *line ? ": " : "", line);
	}
	char chosen[64] = "";
	for (char *line = out.data, *next; rc == CUCO_OK && line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char part[64], nodes[1024];
		if (sscanf(line, "%63s %1023s", part, nodes) != 2)
			continue;
		size_t plen = strlen(part);
		bool is_default = plen > 1 && part[plen - 1] == '*';
		if (is_default)
			part[plen - 1] = '\0';
		if (*partition ? strcmp(part, partition) != 0 : !is_default)
			continue;
		cuco_strlcpy(chosen, part, sizeof chosen);
		cuco_buf_printf(expr, "%s%s", expr->len ? "," : "", nodes);
	}
	if (rc == CUCO_OK && !expr->len)
		rc = cuco_errf(err, CUCO_EENV, "slurm runner: sinfo lists no node%s%s%s", *partition
			? " in partition " : " in a default partition", partition, *partition ? ""
			: " (set [runner] partition)");
	if (rc == CUCO_OK)
		snprintf(where, wsize, "the nodes of Slurm partition %s (sinfo)", chosen);
	cuco_buf_free(&cmd);
	cuco_buf_free(&out);
	return rc;
}

int eval_slurm_nodes(const cuco_runner_config *c, eval_host *out, int max, int *n, char *where,
	size_t wsize, cuco_err *err)
{
	char job[32];
	if (eval_slurm_allocation(job, sizeof job)) {
		snprintf(where, wsize, "the nodes of Slurm allocation %s ($SLURM_JOB_NODELIST)", job);
		cuco_err why = { 0 };
		int rc = eval_hostlist_expand(cuco_env_get()->slurm_job_nodelist, out, max, n, &why);
		if (rc != CUCO_OK)
			cuco_errf(err, rc, "$SLURM_JOB_NODELIST: %s", why.msg);
		return rc;
	}
	if (*c->hosts) {
		snprintf(where, wsize, "the nodes of [runner] hosts, as Slurm jobs of their own");
		return eval_hostlist_expand(c->hosts, out, max, n, err);
	}
	cuco_buf expr = { 0 };
	int rc = partition_nodes(c->partition, &expr, where, wsize, err);
	/* sinfo lists a node once per state: the same node twice is no error. */
	if (rc == CUCO_OK) {
		eval_host *all = cuco_xcalloc((size_t)max, sizeof *all);
		*n = 0;
		for (char *item = expr.data, *next; item && *item && rc == CUCO_OK; item = next) {
			int k = 0;
			next = NULL;
			for (char *p = item; *p; p++) {
				k += *p == '[' ? 1 : *p == ']' ? -1 : 0;
				if (*p == ',' && k == 0) {
					*p = '\0';
					next = p + 1;
					break;
				}
			}
			int got = 0;
			rc = eval_hostlist_expand(item, all, max, &got, err);
			for (int i = 0; rc == CUCO_OK && i < got; i++) {
				bool seen = false;
				for (int j = 0; j < *n && !seen; j++)
					seen = strcmp(out[j].name, all[i].name) == 0;
				if (!seen && *n < max)
					out[(*n)++] = all[i];
			}
		}
		free(all);
	}
	cuco_buf_free(&expr);
	return rc;
}

/* "squeue --states=all" of one job by name: its state, "" when Slurm
 * knows no such job. Waits out COMPLETING, which a cancelled job shows
 * for a moment before CANCELLED. */
static void job_state(const char *name, char *state, size_t size)
{
	char opt[160];
	snprintf(opt, sizeof opt, "--name=%s", name);
	char *argv[] = { "squeue", "-h", "--states=all", "-o", "%T", opt, NULL };
	for (double waited = 0;; waited += SETTLE_STEP_S) {
		cuco_buf out = { 0 };
		state[0] = '\0';
		if (eval_query(argv, QUERY_S, &out) == 0 && out.data)
			eval_first_line(out.data, state, size);
		cuco_buf_free(&out);
		if (strcmp(state, "COMPLETING") != 0 || waited >= SETTLE_S)
			break;
		usleep((useconds_t)(SETTLE_STEP_S * 1e6));
	}
}

/* Job states that are Slurm's verdict, not the program's. */
static bool slurm_ended(const char *state)
{
	static const char *const states[] = { "CANCELLED", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
		"DEADLINE", "TIMEOUT", "REVOKED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
		"STOPPED", "SUSPENDED", "PENDING", "CONFIGURING", "SPECIAL_EXIT" };
	return cuco_name_index(states, sizeof states / sizeof states[0], state) >= 0;
}

/* What srun and slurmstepd say when Slurm, not the program, ended a step. */
static const char *const step_markers[] = {
	" CANCELLED AT ", "DUE TO TIME LIMIT", "DUE TO PREEMPTION", "DUE TO NODE FAILURE",
	"srun: error: Node failure", "srun: error: Unable to create step",
	"srun: error: Unable to allocate resources", "srun: error: Slurm controller not responding",
	"Job step creation temporarily disabled", NULL,
};

/* A node of the slot that Slurm no longer runs anything on. */
static bool node_down(const char *nodes, char *why, size_t size)
{
	cuco_buf out = { 0 };
	char *argv[] = { "sinfo", "-h", "-N", "-o", "%N %T", "-n", (char *)nodes, NULL };
	bool down = false;
	if (eval_query(argv, QUERY_S, &out) == 0 && out.data) {
		char node[128], state[64];
		for (char *line = out.data; !down && sscanf(line, "%127s %63s", node, state) == 2;) {
			down = strstr(state, "down") || strstr(state, "drain") || strstr(state, "fail")
				|| strchr(state, '*');
			if (down)
				snprintf(why, size, "node %s is %s (sinfo)", node, state);
			char *nl = strchr(line, '\n');
			if (!nl)
				break;
			line = nl + 1;
		}
	}
	cuco_buf_free(&out);
	return down;
}

bool eval_slurm_fault(const char *job_name, const char *nodes, const eval_stage *st, char *why,
	size_t size)
{
	if (eval_slurm_allocation(NULL, 0)) {
		/* Steps leave no record once done (without accounting): Slurm's
		 * own words in srun's output, and the nodes' state. */
		if (node_down(nodes, why, size))
			return true;
		for (int i = 0; step_markers[i]; i++) {
			const char *at = strstr(st->tail, step_markers[i]);
			if (!at)
				continue;
			while (at > st->tail && at[-1] != '\n')
				at--;
			char line[160];
			eval_first_line(at, line, sizeof line);
			snprintf(why, size, "Slurm ended or refused the step: %s", line);
			return true;
		}
		if (st->timed_out) {
			snprintf(why, size, "srun did not end within the stage's limit (a step waiting for "
				"resources, or srun hung)");
			return true;
		}
		return false;
	}
	/* A job has a record for minutes after its end: the controller's
	 * word, which the program cannot write. */
	char state[32];
	job_state(job_name, state, sizeof state);
	if (st->timed_out) {
		/* The program's own time is held on the node (`timeout`). */
		snprintf(why, size, "job %s (%s) did not end within the stage's limit and the queue's "
			"wait", job_name, *state ? state : "never queued");
		return true;
	}
	if (!*state) {
		snprintf(why, size, "srun started no job (see its output)");
		return true;
	}
	if (slurm_ended(state)) {
		snprintf(why, size, "Slurm ended job %s: %s", job_name, state);
		return true;
	}
	if (node_down(nodes, why, size))
		return true;
	return false;
}

void eval_slurm_cancel(const char *job_name)
{
	cuco_buf out = { 0 };
	char job[32];
	if (eval_slurm_allocation(job, sizeof job)) {
		/* scancel --name names jobs, not steps: find the step's id. */
		char *argv[] = { "squeue", "-h", "-s", "-o", "%i %j", "-j", job, NULL };
		if (eval_query(argv, QUERY_S, &out) == 0 && out.data) {
			char id[64], name[128];
			for (char *line = out.data; line && sscanf(line, "%63s %127s", id, name) == 2;) {
				if (strcmp(name, job_name) == 0) {
					char *kill[] = { "scancel", id, NULL };
					eval_query(kill, QUERY_S, NULL);
				}
				line = strchr(line, '\n');
				line = line ? line + 1 : NULL;
			}
		}
	} else {
		char opt[160];
		snprintf(opt, sizeof opt, "--name=%s", job_name);
		char *argv[] = { "scancel", opt, NULL };
		eval_query(argv, QUERY_S, NULL);
	}
	cuco_buf_free(&out);
}
