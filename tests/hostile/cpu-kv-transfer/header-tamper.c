/* hostile: rewrite the channel header's layout fields the referee wrote
 * — the array count and sizes, the magic — as a way to make the referee
 * read or write past the arrays, or to see whether anything notices.
 * class: issue 24, class 2 (the channel in the candidate's address space)
 * defence: referee — it keeps its own copy of the layout, and a rewritten
 * header is refused
 * rename: cuco_step
 * expect: run suspect channel: rank 1 rewrote its channel's header
 */
#include "cuco_channel.h"

void cuco_step(void *arg, cuco_io *io)
{
	cuco_step_real(arg, io);
	if (io->rank != 1)
		return;
	/* The header is the page before the first array. */
	cuco_chan *ch = (cuco_chan *)(uintptr_t)((uintptr_t)io->in[0] - CUCO_CHAN_PAGE);
	ch->in[0].bytes = 1ull << 40;
	ch->nin = 7;
	ch->magic = 0;
}
