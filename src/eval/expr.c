/* expr.c — the peak model's arithmetic: + - * / and parentheses over
 * numbers, a size's variables and `ranks`. Recursive descent, one token of
 * look-ahead; small enough that a parser generator would be the larger part. */
#include "eval/eval_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct expr {
	const char *text, *p;
	const cuco_size *size;
	int ranks;
	cuco_err *err;
	int depth;
} expr;

static int expr_sum(expr *e, double *out);

static void skip_space(expr *e)
{
	while (isspace((unsigned char)*e->p))
		e->p++;
}

static int expr_fail(expr *e, const char *what)
{
	return cuco_errf(e->err, CUCO_EDATA, "\"%s\": %s at offset %d", e->text, what,
		(int)(e->p - e->text));
}

static int expr_name(expr *e, double *out)
{
	const char *start = e->p;
	while (isalnum((unsigned char)*e->p) || *e->p == '_')
		e->p++;
	size_t n = (size_t)(e->p - start);
	if (n == 5 && strncmp(start, "ranks", 5) == 0) {
		*out = e->ranks;
		return CUCO_OK;
	}
	for (int i = 0; e->size && i < e->size->nvars; i++)
		if (strlen(e->size->vars[i].name) == n && strncmp(start, e->size->vars[i].name, n) == 0) {
			*out = (double)e->size->vars[i].value;
			return CUCO_OK;
		}
	e->p = start;
	return cuco_errf(e->err, CUCO_EDATA, "\"%s\": unknown variable %.*s", e->text, (int)n, start);
}

static int expr_atom(expr *e, double *out)
{
	skip_space(e);
	if (*e->p == '(') {
		if (++e->depth > 64)
			return expr_fail(e, "nested too deeply");
		e->p++;
		int rc = expr_sum(e, out);
		if (rc != CUCO_OK)
			return rc;
		skip_space(e);
		if (*e->p != ')')
			return expr_fail(e, "expected )");
		e->p++;
		e->depth--;
		return CUCO_OK;
	}
	if (*e->p == '-') {
		e->p++;
		int rc = expr_atom(e, out);
		*out = -*out;
		return rc;
	}
	if (isdigit((unsigned char)*e->p) || *e->p == '.') {
		char *end;
		*out = strtod(e->p, &end);
		if (end == e->p)
			return expr_fail(e, "bad number");
		e->p = end;
		return CUCO_OK;
	}
	if (isalpha((unsigned char)*e->p) || *e->p == '_')
		return expr_name(e, out);
	return expr_fail(e, *e->p ? "unexpected character" : "unexpected end");
}

static int expr_product(expr *e, double *out)
{
	int rc = expr_atom(e, out);
	for (;;) {
		if (rc != CUCO_OK)
			return rc;
		skip_space(e);
		char op = *e->p;
		if (op != '*' && op != '/')
			return CUCO_OK;
		e->p++;
		double rhs;
		rc = expr_atom(e, &rhs);
		if (rc == CUCO_OK && op == '/' && rhs == 0)
			return expr_fail(e, "division by zero");
		*out = op == '*' ? *out * rhs : *out / rhs;
	}
}

static int expr_sum(expr *e, double *out)
{
	int rc = expr_product(e, out);
	for (;;) {
		if (rc != CUCO_OK)
			return rc;
		skip_space(e);
		char op = *e->p;
		if (op != '+' && op != '-')
			return CUCO_OK;
		e->p++;
		double rhs;
		rc = expr_product(e, &rhs);
		*out = op == '+' ? *out + rhs : *out - rhs;
	}
}

int cuco_expr(const char *text, const cuco_size *size, int ranks, double *out, cuco_err *err)
{
	expr e = { .text = text, .p = text, .size = size, .ranks = ranks, .err = err };
	int rc = expr_sum(&e, out);
	if (rc != CUCO_OK)
		return rc;
	skip_space(&e);
	if (*e.p)
		return expr_fail(&e, "unexpected character");
	return CUCO_OK;
}
