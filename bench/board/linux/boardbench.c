// boardbench: core-to-core ping-pong and spinlock hand-off on an arm64 Linux
// board, printed as SyncLab measurement rows
//
//	experiment,variant,settings,metric,value
//
// whose experiment, variant and settings are those of `lab run`, so that
// `lab calibrate` can fit the model to them:
//
//	rk3399-pingpong       llsc|cas|ldst     cpu_a=A;cpu_b=B           one_way_ns
//	rk3399-wake           wfe               holder_cpu=A;waiter_cpu=B  release_to_acquire_us
//	rk3399-monitor-probe  load|store|prfm   poker_cpu=A;waiter_cpu=B   wakes_per_ms, pokes_per_ms
//	rk3399-prfm-probe     load|store|prfm   poker_cpu=A;reader_cpu=B   reread_ns
//
// The ping-pong is the loop of nviennot/core-to-core-latency: two threads
// pinned to two CPUs flip one shared word between PING and PONG with
// compare-and-exchange; one_way_ns is the round trip over two. llsc is the
// Armv8.0 exclusive pair (LDXR, compare, STXR), cas the Armv8.1 LSE CAS
// (run only where the CPU has it: HWCAP_ATOMICS), ldst a plain load-acquire
// and store-release (LDAR, STLR): the same read and then write as llsc
// without the exclusive pair. If ldst's hop is about twice llsc's, the LDXR
// takes the line for writing; if they are alike, an upgrade of a shared
// line is cheap (or every transfer is short): the model charges both hops
// two transfers.
//
// The hand-off: a holder takes a lock word, holds it for a uniformly random
// time up to -hold microseconds (a whole number of tick periods by default,
// so the release falls at a random phase of the tick), stamps the time and
// releases it; the waiter waits in WFE (smp_cond_load_acquire's LDAXR + WFE:
// the releasing store wakes it) and stamps the time it holds the lock (each
// thread in its own array: no stamp crosses between the cores). There
// is no WFI waiter: arm64 Linux traps a WFI at EL0 and skips it (it leaves
// SCTLR_EL1.nTWI clear; arch/arm64/kernel/traps.c, wfi_handler), so in user
// space it would spin, not sleep until its next tick as the article's
// kernel waiter does.
//
// The monitor probe: a waiter loops STR (beside the word, taking its line),
// LDAXR, WFE on a word that stays 0, and counts its wakes; a poker touches the word's line every -poke
// microseconds for -probe-ms: a load (the monitor stays), a store of 0 (a
// store clears it), or PRFM PSTL1STRM, which clears it only if the
// implementation lets the monitor go with the line (the model's
// monitor_loss). The waiter wakes at the poke rate when it is cleared, at
// the event stream's and the ticks' otherwise.
//
// The prefetch probe: a reader and then the poker read the same -lines
// lines; the poker touches each one (a load, a store of the value it holds,
// or PRFM PSTL1STRM) and the reader reads them again, timed. The re-reads
// hit when the lines stayed shared and miss when the touch took them: after
// the prefetch, only if a prefetch for store upgrades a line the core
// shares (the model's a72_prfm_upgrade; never, by its manual, on an A53).
//
// Usage: boardbench [-e EXPERIMENT] [-s SETTINGS] [-rounds N] [-handoffs N]
//
//	[-hold US] [-poke US] [-probe-ms MS] [-lines N] [-prfm-rounds N] [-hz N]
//	[-pairs A:B,...] [-skip-wake] [-skip-probe] [-skip-prfm]
//
// -e names the ping-pong experiment (generic-pingpong for a part that is not
// an RK3399; add its shape with -s "soc_cores=4;per_cluster=4": the hand-off
// and the probes, RK3399 experiments, are then left out), -s appends
// settings to every row, -hz the kernel's tick rate to the hand-off's and the
// monitor probe's (the model assumes 250). Without -pairs every pair of
// online CPUs is measured; the hand-off and the probes run on the first.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#ifndef HWCAP_ATOMICS
#define HWCAP_ATOMICS (1 << 8)
#endif

enum { PING = 0, PONG = 1, WARMUP = 100 };

// A word alone on its cache line (64 bytes on Cortex-A53/A72, 128 on some
// larger cores: pad to 128).
struct line {
	_Alignas(128) volatile uint64_t word;
	char pad[128 - sizeof(uint64_t)];
};

static struct line flag, lockword;

