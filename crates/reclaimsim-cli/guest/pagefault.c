/* pagefault: will-it-scale's page_fault3 as the model has it
 * (crates/reclaimsim/src/workload/pagefault.rs) in the guest. -t tasks, task t with its
 * own file DIR/NAME.t (a hole of -s bytes: init lays it out with truncate, as the test
 * ftruncates its file), looping mmap(MAP_SHARED), a store of one byte to every page in
 * order, munmap, until -T seconds have passed or a stop file appears. Tasks are
 * processes (-M process, will-it-scale's page_fault3_processes) or threads of one
 * process (-M thread). A task stopped mid-pass keeps its mapping, as the model's does,
 * until init says go. An operation is one page written; one in 64 is timed. Each -H
 * adds a later phase (the model's [[workload.page_fault3.phase]]): the tasks meet after
 * the phase before, holding their mappings, the program sleeps until SLEEP seconds after
 * its start and until WAIT has finished (wait_phase in common.h), then the tasks loop on
 * from where they stopped for RUNTIME seconds (0: -T's). With phases, a result line per
 * phase (NAME:PHASE) and FIN:PHASE when every task has finished it.
 *
 *   pagefault -n NAME -d DIR -t TASKS -s BYTES [-M process|thread] -T SECONDS
 *             [-x STOPFILE]... [-f FIN -g GO] [-H PHASE,SLEEP,WAIT,RUNTIME]...
 */
#include "common.h"

static char *name = "pf", *dir = "/mnt", *mode = "process";
static uint64_t size;
static int tasks = 1;

/* The phase the tasks may run (sh->barrier: -1 none yet, -2 all done, let go). */
static volatile int *phase_ptr;
static int nph;

/* Task `id`'s loop, phase after phase: a pass stopped at a phase's end goes on, with
 * its mapping, in the next. */
static void task(int id)
{
	struct wstat *w = &sh->w[id];
	char path[512];
	snprintf(path, sizeof path, "%s/%s.%d", dir, name, id);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		die(path);
	uint64_t pages = size / PAGE, p = 0;
	char *c = NULL;
	for (int f = 0; f < nph; f++) {
		while (*phase_ptr < f)
			usleep(2000);
		uint64_t n = 0;
		while (!sh->stop) {
			if (!c && (c = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
					    fd, 0)) == MAP_FAILED)
				die("mmap");
			for (; p < pages && !sh->stop; p++, n++) {
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
			c = NULL;
			p = 0;
		}
		w->ops = n;
		w->done = 1;
	}
}

static void *thread_main(void *arg)
{
	task((int)(long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL;
	char *later[MAXPH];
	int o, nlater = 0;
	while ((o = getopt(argc, argv, "n:d:t:s:M:T:x:f:g:H:")) != -1) {
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
		case 'H': if (nlater < MAXPH - 1) later[nlater++] = optarg; else return 2; break;
		default: return 2;
		}
	}
	int threads = !strcmp(mode, "thread");
	struct rphase ph[MAXPH];
	nph = repeat_phases(ph, deadline, later, nlater);
	if (tasks < 1 || tasks > MAXW || size < PAGE || (!threads && strcmp(mode, "process")) ||
	    nph < 1)
		return 2;
	shared_init();
	phase_ptr = (volatile int *)&sh->barrier;
	*phase_ptr = -1;
	pthread_t tid[MAXW];
	pid_t pid[MAXW];
	for (int t = 0; t < tasks; t++) {
		if (threads)
			pthread_create(&tid[t], NULL, thread_main, (void *)(long)t);
		else if ((pid[t] = fork()) == 0) {
			forked_worker(t);
			task(t);
			while (*phase_ptr != -2) /* hold the mapping until main lets go */
				usleep(20000);
			_exit(0);
		}
	}
	double start = now();
	for (int p = 0; p < nph && !sh->failed; p++) {
		deadline = 0;
		if (p > 0)
			wait_phase(ph[p].sleep_until, ph[p].wait, start);
		reset_stats(tasks);
		deadline = ph[p].runtime > 0 ? ph[p].runtime : ph[0].runtime;
		double t0 = now();
		*phase_ptr = p;
		supervise(tasks, t0);
		phase_result(fin, name, ph[p].name, nph, tasks, now() - t0, 0);
	}
	finish_handshake(fin, go);
	*phase_ptr = -2;
	for (int t = 0; t < tasks; t++) {
		if (threads)
			pthread_join(tid[t], NULL);
		else
			waitpid(pid[t], NULL, 0);
	}
	return sh->failed;
}
