/* tessera-stepd -f CONF -N NODE -r FD: started by tessera-noded for one step, the launch
 * on standard input (a 4-byte big-endian length and a packed StepLaunchRequest whose
 * credential the node daemon has checked), its record folder (noded/spool.h) open at
 * descriptor FD. Not meant to be run by hand.
 */
#include "noded/procinfo.h"
#include "noded/stepd.h"

#include "common/conf/conf.h"
#include "common/job/steplayout.h"
#include "common/net/loop.h"
#include "common/util/daemon.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The largest launch accepted on the pipe (environments can be large; 16 MiB as frames). */
#define LAUNCH_MAX (16u << 20)

static int read_all(int fd, uint8_t *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = read(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return TS_ESYS;
        off += (size_t)n;
    }
    return TS_OK;
}

static Tessera__StepLaunchRequest *read_launch(void)
{
    uint8_t hdr[4];
    if (read_all(0, hdr, 4) != TS_OK)
        return NULL;
    size_t len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
    if (len > LAUNCH_MAX)
        return NULL;
    uint8_t *buf = malloc(len ? len : 1);
    Tessera__StepLaunchRequest *req = NULL;
    if (buf && read_all(0, buf, len) == TS_OK)
        req = tessera__step_launch_request__unpack(NULL, len, buf);
    free(buf);
    return req;
}

static int find_node(const Tessera__StepLayout *l, const char *name, size_t *index)
{
    for (size_t i = 0; i < l->n_nodes; i++) {
        if (!strcmp(l->nodes[i]->name, name)) {
            *index = i;
            return TS_OK;
        }
    }
    return TS_EINVAL;
}

static int setup_logging(const struct conf *conf, const char *node)
{
    enum log_level lvl = LOG_LVL_INFO;
    log_level_parse(conf->noded_debug, &lvl);
    char ident[128], path[1024];
    snprintf(ident, sizeof(ident), "tessera-stepd(%s)", node);
    /* the node daemon's log file, or its standard error (inherited) */
    const char *dest = conf->noded_log_file
                           ? daemon_expand_name(conf->noded_log_file, node, path, sizeof(path))
                           : NULL;
    return log_open(ident, lvl, dest);
}

int main(int argc, char **argv)
{
    const char *conf_path = NULL, *node = NULL;
    int record_fd = -1;
    int opt;
    while ((opt = getopt(argc, argv, "f:N:r:")) != -1) {
        switch (opt) {
        case 'f': conf_path = optarg; break;
        case 'N': node = optarg; break;
        case 'r': record_fd = atoi(optarg); break;
        default: return 2;
        }
    }
    /* the folder is the node daemon's, root's: the tasks must not inherit it */
    if (!conf_path || !node || record_fd < 3 || fcntl(record_fd, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "usage: tessera-stepd -f CONF -N NODE -r FD (started by tessera-noded)\n");
        return 2;
    }
    /* in the step's container, under the job's memory limit: the kernel must kill tasks,
     * never the daemon that reports their ends */
    procinfo_oom_protect(1);
    struct stepd sd = {.node = node, .record_fd = record_fd};
    char errbuf[1024] = "";
    int err = conf_load(conf_path, &sd.conf, errbuf, sizeof(errbuf));
    if (err) {
        fprintf(stderr, "tessera-stepd: error: %s\n", errbuf);
        return 1;
    }
    setup_logging(sd.conf, node);
    sd.launch = read_launch();
    sd.layout = sd.launch ? tessera__step_layout__unpack(NULL, sd.launch->credential.len,
                                                         sd.launch->credential.data)
                          : NULL;
    if (!sd.layout || find_node(sd.layout, node, &sd.node_index) != TS_OK) {
        log_error("no usable launch on standard input");
        err = TS_EINVAL;
    } else if (!(sd.step_job_id = steplayout_step_job_id(sd.layout))) {
        log_error("the launch names no step");
        err = TS_EINVAL;
    } else if (!(sd.loop = loop_create())) {
        err = TS_ENOMEM;
    } else if ((err = stepd_start(&sd, errbuf, sizeof(errbuf)))) {
        log_error("step %u.%u: cannot start: %s", sd.step_job_id, sd.layout->step_id,
                  errbuf[0] ? errbuf : ts_strerror(err));
    } else {
        err = loop_run(sd.loop);
    }
    if (sd.loop) {
        stepd_stop(&sd);
        loop_destroy(sd.loop);
    }
    if (sd.layout)
        tessera__step_layout__free_unpacked(sd.layout, NULL);
    if (sd.launch)
        tessera__step_launch_request__free_unpacked(sd.launch, NULL);
    conf_free(sd.conf);
    log_close();
    /* the end is recorded: what the tasks left in the step's group goes with this daemon
     * (it leads the group: the node daemon started it in a session of its own) */
    if (sd.status_written && getpgrp() == getpid())
        kill(0, SIGKILL);
    return err ? 1 : 0;
}