// The probe's line: the word the waiter watches and, beside it, one the
// waiter stores to before it arms its monitor.
static struct {
	_Alignas(128) volatile uint64_t word, own;
	char pad[128 - 2 * sizeof(uint64_t)];
} probed;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// stamp reads the generic timer's virtual count (the clock CLOCK_MONOTONIC
// reads too, without the vDSO call around it): a hand-off is timed from the
// holder's stamp to the waiter's, each kept in its own thread's array, so
// no stamp travels between the cores inside the interval.
static uint64_t stamp(void)
{
#if defined(__aarch64__)
	uint64_t t;
	__asm__ volatile("isb\n mrs %0, cntvct_el0" : "=r"(t)::"memory");
	return t;
#else
	return now_ns();
#endif
}

// stamp_ns is the length of one stamp tick in ns.
static double stamp_ns(void)
{
#if defined(__aarch64__)
	uint64_t f;
	__asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
	return 1e9 / (double)f;
#else
	return 1;
#endif
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (err != 0) {
		fprintf(stderr, "boardbench: pinning to cpu %d: %s\n", cpu, strerror(err));
		exit(1);
	}
}

// cas_llsc is compare-and-exchange as Armv8.0 compiles it: it returns 1 when
// *p held old and now holds new.
static int cas_llsc(volatile uint64_t *p, uint64_t old, uint64_t new)
{
#if defined(__aarch64__)
	uint64_t v;
	uint32_t fail;
	__asm__ volatile("1: ldxr %0, [%2]\n"
			 "   cmp %0, %3\n"
			 "   b.ne 2f\n"
			 "   stxr %w1, %4, [%2]\n"
			 "   cbnz %w1, 1b\n"
			 "   mov %w1, #0\n"
			 "   b 3f\n"
			 "2: clrex\n"
			 "   mov %w1, #1\n"
			 "3:"
			 : "=&r"(v), "=&r"(fail)
			 : "r"(p), "r"(old), "r"(new)
			 : "cc", "memory");
	return fail == 0;
#else
	return __atomic_compare_exchange_n(p, &old, new, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

// cas_lse is one Armv8.1 CAS instruction.
static int cas_lse(volatile uint64_t *p, uint64_t old, uint64_t new)
{
#if defined(__aarch64__)
	uint64_t v = old;
	__asm__ volatile(".arch_extension lse\n"
			 "cas %0, %2, [%1]"
			 : "+&r"(v)
			 : "r"(p), "r"(new)
			 : "memory");
	return v == old;
#else
	return __atomic_compare_exchange_n(p, &old, new, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

// cas_ldst is the hop with plain accesses: a load-acquire, then a
// store-release when the word held old. In the ping-pong only one side moves
// the word from a given value, so the pair needs no atomicity.
static int cas_ldst(volatile uint64_t *p, uint64_t old, uint64_t new)
{
	if (__atomic_load_n(p, __ATOMIC_ACQUIRE) != old)
		return 0;
	__atomic_store_n(p, new, __ATOMIC_RELEASE);
	return 1;
}

struct pp {
	int cpu, rounds;
	int (*cas)(volatile uint64_t *, uint64_t, uint64_t);
	uint64_t elapsed;
	pthread_barrier_t *start;
};

static void *pong(void *arg)
{
	struct pp *a = arg;
	pin(a->cpu);
	pthread_barrier_wait(a->start);
	for (int i = 0; i < WARMUP + a->rounds; i++)
		while (!a->cas(&flag.word, PING, PONG))
			;
	return NULL;
}

static void *ping(void *arg)
{
	struct pp *a = arg;
	pin(a->cpu);
	pthread_barrier_wait(a->start);
	uint64_t t0 = 0;
	for (int i = 0; i < WARMUP + a->rounds; i++) {
		if (i == WARMUP)
			t0 = now_ns();
		while (!a->cas(&flag.word, PONG, PING))
			;
	}
	a->elapsed = now_ns() - t0;
	return NULL;
}

// pingpong returns the one-way latency between cpus a and b in ns.
static double pingpong(int a, int b, int rounds, int (*cas)(volatile uint64_t *, uint64_t, uint64_t))
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, 2);
	flag.word = PING;
	struct pp pa = {a, rounds, cas, 0, &start}, pb = {b, rounds, cas, 0, &start};
	pthread_t ta, tb;
	pthread_create(&tb, NULL, pong, &pb);
	pthread_create(&ta, NULL, ping, &pa);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	pthread_barrier_destroy(&start);
	return (double)pa.elapsed / rounds / 2;
}

// The lock of the hand-off: 0 free, 1 held. Waiting as smp_cond_load_acquire
// does on arm64: LDAXR arms the exclusive monitor, WFE sleeps until the
// releasing store clears it (or any other event).
static void wait_free(volatile uint64_t *p)
{
#if defined(__aarch64__)
	uint64_t v;
	__asm__ volatile("   sevl\n"
			 "1: wfe\n"
			 "   ldaxr %0, [%1]\n"
			 "   cbnz %0, 1b"
			 : "=&r"(v)
			 : "r"(p)
			 : "memory");
#else
	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != 0)
		sched_yield();
#endif
}

static void lock(volatile uint64_t *p)
{
	for (;;) {
		uint64_t free = 0;
		if (__atomic_compare_exchange_n(p, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		wait_free(p);
	}
}

static void unlock(volatile uint64_t *p) { __atomic_store_n(p, 0, __ATOMIC_RELEASE); }

struct ho {
	int cpu, n;
	double hold_us;
	uint64_t *at; // the stamp of each round: the release, or the acquisition
	volatile int *round, *done;
	unsigned seed;
};

static void *holder(void *arg)
{
	struct ho *a = arg;
	pin(a->cpu);
	for (int r = 1; r <= a->n; r++) {
		lock(&lockword.word);
		__atomic_store_n(a->round, r, __ATOMIC_RELEASE);
		uint64_t until = now_ns() + (uint64_t)(a->hold_us * 1000 * (rand_r(&a->seed) / (RAND_MAX + 1.0)));
		while (now_ns() < until)
			;
		a->at[r - 1] = stamp();
		unlock(&lockword.word);
		while (__atomic_load_n(a->done, __ATOMIC_ACQUIRE) != r)
			;
	}
	return NULL;
}

static void *waiter(void *arg)
{
	struct ho *a = arg;
	pin(a->cpu);
	for (int r = 1; r <= a->n; r++) {
		while (__atomic_load_n(a->round, __ATOMIC_ACQUIRE) != r)
			;
		lock(&lockword.word);
		a->at[r - 1] = stamp();
		unlock(&lockword.word);
		__atomic_store_n(a->done, r, __ATOMIC_RELEASE);
	}
	return NULL;
}

// handoff returns the mean time from a release to the waiter holding the lock.
static double handoff(int h, int w, int n, double hold_us)
{
	volatile int round = 0, done = 0;
	lockword.word = 0;
	uint64_t *rel = calloc(n, sizeof *rel), *acq = calloc(n, sizeof *acq);
	if (rel == NULL || acq == NULL) {
		fprintf(stderr, "boardbench: out of memory for %d hand-offs\n", n);
		exit(1);
	}
	struct ho ah = {h, n, hold_us, rel, &round, &done, 1}, aw = {w, n, hold_us, acq, &round, &done, 1};
	pthread_t th, tw;
	pthread_create(&tw, NULL, waiter, &aw);
	pthread_create(&th, NULL, holder, &ah);
	pthread_join(th, NULL);
	pthread_join(tw, NULL);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += (double)(acq[i] - rel[i]);
	free(rel);
	free(acq);
	return sum * stamp_ns() / 1000 / n;
}

static void poke_load(volatile uint64_t *p) { (void)__atomic_load_n(p, __ATOMIC_RELAXED); }

static void poke_store(volatile uint64_t *p) { __atomic_store_n(p, 0, __ATOMIC_RELAXED); }

static void poke_prfm(volatile uint64_t *p)
{
#if defined(__aarch64__)
	__asm__ volatile("prfm pstl1strm, [%0]" ::"r"(p) : "memory");
#else
	__builtin_prefetch((const void *)p, 1);
#endif
}

struct pr {
	int cpu;
	void (*poke)(volatile uint64_t *);
	uint64_t gap_ns, len_ns, count, ns;
	pthread_barrier_t *start;
};

// probe_waiter re-arms its monitor after every wake and counts the wakes
// until the poker stores 1.
static void *probe_waiter(void *arg)
{
	struct pr *a = arg;
	pin(a->cpu);
	pthread_barrier_wait(a->start);
	uint64_t n = 0;
#if defined(__aarch64__)
	for (;;) {
		// Take the line for writing first, so that the poker's next
		// prefetch misses: a Cortex-A53's PRFM PST that hits a shared
		// copy does nothing (DDI 0500D, 6.6.1).
		__atomic_store_n(&probed.own, 0, __ATOMIC_RELAXED);
		uint64_t v;
		__asm__ volatile("ldaxr %0, [%1]" : "=&r"(v) : "r"(&probed.word) : "memory");
		if (v != 0)
			break;
		__asm__ volatile("wfe" ::: "memory");
		n++;
	}
#else
	while (__atomic_load_n(&probed.word, __ATOMIC_ACQUIRE) == 0) {
		sched_yield();
		n++;
	}
#endif
	a->count = n;
	return NULL;
}

// probe_poker pokes on a fixed schedule (a late poke does not delay the
// next), then stops the waiter.
static void *probe_poker(void *arg)
{
	struct pr *a = arg;
	pin(a->cpu);
	pthread_barrier_wait(a->start);
	uint64_t t0 = now_ns(), n = 0;
	for (uint64_t next = t0 + a->gap_ns; next <= t0 + a->len_ns; next += a->gap_ns) {
		while (now_ns() < next)
			;
		a->poke(&probed.word);
		n++;
	}
	while (now_ns() < t0 + a->len_ns) // the window is -probe-ms, with or without a poke in it
		;
	a->ns = now_ns() - t0;
	a->count = n;
	__atomic_store_n(&probed.word, 1, __ATOMIC_RELEASE);
	return NULL;
}

// probe runs the monitor probe with the poker on cpu p and the waiter on w
// and returns the waiter's wakes and the poker's pokes per ms.
static void probe(int p, int w, double poke_us, double len_ms, void (*poke)(volatile uint64_t *), double *wakes, double *pokes)
{
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, 2);
	probed.word = 0;
	struct pr ap = {p, poke, (uint64_t)(poke_us * 1000), (uint64_t)(len_ms * 1e6), 0, 0, &start}, aw = {w, poke, 0, 0, 0, 0, &start};
	pthread_t tp, tw;
	pthread_create(&tw, NULL, probe_waiter, &aw);
	pthread_create(&tp, NULL, probe_poker, &ap);
	pthread_join(tp, NULL);
	pthread_join(tw, NULL);
	pthread_barrier_destroy(&start);
	double ms = (double)ap.ns / 1e6;
	*wakes = (double)aw.count / ms;
	*pokes = (double)ap.count / ms;
}

// The prefetch probe's lines, one word alone on each, chained in a shuffled
// order (each word holds the address of the next): each re-read waits for
// the one before, so no two misses overlap, and the hardware prefetcher
// finds no stride to follow.
enum { MAXLINES = 128 };
static struct line chain[MAXLINES];
static volatile uint64_t *chain_head;
static struct line step; // the round's step, handed between the two threads

static void chain_lines(int n)
{
	int order[MAXLINES];
	unsigned seed = 12;
	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) { // Fisher-Yates
		int j = rand_r(&seed) % (i + 1), t = order[i];
		order[i] = order[j], order[j] = t;
	}
	for (int i = 0; i < n; i++)
		chain[order[i]].word = i + 1 < n ? (uint64_t)(uintptr_t)&chain[order[i + 1]].word : 0;
	chain_head = &chain[order[0]].word;
}

// read_chain reads every line of the chain, each load's address the value
// of the one before.
static void read_chain(void)
{
	for (volatile uint64_t *p = chain_head; p != NULL;)
		p = (volatile uint64_t *)(uintptr_t)*p;
}

// poke_rewrite stores to the word the value it holds: the line moves, the
// chain stays.
static void poke_rewrite(volatile uint64_t *p) { __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED), __ATOMIC_RELAXED); }

