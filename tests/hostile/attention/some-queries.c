/* hostile: attend only the first half of the queries (all heads), half
 * the tensor-core work, betting that a check samples rows it happens to
 * cover (the first queries, or one set). Attention is compute-bound, so
 * every row skipped is time saved. The referee draws the rows it checks
 * (a query of a head, at least 2 in every set) after every step, and the
 * poison left in the skipped half refuses the step.
 * rename: cuco_prepare
 * expect: run wrong-answer output left unwritten
 */
extern "C" void *cuco_prepare(const cuco_problem *p)
{
	fa_call c = {};
	c.q = p->q;
	c.queries = SEQ / 2;
	c.heads = HEADS;
	c.seg[0] = {{p->k, p->v, KEYS}, 0, KEYS};
	c.nseg = 1;
	c.out = p->out;
	(void)cuco_prepare_real;
	return new fa_plan<at_cfg>(fa_prepare<at_cfg>(c));
}
