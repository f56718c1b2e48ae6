/* ballast: locks BYTES of anonymous memory, so that the guest's free memory when the
 * workloads start is the scenario's machine memory (reclaimsim kernel; init runs it in
 * the root cgroup after setup). Locked pages are unevictable: reclaim neither scans nor
 * swaps them, so they take no part in the run. Creates READY once every page is locked,
 * then sleeps until init's power-off.
 *
 *   ballast BYTES READY
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ballast BYTES READY\n");
		return 2;
	}
	size_t bytes = strtoull(argv[1], NULL, 10);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("ballast: mmap");
		return 1;
	}
	if (mlock(p, bytes) != 0) {
		perror("ballast: mlock");
		return 1;
	}
	int fd = open(argv[2], O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
	for (;;)
		pause();
}
