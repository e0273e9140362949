#include "harness.h"

#include "common/auth/auth.h"
#include "common/util/errors.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <grp.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *tmp_root(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

int harness_tmpdir(const char *tag, char *out, size_t len)
{
    snprintf(out, len, "%s/tessera-%s-XXXXXX", tmp_root(), tag);
    if (!mkdtemp(out))
        return -1;
    return chmod(out, 0755);
}

static int rmrf_at(int parent, const char *name)
{
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        DIR *d = fdopendir(fd);
        if (!d) {
            close(fd);
            return -1;
        }
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                rmrf_at(dirfd(d), e->d_name);
        closedir(d);
        return unlinkat(parent, name, AT_REMOVEDIR);
    }
    return unlinkat(parent, name, 0);
}

int harness_rmrf(const char *path)
{
    const char *root = tmp_root();
    if (!path || strncmp(path, root, strlen(root)) != 0 || !strstr(path, "/tessera-"))
        return -1;
    return rmrf_at(AT_FDCWD, path);
}

int harness_write_file(const char *path, const char *content, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    size_t len = strlen(content);
    ssize_t n = write(fd, content, len);
    fchmod(fd, mode);
    close(fd);
    return n == (ssize_t)len ? 0 : -1;
}

char *harness_read_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char *g = realloc(buf, cap *= 2);
            if (!g) {
                free(buf);
                buf = NULL;
            }
            buf = g;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    return buf;
}

static void child_setup(pid_t parent, const char *log, int out_fd, int err_fd)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (log) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
    }
    if (out_fd >= 0)
        dup2(out_fd, 1);
    if (err_fd >= 0)
        dup2(err_fd, 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        close(devnull);
    }
}

/* uid (uid_t)-1 keeps the test's own identity. */
static pid_t spawn(char *const argv[], char *const env[], const char *log, int out_fd,
                   int err_fd, uid_t uid, gid_t gid)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    child_setup(parent, log, out_fd, err_fd);
    if (uid != (uid_t)-1 && (setgroups(0, NULL) || setgid(gid) || setuid(uid))) {
        fprintf(stderr, "harness: cannot become uid %u: %s\n", (unsigned)uid, strerror(errno));
        _exit(127);
    }
    for (size_t i = 0; env && env[i]; i++)
        putenv(env[i]);
    execv(argv[0], argv);
    fprintf(stderr, "harness: cannot exec %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

pid_t harness_spawn(char *const argv[], char *const env[], const char *log)
{
    return spawn(argv, env, log, -1, -1, (uid_t)-1, (gid_t)-1);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int harness_wait(pid_t pid, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    int status;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0)
            return -1;
        if (now_ms() >= deadline)
            break;
        usleep(5000);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

int harness_stop(pid_t pid, int sig, int timeout_ms)
{
    if (pid <= 0)
        return -1;
    kill(-pid, sig);
    kill(pid, sig);
    return harness_wait(pid, timeout_ms);
}

/* Append whatever fd has to *buf. Returns 0 at EOF. */
static int drain(int fd, char **buf, size_t *len)
{
    char tmp[4096];
    ssize_t n = read(fd, tmp, sizeof(tmp));
    if (n <= 0)
        return n < 0 && errno == EINTR ? 1 : 0;
    char *g = realloc(*buf, *len + (size_t)n + 1);
    if (!g)
        return 0;
    memcpy(g + *len, tmp, (size_t)n);
    *len += (size_t)n;
    g[*len] = '\0';
    *buf = g;
    return 1;
}

int harness_run(char *const argv[], char *const env[], char **out, char **err, int timeout_ms)
{
    return harness_run_as(argv, env, (uid_t)-1, (gid_t)-1, out, err, timeout_ms);
}

int harness_run_as(char *const argv[], char *const env[], uid_t uid, gid_t gid, char **out,
                   char **err, int timeout_ms)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC))
        return -1;
    pid_t pid = spawn(argv, env, NULL, po[1], pe[1], uid, gid);
    close(po[1]);
    close(pe[1]);
    char *bo = calloc(1, 1), *be = calloc(1, 1);
    size_t lo = 0, le = 0;
    int open_o = 1, open_e = 1;
    long long deadline = now_ms() + timeout_ms;
    while ((open_o || open_e) && now_ms() < deadline) {
        struct pollfd p[2] = {{.fd = open_o ? po[0] : -1, .events = POLLIN},
                              {.fd = open_e ? pe[0] : -1, .events = POLLIN}};
        if (poll(p, 2, 100) <= 0)
            continue;
        if (p[0].revents && !drain(po[0], &bo, &lo))
            open_o = 0;
        if (p[1].revents && !drain(pe[0], &be, &le))
            open_e = 0;
    }
    close(po[0]);
    close(pe[0]);
    long long left = deadline - now_ms();
    int status = harness_wait(pid, left > 0 ? (int)left : 1);
    if (out)
        *out = bo;
    else
        free(bo);
    if (err)
        *err = be;
    else
        free(be);
    if (status < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Whether port can be bound on 127.0.0.1 right now. */
static int port_bindable(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
    close(fd);
    return ok;
}

/* A random port in [10000, 32767]: below the kernel's ephemeral range, so an outgoing
 * connection of another test can never take it between now and the daemon's bind. */
uint16_t harness_free_port(void)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint16_t r;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
            return 0;
        uint16_t port = (uint16_t)(10000 + r % (32768 - 10000));
        if (port_bindable(port))
            return port;
    }
    return 0;
}

static int write_key(const char *path)
{
    unsigned char key[1024];
    if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
        return -1;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, key, sizeof(key));
    close(fd);
    return n == (ssize_t)sizeof(key) ? 0 : -1;
}

int harness_munge_start(struct harness_munge *m)
{
    memset(m, 0, sizeof(*m));
    if (harness_tmpdir("munge", m->dir, sizeof(m->dir)))
        return -1;
    char key[400], pid[400], logf[400], seed[400];
    snprintf(m->socket, sizeof(m->socket), "%s/munge.socket", m->dir);
    snprintf(key, sizeof(key), "--key-file=%s/munge.key", m->dir);
    snprintf(pid, sizeof(pid), "--pid-file=%s/munged.pid", m->dir);
    snprintf(logf, sizeof(logf), "--log-file=%s/munged.log", m->dir);
    snprintf(seed, sizeof(seed), "--seed-file=%s/munged.seed", m->dir);
    char sock[400];
    snprintf(sock, sizeof(sock), "--socket=%s", m->socket);
    if (write_key(key + strlen("--key-file=")))
        return -1;
    /* --force: munged refuses to run as root otherwise */
    char *argv[] = {"/usr/sbin/munged", "--foreground", "--force", key, sock, pid, logf, seed,
                    NULL};
    char out[400];
    snprintf(out, sizeof(out), "%s/munged.out", m->dir);
    m->pid = harness_spawn(argv, NULL, out);
    if (m->pid < 0)
        return -1;
    for (int i = 0; i < 500; i++) { /* up to 10 s */
        if (auth_selftest(m->socket) == TS_OK)
            return 0;
        if (waitpid(m->pid, NULL, WNOHANG) == m->pid) {
            m->pid = 0;
            return -1;
        }
        usleep(20000);
    }
    harness_munge_stop(m);
    return -1;
}

void harness_munge_stop(struct harness_munge *m)
{
    if (m->pid > 0)
        harness_stop(m->pid, SIGTERM, 5000);
    m->pid = 0;
    if (m->dir[0])
        harness_rmrf(m->dir);
    m->dir[0] = '\0';
}
