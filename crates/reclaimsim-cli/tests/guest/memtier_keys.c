/* Draws keys with the guest's memtier-like client (guest/memtier.c, its main renamed)
 * and prints what tests/guest_programs.rs checks against the distributions:
 *   Z Q P1 WANT1 P2 WANT2 OUTSIDE   zipf over [1, 1000] with exponent Q: the share of
 *                                   keys 1 and 2 drawn and from the formula
 *   G MEDIAN STDDEV MEAN SD OUTSIDE normal over [MIN, MAX]: mean and deviation drawn
 * OUTSIDE counts draws outside the range. */
#define main memtier_main
#include "../../guest/memtier.c"
#undef main

#define DRAWS 1000000

static void zipf_shares(double q)
{
	static struct run r = { .min = 1, .max = 1000 };
	cur = &r;
	zipf_init(&zipf, r.min, r.max, q);
	struct conn c = { .rng = rng_seed(7, 1) };
	uint64_t ones = 0, twos = 0, outside = 0;
	for (int i = 0; i < DRAWS; i++) {
		uint64_t k = key(&c, 'Z', 0);
		ones += k == 1;
		twos += k == 2;
		outside += k < r.min || k > r.max;
	}
	double hn = 0;
	for (int k = 1; k <= 1000; k++)
		hn += pow(k, -q);
	printf("Z %g %.6f %.6f %.6f %.6f %llu\n", q, ones / (double)DRAWS, 1 / hn,
	       twos / (double)DRAWS, pow(2, -q) / hn, (unsigned long long)outside);
}

static void normal_moments(uint64_t min, uint64_t max, double median, double stddev)
{
	static struct run r;
	r = (struct run){ .min = min, .max = max, .median = median, .stddev = stddev };
	cur = &r;
	struct conn c = { .rng = rng_seed(7, 2) };
	double sum = 0, sq = 0;
	uint64_t outside = 0;
	for (int i = 0; i < DRAWS; i++) {
		uint64_t k = key(&c, 'G', 1);
		sum += (double)k;
		sq += (double)k * (double)k;
		outside += k < min || k > max;
	}
	double mean = sum / DRAWS;
	printf("G %g %g %.4f %.4f %llu\n", median, stddev, mean, sqrt(sq / DRAWS - mean * mean),
	       (unsigned long long)outside);
}

int main(void)
{
	zipf_shares(0.5);
	zipf_shares(1.0);
	zipf_shares(1.5);
	/* the defaults for [1, 1000] (the model's Run::parse), and a narrow one inside */
	normal_moments(1, 1000, 999 / 2.0 + 1.5, 999 / 6.0);
	normal_moments(100, 700, 300.25, 12.5);
	return 0;
}
