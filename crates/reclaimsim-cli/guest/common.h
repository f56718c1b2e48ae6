/* What the guest's workload programs share (reclaimsim kernel): options, the clock, a
 * seeded PRNG, fio's random distributions (uniform and zipf, lib/zipf.c), per-worker
 * counters and latency histograms in shared memory (workers may be threads or
 * processes), the stop conditions (a deadline, stop files), the finish handshake with
 * the guest's init, and the result lines init collects:
 *   @RS wl NAME ops=N secs=S p50=NS p99=NS max=NS [bytes=B]
 * Written for reclaimsim; generalises tools/ground-truth's anon.c and fileread.c. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define MAXW 64
#define NBUCKET 256
#define MAXSTOP 8

struct wstat {
	volatile uint64_t ops, done;
	uint64_t hist[NBUCKET];
	uint64_t max_ns;
	char pad[64];
};

struct shared {
	volatile int stop;
	volatile int barrier;
	volatile int failed; /* a forked worker exited early (worker_exit) */
	struct wstat w[MAXW];
};

static struct shared *sh;
static const char *stop_files[MAXSTOP];
static int nstop;
static double deadline; /* seconds after start; 0: none */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void shared_init(void)
{
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap shared");
}

/* xorshift64* seeded per worker from the scenario's seed. */
static uint64_t rng_seed(uint64_t seed, uint64_t stream)
{
	uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ (stream + 1) * 0xD1B54A32D192ED03ULL;
	return x ? x : 1;
}

static inline uint64_t rng_next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 2685821657736338717ULL;
}

/* A draw in [0, n). */
static inline uint64_t rng_below(uint64_t *x, uint64_t n)
{
	return (rng_next(x) >> 11) % n;
}

/* fio's random_distribution: uniform, or zipf:theta (lib/zipf.c: Gray et al.'s closed
 * form, the rank hashed by GOLDEN_RATIO_64 and moved by a per-stream offset). */
struct dist {
	int zipf;
	uint64_t n, off;
	double theta, zeta2, zetan, alpha, eta;
};

static void dist_init(struct dist *d, const char *spec, uint64_t n, uint64_t *rng)
{
	memset(d, 0, sizeof *d);
	d->n = n;
	if (!strncmp(spec, "zipf", 4)) {
		d->zipf = 1;
		d->theta = spec[4] == ':' ? atof(spec + 5) : 1.1;
		uint64_t terms = n < 10000000 ? n : 10000000;
		for (uint64_t i = 1; i <= terms; i++)
			d->zetan += pow(1.0 / i, d->theta);
		d->zeta2 = 1.0 + pow(0.5, d->theta);
		d->alpha = 1.0 / (1.0 - d->theta);
		d->eta = (1.0 - pow(2.0 / n, 1.0 - d->theta)) / (1.0 - d->zeta2 / d->zetan);
		d->off = rng_next(rng) >> 32;
	}
}

static inline uint64_t dist_next(struct dist *d, uint64_t *rng)
{
	if (!d->zipf)
		return rng_below(rng, d->n);
	double u = (double)(uint32_t)(rng_next(rng) >> 32) / 4294967295.0;
	double uz = u * d->zetan;
	uint64_t val;
	if (uz < 1.0)
		val = 1;
	else if (uz < d->zeta2)
		val = 2;
	else
		val = 1 + (uint64_t)(d->n * pow(d->eta * u - d->eta + 1.0, d->alpha));
	if (val > d->n)
		val = d->n;
	return ((val - 1) * 0x61C8864680B583EBULL + d->off) % d->n;
}

/* Latency histogram: 4 buckets per power of two. */
static inline int bucket(uint64_t ns)
{
	if (ns < 4)
		return (int)ns;
	int e = 63 - __builtin_clzll(ns);
	int b = 4 * (e - 1) + (int)((ns >> (e - 2)) & 3);
	return b < NBUCKET ? b : NBUCKET - 1;
}

static uint64_t bucket_low(int b)
{
	if (b < 4)
		return b;
	int e = b / 4 + 1;
	return (1ULL << e) + (uint64_t)(b % 4) * (1ULL << (e - 2));
}

