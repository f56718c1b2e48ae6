/* pagefault: will-it-scale's page_fault3 as the model has it
 * (crates/reclaimsim/src/workload/pagefault.rs) in the guest. -t tasks, task t with its
 * own file DIR/NAME.t (a hole of -s bytes: init lays it out with truncate, as the test
 * ftruncates its file), looping mmap(MAP_SHARED), a store of one byte to every page in
 * order, munmap, until -T seconds have passed or a stop file appears. Tasks are
 * processes (-M process, will-it-scale's page_fault3_processes) or threads of one
 * process (-M thread). A task stopped mid-pass keeps its mapping, as the model's does,
 * until init says go. An operation is one page written; one in 64 is timed.
 *
 *   pagefault -n NAME -d DIR -t TASKS -s BYTES [-M process|thread] -T SECONDS
 *             [-x STOPFILE]... [-f FIN -g GO]
 */
#include "common.h"

static char *name = "pf", *dir = "/mnt", *mode = "process";
static uint64_t size;
static int tasks = 1;

static void task(int id)
{
	struct wstat *w = &sh->w[id];
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%d", dir, name, id);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	uint64_t pages = size / PAGE, n = 0;
	while (!sh->stop) {
		char *c = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (c == MAP_FAILED)
			die("mmap");
		uint64_t p;
		for (p = 0; p < pages && !sh->stop; p++, n++) {
			int timed = (n & 63) == 0;
			uint64_t t0 = timed ? now_ns() : 0;
			c[p * PAGE] = 0;
			if (timed)
				record(w, now_ns() - t0);
			if ((n & 255) == 255)
				w->ops = n + 1;
		}
		if (p < pages)
			break; /* stopped mid-pass: the mapping stays */
		munmap(c, pages * PAGE);
	}
	w->ops = n;
	w->done = 1;
}

static void *thread_main(void *arg)
{
	task((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	int o;
	while ((o = getopt(argc, argv, "n:d:t:s:M:T:x:f:g:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 'd': dir = optarg; break;
		case 't': tasks = atoi(optarg); break;
		case 's': size = strtoull(optarg, 0, 0); break;
		case 'M': mode = optarg; break;
		case 'T': deadline = atof(optarg); break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	int threads = !strcmp(mode, "thread");
	if (tasks < 1 || tasks > MAXW || size < PAGE || (!threads && strcmp(mode, "process")))
		return 2;
	shared_init();
	pthread_t tid[MAXW];
	pid_t pid[MAXW];
	double start = now();
	for (int t = 0; t < tasks; t++) {
		if (threads)
			pthread_create(&tid[t], NULL, thread_main, (void *)(long)t);
		else if ((pid[t] = fork()) == 0) {
			forked_worker(t);
			task(t);
			while (sh->barrier == 0) /* hold the mapping until main lets go */
				usleep(20000);
			_exit(0);
		}
	}
	supervise(tasks, start);
	report(name, tasks, now() - start);
	finish_handshake(fin, go);
	sh->barrier = 1;
	for (int t = 0; t < tasks; t++) {
		if (threads)
			pthread_join(tid[t], NULL);
		else
			waitpid(pid[t], NULL, 0);
	}
	return sh->failed;
}
