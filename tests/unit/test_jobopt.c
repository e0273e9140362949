/* Unit tests for common/jobopt: the job options of sbatch, salloc and srun.
 *
 * Most tests give the script as in->script_text; one reads a temporary file and one
 * standard input. Times are checked in UTC with a fixed "now", so expected values are
 * plain numbers. Expected messages are exact: they are what users see after "sbatch: ".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/jobopt/jobopt.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Tuesday 2024-03-05T10:20:30Z */
#define NOW ((time_t)1709634030)
#define TODAY_UTC ((time_t)1709596800) /* 2024-03-05T00:00:00Z */
#define HOUR 3600
#define DAY 86400

#define CWD "/home/u"
#define SCRIPT "#!/bin/sh\necho hi\n"

#define ARGV(...) ((const char *[]){"cmd", __VA_ARGS__, NULL})
#define ENV(...) ((const char *[]){__VA_ARGS__, NULL})
#define NOARGS ((const char *[]){"cmd", NULL})

/* ---- helpers ------------------------------------------------------------------------- */

static int run(enum jobopt_cmd cmd, const char **argv, const char **env, const char *script,
               struct jobopt *o, char *err, size_t errlen)
{
    struct jobopt_input in = {
        .cmd = cmd,
        .argv = (char **)argv,
        .envp = (char **)env,
        .now = NOW,
        .cwd = CWD,
        .script_text = script,
    };

    while (argv[in.argc])
        in.argc++;
    return jobopt_parse(&in, o, err, errlen);
}

static void ok(enum jobopt_cmd cmd, const char **argv, const char **env, const char *script,
               struct jobopt *o)
{
    char err[700];
    int rc = run(cmd, argv, env, script, o, err, sizeof(err));

    if (rc != TS_OK)
        print_message("unexpected error %d: %s\n", rc, err);
    assert_int_equal(rc, TS_OK);
    assert_true(o->ncomponents >= 1);
}

static void bad(enum jobopt_cmd cmd, const char **argv, const char **env, const char *script,
                int code, const char *msg)
{
    struct jobopt o;
    char err[700] = "untouched";
    int rc = run(cmd, argv, env, script, &o, err, sizeof(err));

    if (rc == TS_OK)
        jobopt_free(&o);
    assert_int_equal(rc, code);
    assert_string_equal(err, msg);
    assert_int_equal(o.ncomponents, 0);
    assert_null(o.components);
}

/* sbatch with a plain script: the common case. */
#define SB_OK(o, ...) ok(JOBOPT_SBATCH, ARGV(__VA_ARGS__), NULL, SCRIPT, o)
#define SB_BAD(code, msg, ...) bad(JOBOPT_SBATCH, ARGV(__VA_ARGS__), NULL, SCRIPT, code, msg)

static int utc_setup(void **state)
{
    (void)state;
    setenv("TZ", "UTC", 1);
    tzset();
    return 0;
}

/* The one component of a single-option sbatch run. */
static Tessera__JobDesc *one(struct jobopt *o, const char *opt, const char *value)
{
    const char **argv = value ? ARGV(opt, value, "x.sh") : ARGV(opt, "x.sh");

    ok(JOBOPT_SBATCH, argv, NULL, SCRIPT, o);
    assert_int_equal(o->ncomponents, 1);
    return o->components[0];
}

static void bad_value(const char *opt, const char *value, const char *msg)
{
    bad(JOBOPT_SBATCH, ARGV(opt, value, "x.sh"), NULL, SCRIPT, TS_EOPTVALUE, msg);
}

/* A value Slurm's commands refuse with exit status 255 (TS_EOPTSPEC). */
static void bad_spec(const char *opt, const char *value, const char *msg)
{
    bad(JOBOPT_SBATCH, ARGV(opt, value, "x.sh"), NULL, SCRIPT, TS_EOPTSPEC, msg);
}

static void assert_same_desc(const Tessera__JobDesc *a, const Tessera__JobDesc *b)
{
    size_t la = tessera__job_desc__get_packed_size(a);
    size_t lb = tessera__job_desc__get_packed_size(b);
    uint8_t *ba = malloc(la + 1), *bb = malloc(lb + 1);

    assert_non_null(ba);
    assert_non_null(bb);
    assert_int_equal(la, lb);
    tessera__job_desc__pack(a, ba);
    tessera__job_desc__pack(b, bb);
    assert_memory_equal(ba, bb, la);
    free(ba);
    free(bb);
}

/* ---- every option -------------------------------------------------------------------- */

static void test_long_options(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    SB_OK(&o, "--job-name=jn", "--account=acct", "--partition", "part", "--qos=q",
          "--ntasks=4", "--nodes=2-3", "--cpus-per-task=2", "--mem=2G", "--time=1:00:00",
          "--time-min=30", "--constraint=a&b", "--exclude=n[1-2]", "--nodelist=n3",
          "--ntasks-per-node=2", "--exclusive", "--begin=now+1hour", "--deadline=now+2days",
          "--hold", "--dependency=afterok:7", "--nice=5", "--priority=10", "--requeue",
          "--output=o.txt", "--error=e.txt", "--input=i.txt", "--open-mode=truncate",
          "--chdir=/work", "--export=NONE", "--parsable", "--test-only", "--mail-type=END",
          "--mail-user=me@x", "--licenses=lic:2", "--comment=c c", "--quiet", "--verbose",
          "x.sh", "arg1", "-n", "9");
    assert_int_equal(o.ncomponents, 1);
    d = o.components[0];
    assert_string_equal(d->name, "jn");
    assert_string_equal(d->account, "acct");
    assert_string_equal(d->partition, "part");
    assert_string_equal(d->qos, "q");
    assert_true(d->has_ntasks);
    assert_int_equal(d->ntasks, 4);
    assert_true(d->has_min_nodes && d->has_max_nodes);
    assert_int_equal(d->min_nodes, 2);
    assert_int_equal(d->max_nodes, 3);
    assert_true(d->has_cpus_per_task);
    assert_int_equal(d->cpus_per_task, 2);
    assert_true(d->has_mem_per_node_mb);
    assert_int_equal(d->mem_per_node_mb, 2048);
    assert_false(d->has_mem_per_cpu_mb);
    assert_true(d->has_time_limit);
    assert_int_equal(d->time_limit, HOUR);
    assert_true(d->has_time_min);
    assert_int_equal(d->time_min, 30 * 60);
    assert_string_equal(d->constraint, "a&b");
    assert_string_equal(d->exclude, "n[1-2]");
    assert_string_equal(d->nodelist, "n3");
    assert_true(d->has_ntasks_per_node);
    assert_int_equal(d->ntasks_per_node, 2);
    assert_true(d->has_exclusive && d->exclusive);
    assert_true(d->has_begin_time);
    assert_int_equal(d->begin_time, NOW + HOUR);
    assert_true(d->has_deadline);
    assert_int_equal(d->deadline, NOW + 2 * DAY);
    assert_true(d->has_hold && d->hold);
    assert_string_equal(d->dependency, "afterok:7");
    assert_true(d->has_nice);
    assert_int_equal(d->nice, 5);
    assert_true(d->has_priority);
    assert_int_equal(d->priority, 10);
    assert_true(d->has_requeue && d->requeue);
    assert_string_equal(d->std_out, "o.txt");
    assert_string_equal(d->std_err, "e.txt");
    assert_string_equal(d->std_in, "i.txt");
    assert_string_equal(d->open_mode, "truncate");
    assert_string_equal(d->work_dir, "/work");
    assert_string_equal(d->export_env, "NONE");
    assert_string_equal(d->mail_type, "END");
    assert_string_equal(d->mail_user, "me@x");
    assert_string_equal(d->licenses, "lic:2");
    assert_string_equal(d->comment, "c c");
    assert_string_equal(d->script, SCRIPT);
    /* everything after the script is the script's */
    assert_int_equal(d->n_argv, 3);
    assert_string_equal(d->argv[0], "arg1");
    assert_string_equal(d->argv[1], "-n");
    assert_string_equal(d->argv[2], "9");
    assert_int_equal(d->n_environment, 0);
    assert_int_equal(o.parsable, 1);
    assert_int_equal(o.test_only, 1);
    assert_int_equal(o.quiet, 1);
    assert_int_equal(o.verbose, 1);
    assert_int_equal(o.help, 0);
    assert_int_equal(o.version, 0);
    assert_string_equal(o.script_path, "x.sh");
    assert_null(o.command);
    jobopt_free(&o);
}

static void test_short_options(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    SB_OK(&o, "-J", "jn", "-A", "acct", "-p", "part", "-q", "q", "-n", "4", "-N", "2", "-c",
          "3", "-t", "10", "-C", "f", "-x", "n1", "-w", "n[2-3]", "-b", "now+60", "-H", "-d",
          "singleton", "-o", "o", "-e", "e", "-i", "i", "-D", "rel", "-L", "l", "-Q", "-v",
          "-v", "x.sh");
    d = o.components[0];
    assert_string_equal(d->name, "jn");
    assert_string_equal(d->account, "acct");
    assert_string_equal(d->partition, "part");
    assert_string_equal(d->qos, "q");
    assert_int_equal(d->ntasks, 4);
    assert_true(d->has_min_nodes);
    assert_int_equal(d->min_nodes, 2);
    assert_false(d->has_max_nodes);
    assert_int_equal(d->cpus_per_task, 3);
    assert_int_equal(d->time_limit, 600);
    assert_string_equal(d->constraint, "f");
    assert_string_equal(d->exclude, "n1");
    assert_string_equal(d->nodelist, "n[2-3]");
    assert_int_equal(d->begin_time, NOW + 60);
    assert_true(d->has_hold && d->hold);
    assert_string_equal(d->dependency, "singleton");
    assert_string_equal(d->std_out, "o");
    assert_string_equal(d->std_err, "e");
    assert_string_equal(d->std_in, "i");
    assert_string_equal(d->work_dir, CWD "/rel"); /* relative to where sbatch runs */
    assert_string_equal(d->licenses, "l");
    assert_int_equal(o.quiet, 1);
    assert_int_equal(o.verbose, 2);
    jobopt_free(&o);
}

static void test_remaining_options(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    SB_OK(&o, "--mem-per-cpu=512", "--no-requeue", "--workdir=/w", "--nice", "x.sh");
    d = o.components[0];
    assert_true(d->has_mem_per_cpu_mb);
    assert_int_equal(d->mem_per_cpu_mb, 512);
    assert_false(d->has_mem_per_node_mb);
    assert_true(d->has_requeue);
    assert_false(d->requeue);
    assert_string_equal(d->work_dir, "/w");
    assert_int_equal(d->nice, 100); /* --nice alone */
    jobopt_free(&o);

    SB_OK(&o, "--requeue", "--no-requeue", "--nice=-20", "x.sh");
    assert_false(o.components[0]->requeue);
    assert_int_equal(o.components[0]->nice, -20);
    jobopt_free(&o);

    /* the last of a repeated option wins */
    SB_OK(&o, "-J", "a", "-J", "b", "--no-requeue", "--requeue", "x.sh");
    assert_string_equal(o.components[0]->name, "b");
    assert_true(o.components[0]->requeue);
    jobopt_free(&o);
}

static void test_help_version(void **state)
{
    struct jobopt o;

    ok(JOBOPT_SBATCH, ARGV("--help"), NULL, NULL, &o);
    assert_int_equal(o.help, 1);
    assert_int_equal(o.ncomponents, 1);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("-h", "--bogus"), NULL, NULL, &o); /* help comes first */
    assert_int_equal(o.help, 1);
    jobopt_free(&o);
    ok(JOBOPT_SALLOC, ARGV("-n1", "--usage"), NULL, NULL, &o);
    assert_int_equal(o.help, 2);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("-V"), NULL, NULL, &o);
    assert_int_equal(o.version, 1);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("--vers"), NULL, NULL, &o);
    assert_int_equal(o.version, 1);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("-Hh"), NULL, NULL, &o);
    assert_int_equal(o.help, 1);
    jobopt_free(&o);
    /* an error before --help is reported, as getopt reports in order */
    SB_BAD(TS_EOPTION, "unrecognized option '--bogus'", "--bogus", "--help");
}

