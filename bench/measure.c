/* measure: runs a command and writes what its whole process tree cost.
 *
 *   measure RESULT_FILE COMMAND [ARGS...]
 *
 * RESULT_FILE gets one line: "cpu_ns=U+S wall_ns=W maxrss_kb=M status=S", where the CPU time is
 * that of every descendant the command waited for (a tracer's helper processes, such as
 * heaptrack_interpret and its compressor, count like the traced program) and maxrss is that of the
 * largest one. The command's own output passes through. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static unsigned long long ns(struct timeval tv) {
    return (unsigned long long)tv.tv_sec * 1000000000ull + (unsigned long long)tv.tv_usec * 1000ull;
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: measure RESULT_FILE COMMAND [ARGS...]\n");
        return 2;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) return perror("fork"), 2;
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror(argv[2]);
        _exit(127);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0) return perror("waitpid"), 2;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    FILE* out = fopen(argv[1], "w");
    if (!out) return perror(argv[1]), 2;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    fprintf(out, "cpu_ns=%llu wall_ns=%llu maxrss_kb=%ld status=%d\n",
            ns(ru.ru_utime) + ns(ru.ru_stime),
            (unsigned long long)(t1.tv_sec - t0.tv_sec) * 1000000000ull +
                (unsigned long long)(t1.tv_nsec - t0.tv_nsec),
            ru.ru_maxrss, code);
    fclose(out);
    return code;
}