static inline void record(struct wstat *w, uint64_t ns)
{
	w->hist[bucket(ns)]++;
	if (ns > w->max_ns)
		w->max_ns = ns;
}

static uint64_t quantile(const uint64_t *hist, uint64_t total, double q)
{
	if (!total)
		return 0;
	uint64_t want = (uint64_t)ceil(q * total), seen = 0;
	for (int b = 0; b < NBUCKET; b++) {
		seen += hist[b];
		if (seen >= want && hist[b])
			return bucket_low(b);
	}
	return 0;
}

static int stop_file_seen(void)
{
	for (int i = 0; i < nstop; i++)
		if (access(stop_files[i], F_OK) == 0)
			return 1;
	return 0;
}

/* Waits until every one of `n` workers is done, the deadline passes or a stop file
 * appears (then tells the workers to stop and waits for them). */
static void supervise(int n, double start)
{
	for (;;) {
		int done = 0;
		for (int i = 0; i < n; i++)
			done += sh->w[i].done != 0;
		if (done == n)
			return;
		if ((deadline > 0 && now() - start >= deadline) || stop_file_seen())
			sh->stop = 1;
		usleep(sh->stop ? 10000 : 50000);
	}
}

/* Prints one result line: the workers' ops and latencies, and the bytes they moved
 * when `bytes` is not 0. */
static void report_bytes(const char *name, int n, double secs, uint64_t bytes)
{
	uint64_t ops = 0, mx = 0, hist[NBUCKET] = { 0 }, total = 0;
	for (int i = 0; i < n; i++) {
		ops += sh->w[i].ops;
		if (sh->w[i].max_ns > mx)
			mx = sh->w[i].max_ns;
		for (int b = 0; b < NBUCKET; b++)
			hist[b] += sh->w[i].hist[b];
	}
	for (int b = 0; b < NBUCKET; b++)
		total += hist[b];
	printf("@RS wl %s ops=%llu secs=%.3f p50=%llu p99=%llu max=%llu", name,
	       (unsigned long long)ops, secs, (unsigned long long)quantile(hist, total, 0.5),
	       (unsigned long long)quantile(hist, total, 0.99), (unsigned long long)mx);
	if (bytes)
		printf(" bytes=%llu", (unsigned long long)bytes);
	printf("\n");
	fflush(stdout);
}

static __attribute__((unused)) void report(const char *name, int n, double secs)
{
	report_bytes(name, n, secs, 0);
}

static __attribute__((unused)) void reset_stats(int n)
{
	for (int i = 0; i < n; i++) {
		sh->w[i].ops = 0;
		sh->w[i].done = 0;
		sh->w[i].max_ns = 0;
		memset(sh->w[i].hist, 0, sizeof sh->w[i].hist);
	}
	sh->stop = 0;
}

/* In a forked worker: if it exits before its work is done (die()), it counts as done
 * and the program as failed, so that supervise() does not wait for it forever. */
static int worker_id = -1;

static void worker_exit(void)
{
	if (worker_id >= 0 && !sh->w[worker_id].done) {
		sh->failed = 1;
		sh->w[worker_id].done = 1;
	}
}

static __attribute__((unused)) void forked_worker(int id)
{
	worker_id = id;
	atexit(worker_exit);
}

/* The guest's uptime in seconds, the clock init prints its `@RS start` lines in. */
static double uptime(void)
{
	double up = 0;
	FILE *f = fopen("/proc/uptime", "r");
	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return up;
}

/* Phase PHASE of workload NAME has finished: every worker has done its work in it (the
 * model's barrier after the phase; crates/reclaimsim/src/engine/mod.rs triggers
 * "NAME:PHASE" there). Prints `@RS phase NAME:PHASE UPTIME` and creates FIN:PHASE
 * (/tmp/fin.NAME:PHASE), the file init waits on for a workload started `after` the
 * phase, that a program stopped `until` it watches, and that a later phase's `wait_for`
 * waits on. */
static __attribute__((unused)) void phase_done(const char *fin, const char *name,
					       const char *phase)
{
	printf("@RS phase %s:%s %.2f\n", name, phase, uptime());
	fflush(stdout);
	if (!fin)
		return;
	char path[512];
	snprintf(path, sizeof path, "%s:%s", fin, phase);
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
}

