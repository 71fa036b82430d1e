/* hostile: write something cheap of the right shape: the input, copied
 * into the output, without the norm, the gather or the GEMM.
 * defence: referee — the output checked against its own reference
 * rename: cuco_step
 * expect: run wrong-answer verification: max error
 */
void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	const float *x = io->in[0];
	float *c = io->out[0];
	size_t nx = io->in_bytes[0] / sizeof(float), nc = io->out_bytes[0] / sizeof(float);
	for (size_t i = 0; i < nc; i++)
		c[i] = x[i % nx];
}