static void wait_step(int want)
{
	while (__atomic_load_n(&step.word, __ATOMIC_ACQUIRE) != (uint64_t)want)
		;
}

static void set_step(int v) { __atomic_store_n(&step.word, (uint64_t)v, __ATOMIC_RELEASE); }

struct pf {
	int cpu, lines, rounds;
	void (*poke)(volatile uint64_t *);
	uint64_t *ticks; // the reader's: each round's re-read, in stamp ticks
};

// Each round: the reader reads the chain (step 0), then the poker reads it
// and touches each line (step 1), then the reader reads it again, timed
// (step 2).
static void *pf_reader(void *arg)
{
	struct pf *a = arg;
	pin(a->cpu);
	for (int r = 0; r < WARMUP + a->rounds; r++) {
		wait_step(0);
		read_chain();
		set_step(1);
		wait_step(2);
		uint64_t t0 = stamp();
		read_chain();
		uint64_t t1 = stamp();
		if (r >= WARMUP)
			a->ticks[r - WARMUP] = t1 - t0;
		set_step(0);
	}
	return NULL;
}

static void *pf_poker(void *arg)
{
	struct pf *a = arg;
	pin(a->cpu);
	for (int r = 0; r < WARMUP + a->rounds; r++) {
		wait_step(1);
		read_chain();
		for (int i = 0; i < a->lines; i++)
			a->poke(&chain[i].word);
		// A prefetch retires before its line arrives: give the
		// transfers time to finish before the reader looks.
		uint64_t until = now_ns() + 2000;
		while (now_ns() < until)
			;
		set_step(2);
	}
	return NULL;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return (a > b) - (a < b);
}

