/* anon: the model's anon workload (crates/reclaimsim/src/workload/anon.rs) in the guest.
 * T workers over anonymous memory: with -S one MAP_PRIVATE|MAP_ANONYMOUS region shared
 * by T threads, else T processes with a region each. Optional populate phase (a store to
 * every page of the worker's slice, in order), then the run phase: sequential over the
 * worker's slice, or pages drawn from a fio random_distribution over the whole region;
 * loads or stores of 8 bytes. A worker's touches in the run phase: passes x (slice, or
 * region pages when random), at most -a ACCESSES; -T stops the workload after SECONDS.
 * One touch in 64 is timed.
 *
 *   anon -n NAME -s BYTES -t THREADS [-S] [-p seq|random|zipf:T] [-w 0|1] [-P]
 *        [-r PASSES] [-a ACCESSES] [-T SECONDS] [-e SEED] [-x STOPFILE]... [-f FIN -g GO]
 */
#include "common.h"

static char *name = "anon", *pattern = "seq";
static uint64_t size, passes, accesses, seed = 1, pages;
static int threads = 1, shared_region, do_write = 1, populate;
static volatile int phase = -1; /* in shared memory when forked: see phase_ptr */
static volatile int *phase_ptr = &phase;
static volatile uint64_t sink;

struct wctx {
	int id;
	char *region;
	uint64_t first, len;
};

static void touch_pages(struct wctx *c, int is_populate)
{
	struct wstat *w = &sh->w[c->id];
	int seq = is_populate || !strcmp(pattern, "seq");
	uint64_t rng = rng_seed(seed, c->id), limit, acc = 0, n = 0;
	struct dist d;
	if (!seq)
		dist_init(&d, pattern, pages, &rng);
	if (is_populate)
		limit = c->len;
	else {
		uint64_t pass = seq ? c->len : pages;
		limit = passes ? passes * pass : UINT64_MAX;
		if (accesses && accesses < limit)
			limit = accesses;
	}
	int wr = is_populate || do_write;
	for (; n < limit && !sh->stop; n++) {
		uint64_t page = seq ? c->first + n % c->len : dist_next(&d, &rng);
		uint64_t *p = (uint64_t *)(c->region + page * PAGE + ((n * 8) & 4088));
		int timed = (n & 63) == 0;
		uint64_t t0 = timed ? now_ns() : 0;
		if (wr)
			*p = n + 1;
		else
			acc += *p;
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
	int nph = populate ? 2 : 1;
	for (int p = 0; p < nph; p++) {
		while (*phase_ptr < p)
			usleep(2000);
		touch_pages(c, populate && p == 0);
		sh->w[c->id].done = 1;
	}
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
	while ((o = getopt(argc, argv, "n:s:t:Sp:w:Pr:a:T:e:x:f:g:")) != -1) {
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
		default: return 2;
		}
	}
	pages = size / PAGE;
	if (threads < 1 || threads > MAXW || pages == 0)
		return 2;
	if (!passes && !accesses && deadline == 0)
		passes = 1;
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
	int nph = populate ? 2 : 1;
	for (int p = 0; p < nph; p++) {
		reset_stats(threads);
		double t0 = now();
		*phase_ptr = p;
		supervise(threads, start);
		char label[256];
		if (nph > 1)
			snprintf(label, sizeof label, "%s:%s", name, p == 0 ? "populate" : "run");
		else
			snprintf(label, sizeof label, "%s", name);
		report(label, threads, now() - t0);
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