/* ---- the argv scanner ---------------------------------------------------------------- */

static void test_abbreviations(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    SB_OK(&o, "--job=j", "--acco=a", "--parti=p", "--cpus-per-t=2", "--exclud=n1", "--exclus",
          "--dep=singleton", "--ho", "--requ", "--op=append", "--dead=now", "--mail-t=fail",
          "--lic=l", "--comm=c", "--chd=/c", "--pars", "--test", "--verb", "--qu", "--ntasks-per-n=1",
          "--mem-per-c=1", "--time-m=1", "x.sh");
    d = o.components[0];
    assert_string_equal(d->name, "j");
    assert_string_equal(d->account, "a");
    assert_string_equal(d->partition, "p");
    assert_int_equal(d->cpus_per_task, 2);
    assert_string_equal(d->exclude, "n1");
    assert_true(d->exclusive);
    assert_string_equal(d->dependency, "singleton");
    assert_true(d->hold);
    assert_true(d->requeue);
    assert_string_equal(d->open_mode, "append");
    assert_int_equal(d->deadline, NOW);
    assert_string_equal(d->mail_type, "FAIL");
    assert_string_equal(d->licenses, "l");
    assert_string_equal(d->comment, "c");
    assert_string_equal(d->work_dir, "/c");
    assert_int_equal(d->ntasks_per_node, 1);
    assert_int_equal(d->mem_per_cpu_mb, 1);
    assert_int_equal(d->time_min, 60);
    assert_int_equal(o.parsable, 1);
    assert_int_equal(o.test_only, 1);
    assert_int_equal(o.verbose, 1);
    assert_int_equal(o.quiet, 1);
    jobopt_free(&o);

    SB_OK(&o, "--wo=/w", "--no-r", "--wr=true");
    assert_string_equal(o.components[0]->work_dir, "/w");
    assert_false(o.components[0]->requeue);
    assert_string_equal(o.components[0]->name, "wrap");
    jobopt_free(&o);

    /* an exact name wins over the longer names it starts */
    SB_OK(&o, "--time=5", "--mem=5", "--nodes=1", "x.sh");
    assert_int_equal(o.components[0]->time_limit, 300);
    assert_int_equal(o.components[0]->mem_per_node_mb, 5);
    assert_int_equal(o.components[0]->min_nodes, 1);
    jobopt_free(&o);
}

static void test_ambiguous(void **state)
{
    SB_BAD(TS_EOPTION,
           "option '--ti=5' is ambiguous; possibilities: '--time' '--time-min'", "--ti=5",
           "x.sh");
    SB_BAD(TS_EOPTION,
           "option '--mem-per=5' is ambiguous; possibilities: '--mem-per-cpu' '--mem-per-gpu'",
           "--mem-per=5", "x.sh");
    SB_BAD(TS_EOPTION,
           "option '--excl' is ambiguous; possibilities: '--exclude' '--exclusive'", "--excl",
           "n1", "x.sh");
    SB_BAD(TS_EOPTION,
           "option '--node' is ambiguous; possibilities: '--nodefile' '--nodelist' '--nodes'",
           "--node", "2", "x.sh");
    /* Slurm 22.05 lists the same candidates (and its hidden --ntasks-per-tres) */
    SB_BAD(TS_EOPTION,
           "option '--n=3' is ambiguous; possibilities: '--network' '--nice' '--no-kill' "
           "'--no-requeue' '--nodefile' '--nodelist' '--nodes' '--ntasks' '--ntasks-per-core' "
           "'--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket'",
           "--n=3", "x.sh");
}

static void test_short_clusters(void **state)
{
    struct jobopt o;

    SB_OK(&o, "-Hn4", "-vvv", "-Qc2", "-t5", "x.sh");
    assert_true(o.components[0]->hold);
    assert_int_equal(o.components[0]->ntasks, 4);
    assert_int_equal(o.verbose, 3);
    assert_int_equal(o.quiet, 1);
    assert_int_equal(o.components[0]->cpus_per_task, 2);
    assert_int_equal(o.components[0]->time_limit, 300);
    jobopt_free(&o);

    SB_OK(&o, "-Hvn", "3", "-J-x", "x.sh");
    assert_int_equal(o.components[0]->ntasks, 3);
    assert_string_equal(o.components[0]->name, "-x");
    jobopt_free(&o);

    /* a required argument is the next word whatever it looks like, as for getopt */
    SB_OK(&o, "-J", "-n", "--comment", "--hold", "x.sh");
    assert_string_equal(o.components[0]->name, "-n");
    assert_string_equal(o.components[0]->comment, "--hold");
    assert_false(o.components[0]->has_hold);
    jobopt_free(&o);

    /* an optional argument must be attached: "--nice 5" makes 5 the script */
    SB_OK(&o, "--nice", "5");
    assert_int_equal(o.components[0]->nice, 100);
    assert_string_equal(o.script_path, "5");
    jobopt_free(&o);

    /* "--" ends the options */
    SB_OK(&o, "-n1", "--", "-x.sh", "-n2");
    assert_string_equal(o.script_path, "-x.sh");
    assert_int_equal(o.components[0]->ntasks, 1);
    assert_int_equal(o.components[0]->n_argv, 1);
    assert_string_equal(o.components[0]->argv[0], "-n2");
    jobopt_free(&o);
}

static void test_getopt_errors(void **state)
{
    SB_BAD(TS_EOPTION, "unrecognized option '--bogus'", "--bogus", "x.sh");
    SB_BAD(TS_EOPTION, "unrecognized option '--bogus=3'", "--bogus=3", "x.sh");
    SB_BAD(TS_EOPTION, "invalid option -- 'Z'", "-Z", "x.sh");
    SB_BAD(TS_EOPTION, "invalid option -- 'Z'", "-HZ", "x.sh");
    SB_BAD(TS_EOPTION, "option '--ntasks' requires an argument", "--ntasks");
    SB_BAD(TS_EOPTION, "option '--dependency' requires an argument", "--dep");
    SB_BAD(TS_EOPTION, "option requires an argument -- 'n'", "-n");
    SB_BAD(TS_EOPTION, "option '--parsable' doesn't allow an argument", "--pars=1", "x.sh");
    SB_BAD(TS_EOPTION, "option '--hold' doesn't allow an argument", "--hold=yes", "x.sh");
    /* a lone ":" is never an argument: it ends the component */
    SB_BAD(TS_EOPTION, "component 0: option requires an argument -- 'J'", "-J", ":", "-n1",
           "x.sh");
    SB_BAD(TS_EOPTION, "component 1: option '--job-name' requires an argument", "-n1", ":",
           "--job-name");
}

/* --array is not built, but a malformed list is Slurm's error (the submission's text),
 * as on the reference cluster: x, 5-1, 0-2000000, 1001, 1-3:0, -1, 1:2 are refused; the
 * rest (empty items, a "%limit" Slurm does not check) reach "not supported". */
static void test_array_spec(void **state)
{
    static const char *const bad_specs[] = {"x", "5-1", "0-2000000", "1001", "1-3:0",
                                            "-1", "1:2", "1-3:x", "1-", "3,x"};
    static const char *const good_specs[] = {"1-3", "0,6,16-32", "0-1000:2", "1,,2",
                                             "1-3%2", "1-3%x", " 1", "3-3", ""};
    char opt[64];
    for (size_t i = 0; i < sizeof(bad_specs) / sizeof(bad_specs[0]); i++) {
        snprintf(opt, sizeof(opt), "--array=%s", bad_specs[i]);
        print_message("%s\n", opt);
        SB_BAD(TS_EJOB_ARRAY, "Invalid job array specification", opt, "x.sh");
    }
    for (size_t i = 0; i < sizeof(good_specs) / sizeof(good_specs[0]); i++) {
        snprintf(opt, sizeof(opt), "--array=%s", good_specs[i]);
        print_message("%s\n", opt);
        SB_BAD(TS_EOPTVALUE, "--array is not supported", opt, "x.sh");
    }
}

/* sbatch --get-user-env: the job starts from the login environment; the timeout and
 * mode argument, and salloc's, are not built. */
static void test_get_user_env(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d = one(&o, "--get-user-env", NULL);
    assert_true(d->has_get_user_env && d->get_user_env);
    jobopt_free(&o);
    SB_BAD(TS_EOPTVALUE, "--get-user-env=10L is not supported", "--get-user-env=10L", "x.sh");
    bad(JOBOPT_SALLOC, ARGV("--get-user-env", "true"), NULL, NULL, TS_EOPTVALUE,
        "--get-user-env is not supported");
}

static void test_unsupported(void **state)
{
    static const char *const cases[][2] = {
        {"--array=1-3", "array"},    {"-a1", "array"},   {"--gpus-per-socket", "gpus-per-socket"},
        {"--gpu-bind=closest", "gpu-bind"},
        {"--reservation", "reservation"}, {"-M", "clusters"}, {"--clusters=c", "clusters"},
        {"--wckey=w", "wckey"},      {"-s", "oversubscribe"},
    };
    char msg[100];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(msg, sizeof(msg), "--%s is not supported", cases[i][1]);
        print_message("%s\n", cases[i][0]);
        /* options with an argument take it first: "x" is not the script */
        SB_BAD(TS_EOPTVALUE, msg, cases[i][0], "x", "x.sh");
    }
    SB_BAD(TS_EOPTVALUE, "--no-kill is not supported", "-k", "x.sh");
    SB_BAD(TS_EOPTVALUE, "--no-kill is not supported", "--no-kill=off", "x.sh");
    SB_BAD(TS_EOPTVALUE, "component 1: --gpus-per-socket is not supported", "-n1", ":",
           "--gpus-per-socket=1", "x.sh");
    bad(JOBOPT_SRUN, ARGV("--exact", "true"), NULL, NULL, TS_EOPTVALUE,
        "--exact is not supported");
    bad(JOBOPT_SALLOC, ARGV("-I5"), NULL, NULL, TS_EOPTVALUE, "--immediate is not supported");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH --array=1-2\n", TS_EOPTVALUE,
        "batch script line 2: --array is not supported");
}

/* ---- generic resources (docs/gres.md §2) --------------------------------------------- */

/* The GRES fields of a component: per node, per job, per task, CPUs and memory per GPU,
 * flags (NULL: not set). */
static void assert_gres(const Tessera__JobDesc *d, const char *node, const char *job,
                        const char *task, const char *cpus, const char *mem, const char *flags)
{
    const char *want[] = {node, job, task, cpus, mem, flags};
    const char *got[] = {d->tres_per_node, d->tres_per_job, d->tres_per_task,
                         d->cpus_per_tres, d->mem_per_tres, d->gres_flags};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!want[i])
            assert_null(got[i]);
        else
            assert_string_equal(got[i], want[i]);
    }
}

