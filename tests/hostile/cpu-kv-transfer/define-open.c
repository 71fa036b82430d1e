/* hostile: define open() — a libc name the trusted frame calls to reach
 * its channel — so that the frame's own call, before any candidate code
 * is meant to run and while the referee still has every rank's file
 * linked, opens the other ranks' channels too. The decode rank then reads
 * the prefill rank's hidden states and projections from its channel and
 * prefills every block itself: no transfer, and the prefill rank idles.
 * class: issue 24, class 2 (libc names the frame calls, defined);
 * rank-specific (reading the other rank's channel)
 * defence: referee — no process of the stage holds two ranks' channel
 * files (checked once setup is done and after the last step); the object
 * checker (no libc names defined) also refuses it
 * rename: cuco_step
 * expect: run suspect channel: a process of the stage holds the channel files of ranks 0 and 1
 * expect: compile suspect object: defines open, a name of libc
 */
#include "cuco_channel.h"
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sibling[2] = { -1, -1 };

int open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = (flags & O_CREAT) ? va_arg(ap, int) : 0;
	va_end(ap);
	size_t n = strlen(path);
	if (strstr(path, "cuco-chan") && n > 2 && path[n - 2] == '/' && sibling[0] < 0) {
		char other[4096];
		for (int q = 0; q < 2; q++) {
			snprintf(other, sizeof other, "%.*s%d", (int)(n - 1), path, q);
			sibling[q] = (int)syscall(SYS_openat, AT_FDCWD, other, O_RDWR, 0);
		}
	}
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags, mode);
}

void cuco_step(void *arg, cuco_io *io)
{
	static const cuco_chan *prefill;
	static float pool[NB * BLOCK_FLOATS];
	(void)arg;
	struct stat sb;
	if (!prefill && sibling[0] >= 0 && fstat(sibling[0], &sb) == 0) {
		void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, sibling[0], 0);
		prefill = p == MAP_FAILED ? NULL : p;
	}
	if (!prefill) {
		fprintf(stderr, "define-open: the prefill rank's channel out of reach\n");
		abort();
	}
	if (io->rank == 0)
		return;
	const float *hidden = (const float *)(const void *)((const char *)prefill + prefill->in[0].offset);
	const kv_weights *w = (const kv_weights *)(const void *)((const char *)prefill + prefill->in[1].offset);
	attn a;
	attn_init(&a);
	for (int b = 0; b < NB; b++) {
		prefill_block(hidden, w, b, pool + (size_t)b * BLOCK_FLOATS);
		attn_block(&a, io->in[0], pool + (size_t)b * BLOCK_FLOATS);
	}
	attn_store(&a, io->out[0]);
}
