"""The cost of one (CPU, memcg) fold of a memcg stats flush on this host's kernel
(memcg_flush_memcg), timed from user space. Needs root, cgroup v1's memory controller
at /sys/fs/cgroup/memory and CPUs 0 and 1. Usage: measure.py N ROUNDS; run it for
several N and take the slope of the median difference over the pairs, 2 x (N + 1).

N memcgs under /sys/fs/cgroup/memory/rsflush, each given counter updates on both CPUs (a task moves
itself into the memcg and faults and frees 16 anon pages), then memory.stat of the
parent is read twice: the first read flushes (2 CPUs x (N + 1) memcgs on the updated
trees), the second finds nothing to flush. The difference, against N, gives the cost of
one (CPU, memcg) fold. The kernel's periodic flush (every 2 s) may come between the
touches and the read in some rounds; the median leaves them out."""
import mmap, os, sys, time, statistics, multiprocessing as mp
BASE = "/sys/fs/cgroup/memory/rsflush"

def touch_all(cpu, n, barrier, done):
    os.sched_setaffinity(0, {cpu})
    pid = str(os.getpid())
    while True:
        barrier.wait()
        if done.value:
            return
        for k in range(n):
            with open(f"{BASE}/cg{k}/tasks", "w") as f:
                f.write(pid)
            m = mmap.mmap(-1, 16 * 4096)
            for p in range(16):
                m[p * 4096] = 1
            m.close()
        with open(f"{BASE}/tasks", "w") as f:
            f.write(pid)
        barrier.wait()

def read_stat():
    t = time.perf_counter_ns()
    with open(f"{BASE}/memory.stat") as f:
        f.read()
    return time.perf_counter_ns() - t

def main(n, rounds):
    os.makedirs(BASE, exist_ok=True)
    for k in range(n):
        os.makedirs(f"{BASE}/cg{k}", exist_ok=True)
    os.sched_setaffinity(0, {0})
    barrier = mp.Barrier(3)
    done = mp.Value("i", 0)
    ps = [mp.Process(target=touch_all, args=(c, n, barrier, done)) for c in (0, 1)]
    for p in ps:
        p.start()
    first, second = [], []
    for r in range(rounds):
        barrier.wait()  # start touching
        barrier.wait()  # both done
        first.append(read_stat())
        second.append(read_stat())
    done.value = 1
    barrier.wait()
    for p in ps:
        p.join()
    for k in range(n):
        os.rmdir(f"{BASE}/cg{k}")
    d = [a - b for a, b in zip(first, second)]
    print(n, "first", statistics.median(first), "second", statistics.median(second),
          "diff median", statistics.median(d), "diff q25", sorted(d)[len(d)//4], "q75", sorted(d)[3*len(d)//4])

if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