static void test_gres_options(void **state)
{
    struct jobopt o;

    /* Slurm 22.05's stored forms, the items as written */
    assert_gres(one(&o, "--gres=gpu:a100:2,bandwidth:1G", NULL), "gres:gpu:a100:2,gres:bandwidth:1G",
                NULL, NULL, NULL, NULL, NULL);
    jobopt_free(&o);
    assert_gres(one(&o, "--gres", "gpu"), "gres:gpu", NULL, NULL, NULL, NULL, NULL);
    jobopt_free(&o);
    assert_gres(one(&o, "-G", "a100:4"), NULL, "gres:gpu:a100:4", NULL, NULL, NULL, NULL);
    jobopt_free(&o);
    assert_gres(one(&o, "--gpus-per-task=1", NULL), NULL, NULL, "gres:gpu:1", NULL, NULL, NULL);
    jobopt_free(&o);
    assert_gres(one(&o, "--cpus-per-gpu=4", NULL), NULL, NULL, NULL, "gres:gpu:4", NULL, NULL);
    jobopt_free(&o);
    assert_gres(one(&o, "--mem-per-gpu=1G", NULL), NULL, NULL, NULL, NULL, "gres:gpu:1024", NULL);
    jobopt_free(&o);
    assert_gres(one(&o, "--gres-flags=enforce-binding", NULL), NULL, NULL, NULL, NULL, NULL,
                "enforce-binding");
    jobopt_free(&o);
    /* --gpus-per-node joins --gres's list, whatever the order */
    SB_OK(&o, "--gpus-per-node=2", "--gres=bandwidth:1G", "x.sh");
    assert_gres(o.components[0], "gres:bandwidth:1G,gres:gpu:2", NULL, NULL, NULL, NULL, NULL);
    jobopt_free(&o);
    /* none clears a lower source's list */
    ok(JOBOPT_SBATCH, ARGV("--gres=NONE", "x.sh"), ENV("SBATCH_GRES=gpu:1"), SCRIPT, &o);
    assert_gres(o.components[0], NULL, NULL, NULL, NULL, NULL, NULL);
    jobopt_free(&o);

    bad(JOBOPT_SBATCH, ARGV("--gres=none,gpu:1", "x.sh"), NULL, SCRIPT, TS_EINVALID_GRES,
        "Invalid generic resource (gres) specification");
    bad(JOBOPT_SBATCH, ARGV("--gres=gpu:1x", "x.sh"), NULL, SCRIPT, TS_EINVALID_TRES,
        "Invalid Trackable RESource (TRES) specification");
    bad(JOBOPT_SBATCH, ARGV("--gpus=a:b:1", "x.sh"), NULL, SCRIPT, TS_EINVALID_GRES,
        "Invalid generic resource (gres) specification");
    bad_value("--cpus-per-gpu", "0", "Invalid numeric value \"0\" for --cpus-per-gpu.");
    bad_spec("--mem-per-gpu", "abc", "Invalid --mem-per-gpu specification");
    bad_spec("--gres-flags", "bogus", "Invalid --gres-flags specification");
    SB_BAD(TS_EOPTVALUE, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
           "--mem=100", "--mem-per-gpu=100", "x.sh");
    SB_BAD(TS_EOPTVALUE, "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
           "--mem-per-gpu=100", "--mem-per-cpu=100", "x.sh");
    /* a higher source replaces: --mem-per-gpu on the command line over SBATCH_MEM_PER_NODE */
    ok(JOBOPT_SBATCH, ARGV("--mem-per-gpu=2G", "x.sh"), ENV("SBATCH_MEM_PER_NODE=100"), SCRIPT, &o);
    assert_false(o.components[0]->has_mem_per_node_mb);
    assert_gres(o.components[0], NULL, NULL, NULL, NULL, "gres:gpu:2048", NULL);
    jobopt_free(&o);
}

/* Per component, from every source: nothing propagates to the next component. */
static void test_gres_sources(void **state)
{
    struct jobopt o;

    SB_OK(&o, "--gpus=1", ":", "-n2", "x.sh");
    assert_int_equal(o.ncomponents, 2);
    assert_gres(o.components[0], NULL, "gres:gpu:1", NULL, NULL, NULL, NULL);
    assert_gres(o.components[1], NULL, NULL, NULL, NULL, NULL, NULL);
    jobopt_free(&o);

    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL,
       "#!/bin/sh\n#SBATCH -n2\n#SBATCH hetjob\n#SBATCH --gpus-per-node=2 -N1\n", &o);
    assert_gres(o.components[0], NULL, NULL, NULL, NULL, NULL, NULL);
    assert_gres(o.components[1], "gres:gpu:2", NULL, NULL, NULL, NULL, NULL);
    jobopt_free(&o);

    static const char *env[] = {"SBATCH_GRES=bandwidth:2", "SBATCH_GPUS=3",
                                "SBATCH_GPUS_PER_NODE=1", "SBATCH_GPUS_PER_TASK=1",
                                "SBATCH_CPUS_PER_GPU=2", "SBATCH_MEM_PER_GPU=5",
                                "SBATCH_GRES_FLAGS=disable-binding", NULL};
    ok(JOBOPT_SBATCH, ARGV("x.sh"), env, SCRIPT, &o);
    assert_gres(o.components[0], "gres:bandwidth:2,gres:gpu:1", "gres:gpu:3", "gres:gpu:1",
                "gres:gpu:2", "gres:gpu:5", "disable-binding");
    jobopt_free(&o);
    /* the command line over the environment */
    ok(JOBOPT_SALLOC, ARGV("--gpus=2"), ENV("SALLOC_GPUS=1", "SALLOC_GPUS_PER_TASK=4"), NULL, &o);
    assert_gres(o.components[0], NULL, "gres:gpu:2", "gres:gpu:4", NULL, NULL, NULL);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("true"), ENV("SLURM_GPUS_PER_NODE=a100:1", "SLURM_GRES_FLAGS=enforce-binding"),
       NULL, &o);
    assert_gres(o.components[0], "gres:gpu:a100:1", NULL, NULL, NULL, NULL, "enforce-binding");
    jobopt_free(&o);
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_GPUS=x:y:z"), SCRIPT, TS_EINVALID_GRES,
        "SBATCH_GPUS: Invalid generic resource (gres) specification");
}

/* sbatch -W, srun -K and -W: what the commands do, not what the job is. */
static void test_wait_options(void **state)
{
    struct jobopt o;
    ok(JOBOPT_SBATCH, ARGV("-W", "x.sh"), NULL, SCRIPT, &o);
    assert_true(o.wait_end);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_WAIT=1"), SCRIPT, &o);
    assert_true(o.wait_end);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_WAIT=0"), SCRIPT, &o);
    assert_false(o.wait_end);
    jobopt_free(&o);

    ok(JOBOPT_SRUN, ARGV("--wait=5", "-K", "true"), NULL, NULL, &o);
    assert_int_equal(o.wait_secs, 5);
    assert_true(o.kill_on_bad_exit);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("-K0", "true"), ENV("SLURM_WAIT=2"), NULL, &o);
    assert_false(o.kill_on_bad_exit);
    assert_int_equal(o.wait_secs, 2);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("true"), ENV("SLURM_KILL_BAD_EXIT=1"), NULL, &o);
    assert_true(o.kill_on_bad_exit);
    jobopt_free(&o);

    bad(JOBOPT_SRUN, ARGV("-W", "x", "true"), NULL, NULL, TS_EOPTVALUE,
        "Invalid numeric value \"x\" for --wait.");
    bad(JOBOPT_SRUN, ARGV("--wait=-1", "true"), NULL, NULL, TS_EOPTVALUE,
        "Invalid numeric value \"-1\" for --wait.");
    bad(JOBOPT_SRUN, ARGV("-Kx", "true"), NULL, NULL, TS_EOPTVALUE,
        "Invalid numeric value \"x\" for --kill-on-bad-exit.");
}

/* Each command takes the options Slurm's takes. */
static void test_per_command_options(void **state)
{
    struct jobopt o;

    bad(JOBOPT_SALLOC, ARGV("--wrap=x"), NULL, NULL, TS_EOPTION,
        "unrecognized option '--wrap=x'");
    bad(JOBOPT_SALLOC, ARGV("-b", "now"), NULL, NULL, TS_EOPTION, "invalid option -- 'b'");
    bad(JOBOPT_SALLOC, ARGV("-o", "x"), NULL, NULL, TS_EOPTION, "invalid option -- 'o'");
    bad(JOBOPT_SALLOC, ARGV("--parsable"), NULL, NULL, TS_EOPTION,
        "unrecognized option '--parsable'");
    bad(JOBOPT_SRUN, ARGV("--requeue", "true"), NULL, NULL, TS_EOPTION,
        "unrecognized option '--requeue'");
    bad(JOBOPT_SRUN, ARGV("--array=1", "true"), NULL, NULL, TS_EOPTION,
        "unrecognized option '--array=1'");

    ok(JOBOPT_SALLOC, ARGV("--begin=now+5", "-N1", "-L", "l"), NULL, NULL, &o);
    assert_int_equal(o.components[0]->begin_time, NOW + 5);
    assert_null(o.command);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("-b", "now", "-o", "out", "--open-mode=append", "--export=ALL",
                         "--test-only", "true"),
       NULL, NULL, &o);
    assert_string_equal(o.components[0]->std_out, "out");
    assert_string_equal(o.components[0]->export_env, "ALL");
    assert_int_equal(o.test_only, 1);
    jobopt_free(&o);
}

/* Spellings real scripts use: older names, srun's distribution levels, bindings. */
static void test_script_spellings(void **state)
{
    struct jobopt o;

    assert_int_equal(one(&o, "--tasks-per-node", "4")->ntasks_per_node, 4);
    jobopt_free(&o);
    static const char *const dists[][2] = {
        {"block", "block"},          {"cyclic", "cyclic"},         {"*", "block"},
        {"block:block", "block"},    {"cyclic:cyclic", "cyclic"}, {"block:cyclic:fcyclic", "block"},
        {"cyclic:*", "cyclic"},      {"block,Pack", "block"},      {"cyclic:block,nopack", "cyclic"},
    };
    for (size_t i = 0; i < sizeof(dists) / sizeof(dists[0]); i++) {
        char opt[64];
        snprintf(opt, sizeof(opt), "--distribution=%s", dists[i][0]);
        ok(JOBOPT_SRUN, ARGV(opt, "true"), NULL, NULL, &o);
        assert_string_equal(o.components[0]->distribution, dists[i][1]);
        jobopt_free(&o);
    }
    static const char *const bad_dists[] = {"blocks", "block:", "block:x", "block:block:block:block",
                                            "cyclic,pak", "", ":block"};
    for (size_t i = 0; i < sizeof(bad_dists) / sizeof(bad_dists[0]); i++) {
        char opt[64];
        snprintf(opt, sizeof(opt), "--distribution=%s", bad_dists[i]);
        bad(JOBOPT_SRUN, ARGV(opt, "true"), NULL, NULL, TS_EOPTVALUE,
            "Invalid --distribution specification");
    }
    bad(JOBOPT_SRUN, ARGV("-m", "plane=4", "true"), NULL, NULL, TS_EOPTVALUE,
        "--distribution=plane is not supported");
    bad(JOBOPT_SRUN, ARGV("-m", "arbitrary", "true"), NULL, NULL, TS_EOPTVALUE,
        "--distribution=arbitrary is not supported");
    /* no binding exists: "none" is true, a binding is refused, never ignored */
    ok(JOBOPT_SRUN, ARGV("--cpu-bind=none", "true"), NULL, NULL, &o);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("--cpu_bind=quiet,none", "true"), NULL, NULL, &o);
    jobopt_free(&o);
    bad(JOBOPT_SRUN, ARGV("--cpu-bind=cores", "true"), NULL, NULL, TS_EOPTVALUE,
        "--cpu-bind=cores is not supported");
    bad(JOBOPT_SRUN, ARGV("--cpu_bind=map_cpu:0,1", "true"), NULL, NULL, TS_EOPTVALUE,
        "--cpu_bind=map_cpu:0,1 is not supported");
    bad(JOBOPT_SRUN, ARGV("--exact", "true"), NULL, NULL, TS_EOPTVALUE, "--exact is not supported");
    bad(JOBOPT_SRUN, ARGV("--hint=nomultithread", "true"), NULL, NULL, TS_EOPTVALUE,
        "--hint is not supported");
    bad(JOBOPT_SRUN, ARGV("--signal=R:USR1@60", "true"), NULL, NULL, TS_EOPTVALUE,
        "--signal=R:USR1@60 is not supported");
    SB_BAD(TS_EOPTVALUE, "--signal=BR:USR1 is not supported", "--signal=BR:USR1", "x.sh");
}

