/* scenario_fork_exec: the parent allocates and leaks A, then forks a child that immediately execs
 * /bin/true and never touches CUDA. Only the parent may produce a trace: the forked child and the
 * exec'd /bin/true (which inherits LD_PRELOAD) must write nothing.
 *
 * Ground truth (device 0, cuMemAlloc_v2 called directly):
 *   parent:  parent_leak 6000006 dev leaked. 1 allocation, 0 frees; live 1 block, 6000006 bytes.
 *   child:   no CUDA call, no trace. */
#include "app_check.h"

#include <cuda.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) CUdeviceptr parent_leak(void) {
    CUdeviceptr p = 0;
    APP_OK(cuMemAlloc(&p, 6000006));
    return p;
}

int main(void) {
    APP_OK(cuInit(0));
    parent_leak();

    const pid_t child = fork();
    APP_CHECK(child >= 0, "fork failed");
    if (child == 0) {
        execl("/bin/true", "true", (char*)NULL);
        _exit(127);
    }

    int status = 0;
    APP_CHECK(waitpid(child, &status, 0) == child, "waitpid failed");
    APP_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "/bin/true failed (status 0x%x)",
              status);
    app_expect_calls("cuMemAlloc_v2", 1);
    app_expect_device_used(0, 6000006);
    return 0;
}
