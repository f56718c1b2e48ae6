/* anon: the model's anon workload (crates/reclaimsim/src/workload/anon.rs) in the guest.
 * T workers over anonymous memory: with -S one MAP_PRIVATE|MAP_ANONYMOUS region shared
 * by T threads, else T processes with a region each. Optional populate phase (a store to
 * every page of the worker's slice, in order), then the run phase: sequential over the
 * worker's slice, or pages drawn from a fio random_distribution over the whole region;
 * loads or stores of 8 bytes. A worker's touches in the run phase: passes x (slice, or
 * region pages when random), at most -a ACCESSES; -T stops the workload after SECONDS.
 * One touch in 64 is timed. Each -H adds a later phase (the model's
 * [[workload.anon.phase]]): the workers meet after the phase before, the program sleeps
 * (holding its memory) until SLEEP seconds after its start and until /tmp/fin.WAIT or
 * /tmp/exit.WAIT exists (WAIT empty: none), then the workers touch with the phase's
 * pattern, store flag, passes and accesses (0: none given). WAIT may name a phase of
 * another workload (NAME:PHASE: /tmp/fin.NAME:PHASE). When every worker has finished a
 * phase, the program creates FIN:PHASE (with several phases; phase_done in common.h).
 *
 *   anon -n NAME -s BYTES -t THREADS [-S] [-p seq|random|zipf:T] [-w 0|1] [-P]
 *        [-r PASSES] [-a ACCESSES] [-T SECONDS] [-e SEED] [-x STOPFILE]... [-f FIN -g GO]
 *        [-H PHASE,PATTERN,WRITE,PASSES,ACCESSES,SLEEP,WAIT]...
 */
#include "common.h"

/* One phase: the populate pass, the run, or a later -H phase. */
struct phase {
	const char *name, *pattern, *wait;
	int populate, write;
	uint64_t passes, accesses, stream;
	double sleep_until;
};

static char *name = "anon", *pattern = "seq";
static uint64_t size, passes, accesses, seed = 1, pages;
static int threads = 1, shared_region, do_write = 1, populate;
static struct phase ph[MAXPH];
static int nph, nlater;
static char *later[MAXPH];
static volatile int phase = -1; /* in shared memory when forked: see phase_ptr */
static volatile int *phase_ptr = &phase;
static volatile uint64_t sink;

struct wctx {
	int id;
	char *region;
	uint64_t first, len;
};

static void touch_pages(struct wctx *c, const struct phase *f)
{
	struct wstat *w = &sh->w[c->id];
	int seq = f->populate || !strcmp(f->pattern, "seq");
	/* later phases draw from their own stream */
	uint64_t rng = rng_seed(seed + f->stream * 0x9e3779b97f4a7c15ULL, c->id);
	uint64_t limit, acc = 0, n = 0;
	struct dist d;
	if (!seq)
		dist_init(&d, f->pattern, pages, &rng);
	if (f->populate)
		limit = c->len;
	else {
		uint64_t pass = seq ? c->len : pages;
		limit = f->passes ? f->passes * pass : UINT64_MAX;
		if (f->accesses && f->accesses < limit)
			limit = f->accesses;
	}
	int wr = f->populate || f->write;
	for (; n < limit && !sh->stop; n++) {
		uint64_t page = seq ? c->first + n % c->len : dist_next(&d, &rng);
		uint64_t *ptr = (uint64_t *)(c->region + page * PAGE + ((n * 8) & 4088));
		int timed = (n & 63) == 0;
		uint64_t t0 = timed ? now_ns() : 0;
		if (wr)
			*ptr = n + 1;
		else
			acc += *ptr;
		if (timed)
			record(w, now_ns() - t0);
		if ((n & 255) == 255)
			w->ops = n + 1;
	}
	w->ops = n;
	sink += acc;
}

static void run_phases(struct wctx *c)
{
	for (int p = 0; p < nph; p++) {
		while (*phase_ptr < p)
			usleep(2000);
		touch_pages(c, &ph[p]);
		sh->w[c->id].done = 1;
	}
}

