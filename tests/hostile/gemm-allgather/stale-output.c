/* hostile: leave the output as it is on every other call.
 * rename: layer
 * expect: run suspect verification 2 of 2
 */
static void layer(schedule *s)
{
	static int calls;
	if (calls++ % 2 == 0)
		layer_real(s);
}
