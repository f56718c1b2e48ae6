/* Shared by anon.c and fileread.c: the clock, the per-thread counters, and the loop
 * that runs the workers for a while, printing the rate every interval. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile uint64_t counts[64 * 16]; /* one cache line per thread */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t total(int threads)
{
	uint64_t tot = 0;
	for (int t = 0; t < threads; t++)
		tot += counts[t * 16];
	return tot;
}

/* Runs `threads` workers for `secs` seconds, printing "TAG: t=N s R UNIT/s" every
 * `interval` seconds; returns the total count and sets *elapsed. */
static uint64_t run_workers(const char *tag, const char *unit, int threads, double secs,
			    double interval, void *(*worker)(void *), double *elapsed)
{
	pthread_t tid[64];
	double start = now(), lastt = start;
	uint64_t last = 0;
	for (long t = 0; t < threads; t++)
		pthread_create(&tid[t], NULL, worker, (void *)t);
	while (now() - start < secs) {
		double left = secs - (now() - start);
		usleep((useconds_t)((left < interval ? left : interval) * 1e6));
		uint64_t tot = total(threads);
		double tn = now();
		printf("%s: t=%.0f s %.0f %s/s\n", tag, tn - start, (tot - last) / (tn - lastt), unit);
		fflush(stdout);
		last = tot;
		lastt = tn;
	}
	stop = 1;
	for (int t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	*elapsed = now() - start;
	return total(threads);
}
