/* fileread: T threads, thread t reading DIR/f<t> with 4 KiB pread() at page-aligned
 * offsets picked uniformly at random (with replacement, like fio --rw=randread
 * --norandommap --random_distribution=random), buffered, for D seconds. Each file gets
 * POSIX_FADV_RANDOM, as fio's default fadvise_hint does for random I/O. Prints reads per
 * second every INTERVAL seconds and a summary line.
 *
 *   fileread DIR THREADS SECONDS [INTERVAL]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "rate.h"

static const char *dir;

static void *worker(void *arg)
{
	long id = (long)arg;
	char path[512], buf[4096] __attribute__((aligned(4096)));
	snprintf(path, sizeof path, "%s/f%ld", dir, id);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	struct stat st;
	fstat(fd, &st);
	uint64_t blocks = st.st_size / 4096;
	uint64_t x = 0xD1B54A32D192ED03ULL * (id + 1) ^ (uint64_t)time(NULL);
	uint64_t n = 0;
	while (!stop) {
		x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
		uint64_t r = x * 2685821657736338717ULL;
		if (pread(fd, buf, 4096, (off_t)(((r >> 11) % blocks) * 4096)) != 4096) {
			perror("pread");
			exit(1);
		}
		counts[id * 16] = ++n;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: fileread DIR THREADS SECONDS [INTERVAL]\n");
		return 2;
	}
	dir = argv[1];
	int threads = atoi(argv[2]);
	double secs = atof(argv[3]);
	double interval = argc > 4 ? atof(argv[4]) : 10;
	if (threads < 1 || threads > 64)
		return 2;
	double el;
	uint64_t tot = run_workers("fileread", "reads", threads, secs, interval, worker, &el);
	printf("fileread: RESULT threads=%d reads=%llu seconds=%.1f rate=%.0f/s\n", threads,
	       (unsigned long long)tot, el, tot / el);
	return 0;
}
