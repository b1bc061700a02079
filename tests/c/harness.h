/* The harness of the C unit tests: checks that count failures per test, and
 * a runner that prints "N passed, M failed". */
#ifndef DG_TEST_HARNESS_H
#define DG_TEST_HARNESS_H

#include <stdarg.h>
#include <stdio.h>

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

typedef struct test_case {
    const char *name;
    void (*fn)(void);
} test_case;

/* Runs the n tests, prints "N passed, M failed"; 0 if none failed, else 1. */
static inline int run_tests(const test_case *tests, size_t n)
{
    int passed = 0, failed = 0;

    for (size_t i = 0; i < n; i++) {
        g_test = tests[i].name;
        g_fail = 0;
        tests[i].fn();
        if (g_fail == 0) {
            passed++;
        } else {
            failed++;
            fprintf(stderr, "FAIL %s (%d checks)\n", g_test, g_fail);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

#endif /* DG_TEST_HARNESS_H */
