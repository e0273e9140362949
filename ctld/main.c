/* tessera-ctld -f CONF [-D] [-v]: the controller daemon. */
#include "ctld/ctld.h"

#include "common/conf/conf.h"
#include "common/util/daemon.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/version.h"

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
        case 'V': puts(TESSERA_VERSION_LINE); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 1;
    }

    /* The daemon changes to "/": keep the file findable (and SIGHUP working). */
    char conf_abs[PATH_MAX];
    opts.conf_path = daemon_absolute_path(conf_locate(opts.conf_path), conf_abs, sizeof(conf_abs));

    log_open("tessera-ctld", LOG_LVL_INFO, NULL);
    int status_fd = opts.foreground ? -1 : daemon_start("tessera-ctld");
    daemon_raise_nofile(); /* before any thread: connections are descriptors */
    char err[1024];
    struct ctld *c = NULL;
    if (ctld_create(&opts, &c, err, sizeof(err)) != TS_OK) {
        if (status_fd >= 0)
            daemon_report(status_fd, err);
        else
            fprintf(stderr, "tessera-ctld: error: %s\n", err);
        return 1;
    }
    daemon_report(status_fd, "ok");
    int code = ctld_run(c);
    if (ctld_destroy(c) != TS_OK) {
        log_error("stopped with changes that could not be stored");
        return 1;
    }
    log_info("stopped");
    return code;
}
