/* anon: T threads over one anonymous mapping of SIZE MiB. Populate it first (one
 * store per page, as memcached's populate writes every item), then each thread reads
 * 8 bytes of a page picked uniformly at random (xorshift64*), for D seconds, or with
 * mode "w" stores 8 bytes instead. Prints accesses per second every INTERVAL seconds
 * and a summary line. SPIN (default 0) adds that many iterations of a dependent
 * multiply-add after each access: CPU work between accesses, as memcached's request
 * path puts several microseconds between two items, which makes the anon pages colder
 * relative to reclaim.
 *
 *   anon SIZE_MIB THREADS SECONDS [r|w] [INTERVAL] [READY_FILE] [SPIN]
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include "rate.h"

#define PAGE 4096UL
static char *region;
static uint64_t npages;
static int do_write;
static long spin;
static volatile uint64_t sink;

static void *worker(void *arg)
{
	long id = (long)arg;
	uint64_t x = 0x9E3779B97F4A7C15ULL * (id + 1) ^ (uint64_t)time(NULL);
	uint64_t n = 0, acc = 0;
	while (!stop) {
		for (int i = 0; i < (spin ? 16 : 256); i++) {
			x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
			uint64_t r = x * 2685821657736338717ULL;
			uint64_t page = (r >> 11) % npages;
			uint64_t *p = (uint64_t *)(region + page * PAGE + ((r & 511) << 3));
			if (do_write)
				*p = r;
			else
				acc += *p;
			for (long k = 0; k < spin; k++)
				acc = acc * 6364136223846793005ULL + 1442695040888963407ULL;
		}
		n += spin ? 16 : 256;
		counts[id * 16] = n;
	}
	sink += acc;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: anon SIZE_MIB THREADS SECONDS [r|w] [INTERVAL] [READY_FILE]\n");
		return 2;
	}
	uint64_t mib = strtoull(argv[1], 0, 0);
	int threads = atoi(argv[2]);
	double secs = atof(argv[3]);
	do_write = argc > 4 && argv[4][0] == 'w';
	double interval = argc > 5 ? atof(argv[5]) : 10;
	spin = argc > 7 ? atol(argv[7]) : 0;
	if (threads < 1 || threads > 64)
		return 2;
	npages = mib * 256;
	region = mmap(NULL, npages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	double t0 = now();
	for (uint64_t i = 0; i < npages; i++)
		*(uint64_t *)(region + i * PAGE) = i + 1;
	printf("anon: populated %llu MiB (%llu pages) in %.1f s\n", (unsigned long long)mib,
	       (unsigned long long)npages, now() - t0);
	fflush(stdout);
	if (argc > 6) {
		int fd = open(argv[6], O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
	}
	double el;
	uint64_t tot = run_workers("anon", "accesses", threads, secs, interval, worker, &el);
	printf("anon: RESULT threads=%d size_mib=%llu mode=%s spin=%ld accesses=%llu seconds=%.1f rate=%.0f/s\n",
	       threads, (unsigned long long)mib, do_write ? "w" : "r", spin, (unsigned long long)tot, el, tot / el);
	return 0;
}
