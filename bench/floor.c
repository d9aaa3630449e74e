/* The floor of any PTY wrapper, for bench/run: run a program on a pseudo-terminal with
 * forkpty(3), copy its output to stdout, wait for it, and exit with its code. Nothing else: no
 * terminal settings, no signals, no parsing. What this costs over running the program directly
 * is what a pseudo-terminal and a second process cost; sticky's per-turn overhead is measured
 * against it (issue 12, item 8). */
#include <errno.h>
#include <pty.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_floor PROGRAM [ARGS...]\n");
        return 2;
    }
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid < 0) {
        perror("forkpty");
        return 1;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror("execvp");
        _exit(127);
    }
    char buf[4096];
    for (;;) {
        ssize_t n = read(master, buf, sizeof buf);
        if (n > 0) {
            if (write(STDOUT_FILENO, buf, (size_t)n) < 0) break;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            break; /* EOF, or EIO once the program and its terminal are gone */
        }
    }
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
