/* tessera-bench-acct-fill: write a large synthetic accounting history into a state
 * folder, as the controller would have written it, for contrib/bench/sacct.sh.
 *
 *   tessera-bench-acct-fill --state DIR [--jobs N] [--days D] [--uid U] [--gid G]
 *                           [--cluster NAME] [--seed S]
 *
 * N jobs (ids 1..N) ended evenly over the D days before now, each waited up to two hours
 * and ran up to a day (so the longest eligible-to-end span is about 26 hours); every job
 * has its batch step and every fourth an srun step. The records go through the store's
 * group commit in batches of 10,000, with the acct_by_end index and the counters the
 * controller keeps (next job id after the last, the longest span). Start the controller
 * on DIR afterwards. Prints how long writing took. */
#include "common/net/loop.h"
#include "common/util/errors.h"
#include "ctld/acct_record.h"
#include "ctld/store.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct opts {
    const char *state, *cluster;
    uint32_t jobs, days, uid, gid, seed;
};

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int put_counter(struct store *st, const char *name, uint64_t value)
{
    Tessera__Counter ctr = TESSERA__COUNTER__INIT;
    ctr.value = value;
    uint8_t buf[16];
    size_t len = tessera__counter__pack(&ctr, buf);
    return store_put(st, STORE_DB_COUNTERS, name, strlen(name), buf, len);
}

static int put_step(struct store *st, const Tessera__AcctStep *s)
{
    size_t len;
    uint8_t *buf = acct_step_pack(s, &len), key[ACCT_STEP_KEY_LEN];
    if (!buf)
        return TS_ENOMEM;
    acct_step_key(key, s->job_id, s->step_id);
    int err = store_put(st, STORE_DB_ACCT_STEPS, key, sizeof(key), buf, len);
    free(buf);
    return err;
}

static int put_job(struct store *st, const struct opts *o, uint32_t id, int64_t end,
                   int64_t *max_span)
{
    static const char *names[] = {"sim", "post", "mpi_run", "train", "analysis"};
    static const char *parts[] = {"debug", "batch", "long"};
    int64_t wait = rand() % 7200, run = 1 + rand() % 86400;
    Tessera__AcctJob j = TESSERA__ACCT_JOB__INIT;
    Tessera__AcctUsage u = TESSERA__ACCT_USAGE__INIT;
    char nodes[32];
    j.job_id = id;
    j.name = (char *)names[id % 5];
    j.user_id = o->uid + id % 50;
    j.group_id = o->gid;
    j.account = (char *)"bench";
    j.partition = (char *)parts[id % 3];
    j.cluster = (char *)o->cluster;
    j.end_time = end;
    j.start_time = end - run;
    j.eligible_time = j.submit_time = j.start_time - wait;
    j.time_limit = 86400;
    j.alloc_nodes = 1 + id % 4;
    j.alloc_cpus = 4 * j.alloc_nodes;
    snprintf(nodes, sizeof(nodes), "n[%u-%u]", 1 + id % 100, 1 + id % 100 + j.alloc_nodes - 1);
    j.nodes = nodes;
    j.state = id % 10 == 0 ? TESSERA__JOB_STATE__JOB_FAILED : TESSERA__JOB_STATE__JOB_COMPLETED;
    j.exit_code = id % 10 == 0 ? 1 << 8 : 0;
    if (end - j.eligible_time > *max_span)
        *max_span = end - j.eligible_time;
    size_t len;
    uint8_t *buf = acct_job_pack(&j, &len), key[ACCT_JOB_KEY_LEN], ekey[ACCT_END_KEY_LEN];
    if (!buf)
        return TS_ENOMEM;
    acct_job_key(key, id);
    acct_end_key(ekey, end, id);
    int err = store_put(st, STORE_DB_ACCT_JOBS, key, sizeof(key), buf, len);
    free(buf);
    if (!err)
        err = store_put(st, STORE_DB_ACCT_BY_END, ekey, sizeof(ekey), "", 0);
    Tessera__AcctStep s = TESSERA__ACCT_STEP__INIT;
    s.job_id = id;
    s.step_id = ACCT_STEP_BATCH;
    s.name = (char *)"batch";
    s.state = j.state;
    s.start_time = j.start_time;
    s.end_time = end;
    s.exit_code = j.exit_code;
    s.nodes = nodes;
    s.nnodes = s.ntasks = 1;
    s.cpus = 4;
    s.user_id = j.user_id;
    u.user_usec = (uint64_t)run * 900000;
    u.max_rss_kb = 1024 + (uint64_t)(rand() % 1000000);
    s.usage = &u;
    if (!err)
        err = put_step(st, &s);
    if (!err && id % 4 == 0) {
        s.step_id = 0;
        s.name = (char *)names[id % 5];
        s.ntasks = s.cpus = j.alloc_cpus;
        s.nnodes = j.alloc_nodes;
        err = put_step(st, &s);
    }
    return err;
}

static void usage(void)
{
    fprintf(stderr, "usage: tessera-bench-acct-fill --state DIR [--jobs N] [--days D] "
                    "[--uid U] [--gid G] [--cluster NAME] [--seed S]\n");
    exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        {"state", required_argument, NULL, 's'}, {"jobs", required_argument, NULL, 'j'},
        {"days", required_argument, NULL, 'd'},  {"uid", required_argument, NULL, 'u'},
        {"gid", required_argument, NULL, 'g'},   {"cluster", required_argument, NULL, 'c'},
        {"seed", required_argument, NULL, 'r'},  {NULL, 0, NULL, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (ch) {
        case 's': o->state = optarg; break;
        case 'j': o->jobs = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'd': o->days = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'u': o->uid = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'g': o->gid = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'c': o->cluster = optarg; break;
        case 'r': o->seed = (uint32_t)strtoul(optarg, NULL, 10); break;
        default: usage();
        }
    }
    if (!o->state || !o->jobs || !o->days)
        usage();
}

int main(int argc, char **argv)
{
    struct opts o = {.jobs = 1000000, .days = 365, .cluster = "bench", .seed = 1};
    parse(argc, argv, &o);
    srand(o.seed);
    mkdir(o.state, 0700);
    struct loop *loop = loop_create();
    struct store *st = NULL;
    int err = loop ? store_open(loop, o.state, STORE_DEFAULT_MAP_SIZE, &st) : TS_ENOMEM;
    if (err) {
        fprintf(stderr, "cannot open %s: %s\n", o.state, ts_strerror(err));
        return 1;
    }
    uint64_t t0 = now_us();
    int64_t now = (int64_t)time(NULL), first = now - (int64_t)o.days * 86400, max_span = 0;
    double step = (double)o.days * 86400 / o.jobs;
    for (uint32_t id = 1; id <= o.jobs && !err; id++) {
        err = put_job(st, &o, id, first + (int64_t)(step * id), &max_span);
        if (!err && id % 10000 == 0)
            err = store_sync(st);
    }
    if (!err)
        err = put_counter(st, "acct_max_span", (uint64_t)max_span);
    if (!err)
        err = put_counter(st, "next_job_id", (uint64_t)o.jobs + 1);
    if (!err)
        err = store_sync(st);
    store_close(st);
    loop_destroy(loop);
    if (err) {
        fprintf(stderr, "writing failed: %s\n", ts_strerror(err));
        return 1;
    }
    printf("wrote %u jobs (%u steps) over %u days in %.1f s\n", o.jobs, o.jobs + o.jobs / 4,
           o.days, (double)(now_us() - t0) / 1e6);
    return 0;
}
