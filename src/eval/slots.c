/* slots.c — the run's pool of slots, one device set each (this machine, a
 * host of a hostfile, a Slurm node), so that two benchmarks never share
 * devices and a search with two slots runs two at once.
 *
 * A run or benchmark holds its slot alone: taken busy under the pool's
 * mutex, then its device lock for writing. The device lock exists for the
 * local machine when its CPU is the device: compiles take it shared, so
 * they never overlap a timing (evaluator.c).
 *
 * Of idle slots, the one idle longest is taken, so that over a search
 * every slot is used and none sits cold. An environment failure rests a
 * slot (retry_after, doubled at each failure in a row) and enough of them
 * in a row retire it; a success makes it whole again. */
#include "eval/eval_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RETRY_AFTER_S 30.0
#define DEFAULT_RETIRE_AFTER 3
#define WAIT_S 0.2  /* re-check the slots this often while waiting (a rest ends) */

const char *cuco_slot_state_name(cuco_slot_state s)
{
	static const char *const names[] = {
#define X(e, name) name,
		CUCO_SLOT_STATES(X)
#undef X
	};
	return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

void eval_pool_init(eval_pool *p, const cuco_slot_spec *specs, int n, double retry_after_s,
	int retire_after)
{
	memset(p, 0, sizeof *p);
	pthread_mutex_init(&p->lock, NULL);
	cuco_cond_init(&p->cond);
	p->n = n < CUCO_MAX_SLOTS ? n : CUCO_MAX_SLOTS;
	p->retry_after_s = retry_after_s > 0 ? retry_after_s : DEFAULT_RETRY_AFTER_S;
	p->retire_after = retire_after > 0 ? retire_after : DEFAULT_RETIRE_AFTER;
	pthread_rwlockattr_t rwa;
	pthread_rwlockattr_init(&rwa);
	/* A benchmark waiting must not starve behind a stream of compiles. */
	pthread_rwlockattr_setkind_np(&rwa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (int i = 0; i < p->n; i++) {
		p->slots[i].spec = specs[i];
		pthread_rwlock_init(&p->slots[i].device, &rwa);
	}
	pthread_rwlockattr_destroy(&rwa);
}

void eval_pool_free(eval_pool *p)
{
	for (int i = 0; i < p->n; i++)
		pthread_rwlock_destroy(&p->slots[i].device);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
}

/* Under p->lock. */
static void slot_info(const eval_pool *p, int i, double now, cuco_slot_info *out)
{
	const eval_slot *s = &p->slots[i];
	memset(out, 0, sizeof *out);
	out->index = i;
	cuco_strlcpy(out->name, s->spec.name, sizeof out->name);
	out->state = s->state;
	out->failures = s->failures;
	out->holds = s->holds;
	out->rest_s = s->state == CUCO_SLOT_RESTING ? fmax(0, s->rest_until - now) : 0;
}

/* A resting slot whose rest is over is idle again (under p->lock). */
static bool usable(eval_slot *s, double now)
{
	if (s->state == CUCO_SLOT_RESTING && now >= s->rest_until)
		s->state = CUCO_SLOT_IDLE;
	return s->state == CUCO_SLOT_IDLE;
}

/* The slot to take now, -1 when none is (under p->lock). */
static int pick(eval_pool *p, int want, double now)
{
	if (want >= 0)
		return usable(&p->slots[want], now) ? want : -1;
	int best = -1;
	for (int i = 0; i < p->n; i++)
		if (usable(&p->slots[i], now) && (best < 0 || p->slots[i].idle_since < p->slots[best].idle_since))
			best = i;
	return best;
}

static bool all_retired(const eval_pool *p, int want)
{
	if (want >= 0)
		return p->slots[want].state == CUCO_SLOT_RETIRED;
	for (int i = 0; i < p->n; i++)
		if (p->slots[i].state != CUCO_SLOT_RETIRED)
			return false;
	return true;
}

int eval_pool_take(eval_pool *p, int want, int *slot,
	cuco_slot_info *info, cuco_err *err)
{
	if (want >= p->n)
		return cuco_errf(err, CUCO_EUSAGE, "slot %d: the run has %d slot%s", want, p->n,
			p->n == 1 ? "" : "s");
	pthread_mutex_lock(&p->lock);
	int got;
	while ((got = pick(p, want, cuco_mono())) < 0) {
		if (all_retired(p, want)) {
			pthread_mutex_unlock(&p->lock);
			return cuco_errf(err, CUCO_EENV, want >= 0 ? "slot %s is retired after %d environment "
				"failures in a row" : "every slot is retired (the last, %s, after %d environment "
				"failures in a row)", p->slots[want >= 0 ? want : p->n - 1].spec.name, p->retire_after);
		}
		cuco_cond_wait_s(&p->cond, &p->lock, WAIT_S);
	}
	p->slots[got].state = CUCO_SLOT_BUSY;
	slot_info(p, got, cuco_mono(), info);
	pthread_mutex_unlock(&p->lock);
	pthread_rwlock_wrlock(&p->slots[got].device);
	*slot = got;
	return CUCO_OK;
}

void eval_pool_give(eval_pool *p, int slot, const char *fault, cuco_slot_info *info, char *text,
	size_t size)
{
	pthread_rwlock_unlock(&p->slots[slot].device);
	pthread_mutex_lock(&p->lock);
	eval_slot *s = &p->slots[slot];
	double now = cuco_mono();
	s->holds++;
	s->idle_since = now;
	text[0] = '\0';
	if (!fault) {
		if (s->failures > 0)
			snprintf(text, size, "slot %s works again", s->spec.name);
		s->failures = 0;
		s->state = CUCO_SLOT_IDLE;
	} else if (++s->failures >= p->retire_after) {
		s->state = CUCO_SLOT_RETIRED;
		snprintf(text, size, "slot %s retired after %d environment failures in a row: %s",
			s->spec.name, s->failures, fault);
	} else {
		double rest = p->retry_after_s * ldexp(1, s->failures - 1);
		s->state = CUCO_SLOT_RESTING;
		s->rest_until = now + rest;
		snprintf(text, size, "slot %s: environment failure %d: %s; tried again in %.0f s",
			s->spec.name, s->failures, fault, rest);
	}
	slot_info(p, slot, now, info);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

int eval_pool_list(eval_pool *p, cuco_slot_info *out, int max)
{
	pthread_mutex_lock(&p->lock);
	double now = cuco_mono();
	int n = p->n < max ? p->n : max;
	for (int i = 0; i < n; i++) {
		usable(&p->slots[i], now);
		slot_info(p, i, now, &out[i]);
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* ---- the machine's GPU lock -------------------------------------------------- */

int eval_gpu_lock(const cuco_slot_spec *spec, const char *visible, int *fd, cuco_err *err)
{
	const char *devices = *spec->gpus ? spec->gpus : visible && *visible ? visible : "all";
	char path[128];
	int n = snprintf(path, sizeof path, "/tmp/cuco-gpu-%s.lock", devices);
	for (char *c = path + 14; n > 0 && *c; c++)
		if (*c == ',' || *c == '/')
			*c = '-';
	/* Open before creating: in a sticky /tmp, O_CREAT on another user's
	 * file is refused (fs.protected_regular), and flock needs no write. */
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0 && errno == ENOENT)
		*fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	if (*fd < 0)
		return cuco_errf(err, CUCO_EENV, "%s: %s", path, strerror(errno));
	while (flock(*fd, LOCK_EX) != 0) {
		if (errno != EINTR) {
			int e = errno;
			close(*fd);
			*fd = -1;
			return cuco_errf(err, CUCO_EENV, "%s: flock: %s", path, strerror(e));
		}
	}
	return CUCO_OK;
}

void eval_gpu_unlock(int fd)
{
	if (fd >= 0)
		close(fd);  /* closing the only descriptor drops the flock */
}