/* The file a workload leaves when it has exited: /tmp/exit.NAME, for WHAT = NAME or
 * NAME:PHASE (a workload that exits before its phase ends releases those waiting on
 * the phase). */
static __attribute__((unused)) void exit_file(char *out, size_t cap, const char *what)
{
	snprintf(out, cap, "/tmp/exit.%.*s", (int)strcspn(what, ":"), what);
}

/* The most phases a program runs (the plan refuses more). */
#define MAXPH 16

/* Splits S at commas into at most MAX fields; gives how many there were. */
static __attribute__((unused)) int split_fields(char *s, char **fld, int max)
{
	int k = 0;
	for (char *q = s; k < max; q++) {
		fld[k++] = q;
		q = strchr(q, ',');
		if (!q)
			return k;
		*q = 0;
	}
	return k + 1; /* more than MAX */
}

/* Before a later phase: sleeps until SLEEP_UNTIL seconds after START and until WAIT (a
 * workload, or NAME:PHASE; empty or NULL: none) has finished: /tmp/fin.WAIT or the
 * workload's exit file exists (the model's barrier, then its wait_for and sleep_until).
 * Returns early when a stop file appears or the program's deadline passes. */
static __attribute__((unused)) void wait_phase(double sleep_until, const char *wait,
					       double start)
{
	char fin[300], ex[300];
	snprintf(fin, sizeof fin, "/tmp/fin.%s", wait ? wait : "");
	exit_file(ex, sizeof ex, wait ? wait : "");
	while (!stop_file_seen() && !(deadline > 0 && now() - start >= deadline)) {
		int slept = now() - start >= sleep_until;
		int waited = !wait || !*wait || access(fin, F_OK) == 0 || access(ex, F_OK) == 0;
		if (slept && waited)
			return;
		usleep(50000);
	}
}

/* Phase PHASE of NPH has ended: its result line (NAME, or NAME:PHASE when there are
 * several phases, as the model names them) with BYTES moved when not 0, and with several
 * phases its `@RS phase` line and finish file (phase_done). */
static __attribute__((unused)) void phase_result(const char *fin, const char *name,
						 const char *phase, int nph, int n,
						 double secs, uint64_t bytes)
{
	char label[256];
	if (nph > 1)
		snprintf(label, sizeof label, "%s:%s", name, phase);
	else
		snprintf(label, sizeof label, "%s", name);
	report_bytes(label, n, secs, bytes);
	if (nph > 1)
		phase_done(fin, name, phase);
}

/* A phase of a program that does its work again (the model's RepeatPhase,
 * crates/reclaimsim/src/workload/phase.rs): `run` from the start, then each -H
 * NAME,SLEEP,WAIT,RUNTIME (RUNTIME 0: none, to the work's end). */
struct rphase {
	const char *name, *wait;
	double sleep_until, runtime;
};

/* Fills PH with `run` (RUNTIME seconds, 0: none) and the N later SPECS; gives the number
 * of phases, or -1 for a bad spec. */
static __attribute__((unused)) int repeat_phases(struct rphase *ph, double runtime,
						 char **specs, int n)
{
	ph[0] = (struct rphase){ .name = "run", .runtime = runtime };
	for (int i = 0; i < n; i++) {
		char *fld[4];
		if (split_fields(specs[i], fld, 4) != 4)
			return -1;
		ph[i + 1] = (struct rphase){ .name = fld[0], .sleep_until = atof(fld[1]),
					     .wait = fld[2], .runtime = atof(fld[3]) };
	}
	return n + 1;
}

/* Tells init the work is finished (FIN file) and holds the memory until init's GO file
 * (every workload has finished and been snapshotted) or /tmp/stop.all. */
static void finish_handshake(const char *fin, const char *go)
{
	if (!fin)
		return;
	int fd = open(fin, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	/* the memory stays held until init says go (every workload finished) or stops all */
	while (go && access(go, F_OK) != 0 && access("/tmp/stop.all", F_OK) != 0)
		usleep(50000);
}
