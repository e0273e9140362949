/* What integration tests that drive the commands share: running one and keeping its exit
 * status and output, looking for lines, waiting until squeue shows a state.
 *
 * Include after <cmocka.h> and "cluster.h", in a file that defines
 * `static struct harness_cluster cluster;` first: RUN() runs the command against it. */
#ifndef TESSERA_TESTS_CMDCHECK_H
#define TESSERA_TESTS_CMDCHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct result {
    int rc;
    char *out, *err;
};

static inline struct result cmdcheck_run(struct harness_cluster *c, const char *cmd,
                                         const char *const args[])
{
    struct result r = {0};
    r.rc = harness_cmd(c, cmd, args, &r.out, &r.err);
    return r;
}
#define RUN(cmd, ...) cmdcheck_run(&cluster, cmd, (const char *const[]){__VA_ARGS__, NULL})

static inline void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
}

static inline void expect_ok(const struct result *r)
{
    if (r->rc != 0)
        fail_msg("exit %d\nstdout:\n%s\nstderr:\n%s", r->rc, r->out, r->err);
}

/* Whether text has a line starting with prefix (whole: the line equals it). */
static inline int cmdcheck_line(const char *text, const char *prefix, int whole)
{
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p;) {
        if (!strncmp(p, prefix, len) && (!whole || p[len] == '\n' || p[len] == '\0'))
            return 1;
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return 0;
}

static inline int has_line(const char *text, const char *line)
{
    return cmdcheck_line(text, line, 1);
}

static inline int has_prefix_line(const char *text, const char *prefix)
{
    return cmdcheck_line(text, prefix, 0);
}

static inline int count_lines(const char *text)
{
    int n = 0;
    for (const char *p = text; p && *p; p++)
        n += *p == '\n';
    return n;
}

__attribute__((format(printf, 2, 3), unused)) static void expect_line(const char *text,
                                                                       const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (!has_line(text, line))
        fail_msg("missing line '%s' in:\n%s", line, text ? text : "(null)");
}

/* "sbatch --parsable -D dir ARGS..." that must succeed; the job id. */
static inline unsigned cmdcheck_submit(struct harness_cluster *c, const char *dir,
                                       const char *const args[])
{
    const char *full[40] = {"--parsable", "-D", dir};
    size_t n = 3;
    for (size_t i = 0; args[i] && n < 39; i++)
        full[n++] = args[i];
    full[n] = NULL;
    struct result r = cmdcheck_run(c, "sbatch", full);
    if (r.rc != 0)
        fail_msg("sbatch failed (%d): %s", r.rc, r.err);
    unsigned id = (unsigned)strtoul(r.out, NULL, 10);
    result_free(&r);
    return id;
}
/* SUBMIT(args...) in a file that also defines `static char outdir[]`: jobs write there. */
#define SUBMIT(...) cmdcheck_submit(&cluster, outdir, (const char *const[]){__VA_ARGS__, NULL})

/* The value of " KEY=" in "scontrol show job ID" (static storage, "" when absent). */
static inline const char *cmdcheck_show_field(struct harness_cluster *c, unsigned id,
                                              const char *key)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = cmdcheck_run(c, "scontrol", (const char *const[]){"show", "job", sid,
                                                                         NULL});
    static char buf[512];
    buf[0] = '\0';
    char pat[64];
    snprintf(pat, sizeof(pat), " %s=", key);
    const char *p = r.out ? strstr(r.out, pat) : NULL;
    if (p) {
        p += strlen(pat);
        snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, " \n"), p);
    }
    result_free(&r);
    return buf;
}
#define show_field(id, key) cmdcheck_show_field(&cluster, id, key)

/* A time of "scontrol show job ID" (" KEY=2026-11-29T07:40:00"), 0 when it shows none. */
static inline time_t cmdcheck_show_time(struct harness_cluster *c, unsigned id, const char *key)
{
    struct tm tm = {0};
    if (!strptime(cmdcheck_show_field(c, id, key), "%Y-%m-%dT%H:%M:%S", &tm))
        return 0;
    tm.tm_isdst = -1;
    return mktime(&tm);
}
#define show_time(id, key) cmdcheck_show_time(&cluster, id, key)

/* "squeue -h -t all -o FORMAT -j ID", malloc'd. */
static inline char *cmdcheck_query(struct harness_cluster *c, unsigned id, const char *format)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = cmdcheck_run(c, "squeue",
                                   (const char *const[]){"-h", "-t", "all", "-o", format, "-j",
                                                         sid, NULL});
    if (r.rc != 0)
        fail_msg("squeue failed: %s", r.err);
    free(r.err);
    return r.out;
}
#define query(id, format) cmdcheck_query(&cluster, id, format)

/* Wait until "squeue -o FORMAT -j ID" prints want (up to seconds). */
static inline void cmdcheck_wait_for(struct harness_cluster *c, unsigned id, const char *format,
                                     const char *want, int seconds)
{
    char *got = NULL;
    for (int i = 0; i < seconds * 10; i++) {
        free(got);
        got = cmdcheck_query(c, id, format);
        if (!strcmp(got, want)) {
            free(got);
            return;
        }
        usleep(100000);
    }
    char *reason = cmdcheck_query(c, id, "%r");
    fail_msg("job %u: squeue -o '%s' printed '%s' (reason %s), waited for '%s'", id, format, got,
             reason, want);
}
#define wait_for(id, format, want, seconds) cmdcheck_wait_for(&cluster, id, format, want, seconds)

/* Wait until the controller has forgotten job id (MinJobAge after its end: "squeue -t all
 * -j ID" shows nothing), up to seconds. */