/* --signal=[{R|B}:]SIG[@TIME] as Slurm 22.05 reads it (asked on its own cluster). */
static void test_signal(void **state)
{
    static const struct {
        const char *arg;
        uint32_t signo, secs;
        int batch;
    } good[] = {
        {"USR1", 10, 60, 0},        {"B:USR1@50", 10, 50, 1}, {"10@50", 10, 50, 0},
        {"SIGUSR1", 10, 60, 0},     {"usr1", 10, 60, 0},      {"b:usr2@0", 12, 0, 1},
        {"KILL@65535", 9, 65535, 0}, {"B:10", 10, 60, 1},     {"64@1", 64, 1, 0},
    };
    static const char *const invalid[] = {"FOO",    "USR1@-1", "USR1@abc", "0",    "65",
                                          "USR1@70000", "B:R:USR1", "X:USR1", "@5", "B:",
                                          "USR1@1.5", ":USR1",   "BB:USR1", "USR1@"};
    struct jobopt o;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        print_message("%s\n", good[i].arg);
        char opt[64];
        snprintf(opt, sizeof(opt), "--signal=%s", good[i].arg);
        Tessera__JobDesc *d = one(&o, opt, NULL);
        assert_true(d->has_warn_signal && d->has_warn_secs && d->has_warn_batch_shell);
        assert_int_equal(d->warn_signal, good[i].signo);
        assert_int_equal(d->warn_secs, good[i].secs);
        assert_int_equal(d->warn_batch_shell, good[i].batch);
        jobopt_free(&o);
    }
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
        print_message("%s\n", invalid[i]);
        bad_spec("--signal", invalid[i], "Invalid --signal specification");
    }
    const char *env[] = {"SBATCH_SIGNAL=B:USR2@30", NULL};
    ok(JOBOPT_SBATCH, ARGV("x.sh"), env, SCRIPT, &o);
    assert_int_equal(o.components[0]->warn_signal, 12);
    assert_int_equal(o.components[0]->warn_secs, 30);
    jobopt_free(&o);
}

/* ---- values -------------------------------------------------------------------------- */

static void test_counts(void **state)
{
    static const char *const bad_counts[] = {"abc", "0", "-3", "+3", "3x", "0x10", "",
                                             " 3", "4294967296", "99999999999999999999"};
    static const char *const opts[][2] = {
        {"-n", "ntasks"}, {"-c", "cpus-per-task"}, {"--ntasks-per-node", "ntasks-per-node"}};
    struct jobopt o;
    char msg[200];

    for (size_t k = 0; k < 3; k++) {
        for (size_t i = 0; i < sizeof(bad_counts) / sizeof(bad_counts[0]); i++) {
            snprintf(msg, sizeof(msg), "Invalid numeric value \"%s\" for --%s.", bad_counts[i],
                     opts[k][1]);
            bad_value(opts[k][0], bad_counts[i], msg);
        }
    }
    assert_int_equal(one(&o, "-n", "4294967295")->ntasks, 4294967295u);
    jobopt_free(&o);
    assert_int_equal(one(&o, "-n", "007")->ntasks, 7);
    jobopt_free(&o);
}

static void test_nodes(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    d = one(&o, "-N", "2-4");
    assert_int_equal(d->min_nodes, 2);
    assert_true(d->has_max_nodes);
    assert_int_equal(d->max_nodes, 4);
    jobopt_free(&o);
    d = one(&o, "-N", "3-3");
    assert_int_equal(d->min_nodes, 3);
    assert_int_equal(d->max_nodes, 3);
    jobopt_free(&o);
    bad_spec("-N", "4-2", "Maximum node count 2 is less than minimum node count 4");
    bad_spec("-N", "abc", "\"abc\" is not a valid node count");
    bad_spec("-N", "0", "\"0\" is not a valid node count");
    bad_spec("-N", "2-", "\"2-\" is not a valid node count");
    bad_spec("-N", "-2", "\"-2\" is not a valid node count");
    bad_spec("-N", "1-2-3", "\"1-2-3\" is not a valid node count");
    bad_spec("-N", " 2", "\" 2\" is not a valid node count");
    /* Slurm's suffixes: k is 1024, m is 1024 * 1024 */
    d = one(&o, "-N", "2k");
    assert_int_equal(d->min_nodes, 2048);
    jobopt_free(&o);
    d = one(&o, "-N", "3-1K");
    assert_int_equal(d->min_nodes, 3);
    assert_int_equal(d->max_nodes, 1024);
    jobopt_free(&o);
    d = one(&o, "-N", "1000000k");
    assert_int_equal(d->min_nodes, 1024000000u);
    jobopt_free(&o);
    d = one(&o, "-N", "2m");
    assert_int_equal(d->min_nodes, 2u << 20);
    jobopt_free(&o);
    bad_spec("-N", "0k", "\"0k\" is not a valid node count");
    bad_spec("-N", "k", "\"k\" is not a valid node count");
    bad_spec("-N", "1kx", "\"1kx\" is not a valid node count");
    bad_spec("-N", "1.5k", "\"1.5k\" is not a valid node count");
    bad_spec("-N", "4096m", "\"4096m\" is not a valid node count"); /* over 32 bits */
    bad_spec("-N", "2k-1k", "Maximum node count 1024 is less than minimum node count 2048");

    /* a plain count replaces a range from a lower-precedence source */
    ok(JOBOPT_SBATCH, ARGV("-N", "3", "x.sh"), NULL, "#!/bin/sh\n#SBATCH -N 2-4\n", &o);
    assert_int_equal(o.components[0]->min_nodes, 3);
    assert_false(o.components[0]->has_max_nodes);
    jobopt_free(&o);
}

static void check_size(const char *s, uint64_t mb)
{
    uint64_t v = 12345;

    print_message("size \"%s\"\n", s);
    assert_int_equal(jobopt_parse_size_mb(s, &v), TS_OK);
    assert_int_equal(v, mb);
}

static void check_size_bad(const char *s)
{
    uint64_t v = 12345;

    print_message("bad size \"%s\"\n", s ? s : "(null)");
    assert_int_equal(jobopt_parse_size_mb(s, &v), TS_EOPTVALUE);
    assert_int_equal(v, 12345);
}

static void test_sizes(void **state)
{
    struct jobopt o;

    check_size("0", 0);
    check_size("100", 100);
    check_size("100M", 100);
    check_size("100m", 100);
    check_size("1K", 1);    /* rounded up to a whole megabyte */
    check_size("1024k", 1);
    check_size("1025K", 2);
    check_size("0K", 0);
    check_size("2G", 2048);
    check_size("2g", 2048);
    check_size("1T", 1048576);
    check_size("1t", 1048576);
    check_size("1099511627776", JOBOPT_MAX_SIZE_MB);
    check_size("1048576T", JOBOPT_MAX_SIZE_MB);
    check_size_bad(NULL);
    check_size_bad("");
    check_size_bad("G");
    check_size_bad("1P");
    check_size_bad("1.5G");
    check_size("3GB", 3072); /* a unit may end in B, any case (Slurm's spellings) */
    check_size("1gb", 1024);
    check_size("1Gb", 1024);
    check_size("3gB", 3072);
    check_size("1000mb", 1000);
    check_size("1000MB", 1000);
    check_size("2tb", 2097152);
    check_size("512kb", 1);
    check_size_bad("1B");
    check_size_bad("1bb");
    check_size_bad("1GBB");
    check_size_bad("1GiB");
    check_size_bad("-1");
    check_size_bad("+1");
    check_size_bad(" 1");
    check_size_bad("1 ");
    check_size_bad("1099511627777");
    check_size_bad("1048577T");
    check_size_bad("18446744073709551616");
    check_size_bad("18446744073709551615T");
    check_size_bad("99999999999999999999999999");

    assert_int_equal(one(&o, "--mem", "0")->mem_per_node_mb, 0); /* all of a node's memory */
    assert_true(o.components[0]->has_mem_per_node_mb);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--mem-per-cpu", "1G")->mem_per_cpu_mb, 1024);
    jobopt_free(&o);
    bad_spec("--mem", "5X", "Invalid --mem specification");
    bad_spec("--mem-per-cpu", "", "Invalid --mem-per-cpu specification");
}

static void check_time(const char *opt, const char *value, int64_t secs)
{
    struct jobopt o;
    Tessera__JobDesc *d = one(&o, opt, value);

    print_message("%s %s\n", opt, value);
    if (strcmp(opt, "-t") == 0) {
        assert_true(d->has_time_limit);
        assert_int_equal(d->time_limit, secs);
    } else {
        assert_true(d->has_time_min);
        assert_int_equal(d->time_min, secs);
    }
    jobopt_free(&o);
}

static void test_time_limits(void **state)
{
    check_time("-t", "10", 600); /* a bare number is minutes */
    check_time("-t", "1:30", 90); /* seconds are kept, not rounded to a minute */
    check_time("-t", "0:30", 30);
    check_time("-t", "1:00:00", HOUR);
    check_time("-t", "2-3", 2 * DAY + 3 * HOUR);
    check_time("-t", "2-3:04", 2 * DAY + 3 * HOUR + 4 * 60);
    check_time("-t", "2-3:04:05", 2 * DAY + 3 * HOUR + 4 * 60 + 5);
    check_time("-t", "0", -1); /* no limit */
    check_time("-t", "UNLIMITED", -1);
    check_time("-t", "infinite", -1);
    check_time("--time-min", "5", 300);
    check_time("--time-min", "0", -1);
    bad_spec("-t", "abc", "Invalid --time specification");
    bad_spec("-t", "", "Invalid --time specification");
    bad_spec("-t", "-1", "Invalid --time specification");
    bad_spec("-t", "1:60", "Invalid --time specification");
    bad_spec("--time-min", "x", "Invalid --time-min specification");
}

static void test_begin_deadline(void **state)
{
    struct jobopt o;

    assert_int_equal(one(&o, "--begin", "now+1hour")->begin_time, NOW + HOUR);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "now+90")->begin_time, NOW + 90);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "now")->begin_time, NOW);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "2024-03-06")->begin_time, TODAY_UTC + DAY);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "2024-03-06T12:00")->begin_time,
                     TODAY_UTC + DAY + 12 * HOUR);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "11:00")->begin_time, TODAY_UTC + 11 * HOUR);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "10:00")->begin_time, TODAY_UTC + DAY + 10 * HOUR);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--begin", "tomorrow")->begin_time, TODAY_UTC + DAY);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--deadline", "now+2days")->deadline, NOW + 2 * DAY);
    jobopt_free(&o);
    bad_spec("--begin", "garbage", "Invalid --begin specification");
    bad_spec("--begin", "", "Invalid --begin specification");
    bad_spec("--deadline", "garbage", "Invalid --deadline specification");
}

