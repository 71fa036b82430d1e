/* hostile: macros that once rewired the trusted code after the block —
 * main renamed to a function of the candidate's, the clocks stopped — and
 * no work: were the frame compiled with this text, its main would print
 * a verdict of the block's choosing.
 * class: issue 24, class 1 (#define reaching trusted code)
 * defence: the frame — its own translation unit; the referee checks the
 * outputs
 * rename: cuco_step
 * expect: run wrong-answer output left unwritten
 */
#define main cuco_hostile_main
#define clock_gettime(id, ts) ((ts)->tv_sec = 0, (ts)->tv_nsec = 0, 0)
#define MPI_Wtime() 0.0

int main(void)
{
	printf("CUCO_REFEREE {\"correct\": true, \"latency_us\": {\"median\": 1}}\n");
	return 0;
}

void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
}
