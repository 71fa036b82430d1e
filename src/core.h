/* core.h — the small core every part of cuco may use: error values, the
 * run log, time, files, a growable text buffer, the line diff and the
 * statistics of paired comparisons.
 *
 * Errors are returned, never printed deep inside: a function that can fail
 * returns one of the CUCO_E* codes and fills a cuco_err with one line that
 * names the file, field or value at fault. Only main() prints it, as
 * "cuco: <where>: <what>".
 */
#ifndef CUCO_CORE_H
#define CUCO_CORE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes of the cuco program; also the error classes of cuco_err. */
enum {
	CUCO_OK = 0,
	CUCO_EUSAGE = 1, /* bad command line */
	CUCO_EDATA = 2,  /* bad input or stored data */
	CUCO_EENV = 3,   /* something the environment lacks (mpirun, GPU, disk) */
	CUCO_EXIT_STOPPED = 4, /* exit code only: a run stopped before its end (SIGINT,
	                          SIGTERM, SIGHUP, cuco stop); the same command resumes it */
	CUCO_EAGAIN = 5, /* a passing failure (a model call gave up); never an exit code */
	CUCO_EBUSY = 6,  /* nothing now: ask again once something has changed; never an exit code */
	CUCO_ENOTFOUND = 7, /* a lookup missed; never an exit code */
};

typedef struct cuco_err {
	int code;       /* one of CUCO_E* */
	char msg[512];  /* "<where>: <what>", one line, no trailing newline */
} cuco_err;

/* Set *e (when not NULL) and return code, so callers can write
 * `return cuco_errf(err, CUCO_EDATA, "%s: bad field", path);`. */
int cuco_errf(cuco_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An invariant of cuco's own code (never of its input: input errors are
 * returned). In a debug build (NDEBUG not defined: meson's b_ndebug, off
 * in the default debugoptimized build) a false cond prints
 * "cuco: FILE:LINE: assertion failed: COND" once, to the log and stderr,
 * and aborts; with NDEBUG cond is not evaluated. */
#ifdef NDEBUG
#define CUCO_ASSERT(cond) ((void)sizeof(cond))
#else
#define CUCO_ASSERT(cond) ((cond) ? (void)0 : cuco_assert_fail(#cond, __FILE__, __LINE__))
#endif
_Noreturn void cuco_assert_fail(const char *cond, const char *file, int line);

/* ---- log ------------------------------------------------------------ */
/* One log file per process (normally RUN/cuco.log). Writes are serialised
 * by a lock, so any thread may log. While a curses screen owns the
 * terminal, cuco_log_quiet(true) keeps everything off stderr. */
enum { CUCO_LOG_ERROR, CUCO_LOG_WARN, CUCO_LOG_INFO, CUCO_LOG_DEBUG };
int cuco_log_open(const char *path, cuco_err *err);
void cuco_log_close(void);
void cuco_log_quiet(bool quiet);
void cuco_log_level(int level);
void cuco_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- time ----------------------------------------------------------- */
double cuco_now(void);   /* wall clock, seconds since the epoch */
double cuco_mono(void);  /* monotonic seconds, for intervals */
/* A condition whose timed waits run on the monotonic clock: a wall clock
 * set back (NTP, a person) neither stretches nor cuts a wait. Every
 * condition cuco waits on is made so. */
void cuco_cond_init(pthread_cond_t *cond);
/* Wait on cond (from cuco_cond_init), holding lock, for at most `seconds`
 * (woken or not). */
void cuco_cond_wait_s(pthread_cond_t *cond, pthread_mutex_t *lock, double seconds);

/* ---- random numbers ------------------------------------------------- */
/* splitmix64: small, seedable, good enough for sampling; the strategies'
 * draws and the engine's shuffles. */
