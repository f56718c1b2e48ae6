/* memtier: the model's memcached workload (crates/reclaimsim/src/workload/memtier.rs) in
 * the guest: the host's memcached (copied into the initramfs with the libraries ldd
 * lists) started with -t THREADS on 127.0.0.1 in the workload's memcg, then (from the
 * root cgroup: the model charges the server only) memtier_benchmark-like runs against
 * it in order, each a -H spec; between runs every client has finished (the model's
 * barrier) and what the spec waits for has (WAIT, the model's `wait-for`), and a run
 * starts DELAY seconds after that (the benchmark script's sleep: the model's `delay`;
 * its SECONDS and its time count from then). A spec runs COUNT times in a row
 * (memtier's --run-count, the model's `run-count`: each run with new connections
 * drawing the same keys, after its DELAY), reported as one: its requests, from the
 * first run's start to the last run's end. A run: T threads, each with C connections,
 * as memtier_benchmark drives them (shard_connection.cpp, 2.x): every connection keeps
 * up to PIPELINE requests in flight, sent back to back (fill_pipeline), and the thread
 * waits on all its connections at once (poll, where memtier uses libevent); when
 * replies arrive it reads them in order (process_response) and fills that connection's
 * pipeline again. A connection sends
 * REQUESTS requests (0: until the run's test time), SET or GET by its place in the
 * SET:GET cycle, keys PREFIX<n> drawn S (each connection in order over [MIN, MAX],
 * wrapping), P (in order over its own subrange, as memtier's parallel pattern), R
 * (uniform), G (normal around MEDIAN with STDDEV, redrawn until in [MIN, MAX + 1], then
 * truncated) or Z (zipf with exponent ZIPFEXP over [max(MIN, 1), MAX] by rejection-
 * inversion), as the model draws them (crates/reclaimsim/src/workload/memtier.rs: the
 * same methods, from the guest's own generator: not the same keys), the random ones from
 * the run's STREAM, one stream per connection when DISTINCT, else one for all, as
 * memtier's seeds do; SETs store DATA bytes. The memcached text protocol (the model's
 * memtier uses the binary one; the item's bytes are the same, flags 0). An operation is a request, timed as memtier times it: from
 * the clock read when its pipeline was filled to the clock read when the read that
 * completed its reply began. Runs that are not measured are not reported. When every
 * connection of a labelled run has finished, the program creates FIN:LABEL (phase_done
 * in common.h) for those waiting on the phase.
 *
 *   memtier -n NAME -m MEMCACHED -s SERVER_THREADS -M MEM_MB [-e SEED]
 *           -H LABEL,SETPAT,GETPAT,SETS,GETS,DATA,MIN,MAX,PREFIX,REQUESTS,SECONDS,
 *              CLIENTS,THREADS,MEASURE,STREAM,DISTINCT,PIPELINE,STDDEV,MEDIAN,ZIPFEXP,
 *              DELAY,COUNT,WAIT ...
 *           [-x STOPFILE]...
 *           [-f FIN -g GO]
 */
#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#define MAXRUN 16
#define PORT 11211
#define MAXCONN 256
/* The most requests a connection keeps in flight: memtier writes them without waiting
 * (non-blocking); here a blocking send, which could wait forever on memcached waiting
 * to send its replies if both directions' socket buffers filled (the plan keeps a
 * connection's pipeline of requests and replies within 64 KiB each). */
#define MAXPIPE 1024

struct run {
	char *label, *prefix;
	char setpat, getpat;
	uint64_t sets, gets, data, min, max, requests, clients, threads, stream, pipeline;
	double seconds, stddev, median, zexp, delay;
	uint64_t count;
	char *wait;
	int measure, distinct;
};

/* The model's KeyZipf: rejection-inversion (Hoermann & Derflinger 1996) over [min, max],
 * P(k) ~ k^-q, H(x) = (x^(1-q) - 1) / (1-q) (ln x for q = 1) the integral of x^-q. */
struct zipf {
	double min, max, q, hmin, hmax, s;
};

/* A request in flight: when its pipeline was filled, and whether it is a SET. */
struct pending {
	uint64_t sent_ns;
	int set;
};

