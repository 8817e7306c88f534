// A minimal check macro for the fake's self-tests: print the failed expectation and exit 1.
#pragma once

#include <cstdio>
#include <cstdlib>

#define SELFTEST_CHECK(condition)                                                                  \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition);     \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)