static inline uint64_t cuco_rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- text buffer ---------------------------------------------------- */
typedef struct cuco_buf {
	char *data;  /* NUL-terminated when len > 0 or after any append */
	size_t len;
	size_t cap;
} cuco_buf;
void cuco_buf_append(cuco_buf *b, const char *s, size_t n);
void cuco_buf_puts(cuco_buf *b, const char *s);
void cuco_buf_printf(cuco_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cuco_buf_free(cuco_buf *b);
/* The buffer as a set of names, one a line (a name holds no newline), for
 * readers that refuse a key given twice: false when name was there. */
bool cuco_buf_add_once(cuco_buf *b, const char *name);

/* ---- memory and files ------------------------------------------------ */
void *cuco_xmalloc(size_t n);        /* aborts on exhaustion: nothing sane remains */
void *cuco_xcalloc(size_t n, size_t size);
void *cuco_xrealloc(void *p, size_t n);
char *cuco_xstrdup(const char *s);
/* Read a whole file (at most max bytes); *out is NUL-terminated, free it. */
int cuco_read_file(const char *path, size_t max, char **out, size_t *len, cuco_err *err);
/* The same for a file a person writes (config, theme, manifest): a NUL in
 * it is CUCO_EDATA naming the byte, since a reader would stop there and
 * silently drop what follows. */
int cuco_read_text(const char *path, size_t max, char **out, size_t *len, cuco_err *err);
/* Write through a temporary file and rename(2), so readers never see half. */
int cuco_write_file(const char *path, const char *data, size_t len, cuco_err *err);
int cuco_mkdir_p(const char *path, cuco_err *err);
/* Remove path and all below it, not following links, even while another
 * user changes the tree (a stage's folders); what cannot be removed stays
 * (best effort: scratch folders), as does what lies more than 64 folders
 * down. */
void cuco_remove_tree(const char *path);
/* The session driving a run holds an flock on RUN/run.lock and writes its
 * pid there (the engine: engine.h). Whether that process is alive: what a viewer in
 * another process asks before it promises that an engine will act. */
#define CUCO_RUN_LOCK "run.lock"
bool cuco_run_driven(const char *run_dir);
/* ---- where cuco's files are (paths.c) ---------------------------------- */
/* Found once per process from the environment and the executable's place
 * (XDG Base Directory), so that an installed cuco finds its own data from
 * any folder, whatever its prefix. Workloads are looked for by name in
 * $CUCO_WORKLOADS (a colon-separated list), ./workloads,
 * $XDG_DATA_HOME/cuco/workloads (~/.local/share/cuco/workloads), cuco's
 * own (PREFIX/share/cuco/workloads beside PREFIX/bin/cuco; a build tree's
 * cuco: its source tree's), the configured prefix's, then each
 * $XDG_DATA_DIRS/cuco/workloads (/usr/local/share, /usr/share); themes
 * the same way under themes/, after $CUCO_THEMES. The config file is the
 * first that exists of $XDG_CONFIG_HOME/cuco/config (~/.config/cuco/config)
 * and each $XDG_CONFIG_DIRS/cuco/config (/etc/xdg). */
#define CUCO_MAX_FOLDERS 16
typedef struct cuco_folder {
	char path[1024];
	const char *from;   /* why it is searched: "$CUCO_WORKLOADS", "beside the executable", … */
} cuco_folder;
typedef struct cuco_paths {
	cuco_folder workloads[CUCO_MAX_FOLDERS], themes[CUCO_MAX_FOLDERS];
	int nworkloads, nthemes;
	char config[1024];        /* the config file; "" when no folder can hold one */
	const char *config_from;
	bool config_found;        /* false: none exists, config is where the person's would be */
	char manual[1024];        /* the man page, installed or the source tree's; "" when none */
	bool manual_installed;
} cuco_paths;
const cuco_paths *cuco_paths_get(void);
/* PREFIX/rel for the prefix the running executable is installed in
 * (PREFIX/bin/cuco), wherever that prefix was moved: where an installed
 * helper (the host-call interposer, the stages' init) is; false for a
 * cuco run from its build tree, or an absolute rel. */
bool cuco_installed_beside(const char *rel, char *out, size_t size);
/* Find them again, with cuco's variables read again (cuco_env_reread), for
 * a process that changed its environment (tests). */
void cuco_paths_reread(void);
bool cuco_folder_exists(const cuco_folder *f);
/* Strip leading and trailing whitespace in place; returns the new start.
 * The `key = value` readers (config, search knobs, themes) share it. */
char *cuco_trim(char *s);
/* The one of names[0..n) nearest to word by edit distance, when near
 * enough to be a slip of the keyboard (at most a third of its letters,
 * and at least one); NULL when none is. For "did you mean" hints. */
const char *cuco_nearest(const char *word, const char *const *names, size_t n);
/* The index of name among names[0..n) (an enum's names table), or -1. */
int cuco_name_index(const char *const *names, size_t n, const char *name);
/* Copy src to dst with strlen(dst) < size always; returns false if cut. */
bool cuco_strlcpy(char *dst, const char *src, size_t size);

/* ---- paired comparisons (stats.c) ------------------------------------- */
/* A speedup measured in rounds: each round times the reference and the
 * candidate one right after the other, in an order drawn at random, and
 * its ratio is reference / candidate. The interval is exact at any number
 * of rounds (Wilcoxon's signed-rank test inverted; docs/trust.md says why
 * and what the false-crown rate of a run is). */
#define CUCO_PAIRED_MAX 64   /* rounds one interval takes at most */

typedef struct cuco_interval {
	double value;       /* the estimate; NAN without rounds */
	double lo, hi;      /* the interval; NAN with fewer than 2 rounds */
	double confidence;  /* two-sided coverage of [lo, hi] */
	int rounds;
} cuco_interval;

/* The interval of ratio[0..n) with alpha in each tail. With too few rounds
 * for alpha it is the widest there is, at the lower confidence it has. */
void cuco_paired_interval(const double *ratio, int n, double alpha, cuco_interval *out);
/* Whether the interval says faster than the reference at one-sided alpha:
 * its lower bound above 1, at the confidence alpha asks for. */
bool cuco_paired_faster(const cuco_interval *iv, double alpha);
/* Whether no rounds added to these n, up to n_max in all, can still make
 * cuco_paired_faster true: the comparison may stop. */
bool cuco_paired_futile(const double *ratio, int n, int n_max, double alpha);
/* The fewest rounds with which a comparison at alpha can pass at all. */
int cuco_paired_min_rounds(double alpha);
/* Comparison j's (from 1) share of a run's false-crown rate alpha:
 * alpha / (j (j + 1)), which sums to alpha over any number of them. */
double cuco_alpha_share(double alpha, int j);

/* What an interval says about the candidate. */
/* X(enum, name in records and views). NONE: not compared in rounds;
 * FASTER: lower bound above 1; SLOWER: upper bound below 1; NOISE:
 * contains 1, and narrow; INCONCLUSIVE: wider than hi/lo = 1 + wide, or
 * not at the confidence. */
#define CUCO_VERDICTS(X) \
	X(NONE, "") X(FASTER, "faster") X(SLOWER, "slower") X(NOISE, "within noise") \
	X(INCONCLUSIVE, "inconclusive")

typedef enum cuco_verdict {
#define X(e, name) CUCO_VERDICT_##e,
	CUCO_VERDICTS(X)
#undef X
	CUCO_VERDICT_COUNT
} cuco_verdict;
cuco_verdict cuco_paired_verdict(const cuco_interval *iv, double alpha, double wide);
const char *cuco_verdict_name(cuco_verdict v);  /* "", "faster", "within noise", … */
int cuco_verdict_parse(const char *name, cuco_verdict *out);  /* CUCO_OK or CUCO_EDATA */

/* Whether the user's locale writes UTF-8 ($LC_ALL, else $LC_CTYPE, else
 * $LANG), for text printed outside the screen. */
bool cuco_utf8_locale(void);
/* A copy of s (malloc'd) that is well-formed UTF-8: each ill-formed part
 * (a character cut short, a stray continuation byte, an overlong form, a
 * surrogate) becomes U+FFFD, one per maximal part, as Unicode advises.
 * For text that leaves cuco as JSON a strict reader parses. */
char *cuco_utf8_clean(const char *s);
/* A speedup as every view writes it: "1.27x [1.18–1.36]", "1.27x" without
 * an interval (fewer than 2 rounds), "-" without a value; ascii writes the
 * dash as "-". */
void cuco_speedup_text(double value, double lo, double hi, int rounds, bool ascii, char *buf,
	size_t size);
/* Whether a speedup was timed against another measurement of the baseline
 * than the one shown beside it (baseline_us): its latency and that
 * baseline's imply a ratio more than 5 % away from it, whatever the
 * spreads. Its latency then does not compare with the baseline's; its
 * speedup, a ratio of measurements taken together, does. Every view marks
 * it with ~. */
bool cuco_speedup_elsewhere(double speedup, double latency_us, double baseline_us);

/* ---- line diff (diff.c) ---------------------------------------------- */
/* Myers' O(ND) greedy line diff shaped as a unified diff with context; the
 * screen's diff pane and `cuco diff` both show it. */
typedef enum cuco_diff_kind {
	CUCO_DIFF_HUNK,     /* "@@ -a,b +c,d @@" */
	CUCO_DIFF_CONTEXT,  /* ' ' */
	CUCO_DIFF_DEL,      /* '-' */
	CUCO_DIFF_ADD,      /* '+' */
} cuco_diff_kind;

typedef struct cuco_diff_line {
	cuco_diff_kind kind;
	const char *text;  /* points into the compared texts (or the hunk header) */
	int len;           /* bytes, without the newline */
} cuco_diff_line;

typedef struct cuco_diff {
	cuco_diff_line *lines;
	size_t n;
	int added, deleted;
	char *headers;       /* storage for the hunk header texts */
} cuco_diff;

/* Diff old against new (both texts must outlive d). context: lines kept
 * around each change. Edit scripts longer than max_d fall back to a
 * whole-text replacement, so a wholly rewritten file stays cheap. */
void cuco_diff_compute(cuco_diff *d, const char *old, size_t old_len,
	const char *new, size_t new_len, int context, int max_d);
void cuco_diff_free(cuco_diff *d);

#endif
