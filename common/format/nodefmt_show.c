/* "scontrol show node", laid out as Slurm 22.05 lays it out, so that scripts parsing
 * "Key=Value" pairs keep working: the same keys on the same lines, trailing blanks
 * included. What Tessera has no notion of keeps Slurm's neutral value (nodefmt.h lists
 * them); what Slurm itself leaves out for a node that never told it (Arch, OS) is left
 * out. */
#include "common/format/nodefmt.h"
#include "common/util/namecache.h"

#include "common/format/nodefmt_int.h"
#include "common/gres/gres_conf.h"
#include "common/text/timefmt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A record: items end where Slurm ends its lines, with "\n   " or, on one line, " ". */
struct rec {
    FILE *f;
    const char *line_end;
};

static void line_end(struct rec *r)
{
    fputs(r->line_end, r->f);
}

static const char *time_or(int64_t t, const char *none, char *buf, size_t len)
{
    if (t == 0)
        return none;
    timefmt_format_timestamp((time_t)t, buf, len);
    return buf;
}

/* Slurm's node_state_string_complete: the base, then each flag ("IDLE+DRAIN"). */
static const char *state_complete(uint32_t code, char *buf, size_t len)
{
    static const char *const bases[] = {"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "UNKNOWN",
                                        "MIXED", "FUTURE"};
    uint32_t base = code & NF_BASE_MASK;

    snprintf(buf, len, "%s%s%s%s", base < 7 ? bases[base] : "UNKNOWN",
             (code & NF_DRAIN) ? "+DRAIN" : "", (code & NF_COMPLETING) ? "+COMPLETING" : "",
             (code & NF_NO_RESPOND) ? "+NOT_RESPONDING" : "");
    return buf;
}

static void show_cpus(struct rec *r, const Tessera__NodeInfo *n)
{
    fprintf(r->f, "NodeName=%s CoresPerSocket=%" PRIu32 " ", nf_or_null(n->name),
            n->cores_per_socket);
    line_end(r);
    /* Tessera reserves no cores for the system: every CPU is effective. */
    fprintf(r->f, "CPUAlloc=%" PRIu32 " CPUEfctv=%" PRIu32 " CPUTot=%" PRIu32 " CPULoad=N/A",
            n->alloc_cpus, n->cpus, n->cpus);
    line_end(r);
    fprintf(r->f, "AvailableFeatures=%s", nf_or_null(n->features));
    line_end(r);
    fprintf(r->f, "ActiveFeatures=%s", nf_or_null(n->features));
    line_end(r);
    fprintf(r->f, "Gres=%s", nf_or_null(n->gres));
    line_end(r);
}

/* Address, host name, port and version share a line, which Slurm ends only when it
 * printed something on it. */
static void show_addresses(struct rec *r, const Tessera__NodeInfo *n, uint32_t default_port)
{
    int any = 0;

    if (nf_is_set(n->addr))
        any = fprintf(r->f, "NodeAddr=%s ", n->addr);
    if (nf_is_set(n->hostname))
        any = fprintf(r->f, "NodeHostName=%s ", n->hostname);
    if (n->port && n->port != default_port)
        any = fprintf(r->f, "Port=%" PRIu32 " ", n->port);
    if (nf_is_set(n->version))
        any = fprintf(r->f, "Version=%s", n->version);
    if (any)
        line_end(r);
}

static void show_memory_state(struct rec *r, const Tessera__NodeInfo *n)
{
    char state[64];

    fprintf(r->f, "RealMemory=%" PRIu64 " AllocMem=%" PRIu64 " FreeMem=N/A Sockets=%" PRIu32
                  " Boards=1",
            n->real_memory_mb, n->alloc_mem_mb, n->sockets);
    line_end(r);
    fprintf(r->f,
            "State=%s ThreadsPerCore=%" PRIu32 " TmpDisk=0 Weight=%" PRIu32
            " Owner=N/A MCS_label=N/A",
            state_complete(nf_state_code(n->state), state, sizeof(state)), n->threads_per_core,
            n->weight);
    line_end(r);
}

static void show_partitions(struct rec *r, const Tessera__NodeInfo *n)
{
    if (n->n_partitions == 0)
        return;
    fputs("Partitions=", r->f);
    for (size_t i = 0; i < n->n_partitions; i++)
        fprintf(r->f, "%s%s", i ? "," : "", n->partitions[i]);
    fputc(' ', r->f);
    line_end(r);
}

