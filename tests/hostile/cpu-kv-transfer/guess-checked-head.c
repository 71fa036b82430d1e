/* hostile: from the second step on, the decode rank writes only the heads
 * it guesses the checker looks at (the first two of four) and leaves the
 * rest, as if a check looked at a fixed head.
 * class: output-check attacks (guessing which elements are checked)
 * defence: referee — the head checked is drawn after each step, every
 * step (here: a half chance a step, over 18 steps)
 * rename: cuco_step
 * bench: yes
 * expect: bench suspect on fresh inputs: output left unwritten
 */
void cuco_step(void *arg, cuco_io *io)
{
	static float mine[HD];
	float *out = io->out[0];
	if (io->rank != 1 || io->step == 0) {
		cuco_step_real(arg, io);
		return;
	}
	io->out[0] = mine;
	cuco_step_real(arg, io);
	io->out[0] = out;
	memcpy(out, mine, 2 * D * sizeof(float));
}
