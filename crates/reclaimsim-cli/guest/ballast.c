/* ballast: locks BYTES of anonymous memory, so that the guest's free memory when the
 * workloads start is the scenario's machine memory (reclaimsim kernel; init runs it in
 * the root cgroup after setup). Locked pages are unevictable: reclaim neither scans nor
 * swaps them, so they take no part in the run. With NODE (not -1), the pages come from
 * that NUMA node only (mbind MPOL_BIND). Creates READY once every page is locked, then
 * sleeps until init's power-off.
 *
 *   ballast BYTES READY [NODE]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MPOL_BIND 2

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: ballast BYTES READY [NODE]\n");
		return 2;
	}
	size_t bytes = strtoull(argv[1], NULL, 10);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("ballast: mmap");
		return 1;
	}
	long node = argc == 4 ? strtol(argv[3], NULL, 10) : -1;
	if (node >= 0) {
		unsigned long mask = 1UL << node;
		if (syscall(SYS_mbind, p, bytes, MPOL_BIND, &mask, 64, 0) != 0) {
			perror("ballast: mbind");
			return 1;
		}
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
