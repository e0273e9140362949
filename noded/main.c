/* tessera-noded -f CONF -N NODENAME [-D] [-v]: the node daemon. */
#include "noded/noded.h"

#include "common/conf/conf.h"
#include "common/util/daemon.h"
#include "common/util/errors.h"
#include "common/util/log.h"
#include "common/util/version.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *out)
{
    fprintf(out, "Usage: tessera-noded [-f CONF] -N NODENAME [-D] [-v...]\n"
                 "  -f, --config CONF  configuration file (default: $TESSERA_CONF, then "
                 "/etc/tessera/tessera.conf)\n"
                 "  -N NODENAME        the node this daemon is (a NodeName of the configuration)\n"
                 "  -D                 stay in the foreground and log to stderr\n"
                 "  -v                 more log output (repeat for more)\n"
                 "  -h, --help         this text\n"
                 "  -V, --version      print the version\n");
}

int main(int argc, char **argv)
{
    struct noded_options opts = {0};
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "f:N:DvhV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'f': opts.conf_path = optarg; break;
        case 'N': opts.node_name = optarg; break;
        case 'D': opts.foreground = 1; break;
        case 'v': opts.verbose++; break;
        case 'h': usage(stdout); return 0;
        case 'V': puts(TESSERA_VERSION_LINE); return 0;
        default: usage(stderr); return 1;
        }
    }
    if (optind < argc || !opts.node_name) {
        if (!opts.node_name)
            fprintf(stderr, "tessera-noded: error: -N NODENAME is required\n");
        usage(stderr);
        return 1;
    }
    char conf_abs[PATH_MAX];
    opts.conf_path = daemon_absolute_path(conf_locate(opts.conf_path), conf_abs, sizeof(conf_abs));

    log_open("tessera-noded", LOG_LVL_INFO, NULL);
    int status_fd = opts.foreground ? -1 : daemon_start("tessera-noded");
    daemon_raise_nofile(); /* before any thread: connections are descriptors */
    char err[1024];
    struct noded *nd = NULL;
    if (noded_create(&opts, &nd, err, sizeof(err)) != TS_OK) {
        if (status_fd >= 0)
            daemon_report(status_fd, err);
        else
            fprintf(stderr, "tessera-noded: error: %s\n", err);
        return 1;
    }
    daemon_report(status_fd, "ok");
    int code = noded_run(nd);
    noded_destroy(nd);
    log_info("stopped");
    return code;
}
