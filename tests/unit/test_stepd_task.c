/* Unit tests for noded/stepd_task: the step daemon's tasks as it prepares them from the
 * launch it received. --multi-prog text is parsed again here, whatever srun checked: a
 * sender that skips srun's checks gets a refusal, never an unbounded parse. */
#include "common/job/multiprog.h"
#include "common/util/errors.h"
#include "noded/stepd.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* A step of two tasks on this node, one component whose argv is srun's command line. */
struct fixture {
    uint32_t ranks[2], comps[2];
    Tessera__StepLayoutNode node, *nodes[1];
    Tessera__StepLayout layout;
    char *argv[2];
    Tessera__StepLaunchComponent comp, *lcomps[1];
    Tessera__StepLaunchRequest launch;
    struct stepd sd;
};

static void fixture_init(struct fixture *f, char *multi_prog)
{
    memset(f, 0, sizeof(*f));
    f->ranks[0] = 0, f->ranks[1] = 1;
    tessera__step_layout_node__init(&f->node);
    f->node.ranks = f->ranks;
    f->node.n_ranks = 2;
    f->node.rank_components = f->comps;
    f->node.n_rank_components = 2;
    f->nodes[0] = &f->node;
    tessera__step_layout__init(&f->layout);
    f->layout.nodes = f->nodes;
    f->layout.n_nodes = 1;
    f->layout.ntasks = 2;
    f->argv[0] = (char *)"mp.conf";
    f->argv[1] = (char *)"extra";
    tessera__step_launch_component__init(&f->comp);
    f->comp.argv = f->argv;
    f->comp.n_argv = 2;
    f->lcomps[0] = &f->comp;
    tessera__step_launch_request__init(&f->launch);
    f->launch.components = f->lcomps;
    f->launch.n_components = 1;
    f->launch.work_dir = (char *)"/";
    f->launch.multi_prog = multi_prog;
    f->sd.launch = &f->launch;
    f->sd.layout = &f->layout;
    f->sd.node = "n1";
}

static void test_multi_prog_argv_per_task(void **state)
{
    (void)state;
    struct fixture f;
    fixture_init(&f, (char *)"0 echo a%t\n1 /bin/true %o b\n");
    char why[256] = "";
    assert_int_equal(stepd_tasks_prepare(&f.sd, why, sizeof(why)), TS_OK);
    assert_int_equal(f.sd.ntasks, 2);
    assert_string_equal(f.sd.tasks[0].argv[0], "echo");
    assert_string_equal(f.sd.tasks[0].argv[1], "a0");
    assert_string_equal(f.sd.tasks[0].argv[2], "extra");
    assert_null(f.sd.tasks[0].argv[3]);
    assert_string_equal(f.sd.tasks[1].argv[0], "/bin/true");
    assert_string_equal(f.sd.tasks[1].argv[1], "0");
    assert_string_equal(f.sd.tasks[1].argv[2], "b");
    stepd_tasks_free(&f.sd);
}

/* Text srun would never send: a rank missing, one out of range, over the size bound. */
static void test_bad_multi_prog_refused(void **state)
{
    (void)state;
    struct fixture f;
    char why[256] = "";
    fixture_init(&f, (char *)"0 echo a\n");
    assert_int_equal(stepd_tasks_prepare(&f.sd, why, sizeof(why)), TS_EINVAL);
    assert_non_null(strstr(why, "no record for task id 1"));
    stepd_tasks_free(&f.sd);

    fixture_init(&f, (char *)"0-2 echo a\n");
    assert_int_equal(stepd_tasks_prepare(&f.sd, why, sizeof(why)), TS_EINVAL);
    assert_non_null(strstr(why, "Invalid task id, 2 >= ntasks"));
    stepd_tasks_free(&f.sd);

    char *big = malloc(MULTIPROG_MAX_BYTES + 2);
    assert_non_null(big);
    memset(big, '#', MULTIPROG_MAX_BYTES + 1);
    big[MULTIPROG_MAX_BYTES + 1] = '\0';
    fixture_init(&f, big);
    assert_int_equal(stepd_tasks_prepare(&f.sd, why, sizeof(why)), TS_ETOOBIG);
    stepd_tasks_free(&f.sd);
    free(big);
}

/* Without --multi-prog every task runs the component's command line as sent. */
static void test_plain_step_argv(void **state)
{
    (void)state;
    struct fixture f;
    fixture_init(&f, (char *)"");
    char why[256] = "";
    assert_int_equal(stepd_tasks_prepare(&f.sd, why, sizeof(why)), TS_OK);
    assert_null(f.sd.tasks[0].argv); /* built at the start, from the message */
    stepd_tasks_free(&f.sd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multi_prog_argv_per_task),
        cmocka_unit_test(test_bad_multi_prog_refused),
        cmocka_unit_test(test_plain_step_argv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
