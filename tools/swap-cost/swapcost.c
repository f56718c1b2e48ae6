// The CPU time of anon swap-out and swap-in, one page at a time: MiB of anonymous
// memory filled with random bytes (incompressible: zram stores each page whole and
// reads it back with a copy, as brd does), pushed out with madvise(MADV_PAGEOUT), then
// read back one byte a page in a random order (each read a major fault). Prints the
// CPU time a page of each, and /proc/vmstat's pswpout and pswpin moves.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static double cpu(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

static long vmstat(const char *name) {
    FILE *f = fopen("/proc/vmstat", "r");
    char k[64];
    long v, out = -1;
    while (f && fscanf(f, "%63s %ld", k, &v) == 2)
        if (!strcmp(k, name))
            out = v;
    if (f)
        fclose(f);
    return out;
}

int main(int argc, char **argv) {
    long mb = argc > 1 ? atol(argv[1]) : 256, n = mb * 256;
    uint8_t *p = mmap(0, n * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); return 1; }
    uint64_t s = 88172645463325252ull;
    for (long i = 0; i < n * 512; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        ((uint64_t *)p)[i] = s;
    }
    uint32_t *perm = malloc(n * 4);
    for (long i = 0; i < n; i++) perm[i] = i;
    for (long i = n - 1; i > 0; i--) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        long j = s % (i + 1); uint32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    for (int round = 0; round < 3; round++) {
        long o0 = vmstat("pswpout"), i0 = vmstat("pswpin");
        double c0 = cpu();
        if (madvise(p, n * 4096, MADV_PAGEOUT)) { perror("madvise"); return 1; }
        double c1 = cpu();
        long o1 = vmstat("pswpout");
        volatile uint8_t sum = 0;
        for (long i = 0; i < n; i++) sum += p[(long)perm[i] * 4096];
        double c2 = cpu();
        long i1 = vmstat("pswpin");
        printf("out: %ld pages, %.0f ns a page; in: %ld pages, %.0f ns a page\n", o1 - o0,
               (c1 - c0) / (o1 - o0) * 1e9, i1 - i0, (c2 - c1) / (i1 - i0) * 1e9);
    }
    return 0;
}
