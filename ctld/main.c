/* tessera-ctld -f CONF [-D] [-v]: the controller daemon. */
#include "ctld/ctld.h"

#include "common/conf.h"
#include "common/errors.h"
#include "common/log.h"

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "Usage: tessera-ctld [-f CONF] [-D] [-v...] [--port PORT]\n"
                 "  -f, --config CONF  configuration file (default: $TESSERA_CONF, then "
                 "/etc/tessera/tessera.conf)\n"
                 "  -D                 stay in the foreground and log to stderr\n"
                 "  -v                 more log output (repeat for more)\n"
                 "      --port PORT    listen on PORT instead of CtldPort\n"
                 "  -h, --help         this text\n"
                 "  -V, --version      print the version\n");
}

/* Go to the background, but let the parent learn whether start-up worked: it waits for
 * one status line on a pipe and exits with its verdict, so "tessera-ctld" on a terminal
 * still fails loudly on a bad configuration, a taken port or a missing MUNGE. Must run
 * before any thread exists. Returns the write end in the child. */
static int daemonize(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        perror("tessera-ctld: pipe");
        exit(1);
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("tessera-ctld: fork");
        exit(1);
    }
    if (pid > 0) {
        close(p[1]);
        char line[1024];
        ssize_t n = read(p[0], line, sizeof(line) - 1);
        if (n <= 0) {
            fprintf(stderr, "tessera-ctld: error: the daemon died during start-up\n");
            exit(1);
        }
        line[n] = '\0';
        if (strcmp(line, "ok") == 0)
            exit(0);
        fprintf(stderr, "tessera-ctld: error: %s\n", line);
        exit(1);
    }
    close(p[0]);
    setsid();
    if (fork() > 0) /* the session leader leaves: we can never regain a terminal */
        _exit(0);
    if (chdir("/") != 0) { /* cannot fail for "/" in practice; keep going regardless */
    }
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        close(null);
    }
    return p[1];
}

static void report(int fd, const char *msg)
{
    if (fd < 0)
        return;
    ssize_t n = write(fd, msg, strlen(msg));
    (void)n;
    close(fd);
}

int main(int argc, char **argv)
{
    struct ctld_options opts = {0};
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {"port", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "f:DvhV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'f': opts.conf_path = optarg; break;
        case 'D': opts.foreground = 1; break;
        case 'v': opts.verbose++; break;
        case 'p': opts.port_override = (uint16_t)atoi(optarg); break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("tessera %s\n", TESSERA_VERSION); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 1;
    }

    /* The daemon changes to "/": keep the file findable (and SIGHUP working). */
    char conf_abs[PATH_MAX];
    const char *conf_path = conf_locate(opts.conf_path);
    if (conf_path[0] != '/' && getcwd(conf_abs, sizeof(conf_abs)) &&
        strlen(conf_abs) + 1 + strlen(conf_path) < sizeof(conf_abs)) {
        strcat(conf_abs, "/");
        strcat(conf_abs, conf_path);
        opts.conf_path = conf_abs;
    }

    log_open("tessera-ctld", LOG_LVL_INFO, NULL);
    int status_fd = opts.foreground ? -1 : daemonize();
    char err[1024];
    struct ctld *c = NULL;
    if (ctld_create(&opts, &c, err, sizeof(err)) != TS_OK) {
        if (status_fd >= 0)
            report(status_fd, err);
        else
            fprintf(stderr, "tessera-ctld: error: %s\n", err);
        return 1;
    }
    if (status_fd >= 0) {
        report(status_fd, "ok");
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 2);
            close(null);
        }
    }
    int code = ctld_run(c);
    ctld_destroy(c);
    log_info("stopped");
    return code;
}
