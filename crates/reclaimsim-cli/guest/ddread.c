/* ddread: the model's dd readers (crates/reclaimsim/src/workload/dd.rs) in the guest, as
 * vm-scalability's case-lru-file-readtwice starts `dd bs=4k if=FILE of=/dev/null`: -F
 * files DIR/NAME.f (laid out by init: holes made with truncate when sparse, else
 * written and dropped from the page cache), -r readers of each, every reader a thread
 * reading its file from start to end once with read(2) of -b bytes, until the end or -T
 * seconds. Reader j reads file j / readers. An operation is one block read; each is
 * timed. The result line also has the bytes read.
 *
 *   ddread -n NAME -d DIR -F FILES -r READERS [-b BS] [-T SECONDS]
 *          [-x STOPFILE]... [-f FIN -g GO]
 */
#include "common.h"

static char *name = "dd", *dir = "/mnt";
static uint64_t bs = 4096;
static int files = 1, readers = 1;

static void *reader(void *arg)
{
	long id = (long)arg;
	struct wstat *w = &sh->w[id];
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%ld", dir, name, id / readers);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	char *buf = aligned_alloc(4096, bs);
	uint64_t n = 0;
	while (!sh->stop) {
		uint64_t t0 = now_ns();
		ssize_t got = read(fd, buf, bs);
		if (got < 0)
			die("read");
		if (got == 0)
			break;
		record(w, now_ns() - t0);
		w->ops = ++n;
	}
	close(fd);
	w->done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	int o;
	while ((o = getopt(argc, argv, "n:d:F:r:b:T:x:f:g:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 'd': dir = optarg; break;
		case 'F': files = atoi(optarg); break;
		case 'r': readers = atoi(optarg); break;
		case 'b': bs = strtoull(optarg, 0, 0); break;
		case 'T': deadline = atof(optarg); break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	int n = files * readers;
	if (files < 1 || readers < 1 || n > MAXW || bs == 0)
		return 2;
	shared_init();
	pthread_t tid[MAXW];
	double start = now();
	for (long t = 0; t < n; t++)
		pthread_create(&tid[t], NULL, reader, (void *)t);
	supervise(n, start);
	for (int t = 0; t < n; t++)
		pthread_join(tid[t], NULL);
	uint64_t ops = 0;
	for (int t = 0; t < n; t++)
		ops += sh->w[t].ops;
	report_bytes(name, n, now() - start, ops * bs);
	finish_handshake(fin, go);
	return 0;
}