static inline void cmdcheck_wait_forgotten(struct harness_cluster *c, unsigned id, int seconds)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    char *got = NULL;
    for (int i = 0; i < seconds * 10; i++) {
        free(got);
        struct result r = cmdcheck_run(c, "squeue", (const char *const[]){"-h", "-t", "all",
                                                                           "-j", sid, NULL});
        free(r.err);
        got = r.out;
        if (!got || !*got) {
            free(got);
            return;
        }
        usleep(100000);
    }
    fail_msg("job %u: still known after %d s: '%s'", id, seconds, got);
}
#define wait_forgotten(id, seconds) cmdcheck_wait_forgotten(&cluster, id, seconds)

/* The main scheduler's cycles so far ("Total cycles:" of "scontrol show sched"). */
static inline unsigned long cmdcheck_sched_cycles(struct harness_cluster *c)
{
    struct result r = cmdcheck_run(c, "scontrol", (const char *const[]){"show", "sched", NULL});
    const char *p = r.out ? strstr(r.out, "Total cycles:") : NULL;
    if (r.rc != 0 || !p)
        fail_msg("scontrol show sched (%d): %s%s", r.rc, r.out, r.err);
    unsigned long n = strtoul(p + strlen("Total cycles:"), NULL, 10);
    result_free(&r);
    return n;
}

/* Wait until a scheduling cycle has run entirely after this call (asking for cycles with
 * "scontrol schedule" meanwhile): whatever the scheduler would do with the queue as it is
 * now, it has done. For checks that something does not happen. */
static inline void cmdcheck_wait_sched_cycle(struct harness_cluster *c, int seconds)
{
    unsigned long before = cmdcheck_sched_cycles(c);
    for (int i = 0; i < seconds * 10; i++) {
        struct result r = cmdcheck_run(c, "scontrol", (const char *const[]){"schedule", NULL});
        result_free(&r);
        if (cmdcheck_sched_cycles(c) > before)
            return;
        usleep(100000);
    }
    fail_msg("no scheduling cycle in %d s", seconds);
}
#define wait_sched_cycle(seconds) cmdcheck_wait_sched_cycle(&cluster, seconds)

/* scancel ID, whatever it answers (a test ending its own jobs). */
static inline void cmdcheck_cancel(struct harness_cluster *c, unsigned id)
{
    char sid[16];
    snprintf(sid, sizeof(sid), "%u", id);
    struct result r = cmdcheck_run(c, "scancel", (const char *const[]){sid, NULL});
    result_free(&r);
}
#define cancel_job(id) cmdcheck_cancel(&cluster, id)

/* "sbatch --parsable -D dir -w node --wrap script" as uid, which must succeed; the id. */
static inline unsigned cmdcheck_submit_as(struct harness_cluster *c, uid_t uid, const char *dir,
                                          const char *node, const char *script)
{
    const char *args[] = {"--parsable", "-D", dir, "-w", node, "--wrap", script, NULL};
    char *out = NULL, *err = NULL;
    int rc = harness_cmd_as(c, uid, "sbatch", args, &out, &err);
    if (rc != 0)
        fail_msg("sbatch as uid %u failed (%d): %s", (unsigned)uid, rc, err);
    unsigned id = (unsigned)strtoul(out, NULL, 10);
    free(out);
    free(err);
    return id;
}
/* SUBMIT_AS(uid, node, script) in a file with `static char outdir[]`. */
#define SUBMIT_AS(uid, node, script) cmdcheck_submit_as(&cluster, uid, outdir, node, script)

/* How many times needle occurs in text (NULL: none). */
static inline int cmdcheck_count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* The file at path once it holds want at least times times (up to seconds); malloc'd. */
static inline char *cmdcheck_file_with_n(const char *path, const char *want, int times,
                                         int seconds)
{
    char *text = NULL;
    for (int i = 0; i < seconds * 10; i++) {
        free(text);
        text = harness_read_file(path);
        if (cmdcheck_count(text, want) >= times)
            return text;
        usleep(100000);
    }
    fail_msg("%s: '%s' not %d times in:\n%s", path, want, times, text ? text : "(none)");
    return NULL;
}
#define file_with(path, want, seconds) cmdcheck_file_with_n(path, want, 1, seconds)

/* The job's output file dir/slurm-ID.out once it holds want (up to seconds); malloc'd. */
static inline char *cmdcheck_output_with(const char *dir, unsigned id, const char *want,
                                         int seconds)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/slurm-%u.out", dir, id);
    return cmdcheck_file_with_n(path, want, 1, seconds);
}
#define output_with(id, want, seconds) cmdcheck_output_with(outdir, id, want, seconds)

/* pgrep -f pattern: 1 when a process matches, 0 when none does (pgrep failing counts as
 * a match: a process is never taken for gone without being told so). */
static inline int cmdcheck_process_running(const char *pattern)
{
    char *argv[] = {(char *)"/usr/bin/pgrep", (char *)"-f", (char *)pattern, NULL};
    return harness_run(argv, NULL, NULL, NULL, 5000) != 1;
}

/* Wait (up to seconds of wall time) until whether a process matches pattern is want. */
static inline void cmdcheck_wait_process(const char *pattern, int want, int seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (cmdcheck_process_running(pattern) != want) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > seconds)
            fail_msg("%s '%s' after %d s", want ? "no process" : "still a process", pattern,
                     seconds);
        usleep(100000);
    }
}

/* Wait (up to seconds of wall time) until no process matches pattern. */
static inline void cmdcheck_expect_no_process(const char *pattern, int seconds)
{
    cmdcheck_wait_process(pattern, 0, seconds);
}

/* Wait (up to seconds) until a process matches pattern: one started in the background
 * (a double fork, setsid) may come after what told the test it was started. */
static inline void cmdcheck_expect_process(const char *pattern, int seconds)
{
    cmdcheck_wait_process(pattern, 1, seconds);
}

#endif