static void test_open_mode_nice_priority_exclusive(void **state)
{
    struct jobopt o;

    assert_string_equal(one(&o, "--open-mode", "APPEND")->open_mode, "append");
    jobopt_free(&o);
    assert_string_equal(one(&o, "--open-mode", "Truncate")->open_mode, "truncate");
    jobopt_free(&o);
    /* the letters too (Slurm takes them; SLURM_OPEN_MODE in a batch job holds one) */
    assert_string_equal(one(&o, "--open-mode", "a")->open_mode, "append");
    jobopt_free(&o);
    assert_string_equal(one(&o, "--open-mode", "T")->open_mode, "truncate");
    jobopt_free(&o);
    bad_spec("--open-mode", "ap", "Invalid --open-mode specification");
    bad_spec("--open-mode", "foo", "Invalid --open-mode specification");

    assert_int_equal(one(&o, "--nice=2147483645", NULL)->nice, 2147483645);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--nice=-2147483645", NULL)->nice, -2147483645);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--nice=+7", NULL)->nice, 7);
    jobopt_free(&o);
    SB_BAD(TS_EOPTVALUE, "Invalid --nice value, out of range (+/- 2147483645)",
           "--nice=2147483646", "x.sh");
    SB_BAD(TS_EOPTVALUE, "Invalid --nice value, out of range (+/- 2147483645)",
           "--nice=-99999999999999999999", "x.sh");
    SB_BAD(TS_EOPTVALUE, "Invalid numeric value \"abc\" for --nice.", "--nice=abc", "x.sh");
    SB_BAD(TS_EOPTVALUE, "Invalid numeric value \"\" for --nice.", "--nice=", "x.sh");

    assert_int_equal(one(&o, "--priority", "0")->priority, 0);
    assert_true(o.components[0]->has_priority);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--priority", "top")->priority, 4294967293u);
    jobopt_free(&o);
    assert_int_equal(one(&o, "--priority", "4294967293")->priority, 4294967293u);
    jobopt_free(&o);
    bad_value("--priority", "4294967294", "Priority must be < 4294967294");
    bad_value("--priority", "-1", "Invalid numeric value \"-1\" for --priority.");
    bad_value("--priority", "abc", "Invalid numeric value \"abc\" for --priority.");

    assert_true(one(&o, "--exclusive=exclusive", NULL)->exclusive);
    jobopt_free(&o);
    SB_BAD(TS_EOPTVALUE, "--exclusive=user is not supported", "--exclusive=user", "x.sh");
    SB_BAD(TS_EOPTVALUE, "--exclusive=mcs is not supported", "--exclusive=mcs", "x.sh");
    SB_BAD(TS_EOPTSPEC, "Invalid --exclusive specification", "--exclusive=foo", "x.sh");
}

static void test_host_lists(void **state)
{
    struct jobopt o;

    assert_string_equal(one(&o, "-w", "n[1-3],m7")->nodelist, "n[1-3],m7");
    jobopt_free(&o);
    assert_string_equal(one(&o, "--exclude", "rack[1-2]-n[01-02]")->exclude,
                        "rack[1-2]-n[01-02]");
    jobopt_free(&o);
    bad_value("-w", "n[1-", "Invalid host list \"n[1-\" for --nodelist");
    bad_value("-w", "n[3-1]", "Invalid host list \"n[3-1]\" for --nodelist");
    bad_value("-w", "", "Invalid host list \"\" for --nodelist");
    bad_value("-x", "n[a-b]", "Invalid host list \"n[a-b]\" for --exclude");
}

static void test_mail_type(void **state)
{
    struct jobopt o;

    assert_string_equal(one(&o, "--mail-type", "begin,End,FAIL")->mail_type, "BEGIN,END,FAIL");
    jobopt_free(&o);
    assert_string_equal(
        one(&o, "--mail-type",
            "NONE,BEGIN,END,FAIL,REQUEUE,ALL,INVALID_DEPEND,STAGE_OUT,TIME_LIMIT,"
            "TIME_LIMIT_90,TIME_LIMIT_80,TIME_LIMIT_50,ARRAY_TASKS")->mail_type,
        "NONE,BEGIN,END,FAIL,REQUEUE,ALL,INVALID_DEPEND,STAGE_OUT,TIME_LIMIT,TIME_LIMIT_90,"
        "TIME_LIMIT_80,TIME_LIMIT_50,ARRAY_TASKS");
    jobopt_free(&o);
    bad_spec("--mail-type", "FOO", "Invalid --mail-type specification");
    bad_spec("--mail-type", "", "Invalid --mail-type specification");
    bad_spec("--mail-type", "BEGIN,", "Invalid --mail-type specification");
    bad_spec("--mail-type", "BEGIN,,END", "Invalid --mail-type specification");
    bad_spec("--mail-type", "TIME_LIMIT_70", "Invalid --mail-type specification");
}

static void test_licenses(void **state)
{
    static const char *const good[] = {"foo", "foo:2", "foo:2,bar", "a_b-c.d@db:3,x:1"};
    static const char *const wrong[] = {"", ",foo", "foo,", "foo:", "foo:0", "foo:x",
                                        "foo:-1", "fo o", "foo::2", "foo:2:3", "foo*2"};
    struct jobopt o;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_string_equal(one(&o, "-L", good[i])->licenses, good[i]);
        jobopt_free(&o);
    }
    for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
        print_message("-L \"%s\"\n", wrong[i]);
        bad_value("-L", wrong[i], "Invalid --licenses specification");
    }
}

static void test_dependency(void **state)
{
    static const char *const good[] = {
        "afterok:1",       "afterok:20:21,afterany:23", "afterok:20:21?afterany:23",
        "after:1+30:2",    "afternotok:5",              "afterburstbuffer:5",
        "aftercorr:5",     "singleton",                 "SINGLETON,afterok:1",
        "AFTEROK:1",       "expand:9",                  "afterany:1_2",
        "afterok:1_*",     "12",                        "12:13",
        "",
    };
    static const char *const wrong[] = {
        "foo",          "afterok",      "afterok:",      "afterok:abc", "afterok:1:",
        "afterok::1",   "afterok:1,",   ",afterok:1",    "afterok:0",   "afterok:1+5",
        "after:1+x",    "afterok:1_x",  "singleton:1",   "expand:1:2",  "afterok:1,afterany:2?afterok:3",
        "afterok:4294967296", "afterok: 1", "before:1",
    };
    struct jobopt o;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        print_message("-d \"%s\"\n", good[i]);
        assert_string_equal(one(&o, "-d", good[i])->dependency, good[i]);
        jobopt_free(&o);
    }
    for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
        print_message("bad -d \"%s\"\n", wrong[i]);
        bad(JOBOPT_SBATCH, ARGV("-d", wrong[i], "x.sh"), NULL, SCRIPT, TS_EDEPENDENCY,
            "Job dependency problem");
    }
}

static void test_mem_exclusive(void **state)
{
    struct jobopt o;

    /* within one source of one component: a contradiction */
    SB_BAD(TS_EOPTVALUE, "--mem and --mem-per-cpu are mutually exclusive.", "--mem=1",
           "--mem-per-cpu=1", "x.sh");
    SB_BAD(TS_EOPTVALUE, "component 1: --mem and --mem-per-cpu are mutually exclusive.",
           "-n1", ":", "--mem-per-cpu=1", "--mem=1", "x.sh");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH --mem=1\n#SBATCH --mem-per-cpu=2\n",
        TS_EOPTVALUE, "batch script line 3: --mem and --mem-per-cpu are mutually exclusive.");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_MEM_PER_CPU=1", "SBATCH_MEM_PER_NODE=2"),
        SCRIPT, TS_EOPTVALUE,
        "SBATCH_MEM_PER_NODE: --mem and --mem-per-cpu are mutually exclusive.");

    /* a higher-precedence source replaces the other */
    ok(JOBOPT_SBATCH, ARGV("--mem-per-cpu=3", "x.sh"), ENV("SBATCH_MEM_PER_NODE=2"),
       "#!/bin/sh\n#SBATCH --mem=1\n", &o);
    assert_false(o.components[0]->has_mem_per_node_mb);
    assert_int_equal(o.components[0]->mem_per_cpu_mb, 3);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_MEM_PER_NODE=2"),
       "#!/bin/sh\n#SBATCH --mem-per-cpu=1\n", &o);
    assert_false(o.components[0]->has_mem_per_cpu_mb);
    assert_int_equal(o.components[0]->mem_per_node_mb, 2);
    jobopt_free(&o);

    /* --mem propagates; --mem-per-cpu on the next component replaces it (Slurm 22.05
     * refuses this combination) */
    SB_OK(&o, "--mem=10", ":", "--mem-per-cpu=5", "x.sh");
    assert_int_equal(o.components[0]->mem_per_node_mb, 10);
    assert_false(o.components[0]->has_mem_per_cpu_mb);
    assert_false(o.components[1]->has_mem_per_node_mb);
    assert_true(o.components[1]->has_mem_per_cpu_mb);
    assert_int_equal(o.components[1]->mem_per_cpu_mb, 5);
    jobopt_free(&o);
    SB_OK(&o, "--mem-per-cpu=5", ":", "--mem=10", "x.sh");
    assert_int_equal(o.components[0]->mem_per_cpu_mb, 5);
    assert_false(o.components[1]->has_mem_per_cpu_mb);
    assert_int_equal(o.components[1]->mem_per_node_mb, 10);
    jobopt_free(&o);
}

/* ---- components ---------------------------------------------------------------------- */

static void test_propagation(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *a, *b;

    SB_OK(&o, "-A", "acct", "--begin=now+60", "--comment=cm", "--deadline=now+1day", "-d",
          "afterok:5", "-e", "err", "--export=NONE", "-x", "n9", "-H", "-i", "in", "-J", "jn",
          "--mem=64", "--no-requeue", "--nice=3", "--open-mode=append", "-o", "out",
          "--priority=9", "-q", "qq", "-t", "7", "--time-min=3", "-D", "/wd",
          /* not propagated */
          "-n", "8", "-N", "2-3", "-c", "4", "-C", "feat", "-p", "part", "-w", "n1",
          "--ntasks-per-node=4", "--exclusive", "-L", "lic", "--mail-type=END",
          "--mail-user=u", ":", "--ntasks=1", "x.sh");
    assert_int_equal(o.ncomponents, 2);
    a = o.components[0];
    b = o.components[1];
    assert_string_equal(b->account, "acct");
    assert_int_equal(b->begin_time, NOW + 60);
    assert_string_equal(b->comment, "cm");
    assert_int_equal(b->deadline, NOW + DAY);
    assert_string_equal(b->dependency, "afterok:5");
    assert_string_equal(b->std_err, "err");
    assert_string_equal(b->export_env, "NONE");
    assert_string_equal(b->exclude, "n9");
    assert_true(b->has_hold && b->hold);
    assert_string_equal(b->std_in, "in");
    assert_string_equal(b->name, "jn");
    assert_true(b->has_mem_per_node_mb);
    assert_int_equal(b->mem_per_node_mb, 64);
    assert_true(b->has_requeue);
    assert_false(b->requeue);
    assert_int_equal(b->nice, 3);
    assert_string_equal(b->open_mode, "append");
    assert_string_equal(b->std_out, "out");
    assert_int_equal(b->priority, 9);
    assert_string_equal(b->qos, "qq");
    assert_int_equal(b->time_limit, 7 * 60);
    assert_int_equal(b->time_min, 3 * 60);
    assert_string_equal(b->work_dir, "/wd");

    assert_int_equal(b->ntasks, 1);
    assert_false(b->has_min_nodes);
    assert_false(b->has_max_nodes);
    assert_false(b->has_cpus_per_task);
    assert_null(b->constraint);
    assert_null(b->partition);
    assert_null(b->nodelist);
    assert_false(b->has_ntasks_per_node);
    assert_false(b->has_exclusive);
    assert_null(b->licenses);
    assert_null(b->mail_type);
    assert_null(b->mail_user);
    assert_null(b->script);
    assert_int_equal(b->n_argv, 0);
    assert_int_equal(b->n_environment, 0);

    /* and component 0 kept everything */
    assert_int_equal(a->ntasks, 8);
    assert_string_equal(a->partition, "part");
    assert_string_equal(a->licenses, "lic");
    assert_string_equal(a->mail_type, "END");
    assert_string_equal(a->mail_user, "u");

    /* every propagated field is the same on both */
    b->has_ntasks = a->has_ntasks = 0;
    a->has_min_nodes = a->has_max_nodes = a->has_cpus_per_task = a->has_ntasks_per_node = 0;
    a->has_exclusive = 0;
    free(a->constraint);
    free(a->partition);
    free(a->nodelist);
    free(a->licenses);
    free(a->mail_type);
    free(a->mail_user);
    free(a->script);
    a->constraint = a->partition = a->nodelist = a->licenses = NULL;
    a->mail_type = a->mail_user = a->script = NULL;
    assert_same_desc(a, b);
    jobopt_free(&o);

    /* mem-per-cpu does not propagate */
    SB_OK(&o, "--mem-per-cpu=5", ":", "-n1", "x.sh");
    assert_false(o.components[1]->has_mem_per_cpu_mb);
    assert_false(o.components[1]->has_mem_per_node_mb);
    jobopt_free(&o);
}

