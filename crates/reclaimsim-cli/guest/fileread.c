/* fileread: the model's fio buffered reads (crates/reclaimsim/src/workload/fio.rs) in
 * the guest, like fio --ioengine=psync --rw=read|randread. -j clones (threads), clone j
 * reading DIR/NAME.j (its own file, laid out by init) with pread() of BS bytes at
 * block-aligned offsets: in order (read), or drawn from a random_distribution
 * (randread), uniform without replacement within each pass over the file unless -N
 * (fio's random map; --norandommap), or with replacement for zipf. Each file gets
 * POSIX_FADV_RANDOM for randread, as fio's fadvise_hint does. A clone stops after -i
 * I/Os (fio's io_size x loops, or number_ios), and after -T seconds (with -B, it keeps
 * going until then); I/Os in the first -Q seconds (ramp_time) are done but not counted.
 *
 *   fileread -n NAME -d DIR -j JOBS -b BS [-R read|randread] [-p random|zipf:T] [-N]
 *            [-i IOS] [-B] [-Q RAMP_S] [-T SECONDS] [-k THINK_US] [-e SEED]
 *            [-x STOPFILE]... [-f FIN -g GO]
 */
#include "common.h"

static char *name = "fio", *dir = "/mnt", *rw = "read", *pattern = "random";
static uint64_t bs = 4096, ios, seed = 1, think_us;
static int jobs = 1, norandommap, time_based;
static double ramp, start;

static void shuffle(uint32_t *perm, uint64_t n, uint64_t *rng)
{
	for (uint64_t i = 0; i < n; i++)
		perm[i] = (uint32_t)i;
	for (uint64_t i = n - 1; i > 0; i--) {
		uint64_t j = rng_below(rng, i + 1);
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

static void *worker(void *arg)
{
	long id = (long)arg;
	struct wstat *w = &sh->w[id];
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%ld", dir, name, id);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	int random = !strcmp(rw, "randread");
	if (random)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	struct stat st;
	fstat(fd, &st);
	uint64_t blocks = st.st_size / bs, rng = rng_seed(seed, id), n = 0, measured = 0;
	char *buf = aligned_alloc(4096, bs);
	struct dist d;
	int map = random && !norandommap && strcmp(pattern, "random") == 0;
	uint32_t *perm = map ? malloc(blocks * sizeof *perm) : NULL;
	if (random)
		dist_init(&d, pattern, blocks, &rng);
	for (; (time_based || !ios || n < ios) && !sh->stop; n++) {
		uint64_t b;
		if (!random)
			b = n % blocks;
		else if (map) {
			if (n % blocks == 0)
				shuffle(perm, blocks, &rng);
			b = perm[n % blocks];
		} else
			b = dist_next(&d, &rng);
		uint64_t t0 = now_ns();
		if (pread(fd, buf, bs, (off_t)(b * bs)) != (ssize_t)bs)
			die("pread");
		if (now() - start >= ramp) {
			record(w, now_ns() - t0);
			w->ops = ++measured;
		}
		if (think_us)
			usleep(think_us);
	}
	close(fd);
	w->done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	int o;
	while ((o = getopt(argc, argv, "n:d:j:b:R:p:Ni:BQ:T:k:e:x:f:g:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 'd': dir = optarg; break;
		case 'j': jobs = atoi(optarg); break;
		case 'b': bs = strtoull(optarg, 0, 0); break;
		case 'R': rw = optarg; break;
		case 'p': pattern = optarg; break;
		case 'N': norandommap = 1; break;
		case 'i': ios = strtoull(optarg, 0, 0); break;
		case 'B': time_based = 1; break;
		case 'Q': ramp = atof(optarg); break;
		case 'T': deadline = atof(optarg); break;
		case 'k': think_us = strtoull(optarg, 0, 0); break;
		case 'e': seed = strtoull(optarg, 0, 0); break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	if (jobs < 1 || jobs > MAXW || bs == 0)
		return 2;
	if (deadline > 0)
		deadline += ramp;
	shared_init();
	pthread_t tid[MAXW];
	start = now();
	for (long t = 0; t < jobs; t++)
		pthread_create(&tid[t], NULL, worker, (void *)t);
	supervise(jobs, start);
	for (int t = 0; t < jobs; t++)
		pthread_join(tid[t], NULL);
	double el = now() - start - ramp;
	report(name, jobs, el > 0 ? el : now() - start);
	finish_handshake(fin, go);
	return 0;
}
