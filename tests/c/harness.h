/* The C unit tests' harness: checks that count failures per test, a seeded
 * random generator, box membership (when dg_box.h is included first), and
 * the runner that prints "N passed, M failed".  Included once by each test
 * program (its definitions are static). */
#ifndef DG_TEST_HARNESS_H
#define DG_TEST_HARNESS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- harness ---------------------------------------------------------- */

static int g_fail;          /* failed checks in the current test */
static const char *g_test;  /* name of the current test */

#define EXPECT(cond)                                                       \
    do {                                                                   \
        if (!(cond)) {                                                     \
            if (g_fail++ < 20)                                             \
                fprintf(stderr, "%s:%d: in %s: expected %s\n", __FILE__,   \
                        __LINE__, g_test, #cond);                          \
        }                                                                  \
    } while (0)

/* Reports a failed check with a formatted explanation. */
static inline void failf(const char *fmt, ...)
{
    va_list ap;

    if (g_fail++ >= 20)
        return;
    fprintf(stderr, "in %s: ", g_test);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static uint64_t g_rng = 0x9e3779b97f4a7c15u;

static inline uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

/* Uniform in [lo, hi]. */
static inline int64_t rnd_in(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ---- boxes ---------------------------------------------------------------- */
#ifdef DG_BOX_H
static inline int range_has(dg_range r, int64_t x)
{
    return x >= r.start && x < r.stop && (x - r.start) % r.step == 0;
}

static inline int box_has(const dg_box *b, const int64_t *idx)
{
    for (int i = 0; i < b->ndim; i++)
        if (!range_has(b->r[i], idx[i]))
            return 0;
    return 1;
}
#endif

/* ---- runner ------------------------------------------------------------- */

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

/* Runs the tests `rounds` times (argv[1]: a seed), calling begin(round)
 * before and end() after each round where they are not NULL; prints one
 * line "N passed, M failed" and returns the exit status. */
static inline int run_test_rounds(const test_case *tests, size_t ntests, int argc, char **argv,
                                  int rounds, void (*begin)(int), void (*end)(void))
{
    int passed = 0, failed = 0;

    if (argc > 1)
        g_rng = strtoull(argv[1], NULL, 0) | 1u;
    for (int r = 0; r < rounds; r++) {
        if (begin)
            begin(r);
        for (size_t i = 0; i < ntests; i++) {
            g_test = tests[i].name;
            g_fail = 0;
            tests[i].fn();
            if (g_fail == 0) {
                passed++;
            } else {
                failed++;
                fprintf(stderr, "FAIL %s (round %d, %d checks)\n", g_test, r, g_fail);
            }
        }
        if (end)
            end();
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

/* Runs the tests once. */
static inline int run_tests(const test_case *tests, size_t ntests, int argc, char **argv)
{
    return run_test_rounds(tests, ntests, argc, argv, 1, NULL, NULL);
}

#endif /* DG_TEST_HARNESS_H */