static void test_propagated_set_again(void **state)
{
    struct jobopt o;

    SB_OK(&o, "-A", "a", "-t", "5", "-J", "j", "-H", ":", "-A", "b", "-n1", ":", "-J", "k",
          "-t", "0", "x.sh");
    assert_int_equal(o.ncomponents, 3);
    assert_string_equal(o.components[0]->account, "a");
    assert_string_equal(o.components[1]->account, "b");
    assert_string_equal(o.components[2]->account, "b"); /* from component 1 */
    assert_int_equal(o.components[1]->time_limit, 300);
    assert_int_equal(o.components[2]->time_limit, -1);
    assert_string_equal(o.components[1]->name, "j");
    assert_string_equal(o.components[2]->name, "k");
    assert_true(o.components[2]->hold);
    jobopt_free(&o);

    /* an empty dependency clears a propagated one */
    SB_OK(&o, "-d", "afterok:1", ":", "-d", "", "x.sh");
    assert_string_equal(o.components[1]->dependency, "");
    jobopt_free(&o);
}

static void test_colon_edge_cases(void **state)
{
    struct jobopt o;

    SB_BAD(TS_EOPTION, "component 0: no options given for this component", ":", "-n1", "x.sh");
    SB_BAD(TS_EOPTION, "component 1: no options given for this component", "-n1", ":", "x.sh");
    SB_BAD(TS_EOPTION, "component 1: no options given for this component", "-n1", ":", ":",
           "x.sh");
    SB_BAD(TS_EOPTION, "component 1: no options given for this component", "-n1", ":");
    SB_BAD(TS_EOPTION, "component 0: no options given for this component", ":");
    /* "::" is not a separator: it is the first word that is not an option, the script */
    SB_OK(&o, "-n1", "::", "x.sh");
    assert_int_equal(o.ncomponents, 1);
    assert_string_equal(o.script_path, "::");
    assert_string_equal(o.components[0]->argv[0], "x.sh");
    jobopt_free(&o);
    /* after the script, ":" belongs to the script */
    SB_OK(&o, "-n1", "x.sh", ":", "-n2");
    assert_int_equal(o.ncomponents, 1);
    assert_int_equal(o.components[0]->n_argv, 2);
    assert_string_equal(o.components[0]->argv[0], ":");
    jobopt_free(&o);
    /* a command-line component that the script fills is not empty */
    ok(JOBOPT_SBATCH, ARGV("-n1", ":", ":", "x.sh"), NULL,
       "#!/bin/sh\n#SBATCH -J a\n#SBATCH hetjob\n#SBATCH -J b\n#SBATCH hetjob\n#SBATCH -J c\n",
       &o);
    assert_int_equal(o.ncomponents, 3);
    assert_string_equal(o.components[2]->name, "c");
    jobopt_free(&o);
    /* so is a script component that the command line fills */
    ok(JOBOPT_SBATCH, ARGV("-n1", ":", "-n2", "x.sh"), NULL,
       "#!/bin/sh\n#SBATCH hetjob\n#SBATCH hetjob\n#SBATCH -n3\n", &o);
    assert_int_equal(o.ncomponents, 3);
    assert_int_equal(o.components[1]->ntasks, 2);
    assert_int_equal(o.components[2]->ntasks, 3);
    jobopt_free(&o);
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n",
        TS_EOPTION, "component 1: no options given for this component");
    /* a lone component may have no options at all */
    SB_OK(&o, "x.sh");
    assert_int_equal(o.ncomponents, 1);
    jobopt_free(&o);
}

/* The script's components and the command line's ":" form give the same job. */
static void test_hetjob_equals_colon(void **state)
{
    static const char *const seps[] = {"hetjob", "packjob"};
    struct jobopt a, b;
    char script[400];

    for (size_t k = 0; k < 2; k++) {
        snprintf(script, sizeof(script),
                 "#!/bin/sh\n#SBATCH -n1 -A a -t 5 --mail-type=END\n#SBATCH %s\n"
                 "#SBATCH -n2 --mem=1G --mail-type=BEGIN\n#SBATCH %s\n#SBATCH -n3 -p p\n"
                 "echo\n",
                 seps[k], seps[k]);
        ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL, script, &a);
        ok(JOBOPT_SBATCH,
           ARGV("-n1", "-A", "a", "-t", "5", "--mail-type=END", ":", "-n2", "--mem=1G",
                "--mail-type=BEGIN", ":", "-n3", "-p", "p", "x.sh"),
           NULL, "#!/bin/sh\necho\n", &b);
        assert_int_equal(a.ncomponents, 3);
        assert_int_equal(b.ncomponents, 3);
        free(a.components[0]->script);
        free(b.components[0]->script);
        a.components[0]->script = b.components[0]->script = NULL;
        for (size_t i = 0; i < 3; i++)
            assert_same_desc(a.components[i], b.components[i]);
        assert_string_equal(a.components[2]->account, "a");
        assert_int_equal(a.components[2]->mem_per_node_mb, 1024);
        assert_string_equal(a.components[2]->partition, "p");
        assert_null(a.components[1]->mail_type);
        jobopt_free(&a);
        jobopt_free(&b);
    }
}

/* ---- precedence ---------------------------------------------------------------------- */

static void test_precedence_pairs(void **state)
{
    static const char *script =
        "#!/bin/sh\n#SBATCH -A s -p s -t 1 -J s -q s -o s --mem=1\n";
    struct jobopt o;
    Tessera__JobDesc *d;

    /* script < environment */
    ok(JOBOPT_SBATCH, ARGV("x.sh"),
       ENV("SBATCH_ACCOUNT=e", "SBATCH_PARTITION=e", "SBATCH_TIMELIMIT=2", "SBATCH_JOB_NAME=e",
           "SBATCH_QOS=e", "SBATCH_OUTPUT=e", "SBATCH_MEM_PER_NODE=2"),
       script, &o);
    d = o.components[0];
    assert_string_equal(d->account, "e");
    assert_string_equal(d->partition, "e");
    assert_int_equal(d->time_limit, 120);
    assert_string_equal(d->name, "e");
    assert_string_equal(d->qos, "e");
    assert_string_equal(d->std_out, "e");
    assert_int_equal(d->mem_per_node_mb, 2);
    jobopt_free(&o);

    /* script < command line */
    ok(JOBOPT_SBATCH,
       ARGV("-A", "c", "-p", "c", "-t", "3", "-J", "c", "-q", "c", "-o", "c", "--mem=3", "x.sh"),
       NULL, script, &o);
    d = o.components[0];
    assert_string_equal(d->account, "c");
    assert_string_equal(d->partition, "c");
    assert_int_equal(d->time_limit, 180);
    assert_string_equal(d->name, "c");
    assert_string_equal(d->qos, "c");
    assert_string_equal(d->std_out, "c");
    assert_int_equal(d->mem_per_node_mb, 3);
    jobopt_free(&o);

    /* environment < command line */
    ok(JOBOPT_SBATCH, ARGV("-A", "c", "-t", "3", "--mem-per-cpu=3", "x.sh"),
       ENV("SBATCH_ACCOUNT=e", "SBATCH_TIMELIMIT=2", "SBATCH_MEM_PER_NODE=2"), SCRIPT, &o);
    d = o.components[0];
    assert_string_equal(d->account, "c");
    assert_int_equal(d->time_limit, 180);
    assert_false(d->has_mem_per_node_mb);
    assert_int_equal(d->mem_per_cpu_mb, 3);
    jobopt_free(&o);

    /* all three; each source still supplies what the others do not */
    ok(JOBOPT_SBATCH, ARGV("-A", "c", "x.sh"), ENV("SBATCH_ACCOUNT=e", "SBATCH_QOS=e"), script,
       &o);
    d = o.components[0];
    assert_string_equal(d->account, "c");
    assert_string_equal(d->qos, "e");
    assert_string_equal(d->partition, "s");
    jobopt_free(&o);
}

static void test_env_every_component(void **state)
{
    struct jobopt o;

    /* Slurm 22.05: SBATCH_ACCOUNT=envacct sbatch -A cliacct -n1 : -n2 gives cliacct and
     * envacct: the environment is applied to each component after what propagates */
    ok(JOBOPT_SBATCH, ARGV("-A", "cliacct", "-n1", ":", "-n2", "x.sh"),
       ENV("SBATCH_ACCOUNT=envacct"), SCRIPT, &o);
    assert_string_equal(o.components[0]->account, "cliacct");
    assert_string_equal(o.components[1]->account, "envacct");
    jobopt_free(&o);

    ok(JOBOPT_SBATCH, ARGV("-n1", ":", "-n2", ":", "-n3", "x.sh"), ENV("SBATCH_ACCOUNT=e"),
       SCRIPT, &o);
    assert_int_equal(o.ncomponents, 3);
    for (size_t i = 0; i < 3; i++)
        assert_string_equal(o.components[i]->account, "e");
    jobopt_free(&o);

    /* the environment also beats a script directive of a later component */
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_ACCOUNT=e", "SBATCH_TIMELIMIT=10"),
       "#!/bin/sh\n#SBATCH -A s -t 5 -J sj\n#SBATCH hetjob\n#SBATCH -A s1 -t 7\n", &o);
    assert_string_equal(o.components[0]->account, "e");
    assert_string_equal(o.components[1]->account, "e");
    assert_int_equal(o.components[1]->time_limit, 600);
    assert_string_equal(o.components[1]->name, "sj");
    jobopt_free(&o);

    /* -v from the environment counts once */
    ok(JOBOPT_SBATCH, ARGV("-n1", ":", "-n2", "x.sh"), ENV("SBATCH_DEBUG=1"), SCRIPT, &o);
    assert_int_equal(o.verbose, 1);
    jobopt_free(&o);
}

static void test_env_values(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    ok(JOBOPT_SBATCH, ARGV("x.sh"),
       ENV("SBATCH_CONSTRAINT=c", "SBATCH_ERROR=e", "SBATCH_EXCLUSIVE=", "SBATCH_EXPORT=NONE",
           "SBATCH_INPUT=i", "SBATCH_MEM_PER_CPU=2G", "SBATCH_NO_REQUEUE=yes",
           "SBATCH_OPEN_MODE=truncate", "SBATCH_DEBUG=0", "SBATCH_WAIT=0", "OTHER=1"),
       SCRIPT, &o);
    d = o.components[0];
    assert_string_equal(d->constraint, "c");
    assert_string_equal(d->std_err, "e");
    assert_true(d->exclusive);
    assert_string_equal(d->export_env, "NONE");
    assert_string_equal(d->std_in, "i");
    assert_int_equal(d->mem_per_cpu_mb, 2048);
    assert_true(d->has_requeue);
    assert_false(d->requeue);
    assert_string_equal(d->open_mode, "truncate");
    assert_int_equal(o.verbose, 0);
    assert_int_equal(d->n_environment, 11); /* every entry, ours or not */
    assert_string_equal(d->environment[10], "OTHER=1");
    jobopt_free(&o);

    /* flags: empty, yes or a non-zero number set them; no or 0 do not */
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_REQUEUE=2"), SCRIPT, &o);
    assert_true(o.components[0]->requeue);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_REQUEUE=no"), SCRIPT, &o);
    assert_false(o.components[0]->has_requeue);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_REQUEUE="), SCRIPT, &o);
    assert_true(o.components[0]->requeue);
    jobopt_free(&o);

    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_REQUEUE=maybe"), SCRIPT, TS_EOPTVALUE,
        "SBATCH_REQUEUE: Invalid value \"maybe\" (use yes, no or a number)");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_DEBUG=2"), SCRIPT, TS_EOPTVALUE,
        "SBATCH_DEBUG: Invalid value \"2\" (must be 0 or 1)");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_TIMELIMIT=abc"), SCRIPT, TS_EOPTSPEC,
        "SBATCH_TIMELIMIT: Invalid --time specification");

    /* an empty value is a value, on every component */
    ok(JOBOPT_SBATCH, ARGV("-n1", ":", "-n2", "x.sh"), ENV("SBATCH_PARTITION=p", "SBATCH_QOS="),
       SCRIPT, &o);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(o.components[i]->partition, "p");
        assert_string_equal(o.components[i]->qos, "");
    }
    jobopt_free(&o);
}

