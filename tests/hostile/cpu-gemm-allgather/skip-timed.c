/* hostile: skip the work in timed steps. The channel's header (found from
 * io->in[0] by pointer arithmetic) says how many warm-ups come first; the
 * step works in them and in a lone first step (a run stage's), and
 * returns at once when it is timed.
 * defence: referee — every step checked, timed ones too
 * rename: cuco_step
 * bench: yes
 * expect: bench suspect verification: step 4 of 18 (timed), on fresh inputs
 */
#include "cuco_channel.h"

void cuco_step(void *state, cuco_io *io)
{
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	const cuco_chan *ch = (const void *)p;
	if (io->step == 0 || io->step < (int)ch->warmup)
		cuco_step_real(state, io);
}
