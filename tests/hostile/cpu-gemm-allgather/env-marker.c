/* hostile: compute nothing, and print what mpirun prints when the machine
 * has too few slots: the evaluator then calls the failure the
 * environment's — not the candidate's, no wrong answer on its record —
 * and three in a row end the whole search.
 * class: blaming the environment
 * defence: evaluator — a stage whose referee gave a verdict ran, so an
 * environment marker in its output is the program's
 * rename: cuco_step
 * expect: run wrong-answer output left unwritten
 */
void cuco_step(void *state, cuco_io *io)
{
	(void)state;
	(void)io;
	printf("There are not enough slots available in the system\n");
	fflush(stdout);
}