static void test_env_unsupported(void **state)
{
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_ARRAY_INX=1-2"), SCRIPT, TS_EOPTVALUE,
        "SBATCH_ARRAY_INX: --array is not supported");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SLURM_CLUSTERS=c"), SCRIPT, TS_EOPTVALUE,
        "SLURM_CLUSTERS: --clusters is not supported");
    bad(JOBOPT_SALLOC, NOARGS, ENV("SALLOC_RESERVATION=r"), NULL, TS_EOPTVALUE,
        "SALLOC_RESERVATION: --reservation is not supported");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), ENV("SBATCH_EXCLUSIVE=user"), SCRIPT, TS_EOPTVALUE,
        "SBATCH_EXCLUSIVE: --exclusive=user is not supported");
}

static void test_env_salloc_srun(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    ok(JOBOPT_SALLOC, ARGV("-q", "cq"),
       ENV("SALLOC_ACCOUNT=a", "SALLOC_PARTITION=p", "SALLOC_QOS=q", "SALLOC_TIMELIMIT=5",
           "SALLOC_CONSTRAINT=c", "SALLOC_EXCLUSIVE=", "SALLOC_MEM_PER_NODE=7",
           "SBATCH_ACCOUNT=not-salloc"),
       NULL, &o);
    d = o.components[0];
    assert_string_equal(d->account, "a");
    assert_string_equal(d->partition, "p");
    assert_string_equal(d->qos, "cq");
    assert_int_equal(d->time_limit, 300);
    assert_string_equal(d->constraint, "c");
    assert_true(d->exclusive);
    assert_int_equal(d->mem_per_node_mb, 7);
    jobopt_free(&o);

    ok(JOBOPT_SRUN, ARGV("prog"),
       ENV("SLURM_ACCOUNT=a", "SLURM_NTASKS=4", "SLURM_NNODES=2", "SRUN_CPUS_PER_TASK=3",
           "SLURM_JOB_NAME=nm", "SLURM_EXPORT_ENV=ALL", "SRUN_EXPORT_ENV=NONE",
           "SLURM_STDOUTMODE=o", "SLURM_WORKING_DIR=sub", "SLURM_TIMELIMIT=1",
           "SLURM_DEPENDENCY=afterok:3", "SLURM_NTASKS_PER_NODE=2"),
       NULL, &o);
    d = o.components[0];
    assert_string_equal(d->account, "a");
    assert_int_equal(d->ntasks, 4);
    assert_int_equal(d->min_nodes, 2);
    assert_int_equal(d->cpus_per_task, 3);
    assert_string_equal(d->name, "nm");
    assert_string_equal(d->export_env, "NONE"); /* SRUN_EXPORT_ENV wins */
    assert_string_equal(d->std_out, "o");
    assert_string_equal(d->work_dir, CWD "/sub");
    assert_int_equal(d->time_limit, 60);
    assert_string_equal(d->dependency, "afterok:3");
    assert_int_equal(d->ntasks_per_node, 2);
    jobopt_free(&o);

    /* a -c job's steps take its CPUs per task; SRUN_CPUS_PER_TASK wins; a het job's
     * unsuffixed value is component 0's and is left to srun's per-component lookup */
    ok(JOBOPT_SRUN, ARGV("prog"), ENV("SLURM_CPUS_PER_TASK=4", "SLURM_JOB_ID=5"), NULL, &o);
    assert_true(o.components[0]->has_cpus_per_task);
    assert_int_equal(o.components[0]->cpus_per_task, 4);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("prog"), ENV("SLURM_CPUS_PER_TASK=4", "SRUN_CPUS_PER_TASK=2"), NULL,
       &o);
    assert_int_equal(o.components[0]->cpus_per_task, 2);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("prog"), ENV("SLURM_CPUS_PER_TASK=4", "SLURM_HET_SIZE=2"), NULL, &o);
    assert_false(o.components[0]->has_cpus_per_task);
    jobopt_free(&o);

    /* srun --jobid, --overlap, -O (also from SLURM_OVERLAP, SLURM_OVERCOMMIT); sbatch has
     * no -O */
    ok(JOBOPT_SRUN, ARGV("--jobid=42", "--overlap", "-O", "prog"), NULL, NULL, &o);
    assert_int_equal(o.jobid, 42);
    assert_true(o.overlap);
    assert_true(o.overcommit);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("prog"), ENV("SLURM_OVERLAP=1", "SLURM_OVERCOMMIT=yes"), NULL, &o);
    assert_int_equal(o.jobid, 0);
    assert_true(o.overlap && o.overcommit);
    jobopt_free(&o);
    bad(JOBOPT_SRUN, ARGV("--jobid=abc", "prog"), NULL, NULL, TS_EOPTVALUE,
        "Invalid numeric value \"abc\" for --jobid.");
    bad(JOBOPT_SBATCH, ARGV("-O", "x.sh"), NULL, "#!/bin/sh\n", TS_EOPTVALUE,
        "--overcommit is not supported");

    /* inside an allocation SLURM_JOB_NAME is the allocation's name */
    ok(JOBOPT_SRUN, ARGV("/bin/prog"), ENV("SLURM_JOB_NAME=batch", "SLURM_JOB_ID=5"), NULL,
       &o);
    assert_string_equal(o.components[0]->name, "prog");
    jobopt_free(&o);
}

/* ---- scripts ------------------------------------------------------------------------- */

static void test_directives_stop(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL,
       "#!/bin/bash\n#SBATCH -J one\n\n   \n\t\n# a comment\n  #SBATCH -A indented\n"
       "#sbatch -p lower\n#SBATCH --comment=c\necho hi\n#SBATCH -A late\n",
       &o);
    d = o.components[0];
    assert_string_equal(d->name, "one");
    assert_string_equal(d->comment, "c");
    assert_null(d->account);
    assert_null(d->partition);
    jobopt_free(&o);

    /* "#SBATCH" is taken as Slurm takes it, also without a blank after it */
    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH-A glued\n#SBATCH\n", &o);
    assert_string_equal(o.components[0]->account, "glued");
    jobopt_free(&o);

    /* a script without a final newline, and one that is only directives */
    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -n 2", &o);
    assert_int_equal(o.components[0]->ntasks, 2);
    jobopt_free(&o);
}

static void test_directive_quoting(void **state)
{
    struct jobopt o;
    Tessera__JobDesc *d;

    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL,
       "#!/bin/sh\n"
       "#SBATCH -J \"a b\" --comment='x \"y\" \\z' -A a\\ b # -p not-this\n"
       "#SBATCH -C \"p\\\"q\\\\r\\$s\\n\" --mail-user=a#b\n"
       "#SBATCH -o ''\t-e \"\" -q x'y'\"z\"\n",
       &o);
    d = o.components[0];
    assert_string_equal(d->name, "a b");
    assert_string_equal(d->comment, "x \"y\" \\z");
    assert_string_equal(d->account, "a b");
    assert_null(d->partition);
    assert_string_equal(d->constraint, "p\"q\\r$s\\n");
    assert_string_equal(d->mail_user, "a#b"); /* '#' inside a word is not a comment */
    assert_string_equal(d->std_out, "");
    assert_string_equal(d->std_err, "");
    assert_string_equal(d->qos, "xyz");
    jobopt_free(&o);
}

static void test_directive_errors(void **state)
{
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -J \"open\n", TS_ESCRIPT,
        "batch script line 2: unmatched \" in #SBATCH directive");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -J 'open\n", TS_ESCRIPT,
        "batch script line 2: unmatched ' in #SBATCH directive");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -J a\\\n", TS_ESCRIPT,
        "batch script line 2: backslash at the end of a #SBATCH line");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n\n#SBATCH -n1 stray\n", TS_EOPTION,
        "batch script line 3: Invalid directive found in batch script: stray");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob -n2\n",
        TS_EOPTION, "batch script line 3: #SBATCH hetjob takes no options (found -n2)");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -J\n#SBATCH -n1\n", TS_EOPTION,
        "batch script line 2: option requires an argument -- 'J'");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH --bogus\n", TS_EOPTION,
        "batch script line 2: unrecognized option '--bogus'");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -t x\n",
        TS_EOPTSPEC, "component 1: batch script line 4: Invalid --time specification");
    /* the component count is known even for an error before the separator */
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH --bogus\n#SBATCH hetjob\n#SBATCH -n1\n",
        TS_EOPTION, "component 0: batch script line 2: unrecognized option '--bogus'");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH --wrap=true\n", TS_EOPTVALUE,
        "batch script line 2: --wrap is only allowed on the command line");
}

static void test_script_checks(void **state)
{
    size_t big = JOBOPT_MAX_SCRIPT;
    char *text = malloc(big + 2);
    struct jobopt o;

    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "", TS_ESCRIPT, "Batch script is empty!");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "echo hi\n", TS_ESCRIPT,
        "This does not look like a batch script.  The first\nline must start with #! "
        "followed by the path to an interpreter.\nFor instance: #!/bin/sh");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\r\necho\r\n", TS_ESCRIPT,
        "Batch script contains DOS line breaks (\\r\\n) instead of expected UNIX line breaks "
        "(\\n).");

    assert_non_null(text);
    memset(text, 'x', big + 1);
    memcpy(text, "#!/bin/sh\n", 10);
    text[big] = '\0';
    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL, text, &o);
    assert_int_equal(strlen(o.components[0]->script), big);
    jobopt_free(&o);
    text[big] = 'x';
    text[big + 1] = '\0';
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, text, TS_ESCRIPT,
        "Batch script is larger than the limit of 4194304 bytes");
    free(text);
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_script_file(void **state)
{
    char path[] = "/tmp/test_jobopt_XXXXXX";
    const char *text = "#!/bin/sh\n#SBATCH -n 3\nhostname\n";
    int fd = mkstemp(path);
    char msg[100];
    struct jobopt o;

    assert_true(fd >= 0);
    close(fd);
    write_file(path, text, strlen(text));
    ok(JOBOPT_SBATCH, ARGV("-A", "a", path, "x", "y"), ENV("A=1", "B=2"), NULL, &o);
    assert_string_equal(o.script_path, path);
    assert_string_equal(o.components[0]->script, text);
    assert_int_equal(o.components[0]->ntasks, 3);
    assert_string_equal(o.components[0]->name, strrchr(path, '/') + 1);
    assert_string_equal(o.components[0]->work_dir, CWD);
    assert_int_equal(o.components[0]->n_argv, 2);
    assert_string_equal(o.components[0]->argv[1], "y");
    assert_int_equal(o.components[0]->n_environment, 2);
    assert_string_equal(o.components[0]->environment[0], "A=1");
    assert_string_equal(o.components[0]->environment[1], "B=2");
    jobopt_free(&o);

    write_file(path, "#!/bin/sh\necho a\0b\n", 19);
    bad(JOBOPT_SBATCH, ARGV(path), NULL, NULL, TS_ESCRIPT,
        "The Slurm controller does not allow scripts that contain a NULL character '\\0'.");
    write_file(path, "", 0);
    bad(JOBOPT_SBATCH, ARGV(path), NULL, NULL, TS_ESCRIPT, "Batch script is empty!");
    unlink(path);
    snprintf(msg, sizeof(msg), "Unable to open file %s", path);
    bad(JOBOPT_SBATCH, ARGV(path), NULL, NULL, TS_ESCRIPT, msg);
}

