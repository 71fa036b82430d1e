/* hostile: print a verdict of its own and end the program before the
 * harness could report.
 * rename: layer
 * expect: run suspect channel: the program printed a CUCO_RESULT line
 */
static void layer(schedule *s)
{
	(void)s;
	printf("CUCO_RESULT {\"correct\": true, \"max_error\": 0, \"latency_us\": {\"min\": 1, "
		"\"median\": 1, \"p90\": 1, \"max\": 1, \"samples\": 15}, \"ranks\": 2, \"checks\": 3}\n");
	fflush(stdout);
	MPI_Finalize();
	exit(0);
}
