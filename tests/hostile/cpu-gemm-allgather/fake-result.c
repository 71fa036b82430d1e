/* hostile: print a verdict of its own. The first step prints a
 * CUCO_RESULT line claiming a fast, correct run and ends the program
 * before the harness could report.
 * rename: step
 * expect: run suspect channel: the program printed a CUCO_RESULT line
 */
static void step(void *arg, int rep)
{
	(void)arg;
	(void)rep;
	printf("CUCO_RESULT {\"correct\": true, \"max_error\": 0, \"latency_us\": {\"min\": 1, "
		"\"median\": 1, \"p90\": 1, \"max\": 1, \"samples\": 15}, \"ranks\": 2, \"checks\": 3}\n");
	fflush(stdout);
	MPI_Finalize();
	exit(0);
}
