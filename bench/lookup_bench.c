/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lookup_bench: how many addresses a second lidia_reader_lookup() resolves
 * from one thread.
 *
 *   lookup_bench [-n COUNT] [-r REPEATS] [-s SEED] [-t TARGET] FILE.lidia
 *
 * Two address sets of COUNT addresses (default 10 million), made with a
 * fixed-seed PRNG before any timing:
 *   uniform  uniformly random in [min va, max(va + length)]: the whole span
 *            of the file, gaps between functions included (misses count);
 *   inside   a uniformly chosen depth-0 range, then a uniformly random
 *            address inside it: every lookup should hit.
 * Each set is looked up once untimed (warm-up: page cache, mmap faults,
 * branch predictors), then REPEATS times (default 5) timed with
 * CLOCK_MONOTONIC; the median pass is reported. The target (default 5e6
 * lookups/s) is checked against the median of each set, and one line per set
 * says PASS or MISS. Exit status: 0 all PASS, 1 some MISS, 2 an error.
 *
 * Built by bench/run.sh:
 *   cc -O2 -std=c11 -D_GNU_SOURCE -I lib bench/lookup_bench.c build/liblidia.a \
 *      $(pkg-config --libs libelf libdw) -lpthread
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lidia.h"

#define FRAMES_CAP 64

static uint64_t rng_state;

