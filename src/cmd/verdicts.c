/* verdicts.c — what a run's summary (`cuco run`) and `cuco report` both
 * say about confirming (docs/trust.md, "Verdicts"): how the last session's
 * confirmation ended — each contender left without a verdict and why, and
 * what to do when it was stopped, ended by an error or turned off — and
 * every crown looked at again. */
#include "cmd/cmd.h"

#include <stdio.h>
#include <stdlib.h>

int cmd_verdicts_read(cuco_txn *txn, cmd_verdicts *v)
{
	cmd_verdicts_free(v);
	int rc = cuco_confirmation_get(txn, &v->conf);
	v->have_conf = rc == CUCO_OK;
	if (rc != CUCO_OK && rc != CUCO_ENOTFOUND)
		return rc;
	return cuco_crown_revisits(txn, &v->rev, &v->nrev);
}

void cmd_verdicts_free(cmd_verdicts *v)
{
	free(v->rev);
	v->rev = NULL;
	v->nrev = 0;
	v->have_conf = false;
}

void cmd_verdicts_print(const cmd_verdicts *v, int w)
{
	const cuco_confirmation *c = &v->conf;
	for (int i = 0; v->have_conf && i < c->nunjudged; i++)
		printf("%-*s #%llu no verdict: %s\n", w, "", (unsigned long long)c->unjudged[i].id,
			c->unjudged[i].why);
	if (v->have_conf && c->state != CUCO_CONFIRM_DONE)
		printf("%-*s %s\n", w, "", cuco_confirm_state_help(c->state));
	for (size_t i = 0; i < v->nrev; i++)
		printf("%-*s #%llu %s: %s\n", w, i ? "" : "crowns", (unsigned long long)v->rev[i].id,
			v->rev[i].lapsed ? "lapsed" : "stands", v->rev[i].why);
}
