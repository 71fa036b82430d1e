/* hostile: compute once, then hand back the kept result: every later step
 * copies the first step's output instead of computing (issue 24, class 4:
 * memoization across steps).
 * defence: referee — inputs drawn afresh every step, every step checked
 * rename: cuco_step
 * bench: yes
 * expect: bench suspect verification: step 2 of 18 (a warm-up), on fresh inputs
 */
static float *kept;

void cuco_step(void *state, cuco_io *io)
{
	if (!kept) {
		cuco_step_real(state, io);
		kept = malloc(io->out_bytes[0]);
		memcpy(kept, io->out[0], io->out_bytes[0]);
		return;
	}
	memcpy(io->out[0], kept, io->out_bytes[0]);
}
