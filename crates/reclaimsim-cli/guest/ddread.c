/* ddread: the model's dd readers (crates/reclaimsim/src/workload/dd.rs) in the guest, as
 * vm-scalability's case-lru-file-readtwice starts `dd bs=4k if=FILE of=/dev/null`: -F
 * files DIR/NAME.f (laid out by init: holes made with truncate when sparse, else
 * written and dropped from the page cache), -r readers of each, every reader a thread
 * reading its file from start to end once with read(2) of -b bytes, until the end or -T
 * seconds. Reader j reads file j / readers. An operation is one block read; each is
 * timed. The result line also has the bytes read. Each -H adds a later phase (the
 * model's [[workload.dd.phase]]): the readers meet after the phase before, the program
 * sleeps (the files stay cached as reclaim leaves them) until SLEEP seconds after its
 * start and until WAIT has finished (wait_phase in common.h), then every reader reads
 * its file again from the start, to the end or RUNTIME seconds (0: none). With phases,
 * a result line per phase (NAME:PHASE) and FIN:PHASE when every reader has finished it.
 *
 *   ddread -n NAME -d DIR -F FILES -r READERS [-b BS] [-T SECONDS]
 *          [-x STOPFILE]... [-f FIN -g GO] [-H PHASE,SLEEP,WAIT,RUNTIME]...
 */
#include "common.h"

static char *name = "dd", *dir = "/mnt";
static uint64_t bs = 4096;
static int files = 1, readers = 1;
static char *later[MAXPH];
static int nlater;

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

/* Runs one phase: every reader reads its file from the start; gives its seconds. */
static double read_phase(int n, const struct rphase *f, double start)
{
	pthread_t tid[MAXW];
	if (f->sleep_until > 0 || (f->wait && *f->wait))
		wait_phase(f->sleep_until, f->wait, start);
	reset_stats(n);
	double t0 = now();
	deadline = f->runtime;
	for (long t = 0; t < n; t++)
		pthread_create(&tid[t], NULL, reader, (void *)t);
	supervise(n, t0);
	for (int t = 0; t < n; t++)
		pthread_join(tid[t], NULL);
	deadline = 0;
	return now() - t0;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	double runtime = 0;
	int o;
	while ((o = getopt(argc, argv, "n:d:F:r:b:T:x:f:g:H:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 'd': dir = optarg; break;
		case 'F': files = atoi(optarg); break;
		case 'r': readers = atoi(optarg); break;
		case 'b': bs = strtoull(optarg, 0, 0); break;
		case 'T': runtime = atof(optarg); break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		case 'H': if (nlater < MAXPH - 1) later[nlater++] = optarg; else return 2; break;
		default: return 2;
		}
	}
	int n = files * readers;
	struct rphase ph[MAXPH];
	int nph = repeat_phases(ph, runtime, later, nlater);
	if (files < 1 || readers < 1 || n > MAXW || bs == 0 || nph < 1)
		return 2;
	shared_init();
	double start = now();
	for (int p = 0; p < nph; p++) {
		double secs = read_phase(n, &ph[p], start);
		uint64_t ops = 0;
		for (int t = 0; t < n; t++)
			ops += sh->w[t].ops;
		phase_result(fin, name, ph[p].name, nph, n, secs, ops * bs);
	}
	finish_handshake(fin, go);
	return 0;
}