// prfm_probe runs the prefetch probe with the poker on cpu p and the reader
// on r and returns the median re-read of a line in ns.
static double prfm_probe(int p, int r, int lines, int rounds, void (*poke)(volatile uint64_t *))
{
	uint64_t *ticks = calloc(rounds, sizeof *ticks);
	if (ticks == NULL) {
		fprintf(stderr, "boardbench: out of memory for %d rounds\n", rounds);
		exit(1);
	}
	chain_lines(lines);
	step.word = 0;
	struct pf ap = {p, lines, rounds, poke, NULL}, ar = {r, lines, rounds, poke, ticks};
	pthread_t tp, tr;
	pthread_create(&tr, NULL, pf_reader, &ar);
	pthread_create(&tp, NULL, pf_poker, &ap);
	pthread_join(tp, NULL);
	pthread_join(tr, NULL);
	qsort(ticks, rounds, sizeof *ticks, cmp_u64);
	double median = ((double)ticks[(rounds - 1) / 2] + (double)ticks[rounds / 2]) / 2;
	free(ticks);
	return median * stamp_ns() / lines;
}

// A probe's variant: its name in the rows and what the poker does.
struct touch {
	const char *name;
	void (*poke)(volatile uint64_t *);
};

static void usage(void)
{
	fprintf(stderr, "usage: boardbench [-e EXPERIMENT] [-s SETTINGS] [-rounds N] [-handoffs N] [-hold US] [-poke US] [-probe-ms MS] [-lines N] [-prfm-rounds N] [-hz N] [-pairs A:B,...] [-skip-wake] [-skip-probe] [-skip-prfm]\n");
	exit(2);
}

