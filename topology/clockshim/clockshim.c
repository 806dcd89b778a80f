/*
 * clockshim: an LD_PRELOAD library that moves a server's wall clock by an
 * offset read from a file, without a restart.
 *
 * Containers share the kernel's clock and time namespaces do not cover
 * CLOCK_REALTIME, so the only way to skew one node is inside its process.
 * libfaketime deadlocks in a futex at start-up with jemalloc-built servers,
 * because its hooks call into libc, which calls malloc, which reads the
 * clock. This shim makes raw system calls only: no libc, no malloc, no
 * locks, so it cannot recurse and also loads on musl-based images.
 *
 * The offset file (OFFSET_PATH; tests compile another path in) holds a signed decimal number of
 * nanoseconds. It is re-read at most every REFRESH_NS of real time; writers
 * replace it atomically (write a temporary file, rename it over).
 * CLOCK_MONOTONIC and friends are left alone: only the wall clock moves.
 */

typedef long long i64;

struct ts { i64 sec; long nsec; };
struct tv { i64 sec; long usec; };

#ifndef OFFSET_PATH
#define OFFSET_PATH "/var/lib/lockcheck/clock-offset"
#endif
#define REFRESH_NS 5000000LL

#if defined(__x86_64__)
#define SYS_READ 0
#define SYS_CLOSE 3
#define SYS_OPENAT 257
#define SYS_CLOCK_GETTIME 228
static long sys(long n, long a, long b, long c, long d) {
	long ret;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define SYS_READ 63
#define SYS_CLOSE 57
#define SYS_OPENAT 56
#define SYS_CLOCK_GETTIME 113
static long sys(long n, long a, long b, long c, long d) {
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
	return x0;
}
#else
#error "clockshim supports x86_64 and aarch64"
#endif

#define AT_FDCWD -100
#define CLOCK_REALTIME 0
#define CLOCK_REALTIME_COARSE 5
#define CLOCK_REALTIME_ALARM 8
#define CLOCK_TAI 11

/* Races between threads are benign: each field is one aligned word, and a
 * stale offset is corrected at the next refresh. */
static volatile i64 offset_ns;
static volatile i64 next_refresh;

/* parse_offset reads an optionally signed decimal integer; anything else
 * (an empty or partly written file) leaves the offset unchanged. */
static int parse_offset(const char *s, long n, i64 *out) {
	long i = 0;
	int neg = 0, digits = 0;
	i64 v = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
	if (i < n && (s[i] == '-' || s[i] == '+')) { neg = s[i] == '-'; i++; }
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) v = v * 10 + (s[i] - '0');
	if (!digits) return 0;
	*out = neg ? -v : v;
	return 1;
}

static void refresh(i64 now) {
	if (now < next_refresh && now > next_refresh - 2 * REFRESH_NS) return;
	next_refresh = now + REFRESH_NS;
	long fd = sys(SYS_OPENAT, AT_FDCWD, (long)OFFSET_PATH, 0, 0);
	if (fd < 0) { offset_ns = 0; return; }
	char buf[32];
	long n = sys(SYS_READ, fd, (long)buf, sizeof buf, 0);
	sys(SYS_CLOSE, fd, 0, 0, 0);
	i64 v;
	if (n > 0 && parse_offset(buf, n, &v)) offset_ns = v;
}

static int is_wall(long id) {
	return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_REALTIME_ALARM || id == CLOCK_TAI;
}

static void shift(struct ts *t) {
	i64 ns = t->sec * 1000000000LL + t->nsec;
	refresh(ns);
	ns += offset_ns;
	t->sec = ns / 1000000000LL;
	t->nsec = (long)(ns % 1000000000LL);
	if (t->nsec < 0) { t->nsec += 1000000000L; t->sec--; }
}

int clock_gettime(long id, struct ts *t) {
	long r = sys(SYS_CLOCK_GETTIME, id, (long)t, 0, 0);
	if (r < 0) return -1;
	if (is_wall(id)) shift(t);
	return 0;
}

int __clock_gettime(long id, struct ts *t) { return clock_gettime(id, t); }

int gettimeofday(struct tv *tv, void *tz) {
	(void)tz;
	struct ts t;
	if (sys(SYS_CLOCK_GETTIME, CLOCK_REALTIME, (long)&t, 0, 0) < 0) return -1;
	shift(&t);
	if (tv) { tv->sec = t.sec; tv->usec = t.nsec / 1000; }
	return 0;
}

i64 time(i64 *out) {
	struct ts t;
	if (sys(SYS_CLOCK_GETTIME, CLOCK_REALTIME, (long)&t, 0, 0) < 0) return -1;
	shift(&t);
	if (out) *out = t.sec;
	return t.sec;
}
