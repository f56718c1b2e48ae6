/* trace: the model's trace replay (crates/reclaimsim/src/workload/trace/) in the guest.
 * The host runs the model's own replay of the trace (its first pass and its page
 * numbering) and writes each thread's touches to RDIR/NAME.T; here each thread is a
 * process, as in the model (a tenant's process), moved into its memcg (-c, one per
 * thread, in order; "" stays in the workload's), with an anonymous region of the pages
 * the replay file's header gives, replaying its touches in order: a load or store of 8
 * bytes to a page of the region, or a pread/pwrite of one 4 KiB page of the shared file
 * DIR/NAME+K.0 (laid out by init). A record (64 bits, little-endian):
 *   bits 63-62: 0 anon, 1 file read, 2 file write, 3 sleep until (bits 61-0: ns after
 *   the start, for timing = "trace"); bit 61: the last touch of a request; bit 60: a
 *   store (anon); bits 59-40: the file; bits 39-0: the page.
 * An operation is one request; each is timed. Stops at -T seconds or a stop file.
 *
 *   trace -n NAME -d DIR -R RDIR -t THREADS -F FILES [-c MEMCG]... [-T SECONDS]
 *         [-x STOPFILE]... [-f FIN -g GO]
 */
#include "common.h"

#define MAXF 64

static char *name = "trace", *dir = "/mnt", *rdir = "/trace";
static char *memcgs[MAXW];
static int threads = 1, nfiles, nmemcg;
static double start;
static volatile uint64_t sink;

static void join_memcg(const char *memcg)
{
	if (!memcg || !*memcg)
		return;
	char path[512];
	snprintf(path, sizeof path, "/sys/fs/cgroup%s/cgroup.procs", memcg);
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) != 0)
		die(path);
}

static const uint64_t *load(int id, uint64_t *n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%d", rdir, name, id);
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 8)
		die(path);
	const uint64_t *r = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (r == MAP_FAILED)
		die("mmap replay");
	*n = st.st_size / 8;
	return r;
}

static void replay(int id)
{
	struct wstat *w = &sh->w[id];
	uint64_t n, ops = 0, acc = 0;
	const uint64_t *rec = load(id, &n);
	uint64_t pages = rec[0];
	char *region = NULL;
	if (pages) {
		region = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (region == MAP_FAILED)
			die("mmap region");
	}
	int fds[MAXF];
	char path[512];
	for (int f = 0; f < nfiles; f++) {
		snprintf(path, sizeof path, "%s/%s+%d.0", dir, name, f);
		if ((fds[f] = open(path, O_RDWR)) < 0)
			die(path);
	}
	char *buf = aligned_alloc(4096, 4096);
	memset(buf, 1, 4096);
	uint64_t t0 = 0;
	for (uint64_t i = 1; i < n && !sh->stop; i++) {
		uint64_t r = rec[i], type = r >> 62, page = r & ((1ULL << 40) - 1);
		int file = (int)((r >> 40) & 0xFFFFF);
		if (type == 3) {
			double due = start + (r & ((1ULL << 62) - 1)) / 1e9;
			while (now() < due && !sh->stop)
				usleep(due - now() > 0.01 ? 10000 : (useconds_t)((due - now()) * 1e6) + 1);
			continue;
		}
		if (!t0)
			t0 = now_ns();
		if (type == 0 && page < pages) {
			uint64_t *p = (uint64_t *)(region + page * PAGE);
			if ((r >> 60) & 1)
				*p = i;
			else
				acc += *p;
		} else if (type == 1 && file < nfiles) {
			if (pread(fds[file], buf, 4096, (off_t)(page * 4096)) < 0)
				die("pread");
		} else if (type == 2 && file < nfiles) {
			if (pwrite(fds[file], buf, 4096, (off_t)(page * 4096)) != 4096)
				die("pwrite");
		} else {
			fprintf(stderr, "trace: bad record %llu of %s.%d\n", (unsigned long long)i,
				name, id);
			exit(1);
		}
		if ((r >> 61) & 1) {
			record(w, now_ns() - t0);
			t0 = 0;
			w->ops = ++ops;
		}
	}
	sink += acc;
	w->done = 1;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	int o;
	while ((o = getopt(argc, argv, "n:d:R:t:F:c:T:x:f:g:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 'd': dir = optarg; break;
		case 'R': rdir = optarg; break;
		case 't': threads = atoi(optarg); break;
		case 'F': nfiles = atoi(optarg); break;
		case 'c': if (nmemcg < MAXW) memcgs[nmemcg++] = optarg; break;
		case 'T': deadline = atof(optarg); break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	if (threads < 1 || threads > MAXW || nfiles < 0 || nfiles > MAXF)
		return 2;
	shared_init();
	pid_t pid[MAXW];
	start = now();
	for (int t = 0; t < threads; t++) {
		if ((pid[t] = fork()) == 0) {
			forked_worker(t);
			join_memcg(t < nmemcg ? memcgs[t] : NULL);
			replay(t);
			while (sh->barrier == 0) /* hold the memory until main lets go */
				usleep(20000);
			_exit(0);
		}
	}
	supervise(threads, start);
	report(name, threads, now() - start);
	finish_handshake(fin, go);
	sh->barrier = 1;
	for (int t = 0; t < threads; t++)
		waitpid(pid[t], NULL, 0);
	return sh->failed;
}