struct conn {
	int fd;
	uint64_t lo, hi, next_set, next_get, left, cycle, rng;
	/* the second normal deviate of the last polar-method draw */
	double spare;
	int has_spare;
	/* the requests in flight, oldest first (a ring of PIPELINE) */
	struct pending *q;
	uint64_t qhead, qlen;
	/* replies read and not yet parsed */
	char *in;
	size_t inlen;
};

static struct run runs[MAXRUN];
static int nruns;
static const struct run *cur;
static char *value;
static size_t incap, outcap;

static int dial(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

static void send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			die("send");
		b += w;
		n -= (size_t)w;
	}
}

static struct zipf zipf;

/* A draw in [0, 1) with 53 bits. */
static double unit(uint64_t *x)
{
	return (double)(rng_next(x) >> 11) * 0x1.0p-53;
}

static double zipf_h(const struct zipf *z, double x)
{
	return pow(x, -z->q);
}

static double zipf_big_h(const struct zipf *z, double x)
{
	return z->q == 1.0 ? log(x) : (pow(x, 1.0 - z->q) - 1.0) / (1.0 - z->q);
}

static double zipf_big_h_inv(const struct zipf *z, double u)
{
	return z->q == 1.0 ? exp(u) : pow(1.0 + (1.0 - z->q) * u, 1.0 / (1.0 - z->q));
}

/* KeyZipf::new: exponents within 1e-4 of 1 are 1, below 1e-4 uniform, as memtier's. */
static void zipf_init(struct zipf *z, uint64_t min, uint64_t max, double q)
{
	z->min = min > 1 ? (double)min : 1.0;
	z->max = (double)max > z->min ? (double)max : z->min;
	z->q = fabs(q - 1.0) < 1e-4 ? 1.0 : q < 1e-4 ? 0.0 : q;
	z->hmin = zipf_big_h(z, z->min + 0.5) - zipf_h(z, z->min);
	z->hmax = zipf_big_h(z, z->max + 0.5);
	z->s = z->min + 1.0 -
	       zipf_big_h_inv(z, zipf_big_h(z, z->min + 1.5) - zipf_h(z, z->min + 1.0));
}

