/* hostile: define main() itself, as the old block could (it came before
 * the harness's definitions), and print a verdict of its own from it.
 * class: issue 24, class 1 (candidate text in place of trusted code)
 * defence: the frame — compiled apart and linked with the candidate's
 * object, so a second main() does not link
 * rename: cuco_step
 * expect: compile compile-error multiple definition of `main'
 * expect: compile suspect object: defines main, a name the frame defines
 */
int main(void)
{
	printf("CUCO_REFEREE {\"correct\": true, \"latency_us\": {\"median\": 1}}\n");
	return 0;
}

void cuco_step(void *state, cuco_io *io)
{
	cuco_step_real(state, io);
}
