/* scenario_fork: the parent allocates and leaks A, forks; the child allocates and leaks B and
 * exits 0; the parent waits. Each process must get its own trace, and the child's must not
 * re-report A (the child clears the state it inherited: preload/session/session.cpp,
 * on_fork_child). (Real CUDA forbids using the driver in a child forked after initialisation; the
 * fake allows it so that fork handling in the tracer can be tested.)
 *
 * Ground truth (device 0, cuMemAlloc_v2 called directly):
 *   parent:  parent_leak  6000006 dev leaked. 1 allocation, 0 frees; live 1 block, 6000006 bytes;
 *            peak 6000006.
 *   child:   child_leak   7000007 dev leaked. 1 allocation, 0 frees; live 1 block, 7000007 bytes;
 *            peak 7000007 (A is inherited memory, not the child's allocation).
 * The fake driver itself, being copied by fork, counts 13000013 bytes in use in the child. */
#include "app_check.h"

#include <cuda.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) CUdeviceptr parent_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 6000006));
    return p;
}

__attribute__((noinline)) CUdeviceptr child_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 7000007));
    return p;
}

int main(void) {
    APP_OK(cuInit(0));
    parent_leak();

    const pid_t child = fork();
    APP_CHECK(child >= 0, "fork failed");
    if (child == 0) {
        child_leak();
        app_expect_calls("cuMemAlloc_v2", 2); /* the parent's call is in the copied counter */
        app_expect_device_used(0, 13000013);
        exit(0); /* exit, not _exit: the tracer flushes from its exit handlers */
    }

    int status = 0;
    APP_CHECK(waitpid(child, &status, 0) == child, "waitpid failed");
    APP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (status 0x%x)", status);
    app_expect_calls("cuMemAlloc_v2", 1);
    app_expect_device_used(0, 6000006);
    return 0;
}