static void show_times(struct rec *r, const Tessera__NodeInfo *n)
{
    char t[64];

    /* boot_time is the node daemon's start: Slurm's SlurmdStartTime, not BootTime. */
    fprintf(r->f, "BootTime=None SlurmdStartTime=%s", time_or(n->boot_time, "None", t, sizeof(t)));
    line_end(r);
    fputs("LastBusyTime=Unknown", r->f);
    line_end(r);
}

/* Slurm's TRES of generic resources: ",gres/gpu=4", each name once, its types summed. */
static void show_gres_tres(struct rec *r, const char *gres)
{
    struct gres_count *g = NULL;
    size_t n = 0;
    char why[128];

    if (!nf_is_set(gres) || gres_spec_parse(gres, &g, &n, why, sizeof(why)) != 0)
        return;
    for (size_t i = 0; i < n; i++) {
        int first = 1;
        uint64_t sum = 0;
        for (size_t j = 0; j < n; j++) {
            if (strcmp(g[j].name, g[i].name))
                continue;
            first &= j >= i;
            sum = g[j].count > UINT64_MAX - sum ? UINT64_MAX : sum + g[j].count;
        }
        if (first)
            fprintf(r->f, ",gres/%s=%" PRIu64, g[i].name, sum);
    }
    free(g);
}

static void show_tres(struct rec *r, const Tessera__NodeInfo *n)
{
    char mem[32];

    fprintf(r->f, "CfgTRES=cpu=%" PRIu32, n->cpus);
    if (n->real_memory_mb)
        fprintf(r->f, ",mem=%s", nf_mem_text(n->real_memory_mb, mem, sizeof(mem)));
    fprintf(r->f, ",billing=%" PRIu32, n->cpus);
    show_gres_tres(r, n->gres);
    line_end(r);
    /* Only what is allocated, nothing at all on an idle node; no billing, as Slurm. */
    fputs("AllocTRES=", r->f);
    if (n->alloc_cpus)
        fprintf(r->f, "cpu=%" PRIu32, n->alloc_cpus);
    if (n->alloc_mem_mb)
        fprintf(r->f, "%smem=%s", n->alloc_cpus ? "," : "",
                nf_mem_text(n->alloc_mem_mb, mem, sizeof(mem)));
    line_end(r);
    fputs("CapWatts=n/a", r->f);
    line_end(r);
    fputs("CurrentWatts=0 AveWatts=0", r->f);
    line_end(r);
    fputs("ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s", r->f);
}

static void reason_stamp(struct rec *r, const Tessera__NodeInfo *n)
{
    char user[256], t[64];

    if (!n->reason_time)
        return;
    if (namecache_nss_lookup(NULL, NAMECACHE_USER, n->reason_uid, user, sizeof(user)) != 1)
        snprintf(user, sizeof(user), "nobody"); /* what Slurm's uid_to_string says */
    fprintf(r->f, " [%s@%s]", user, time_or(n->reason_time, "Unknown", t, sizeof(t)));
}

/* "Reason=text [user@time]"; further lines of a reason are indented under the first,
 * empty ones dropped, as Slurm splits it. */
static void show_reason(struct rec *r, const Tessera__NodeInfo *n)
{
    int first = 1;

    if (!nf_is_set(n->reason))
        return;
    line_end(r);
    for (const char *p = n->reason + strspn(n->reason, "\n"); *p; p += strspn(p, "\n")) {
        size_t len = strcspn(p, "\n");

        if (first) {
            fprintf(r->f, "Reason=%.*s", (int)len, p);
            reason_stamp(r, n);
            first = 0;
        } else {
            line_end(r);
            fprintf(r->f, "       %.*s", (int)len, p);
        }
        p += len;
    }
}

char *nodefmt_show_node_port(const Tessera__NodeInfo *n, time_t now, int oneliner,
                             uint32_t default_port)
{
    char *text = NULL;
    size_t size = 0;
    struct rec r = {open_memstream(&text, &size), oneliner ? " " : "\n   "};

    if (!n || !r.f) {
        if (r.f)
            fclose(r.f);
        free(text);
        return NULL;
    }
    show_cpus(&r, n);
    show_addresses(&r, n, default_port);
    show_memory_state(&r, n);
    show_partitions(&r, n);
    show_times(&r, n);
    show_tres(&r, n);
    show_reason(&r, n);
    fputs(oneliner ? "\n" : "\n\n", r.f);
    return nf_memstream_done(r.f, &text);
}

char *nodefmt_show_node(const Tessera__NodeInfo *node, time_t now, int oneliner)
{
    return nodefmt_show_node_port(node, now, oneliner, 0);
}