/* The phases: populate (-P), run, then each -H PHASE,PATTERN,WRITE,PASSES,ACCESSES,
 * SLEEP,WAIT in order. */
static int build_phases(void)
{
	if (populate)
		ph[nph++] = (struct phase){ .name = "populate", .pattern = "seq", .populate = 1 };
	ph[nph++] = (struct phase){ .name = "run", .pattern = pattern, .write = do_write,
				    .passes = passes, .accesses = accesses };
	for (int i = 0; i < nlater; i++) {
		struct phase *f = &ph[nph++];
		char *fld[7];
		if (split_fields(later[i], fld, 7) != 7)
			return -1;
		*f = (struct phase){ .name = fld[0], .pattern = fld[1], .write = atoi(fld[2]),
				     .passes = strtoull(fld[3], 0, 0),
				     .accesses = strtoull(fld[4], 0, 0),
				     .sleep_until = atof(fld[5]), .wait = fld[6],
				     .stream = (uint64_t)i + 1 };
		if (!f->passes && !f->accesses)
			f->passes = 1;
	}
	return 0;
}

static void *thread_main(void *arg)
{
	run_phases(arg);
	return NULL;
}

static char *map_region(uint64_t bytes)
{
	char *r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		die("mmap region");
	return r;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	int o;
	while ((o = getopt(argc, argv, "n:s:t:Sp:w:Pr:a:T:e:x:f:g:H:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 's': size = strtoull(optarg, 0, 0); break;
		case 't': threads = atoi(optarg); break;
		case 'S': shared_region = 1; break;
		case 'p': pattern = optarg; break;
		case 'w': do_write = atoi(optarg); break;
		case 'P': populate = 1; break;
		case 'r': passes = strtoull(optarg, 0, 0); break;
		case 'a': accesses = strtoull(optarg, 0, 0); break;
		case 'T': deadline = atof(optarg); break;
		case 'e': seed = strtoull(optarg, 0, 0); break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		case 'H': if (nlater < MAXPH - 2) later[nlater++] = optarg; else return 2; break;
		default: return 2;
		}
	}
	pages = size / PAGE;
	if (threads < 1 || threads > MAXW || pages == 0)
		return 2;
	if (!passes && !accesses && deadline == 0)
		passes = 1;
	if (build_phases() != 0)
		return 2;
	shared_init();
	/* the phase number lives in shared memory so forked workers see it */
	phase_ptr = (volatile int *)&sh->barrier;
	*phase_ptr = -1;
	struct wctx ctx[MAXW];
	pthread_t tid[MAXW];
	pid_t pid[MAXW];
	char *region = shared_region ? map_region(pages * PAGE) : NULL;
	for (int t = 0; t < threads; t++) {
		ctx[t].id = t;
		ctx[t].first = shared_region ? pages * t / threads : 0;
		ctx[t].len = shared_region ? pages * (t + 1) / threads - ctx[t].first : pages;
		if (shared_region) {
			ctx[t].region = region;
			pthread_create(&tid[t], NULL, thread_main, &ctx[t]);
		} else if ((pid[t] = fork()) == 0) {
			ctx[t].region = map_region(pages * PAGE);
			run_phases(&ctx[t]);
			while (*phase_ptr >= 0)
				usleep(20000);
			_exit(0);
		}
	}
	double start = now();
	for (int p = 0; p < nph; p++) {
		if (ph[p].wait || ph[p].sleep_until > 0)
			wait_phase(ph[p].sleep_until, ph[p].wait, start);
		reset_stats(threads);
		double t0 = now();
		*phase_ptr = p;
		supervise(threads, start);
		phase_result(fin, name, ph[p].name, nph, threads, now() - t0, 0);
	}
	finish_handshake(fin, go);
	*phase_ptr = -2;
	for (int t = 0; t < threads; t++) {
		if (shared_region)
			pthread_join(tid[t], NULL);
		else
			waitpid(pid[t], NULL, 0);
	}
	return 0;
}
