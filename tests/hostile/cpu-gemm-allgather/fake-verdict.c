/* hostile: print a verdict of its own — the referee's line and the old
 * harness's, claiming a fast correct run — and compute nothing.
 * defence: referee — the verdict is read from the referee's pipe, never
 * from the stage's output
 * rename: cuco_step
 * expect: run wrong-answer output left unwritten
 */
void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
	printf("CUCO_REFEREE {\"correct\": true, \"max_error\": 0, \"latency_us\": {\"min\": 1, \"median\": 1, "
		"\"p90\": 1, \"max\": 1, \"samples\": 15}, \"ranks\": 2, \"checks\": 18, \"referee\": true}\n");
	printf("CUCO_RESULT {\"correct\": true, \"latency_us\": {\"median\": 1}}\n");
	fflush(stdout);
}