static double number(const char *flag, const char *s, double min)
{
	char *end;
	double v = strtod(s, &end);
	if (*s == 0 || *end != 0 || v < min || v > 1e9) {
		fprintf(stderr, "boardbench: %s %s: want a number >= %g\n", flag, s, min);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *exp = "rk3399-pingpong", *extra = "", *pairs = NULL;
	int rounds = 20000, handoffs = 400, wake = 1, monitor = 1, prfm = 1, lines = 64, prfm_rounds = 200;
	double hold = 20000, poke = 10, probe_ms = 100, hz = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-skip-wake")) {
			wake = 0;
			continue;
		}
		if (!strcmp(a, "-skip-probe")) {
			monitor = 0;
			continue;
		}
		if (!strcmp(a, "-skip-prfm")) {
			prfm = 0;
			continue;
		}
		if (v == NULL)
			usage();
		if (!strcmp(a, "-e"))
			exp = v;
		else if (!strcmp(a, "-s"))
			extra = v;
		else if (!strcmp(a, "-rounds"))
			rounds = (int)number(a, v, 1);
		else if (!strcmp(a, "-handoffs"))
			handoffs = (int)number(a, v, 1);
		else if (!strcmp(a, "-hold"))
			hold = number(a, v, 0);
		else if (!strcmp(a, "-poke"))
			poke = number(a, v, 0.1);
		else if (!strcmp(a, "-probe-ms"))
			probe_ms = number(a, v, 1);
		else if (!strcmp(a, "-lines"))
			lines = (int)number(a, v, 1);
		else if (!strcmp(a, "-prfm-rounds"))
			prfm_rounds = (int)number(a, v, 1);
		else if (!strcmp(a, "-hz"))
			hz = number(a, v, 1);
		else if (!strcmp(a, "-pairs"))
			pairs = v;
		else
			usage();
		i++;
	}
	if (lines > MAXLINES) {
		fprintf(stderr, "boardbench: -lines %d: at most %d\n", lines, MAXLINES);
		return 2;
	}
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 2) {
		fprintf(stderr, "boardbench: %d CPU online; the ping-pong needs two\n", ncpu);
		return 1;
	}
	int lse = (getauxval(AT_HWCAP) & HWCAP_ATOMICS) != 0;
	int list[64][2], n = 0;
	if (pairs) {
		for (const char *p = pairs; *p && n < 64;) {
			int a, b, k;
			if (sscanf(p, "%d:%d%n", &a, &b, &k) != 2 || a == b || a < 0 || b < 0 || a >= ncpu || b >= ncpu) {
				fprintf(stderr, "boardbench: -pairs %s: want A:B,... with two different CPUs below %d\n", pairs, ncpu);
				return 2;
			}
			list[n][0] = a, list[n][1] = b, n++;
			p += k;
			if (*p == ',')
				p++;
		}
	} else {
		for (int a = 0; a < ncpu && n < 64; a++)
			for (int b = a + 1; b < ncpu && n < 64; b++)
				list[n][0] = a, list[n][1] = b, n++;
	}
	const char *sep = *extra ? ";" : "";
	printf("experiment,variant,settings,metric,value\n");
	for (int i = 0; i < n; i++) {
		int a = list[i][0], b = list[i][1];
		printf("%s,llsc,cpu_a=%d;cpu_b=%d%s%s,one_way_ns,%.2f\n", exp, a, b, sep, extra, pingpong(a, b, rounds, cas_llsc));
		if (lse)
			printf("%s,cas,cpu_a=%d;cpu_b=%d%s%s,one_way_ns,%.2f\n", exp, a, b, sep, extra, pingpong(a, b, rounds, cas_lse));
		printf("%s,ldst,cpu_a=%d;cpu_b=%d%s%s,one_way_ns,%.2f\n", exp, a, b, sep, extra, pingpong(a, b, rounds, cas_ldst));
		fflush(stdout);
	}
	// The hand-off and the probes are RK3399 experiments: on another part
	// (-e) their rows would name the wrong cores, so they are left out.
	if ((wake || monitor || prfm) && strcmp(exp, "rk3399-pingpong") != 0) {
		fprintf(stderr, "boardbench: -e %s: the hand-off and the probes model the RK3399 only; left out\n", exp);
		wake = monitor = prfm = 0;
	}
	int a = list[0][0], b = list[0][1];
	// The tick rate, when given, goes to the rows whose waiters the tick
	// wakes (the model assumes HZ=250 otherwise).
	char tick[64] = "";
	if (hz > 0)
		snprintf(tick, sizeof tick, ";hz=%g", hz);
	if (wake) {
		printf("rk3399-wake,wfe,holder_cpu=%d;waiter_cpu=%d;hold_max_us=%g%s%s%s,release_to_acquire_us,%.3f\n", a, b, hold, tick, sep, extra,
		       handoff(a, b, handoffs, hold));
		fflush(stdout);
	}
	if (monitor) {
		static const struct touch pokes[] = {{"load", poke_load}, {"store", poke_store}, {"prfm", poke_prfm}};
		for (size_t i = 0; i < sizeof pokes / sizeof pokes[0]; i++) {
			double wakes, done;
			probe(a, b, poke, probe_ms, pokes[i].poke, &wakes, &done);
			const char *fmt = "rk3399-monitor-probe,%s,poker_cpu=%d;waiter_cpu=%d;poke_us=%g;probe_ms=%g%s%s%s,%s,%.3f\n";
			printf(fmt, pokes[i].name, a, b, poke, probe_ms, tick, sep, extra, "wakes_per_ms", wakes);
			printf(fmt, pokes[i].name, a, b, poke, probe_ms, tick, sep, extra, "pokes_per_ms", done);
			fflush(stdout);
		}
	}
	if (prfm) {
		static const struct touch touches[] = {{"load", poke_load}, {"store", poke_rewrite}, {"prfm", poke_prfm}};
		for (size_t i = 0; i < sizeof touches / sizeof touches[0]; i++) {
			printf("rk3399-prfm-probe,%s,poker_cpu=%d;reader_cpu=%d;lines=%d;probe_rounds=%d%s%s,reread_ns,%.3f\n", touches[i].name, a, b, lines, prfm_rounds,
			       sep, extra, prfm_probe(a, b, lines, prfm_rounds, touches[i].poke));
			fflush(stdout);
		}
	}
	return 0;
}
