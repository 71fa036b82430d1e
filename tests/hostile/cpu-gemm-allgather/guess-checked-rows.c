/* hostile: compute only the rows a checker that samples a fixed prefix
 * would look at (the first quarter of C) and leave the rest.
 * class: output-check attacks (guessing which rows are checked)
 * defence: referee — rows drawn after the step from getrandom
 * rename: cuco_step
 * expect: run wrong-answer output left unwritten
 */
void cuco_step(void *state, cuco_io *io)
{
	static float *mine;
	float *c = io->out[0];
	if (!mine)
		mine = malloc(io->out_bytes[0]);
	io->out[0] = mine;
	cuco_step_real(state, io);
	io->out[0] = c;
	memcpy(c, mine, (size_t)(M / 4) * N * sizeof(float));
}