/* splitmix64: small, fast, good enough for benchmark addresses. */
static uint64_t rng_next(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0), by Lemire's multiply-shift; bias is negligible here. */
static uint64_t rng_below(uint64_t n)
{
	return (uint64_t)(((unsigned __int128)rng_next() * n) >> 64);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct pass {
	uint64_t hits;	   /* lookups that found at least one frame */
	uint64_t frames;   /* frames reported in all */
	uint64_t checksum; /* keeps the compiler from dropping the work */
	int err;	   /* first negative return, 0 if none */
};

static struct pass run_pass(const struct lidia_reader *r, const uint64_t *addrs, size_t n)
{
	struct lidia_frame frames[FRAMES_CAP];
	struct pass p = { 0 };

	for (size_t i = 0; i < n; i++) {
		int k = lidia_reader_lookup(r, addrs[i], frames, FRAMES_CAP);

		if (k < 0) {
			if (!p.err)
				p.err = k;
			continue;
		}
		if (k > 0) {
			p.hits++;
			p.frames += (uint64_t)k;
			p.checksum += frames[0].function.len + frames[0].line;
		}
	}
	return p;
}

/* Times one address set; returns the median rate in lookups a second, or -1. */
static double bench_set(const char *name, const struct lidia_reader *r, const uint64_t *addrs,
			size_t n, int repeats, double target, int *missed)
{
	double *rates = calloc((size_t)repeats, sizeof(*rates)), med;
	struct pass p = run_pass(r, addrs, n); /* warm-up */

	if (!rates)
		return -1;
	if (p.err) {
		fprintf(stderr, "lookup_bench: %s: lookup failed: %s\n", name, lidia_strerror(p.err));
		free(rates);
		return -1;
	}
	for (int i = 0; i < repeats; i++) {
		double t0 = now(), t1;
		struct pass q = run_pass(r, addrs, n);

		t1 = now();
		if (q.hits != p.hits || q.checksum != p.checksum) {
			fprintf(stderr, "lookup_bench: %s: results differ between passes\n", name);
			free(rates);
			return -1;
		}
		rates[i] = (double)n / (t1 - t0);
	}
	qsort(rates, (size_t)repeats, sizeof(*rates), cmp_double);
	med = rates[repeats / 2];
	printf("  %-8s %5.2f M lookups/s (%.0f ns/lookup; best %.2f, worst %.2f M/s), "
	       "hits %.1f%%, %.2f frames/hit  %s (target >= %.1f M/s)\n",
	       name, med / 1e6, 1e9 / med, rates[repeats - 1] / 1e6, rates[0] / 1e6,
	       100.0 * (double)p.hits / (double)n,
	       p.hits ? (double)p.frames / (double)p.hits : 0.0, med >= target ? "PASS" : "MISS",
	       target / 1e6);
	/* A machine-readable line for bench/run.sh. */
	printf("RESULT %s rate=%.0f hits=%" PRIu64 " n=%zu %s\n", name, med, p.hits, n,
	       med >= target ? "PASS" : "MISS");
	if (med < target)
		*missed = 1;
	free(rates);
	return med;
}

static void usage(int status)
{
	fputs("usage: lookup_bench [-n COUNT] [-r REPEATS] [-s SEED] [-t TARGET] FILE.lidia\n"
	      "  -n COUNT    addresses per set (default 10000000)\n"
	      "  -r REPEATS  timed passes per set, median reported (default 5)\n"
	      "  -s SEED     PRNG seed\n"
	      "  -t TARGET   lookups a second needed for PASS (default 5e6)\n",
	      status ? stderr : stdout);
	exit(status);
}

int main(int argc, char **argv)
{
	size_t n = 10 * 1000 * 1000, count, nfunc = 0;
	int repeats = 5, opt, err, missed = 0;
	uint64_t seed = 0x6c69646961ULL, min_va = UINT64_MAX, max_end = 0;
	double target = 5e6, t0, t_open;
	struct lidia_reader *r;
	uint64_t *addrs, *fva, *flen;

	while ((opt = getopt(argc, argv, "hn:r:s:t:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			repeats = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 't':
			target = strtod(optarg, NULL);
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind + 1 != argc || n == 0 || repeats < 1)
		usage(2);

	t0 = now();
	err = lidia_reader_open(&r, argv[optind], NULL);
	t_open = now() - t0;
	if (err) {
		fprintf(stderr, "lookup_bench: %s: %s\n", argv[optind], lidia_strerror(err));
		return 2;
	}
	count = lidia_reader_count(r);
	fva = malloc((count ? count : 1) * sizeof(*fva));
	flen = malloc((count ? count : 1) * sizeof(*flen));
	addrs = malloc(n * sizeof(*addrs));
	if (!fva || !flen || !addrs) {
		fprintf(stderr, "lookup_bench: out of memory\n");
		return 2;
	}
	for (size_t i = 0; i < count; i++) {
		struct lidia_range_info ri;

		if ((err = lidia_reader_range(r, i, &ri))) {
			fprintf(stderr, "lookup_bench: range %zu: %s\n", i, lidia_strerror(err));
			return 2;
		}
		if (ri.va < min_va)
			min_va = ri.va;
		if (ri.va + ri.length > max_end)
			max_end = ri.va + ri.length;
		if (ri.depth == 0 && ri.length > 0) {
			fva[nfunc] = ri.va;
			flen[nfunc] = ri.length;
			nfunc++;
		}
	}
	if (nfunc == 0) {
		fprintf(stderr, "lookup_bench: %s: no functions\n", argv[optind]);
		return 2;
	}
	printf("lookup_bench %s\n  %zu ranges, %zu functions, span 0x%" PRIx64 "-0x%" PRIx64
	       ", open %.3f ms, %zu addresses x %d timed passes (median), seed 0x%" PRIx64 "\n",
	       argv[optind], count, nfunc, min_va, max_end, t_open * 1e3, n, repeats, seed);

	rng_state = seed;
	for (size_t i = 0; i < n; i++)
		addrs[i] = min_va + rng_below(max_end - min_va + 1);
	if (bench_set("uniform", r, addrs, n, repeats, target, &missed) < 0)
		return 2;

	rng_state = seed ^ 0x5555555555555555ULL;
	for (size_t i = 0; i < n; i++) {
		size_t f = (size_t)rng_below(nfunc);

		addrs[i] = fva[f] + rng_below(flen[f]);
	}
	if (bench_set("inside", r, addrs, n, repeats, target, &missed) < 0)
		return 2;

	free(addrs);
	free(fva);
	free(flen);
	lidia_reader_close(r);
	return missed ? 1 : 0;
}
