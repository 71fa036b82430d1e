/* cuco_chan_rank.h — a rank's side of the channel to the referee
 * (cuco_channel.h): finding and mapping this rank's file, and the control
 * words. Shared by the trusted frames (cuco_frame.c for the CPU
 * workloads, ../gpu-common/cuco_rows_ref_frame.cu for the GPU ones);
 * plain C11 that also compiles as C++. */
#ifndef CUCO_CHAN_RANK_H
#define CUCO_CHAN_RANK_H

#include "cuco_channel.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline void cuco_chan_put(cuco_chan_word *w, uint32_t v)
{
	__atomic_store_n(&w->v, v, __ATOMIC_RELEASE);
	syscall(SYS_futex, &w->v, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Wait until the referee's word w is not `seen`; its new value. */
static inline uint32_t cuco_chan_await(cuco_chan_word *w, uint32_t seen)
{
	uint32_t v;
	while ((v = __atomic_load_n(&w->v, __ATOMIC_ACQUIRE)) == seen)
		syscall(SYS_futex, &w->v, FUTEX_WAIT, seen, NULL, NULL, 0);
	return v;
}

/* Map rank's channel file from $CUCO_CHANNEL, waiting up to tries * 10 ms
 * for the referee to make it; at most max_arrays inputs and outputs.
 * NULL with *why (a format with one %s: the path or the variable). */
static inline cuco_chan *cuco_chan_attach(int rank, int nranks, uint32_t max_arrays, int tries,
	const char **why, char *path, size_t size)
{
	const char *dir = getenv(CUCO_CHAN_ENV);
	snprintf(path, size, "%s", CUCO_CHAN_ENV);
	if (!dir || !*dir) {
		*why = "$%s is not set: run the program through cuco (or scripts/referee)";
		return NULL;
	}
	snprintf(path, size, "%s/%d", dir, rank);
	int fd = -1;
	const struct timespec tick = { 0, 10000000L };
	for (int i = 0; i < tries && (fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)) < 0 && errno == ENOENT; i++)
		nanosleep(&tick, NULL);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0 || (size_t)sb.st_size < sizeof(cuco_chan)) {
		if (fd >= 0)
			close(fd);
		*why = "%s: no channel file from the referee";
		return NULL;
	}
	void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	cuco_chan *c = (cuco_chan *)p;
	if (p == MAP_FAILED || c->magic != CUCO_CHAN_MAGIC || c->version != CUCO_CHAN_VERSION
		|| c->rank != (uint32_t)rank || c->nranks != (uint32_t)nranks || c->bytes != (uint64_t)sb.st_size
		|| c->nin > max_arrays || c->nout > max_arrays) {
		*why = "%s: not this rank's channel (another version of the referee, or other ranks)";
		return NULL;
	}
	return c;
}

#endif
