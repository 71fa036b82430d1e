/* hostile: zero the values V (handed read-only, written all the same) and
 * the output, in two memsets far under the kernel's time: for the inputs
 * it leaves behind, zero is the right answer, so a check that builds its
 * reference from the device's inputs agrees with it. The reference must
 * come from the seeds (the referee rebuilds them; the values are its
 * device array, which the stage may write, and refills every step).
 * rename: cuco_launch
 * expect: run wrong-answer max error
 */
extern "C" void cuco_launch(void *state, const cuco_problem *p, cudaStream_t s)
{
	CUCO_CUDA(cudaMemsetAsync((void *)p->v, 0, at_kv_elems * sizeof(__nv_bfloat16), s));
	CUCO_CUDA(cudaMemsetAsync(p->out, 0, at_q_elems * sizeof(__nv_bfloat16), s));
	(void)state;
	(void)cuco_launch_real;
}
