/*
 * What a TLB flush IPI costs on this host: the sender's wait and a receiver's loss.
 *
 * A "shooter" on CPU 0 writes a page and drops it with madvise(MADV_DONTNEED) as fast
 * as it can for SECS seconds, while a "spinner" on CPU 1 counts loop iterations. When
 * the spinner is a thread of the shooter's process, every madvise must flush CPU 1's
 * TLB with an IPI (x86: flush_tlb_multi); when it is another process, none is sent.
 * The difference in the shooter's time per call is the sender's cost of one IPI flush;
 * the spinner's lost loop rate divided by the IPIs it received is a receiver's cost.
 * Usage: shootdown SAME SECS   (SAME 1: the spinner is a thread; 0: a process)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char *page;
static double secs;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void *spin(void *arg)
{
	volatile char b[64];
	long n = 0;
	double t0, t;
	(void)arg;
	pin(1);
	t0 = now();
	while ((t = now()) - t0 < secs) {
		for (int i = 0; i < 200; i++)
			b[0]++;
		n++;
	}
	printf("spinner %.4g loops/s\n", n * 200.0 / (t - t0));
	fflush(stdout);
	return NULL;
}

static void shoot(void)
{
	long n = 0;
	double t0;
	pin(0);
	t0 = now();
	while (now() - t0 < secs) {
		page[0] = 1;
		madvise(page, 4096, MADV_DONTNEED);
		n++;
	}
	printf("shooter %.1f ns/call %.4g calls/s\n", secs / n * 1e9, n / secs);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int same = argc > 1 ? atoi(argv[1]) : 1;
	secs = argc > 2 ? atof(argv[2]) : 3.0;
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return 1;
	memset(page, 1, 4096);
	if (same) {
		pthread_t t;
		pthread_create(&t, NULL, spin, NULL);
		shoot();
		pthread_join(t, NULL);
	} else {
		pid_t p = fork();
		if (p == 0) {
			spin(NULL);
			_exit(0);
		}
		shoot();
		waitpid(p, NULL, 0);
	}
	return 0;
}