static uint64_t zipf_key(const struct zipf *z, uint64_t *rng)
{
	if (z->q == 0.0)
		return (uint64_t)z->min + rng_below(rng, (uint64_t)(z->max - z->min) + 1);
	for (;;) {
		double u = z->hmin + unit(rng) * (z->hmax - z->hmin);
		double x = zipf_big_h_inv(z, u);
		double k = floor(x + 0.5);
		k = k < z->min ? z->min : k > z->max ? z->max : k;
		if (k - x <= z->s || u >= zipf_big_h(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k;
	}
}

/* A normal deviate by Marsaglia's polar method (which yields two). */
static double normal(struct conn *c)
{
	if (c->has_spare) {
		c->has_spare = 0;
		return c->spare;
	}
	for (;;) {
		double u = unit(&c->rng) * 2.0 - 1.0, v = unit(&c->rng) * 2.0 - 1.0;
		double s = u * u + v * v;
		if (s > 0.0 && s < 1.0) {
			double f = sqrt(-2.0 * log(s) / s);
			c->spare = v * f;
			c->has_spare = 1;
			return u * f;
		}
	}
}

/* memtier's Gaussian key: redrawn until MIN <= x <= MAX + 1, then truncated. */
static uint64_t gaussian_key(struct conn *c)
{
	if (cur->min == cur->max)
		return cur->min;
	for (;;) {
		double x = normal(c) * cur->stddev + cur->median;
		if (x >= (double)cur->min && x <= (double)cur->max + 1.0)
			return (uint64_t)x < cur->max ? (uint64_t)x : cur->max;
	}
}

static uint64_t key(struct conn *c, char pat, int set)
{
	if (pat == 'R')
		return (rng_next(&c->rng) >> 1) % (cur->max - cur->min + 1) + cur->min;
	if (pat == 'G')
		return gaussian_key(c);
	if (pat == 'Z')
		return zipf_key(&zipf, &c->rng);
	uint64_t *next = set ? &c->next_set : &c->next_get, k = *next;
	*next = k >= c->hi ? c->lo : k + 1;
	return k;
}

/* Writes connection c's next request into out; returns its length. */
static size_t request(struct conn *c, char *out, int *set)
{
	*set = c->cycle % (cur->sets + cur->gets) < cur->sets;
	c->cycle++;
	uint64_t k = key(c, *set ? cur->setpat : cur->getpat, *set);
	if (!*set)
		return (size_t)sprintf(out, "get %s%llu\r\n", cur->prefix, (unsigned long long)k);
	size_t n = (size_t)sprintf(out, "set %s%llu 0 0 %llu\r\n", cur->prefix,
				   (unsigned long long)k, (unsigned long long)cur->data);
	memcpy(out + n, value, cur->data + 2);
	return n + cur->data + 2;
}

/* memtier's fill_pipeline: requests until PIPELINE are in flight (or none is left),
 * stamped with one clock read, sent back to back in one buffer. */
static void fill(struct conn *c, char *out)
{
	uint64_t t = now_ns();
	size_t n = 0;
	while (c->qlen < cur->pipeline && c->left && !sh->stop) {
		struct pending *p = &c->q[(c->qhead + c->qlen) % cur->pipeline];
		p->sent_ns = t;
		n += request(c, out + n, &p->set);
		c->qlen++;
		c->left--;
	}
	send_all(c->fd, out, n);
}

/* The length of the reply at the start of buf (len bytes) to a SET or GET, 0 while it
 * is incomplete. A GET's reply is END (a miss) or VALUE KEY FLAGS BYTES, the bytes, END. */
static size_t reply_len(const char *buf, size_t len, int set)
{
	const char *eol = memmem(buf, len, "\r\n", 2);
	if (!eol)
		return 0;
	size_t line = (size_t)(eol - buf) + 2;
	if (set ? !strncmp(buf, "STORED\r\n", 8) : !strncmp(buf, "END\r\n", 5))
		return line;
	unsigned long long bytes;
	if (set || sscanf(buf, "VALUE %*s %*u %llu", &bytes) != 1) {
		fprintf(stderr, "memtier: %s: %.*s\n", set ? "set" : "get", (int)line, buf);
		exit(1);
	}
	size_t need = line + bytes + 2 + 5;
	if (len < need)
		return 0;
	if (memcmp(buf + need - 5, "END\r\n", 5)) {
		fprintf(stderr, "memtier: get: a reply without END\n");
		exit(1);
	}
	return need;
}

/* memtier's process_response: what the socket has, and every reply it completes timed
 * with one clock read; returns the replies. */
static uint64_t read_replies(struct conn *c, struct wstat *w)
{
	ssize_t r = recv(c->fd, c->in + c->inlen, incap - c->inlen, 0);
	if (r <= 0)
		die("recv");
	uint64_t t = now_ns(), got = 0;
	c->inlen += (size_t)r;
	size_t at = 0, n;
	while (c->qlen && (n = reply_len(c->in + at, c->inlen - at, c->q[c->qhead].set))) {
		record(w, t - c->q[c->qhead].sent_ns);
		c->qhead = (c->qhead + 1) % cur->pipeline;
		c->qlen--;
		at += n;
		got++;
	}
	if (at == 0 && c->inlen == incap) {
		fprintf(stderr, "memtier: a reply longer than %zu bytes\n", incap);
		exit(1);
	}
	memmove(c->in, c->in + at, c->inlen - at);
	c->inlen -= at;
	return got;
}

/* memtier's parallel subrange of client i of total (see parallel_range in the model). */
static int subrange(uint64_t i, uint64_t total, uint64_t *lo, uint64_t *hi)
{
	uint64_t range = (cur->max - cur->min) / total + 1;
	*lo = cur->min + range * i;
	*hi = i + 1 == total ? cur->max : (*lo + range - 1 < cur->max ? *lo + range - 1 : cur->max);
	return *lo <= cur->max;
}

/* One memtier thread: its connections, each set up as memtier's setup_client, and the
 * event loop: wait for replies on every connection with requests in flight, read them,
 * fill that pipeline again. */
static void *client_thread(void *arg)
{
	long t = (long)arg;
	struct wstat *w = &sh->w[t];
	struct conn cs[MAXCONN];
	struct pollfd pf[MAXCONN];
	uint64_t nc = cur->clients, ops = w->ops;
	char *out = malloc(outcap);
	for (uint64_t i = 0; i < nc; i++) {
		struct conn *c = &cs[i];
		uint64_t id = (uint64_t)t * nc + i;
		c->lo = cur->min;
		c->hi = cur->max;
		int in = cur->setpat != 'P' || subrange(id, nc * cur->threads, &c->lo, &c->hi);
		c->next_set = c->next_get = c->lo;
		c->left = in ? (cur->requests ? cur->requests : UINT64_MAX) : 0;
		c->cycle = 0;
		c->rng = rng_seed(cur->stream, cur->distinct ? id + 1 : 0);
		c->has_spare = 0;
		c->q = malloc(cur->pipeline * sizeof *c->q);
		c->in = malloc(incap);
		c->qhead = c->qlen = c->inlen = 0;
		if (!out || !c->q || !c->in || (c->fd = dial()) < 0)
			die("connect");
	}
	for (uint64_t i = 0; i < nc; i++)
		fill(&cs[i], out);
	while (!sh->stop) {
		nfds_t n = 0;
		for (uint64_t i = 0; i < nc; i++)
			if (cs[i].qlen)
				pf[n++] = (struct pollfd){ .fd = cs[i].fd, .events = POLLIN };
		if (!n)
			break;
		if (poll(pf, n, 100) < 0)
			die("poll");
		for (uint64_t i = 0, k = 0; i < nc && k < n; i++) {
			if (!cs[i].qlen || pf[k++].revents == 0)
				continue;
			ops += read_replies(&cs[i], w);
			w->ops = ops;
			fill(&cs[i], out);
		}
	}
	for (uint64_t i = 0; i < nc; i++) {
		close(cs[i].fd);
		free(cs[i].q);
		free(cs[i].in);
	}
	free(out);
	w->done = 1;
	return NULL;
}

/* Before a spec's runs: until WHAT (a workload, or WORKLOAD:PHASE; empty: nothing) has
 * finished, which its program signals with /tmp/fin.WHAT, or the workload has finished
 * its work or exited (every phase of it has then ended), or a stop file appears. */
static void wait_for(const char *what)
{
	char fin[300], whole[300], ex[300];
	int n = (int)strcspn(what, ":");
	snprintf(fin, sizeof fin, "/tmp/fin.%s", what);
	snprintf(whole, sizeof whole, "/tmp/fin.%.*s", n, what);
	exit_file(ex, sizeof ex, what);
	while (*what && !stop_file_seen() && access(fin, F_OK) && access(whole, F_OK) &&
	       access(ex, F_OK))
		usleep(50000);
}

/* One run of the current spec: its threads, until each has finished (or the run's test
 * time is up, or a stop file appears). Counts add to those of the spec's runs before. */
static void run_threads(void)
{
	pthread_t tid[MAXW];
	for (uint64_t t = 0; t < cur->threads; t++)
		sh->w[t].done = 0;
	sh->stop = 0;
	deadline = cur->seconds;
	double t0 = now();
	for (long t = 0; t < (long)cur->threads; t++)
		pthread_create(&tid[t], NULL, client_thread, (void *)t);
	supervise((int)cur->threads, t0);
	for (long t = 0; t < (long)cur->threads; t++)
		pthread_join(tid[t], NULL);
}

static int parse_run(char *s, struct run *r)
{
	char *f[23];
	int k = 0;
	for (char *q = s; k < 23; k++) {
		f[k] = q;
		q = strchr(q, ',');
		if (!q)
			break;
		*q++ = 0;
	}
	if (k != 22)
		return -1;
	*r = (struct run){ .label = f[0], .setpat = f[1][0], .getpat = f[2][0],
			   .sets = strtoull(f[3], 0, 0), .gets = strtoull(f[4], 0, 0),
			   .data = strtoull(f[5], 0, 0), .min = strtoull(f[6], 0, 0),
			   .max = strtoull(f[7], 0, 0), .prefix = f[8],
			   .requests = strtoull(f[9], 0, 0), .seconds = atof(f[10]),
			   .clients = strtoull(f[11], 0, 0), .threads = strtoull(f[12], 0, 0),
			   .measure = atoi(f[13]), .stream = strtoull(f[14], 0, 0),
			   .distinct = atoi(f[15]), .pipeline = strtoull(f[16], 0, 0),
			   .stddev = strtod(f[17], 0), .median = strtod(f[18], 0),
			   .zexp = strtod(f[19], 0), .delay = strtod(f[20], 0),
			   .count = strtoull(f[21], 0, 0), .wait = f[22] };
	return r->clients < 1 || r->clients > MAXCONN || r->threads < 1 ||
	       r->threads > MAXW || r->max < r->min || r->sets + r->gets == 0 ||
	       r->pipeline < 1 || r->pipeline > MAXPIPE || r->count < 1;
}

static pid_t start_server(const char *path, const char *threads, const char *mb)
{
	pid_t pid = fork();
	if (pid == 0) {
		execl(path, path, "-u", "root", "-l", "127.0.0.1", "-p", "11211", "-U", "0", "-t",
		      threads, "-m", mb, "-c", "4096", (char *)NULL);
		die(path);
	}
	for (int i = 0; i < 600; i++) { /* up to 60 s */
		if (waitpid(pid, NULL, WNOHANG) == pid)
			break; /* it exited: its error is on stderr */
		int fd = dial();
		if (fd >= 0) {
			close(fd);
			return pid;
		}
		usleep(100000);
	}
	fprintf(stderr, "memtier: memcached did not listen on 127.0.0.1:%d\n", PORT);
	exit(1);
}

int main(int argc, char **argv)
{
	const char *fin = NULL, *go = NULL, *server = "/bin/memcached", *sthreads = "4";
	const char *mb = "64";
	const char *name = "memcached";
	int o;
	while ((o = getopt(argc, argv, "n:m:s:M:e:H:x:f:g:")) != -1) {
		switch (o) {
		case 'n': name = optarg; break;
		case 'm': server = optarg; break;
		case 's': sthreads = optarg; break;
		case 'M': mb = optarg; break;
		case 'e': break; /* the streams come with each run */
		case 'H': if (nruns == MAXRUN || parse_run(optarg, &runs[nruns++])) return 2; break;
		case 'x': if (nstop < MAXSTOP) stop_files[nstop++] = optarg; break;
		case 'f': fin = optarg; break;
		case 'g': go = optarg; break;
		default: return 2;
		}
	}
	if (!nruns)
		return 2;
	shared_init();
	pid_t srv = start_server(server, sthreads, mb);
	/* the clients leave memcached's memcg: the model charges the server's memory only */
	FILE *root = fopen("/sys/fs/cgroup/cgroup.procs", "w");
	if (root) {
		fprintf(root, "%d\n", getpid());
		fclose(root);
	}
	for (int p = 0; p < nruns && !stop_file_seen(); p++) {
		cur = &runs[p];
		zipf_init(&zipf, cur->min, cur->max, cur->zexp);
		free(value);
		value = malloc(cur->data + 2);
		memset(value, 'x', cur->data);
		memcpy(value + cur->data, "\r\n", 2);
		/* a request or a reply: the item, its key and a line of protocol */
		size_t one = cur->data + strlen(cur->prefix) + 128;
		outcap = cur->pipeline * one;
		incap = (cur->pipeline < 8 ? cur->pipeline : 8) * one + 4096;
		wait_for(cur->wait);
		reset_stats((int)cur->threads);
		double t0 = now();
		for (uint64_t r = 0; r < cur->count && !stop_file_seen(); r++) {
			/* the benchmark script's sleep before the run (the model's `delay`) */
			for (double d0 = now(); now() - d0 < cur->delay && !stop_file_seen();)
				usleep(10000);
			if (r == 0)
				t0 = now();
			run_threads();
		}
		char label[256];
		snprintf(label, sizeof label, "%s%s%s", name, *cur->label ? ":" : "", cur->label);
		if (cur->measure)
			report(label, (int)cur->threads, now() - t0);
		if (*cur->label)
			phase_done(fin, name, cur->label);
	}
	finish_handshake(fin, go);
	kill(srv, SIGTERM);
	waitpid(srv, NULL, 0);
	return 0;
}
