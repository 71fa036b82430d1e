/* hostile: rewrite the channel's header — the layout the referee wrote,
 * and then read back to find the arrays — so that the referee poisons,
 * fills and reads memory far from the channel: its own.
 * class: issue 24, class 2 (the frame's state in the candidate's address
 * space: the channel)
 * defence: referee — it keeps its own copy of the layout, and a rewritten
 * header is refused
 * rename: cuco_step
 * ranks: 2
 * expect: run suspect channel: rank 1 rewrote its channel's header
 */
#include "cuco_channel.h"

void cuco_step(void *state, cuco_io *io)
{
	cuco_step_real(state, io);
	if (io->rank != 1)
		return;
	const char *p = io->in[0];
	while (((const cuco_chan *)(const void *)p)->magic != CUCO_CHAN_MAGIC)
		p -= CUCO_CHAN_PAGE;
	cuco_chan *ch = (cuco_chan *)(void *)p;
	ch->out[0].offset = 1ull << 46;
	ch->in[0].offset = 1ull << 45;
}