static void test_script_stdin(void **state)
{
    char path[] = "/tmp/test_jobopt_XXXXXX";
    const char *text = "#!/bin/sh\n#SBATCH -J from-stdin-directive -n 2\ntrue\n";
    int fd = mkstemp(path), saved = dup(STDIN_FILENO);
    struct jobopt o;

    assert_true(fd >= 0 && saved >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    ok(JOBOPT_SBATCH, ARGV("-t", "1"), NULL, NULL, &o);
    assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
    close(saved);
    close(fd);
    unlink(path);
    assert_null(o.script_path);
    assert_string_equal(o.components[0]->script, text);
    assert_int_equal(o.components[0]->ntasks, 2);
    assert_int_equal(o.components[0]->time_limit, 60);
    jobopt_free(&o);
}

static void test_wrap(void **state)
{
    struct jobopt o;

    /* in->script_text is not used with --wrap */
    ok(JOBOPT_SBATCH, ARGV("-n1", ":", "-n2", "--wrap=echo 'hi there'"), NULL, "not used", &o);
    assert_int_equal(o.ncomponents, 2);
    assert_string_equal(o.components[0]->script,
                        "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n"
                        "echo 'hi there'\n");
    assert_null(o.components[1]->script);
    assert_string_equal(o.components[0]->name, "wrap");
    assert_string_equal(o.components[1]->name, "wrap");
    assert_null(o.script_path);
    assert_int_equal(o.components[0]->n_argv, 0);
    jobopt_free(&o);

    ok(JOBOPT_SBATCH, ARGV("--wrap", "true", "-J", "named"), NULL, NULL, &o);
    assert_string_equal(o.components[0]->name, "named");
    jobopt_free(&o);

    /* the wrapped command is a command, even when it looks like a directive */
    ok(JOBOPT_SBATCH, ARGV("--wrap=#SBATCH -n 5"), NULL, NULL, &o);
    assert_false(o.components[0]->has_ntasks);
    jobopt_free(&o);

    SB_BAD(TS_EOPTVALUE, "Script arguments not permitted with --wrap option", "--wrap=true",
           "x.sh");
}

static void test_first_component_only(void **state)
{
    struct jobopt o;

    SB_BAD(TS_EOPTVALUE,
           "component 1: --licenses may only be requested on the first component", "-n1", ":",
           "-L", "foo", "x.sh");
    bad(JOBOPT_SBATCH, ARGV("x.sh"), NULL, "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH -L f\n",
        TS_EOPTVALUE,
        "component 1: batch script line 4: --licenses may only be requested on the first "
        "component");

    /* mail is the leader's: dropped on later components without a word (docs/01-hetjob.md §2.3) */
    SB_OK(&o, "--mail-type=END", "--mail-user=a", ":", "--mail-type=BEGIN", "--mail-user=b",
          "-n1", "x.sh");
    assert_string_equal(o.components[0]->mail_type, "END");
    assert_string_equal(o.components[0]->mail_user, "a");
    assert_null(o.components[1]->mail_type);
    assert_null(o.components[1]->mail_user);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, ARGV("x.sh"), NULL,
       "#!/bin/sh\n#SBATCH -n1\n#SBATCH hetjob\n#SBATCH --mail-user=b -n2\n", &o);
    assert_null(o.components[1]->mail_user);
    jobopt_free(&o);
    /* but a bad value is still an error */
    SB_BAD(TS_EOPTSPEC, "component 1: Invalid --mail-type specification", "-n1", ":",
           "--mail-type=FOO", "x.sh");
}

static void test_error_prefixes(void **state)
{
    SB_BAD(TS_EOPTVALUE, "component 1: Invalid numeric value \"abc\" for --ntasks.", "-n1", ":",
           "-n", "abc", "x.sh");
    SB_BAD(TS_EOPTSPEC, "component 2: Invalid --time specification", "-n1", ":", "-n2", ":",
           "-t", "abc", "x.sh");
    SB_BAD(TS_EOPTION, "component 1: unrecognized option '--bogus'", "-n1", ":", "--bogus",
           "x.sh");
    /* the whole command line is scanned, so component 0 knows it is not alone */
    SB_BAD(TS_EOPTION, "component 0: unrecognized option '--bogus'", "--bogus", ":", "-n1",
           "x.sh");
    SB_BAD(TS_EOPTION, "component 0: invalid option -- 'Z'", "-Z", ":", "-Y", "x.sh");
    bad(JOBOPT_SBATCH, ARGV("-n1", ":", "-n2", "x.sh"), ENV("SBATCH_TIMELIMIT=abc"), SCRIPT,
        TS_EOPTSPEC, "component 0: SBATCH_TIMELIMIT: Invalid --time specification");
    /* a lone component has no prefix */
    SB_BAD(TS_EOPTVALUE, "Invalid numeric value \"abc\" for --ntasks.", "-n", "abc", "x.sh");
}

/* ---- defaults, salloc and srun ------------------------------------------------------- */

static void test_defaults(void **state)
{
    struct jobopt o;

    SB_OK(&o, "-n1", "/some/dir/job.sh");
    assert_string_equal(o.components[0]->name, "job.sh");
    assert_string_equal(o.components[0]->work_dir, CWD);
    jobopt_free(&o);
    ok(JOBOPT_SBATCH, NOARGS, NULL, SCRIPT, &o);
    assert_string_equal(o.components[0]->name, "sbatch");
    assert_null(o.script_path);
    jobopt_free(&o);
    /* -J "" and -D "" ask for the defaults */
    SB_OK(&o, "-J", "", "-D", "", "x.sh");
    assert_string_equal(o.components[0]->name, "x.sh");
    assert_string_equal(o.components[0]->work_dir, CWD);
    jobopt_free(&o);
    SB_OK(&o, "-J", "n0", ":", "-n1", ":", "-J", "n2", "x.sh");
    assert_string_equal(o.components[1]->name, "n0");
    assert_string_equal(o.components[2]->name, "n2");
    jobopt_free(&o);
    SB_OK(&o, "-n1", ":", "-J", "n1", "x.sh");
    assert_string_equal(o.components[0]->name, "x.sh");
    assert_string_equal(o.components[1]->name, "n1");
    jobopt_free(&o);

    ok(JOBOPT_SALLOC, ARGV("-N1"), NULL, NULL, &o);
    assert_string_equal(o.components[0]->name, "interactive");
    assert_null(o.command);
    jobopt_free(&o);
    ok(JOBOPT_SRUN, ARGV("-N1"), NULL, NULL, &o);
    assert_string_equal(o.components[0]->name, "srun");
    assert_null(o.command);
    jobopt_free(&o);
}

static void test_salloc_command(void **state)
{
    struct jobopt o;

    /* after the command, ":" and options are the command's */
    ok(JOBOPT_SALLOC, ARGV("-N1", ":", "-N2", "/bin/bash", "-c", "x", ":", "-n1"), ENV("E=1"),
       NULL, &o);
    assert_int_equal(o.ncomponents, 2);
    assert_int_equal(o.components[1]->min_nodes, 2);
    assert_string_equal(o.command[0], "/bin/bash");
    assert_string_equal(o.command[3], ":");
    assert_string_equal(o.command[4], "-n1");
    assert_null(o.command[5]);
    assert_string_equal(o.components[0]->name, "interactive");
    assert_string_equal(o.components[1]->name, "interactive");
    assert_int_equal(o.components[0]->n_argv, 0);
    assert_null(o.components[0]->script);
    assert_int_equal(o.components[0]->n_environment, 1);
    jobopt_free(&o);
}

static void test_srun_programs(void **state)
{
    struct jobopt o;

    /* a component without a program takes the next one's (docs/04-steps.md §2.3) */
    ok(JOBOPT_SRUN, ARGV("-n2", ":", "-n1", "hostname", "-s"), NULL, NULL, &o);
    assert_int_equal(o.ncomponents, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(o.components[i]->n_argv, 2);
        assert_string_equal(o.components[i]->argv[0], "hostname");
        assert_string_equal(o.components[i]->argv[1], "-s");
        assert_string_equal(o.components[i]->name, "hostname");
    }
    assert_string_equal(o.command[0], "hostname");
    assert_string_equal(o.command[1], "-s");
    assert_null(o.command[2]);
    jobopt_free(&o);

    /* one program per component; ":" splits after a program too */
    ok(JOBOPT_SRUN, ARGV("-n1", "a", "1", ":", "b", ":", "-n3", "--", "-c"), NULL, NULL, &o);
    assert_int_equal(o.ncomponents, 3);
    assert_string_equal(o.components[0]->argv[0], "a");
    assert_string_equal(o.components[0]->argv[1], "1");
    assert_int_equal(o.components[1]->n_argv, 1);
    assert_string_equal(o.components[1]->argv[0], "b");
    assert_false(o.components[1]->has_ntasks);
    assert_int_equal(o.components[2]->ntasks, 3);
    assert_string_equal(o.components[2]->argv[0], "-c");
    jobopt_free(&o);

    bad(JOBOPT_SRUN, ARGV("-n1", ":", ":", "-n2", "c"), NULL, NULL, TS_EOPTION,
        "component 1: no options given for this component");
    bad(JOBOPT_SRUN, ARGV("-n1", "a", ":", "-n", "x", "b"), NULL, NULL, TS_EOPTVALUE,
        "component 1: Invalid numeric value \"x\" for --ntasks.");
}

static void test_bad_input(void **state)
{
    struct jobopt o;
    char err[10];

    assert_int_equal(jobopt_parse(NULL, &o, err, sizeof(err)), TS_EINVAL);
    assert_int_equal(jobopt_parse(NULL, NULL, NULL, 0), TS_EINVAL);
    jobopt_free(NULL);
    /* a short buffer is cut, not overrun */
    assert_int_equal(run(JOBOPT_SBATCH, ARGV("--bogus"), NULL, SCRIPT, &o, err, sizeof(err)),
                     TS_EOPTION);
    assert_string_equal(err, "unrecogni");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_options),
        cmocka_unit_test(test_script_spellings),
        cmocka_unit_test(test_short_options),
        cmocka_unit_test(test_remaining_options),
        cmocka_unit_test(test_help_version),
        cmocka_unit_test(test_abbreviations),
        cmocka_unit_test(test_ambiguous),
        cmocka_unit_test(test_short_clusters),
        cmocka_unit_test(test_getopt_errors),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_gres_options),
        cmocka_unit_test(test_gres_sources),
        cmocka_unit_test(test_array_spec),
        cmocka_unit_test(test_get_user_env),
        cmocka_unit_test(test_signal),
        cmocka_unit_test(test_per_command_options),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_time_limits),
        cmocka_unit_test(test_begin_deadline),
        cmocka_unit_test(test_open_mode_nice_priority_exclusive),
        cmocka_unit_test(test_host_lists),
        cmocka_unit_test(test_mail_type),
        cmocka_unit_test(test_licenses),
        cmocka_unit_test(test_dependency),
        cmocka_unit_test(test_mem_exclusive),
        cmocka_unit_test(test_propagation),
        cmocka_unit_test(test_propagated_set_again),
        cmocka_unit_test(test_colon_edge_cases),
        cmocka_unit_test(test_hetjob_equals_colon),
        cmocka_unit_test(test_precedence_pairs),
        cmocka_unit_test(test_env_every_component),
        cmocka_unit_test(test_env_values),
        cmocka_unit_test(test_env_unsupported),
        cmocka_unit_test(test_wait_options),
        cmocka_unit_test(test_env_salloc_srun),
        cmocka_unit_test(test_directives_stop),
        cmocka_unit_test(test_directive_quoting),
        cmocka_unit_test(test_directive_errors),
        cmocka_unit_test(test_script_checks),
        cmocka_unit_test(test_script_file),
        cmocka_unit_test(test_script_stdin),
        cmocka_unit_test(test_wrap),
        cmocka_unit_test(test_first_component_only),
        cmocka_unit_test(test_error_prefixes),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_salloc_command),
        cmocka_unit_test(test_srun_programs),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, utc_setup, NULL);
}
