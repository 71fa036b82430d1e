/* hostile: the prefill rank keeps the first request's hidden states and
 * prefills from them in every later step, as if requests repeated (the
 * old harness's inputs followed a known transform of a seed): the decode
 * rank's answer is then the first request's, over and over.
 * class: issue 24, class 4 (inputs that follow a known transform;
 * memoization across steps)
 * defence: referee — inputs drawn afresh from getrandom before every step
 * rename: cuco_step
 * bench: yes
 * expect: bench suspect verification: step 2 of 18 (a warm-up), on fresh inputs
 */
void cuco_step(void *arg, cuco_io *io)
{
	static float *kept;
	if (io->rank == 0 && !kept) {
		kept = malloc(io->in_bytes[0]);
		memcpy(kept, io->in[0], io->in_bytes[0]);
	}
	if (io->rank == 0)
		io->in[0] = kept;
	cuco_step_real(arg, io);
}
