/* The order of pending units under a policy period (docs/07-policy.md §2): sort, fair share within
 * each queue, round robin over queues. The controller and the simulator both call it, so
 * a policy file orders a trace as it orders a live queue. */
#include "common/sched/fairshare.h"
#include "common/sched/policy.h"
#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

static int cmp_units(const void *a, const void *b, void *arg)
{
    return policy_compare(arg, a, b);
}

static int same_queue(const struct policy_unit *x, const struct policy_unit *y)
{
    return x->tier == y->tier &&
           !strcmp(x->partition ? x->partition : "", y->partition ? y->partition : "");
}

/* Queue order for round robin: PriorityTier (highest first), then the name. */
static int cmp_queue(const struct policy_unit *x, const struct policy_unit *y)
{
    if (x->tier != y->tier)
        return x->tier > y->tier ? -1 : 1;
    return strcmp(x->partition ? x->partition : "", y->partition ? y->partition : "");
}

/* Fair share within each run of the sorted units that shares a queue (the whole list
 * when by_queue is off), after the run's starving units, which keep the head. */
static int fair_share_runs(const struct policy_set *s, struct policy_unit *u, size_t n,
                           const struct fairshare *fs)
{
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && (!s->by_queue || same_queue(&u[i], &u[j])))
            j++;
        size_t k = i;
        while (k < j && u[k].starving)
            k++;
        int err = fairshare_order(fs, u + k, j - k);
        if (err)
            return err;
        i = j;
    }
    return TS_OK;
}

/* One unit of each queue in turn, each queue's own order kept. */
static int round_robin(struct policy_unit *u, size_t n)
{
    struct policy_unit *out = malloc(n * sizeof(*out));
    size_t *queue_of = malloc(n * sizeof(*queue_of)); /* per unit: its queue's first unit */
    size_t *heads = malloc(n * sizeof(*heads));       /* per queue: its first unit */
    size_t *cursor = malloc(n * sizeof(*cursor));     /* per queue: the next unit to place */
    int err = out && queue_of && heads && cursor ? TS_OK : TS_ENOMEM;
    if (!err) {
        size_t nq = 0;
        for (size_t i = 0; i < n; i++) {
            size_t q = 0;
            while (q < nq && !same_queue(&u[heads[q]], &u[i]))
                q++;
            if (q == nq)
                heads[nq++] = i;
            queue_of[i] = q;
        }
        /* queues in tier then name order (insertion sort: queues are few); queue_of
         * is renumbered through rank */
        size_t *rank = cursor;
        for (size_t q = 0; q < nq; q++)
            rank[q] = q;
        for (size_t a = 1; a < nq; a++)
            for (size_t b = a; b > 0 && cmp_queue(&u[heads[rank[b]]], &u[heads[rank[b - 1]]]) < 0;
                 b--) {
                size_t t = rank[b];
                rank[b] = rank[b - 1];
                rank[b - 1] = t;
            }
        size_t *pos = malloc(nq * sizeof(*pos));
        if (!pos) {
            err = TS_ENOMEM;
            goto done;
        }
        for (size_t r = 0; r < nq; r++)
            pos[rank[r]] = r;
        for (size_t i = 0; i < n; i++)
            queue_of[i] = pos[queue_of[i]];
        for (size_t r = 0; r < nq; r++)
            pos[r] = heads[rank[r]];
        memcpy(heads, pos, nq * sizeof(*heads));
        free(pos);
        for (size_t q = 0; q < nq; q++)
            cursor[q] = heads[q];
        for (size_t k = 0; k < n;) {
            for (size_t q = 0; q < nq; q++) {
                size_t i = cursor[q];
                while (i < n && queue_of[i] != q)
                    i++;
                if (i == n)
                    continue;
                out[k++] = u[i];
                cursor[q] = i + 1;
            }
        }
        memcpy(u, out, n * sizeof(*out));
    }
done:
    free(out);
    free(queue_of);
    free(heads);
    free(cursor);
    return err;
}

int policy_order(const struct policy_set *s, struct policy_unit *units, size_t n,
                 const struct fairshare *fs)
{
    for (size_t i = 0; i < n; i++)
        units[i].starving = policy_starving(s, &units[i]);
    if (n < 2)
        return TS_OK;
    qsort_r(units, n, sizeof(*units), cmp_units, (void *)s);
    int err = TS_OK;
    if (s->fair_share && fs)
        err = fair_share_runs(s, units, n, fs);
    if (!err && s->round_robin)
        err = round_robin(units, n);
    return err;
}
