/* cuco_handoff.h — a helper thread for the "several issuers" designs of
 * the CPU workloads: the compute thread hands numbered items (chunks), in
 * order, to one helper thread that works on each. Program-side code (a
 * candidate may use it or not); plain C11 with pthreads.
 */
#ifndef CUCO_HANDOFF_H
#define CUCO_HANDOFF_H

#include <pthread.h>

/* Hand-over of numbered items (chunks), in order, from the compute thread
 * to one helper thread that runs work(arg, item) on each: the "several
 * issuers" designs. Start it per step and join it before the step returns
 * (between steps the referee freezes the stage, so a thread left running
 * works for nothing); give() never blocks. */
typedef struct cuco_handoff {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int count, given, done;
	void (*work)(void *arg, int item);
	void *arg;
} cuco_handoff;

static inline void *cuco_handoff_main(void *arg)
{
	cuco_handoff *h = arg;
	for (int item = 0; item < h->count; item++) {
		pthread_mutex_lock(&h->mu);
		while (h->given <= item)
			pthread_cond_wait(&h->cv, &h->mu);
		pthread_mutex_unlock(&h->mu);
		h->work(h->arg, item);
		pthread_mutex_lock(&h->mu);
		h->done = item + 1;
		pthread_cond_broadcast(&h->cv);
		pthread_mutex_unlock(&h->mu);
	}
	return NULL;
}

static inline void cuco_handoff_start(cuco_handoff *h, int count,
	void (*work)(void *arg, int item), void *arg)
{
	h->count = count;
	h->given = h->done = 0;
	h->work = work;
	h->arg = arg;
	pthread_mutex_init(&h->mu, NULL);
	pthread_cond_init(&h->cv, NULL);
	pthread_create(&h->thread, NULL, cuco_handoff_main, h);
}

/* Items [0, item] may be worked on. */
static inline void cuco_handoff_give(cuco_handoff *h, int item)
{
	pthread_mutex_lock(&h->mu);
	h->given = item + 1;
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* Block until items [0, upto) are done. */
static inline void cuco_handoff_wait(cuco_handoff *h, int upto)
{
	pthread_mutex_lock(&h->mu);
	while (h->done < upto)
		pthread_cond_wait(&h->cv, &h->mu);
	pthread_mutex_unlock(&h->mu);
}

/* Give everything, wait for the helper to finish and release it. */
static inline void cuco_handoff_join(cuco_handoff *h)
{
	cuco_handoff_give(h, h->count - 1);
	pthread_join(h->thread, NULL);
	pthread_mutex_destroy(&h->mu);
	pthread_cond_destroy(&h->cv);
}

#endif
