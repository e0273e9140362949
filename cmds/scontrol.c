/* scontrol: administration commands. Keywords are dispatched through a table; without a
 * keyword on the command line, commands are read from standard input, one per line. */
#include "cmds/cmdutil.h"

#include "common/conf.h"
#include "common/errors.h"
#include "common/hostlist.h"
#include "common/timefmt.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define PROG "scontrol"

struct scontrol {
    struct ctl ctl;
    const char *conf_path;
    int conf_loaded;
};

typedef int (*command_fn)(struct scontrol *s, int argc, char **argv);

/* ------------------------------------------------------------------------------------ */

static int need_conf(struct scontrol *s)
{
    if (s->conf_loaded)
        return 0;
    if (ctl_load_conf(&s->ctl, PROG, s->conf_path))
        return 1;
    s->conf_loaded = 1;
    return 0;
}

/* Send req; on a transport failure print Slurm's wording and return NULL. */
static Tessera__Response *call(struct scontrol *s, const Tessera__Request *req,
                               const char *what)
{
    Tessera__Response *resp = NULL;
    int err = ctl_call(&s->ctl, req, &resp);
    if (err == TS_ECONNECT) {
        fprintf(stderr, "%s error: Unable to contact slurm controller (connect failure)\n", what);
        return NULL;
    }
    if (err) {
        const char *detail = ctl_error_text(&s->ctl);
        fprintf(stderr, "%s error: %s\n", what, detail[0] ? detail : ts_strerror(err));
        return NULL;
    }
    if (resp->error) {
        fprintf(stderr, "%s error: %s\n", what, resp->error->text);
        tessera__response__free_unpacked(resp, NULL);
        return NULL;
    }
    return resp;
}

static void print_ping_line(const struct scontrol *s, int up)
{
    printf("Slurmctld(primary) at %s is %s\n", s->ctl.conf->ctld_host, up ? "UP" : "DOWN");
}

/* ------------------------------------------------------------------------------------ */

static int cmd_ping(struct scontrol *s, int argc, char **argv)
{
    if (need_conf(s))
        return 1;
    Tessera__PingRequest ping = TESSERA__PING_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_PING;
    req.ping = &ping;
    Tessera__Response *resp = NULL;
    int err = ctl_call(&s->ctl, &req, &resp);
    int up = err == TS_OK && !resp->error && resp->msg_case == TESSERA__RESPONSE__MSG_PING;
    if (resp)
        tessera__response__free_unpacked(resp, NULL);
    print_ping_line(s, up);
    if (!up) {
        printf("*****************************************\n"
               "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n"
               "*****************************************\n");
        return 1;
    }
    return 0;
}

static int show_config(struct scontrol *s)
{
    if (need_conf(s))
        return 1;
    Tessera__ShowConfigRequest show = TESSERA__SHOW_CONFIG_REQUEST__INIT;
    Tessera__Request req = TESSERA__REQUEST__INIT;
    req.msg_case = TESSERA__REQUEST__MSG_SHOW_CONFIG;
    req.show_config = &show;
    Tessera__Response *resp = call(s, &req, "slurm_load_ctl_conf");
    if (!resp)
        return 1;
    if (resp->msg_case != TESSERA__RESPONSE__MSG_SHOW_CONFIG) {
        cmd_error(PROG, "unexpected response from the controller");
        tessera__response__free_unpacked(resp, NULL);
        return 1;
    }
    char when[64];
    timefmt_format_timestamp((time_t)resp->show_config->as_of, when, sizeof(when));
    printf("Configuration data as of %s\n", when);
    for (size_t i = 0; i < resp->show_config->n_entries; i++) {
        const Tessera__ConfigEntry *e = resp->show_config->entries[i];
        printf("%-23s = %s\n", e->key, e->value);
    }
    printf("\n");
    print_ping_line(s, 1);
    tessera__response__free_unpacked(resp, NULL);
    return 0;
}

/* "scontrol show hostnames [LIST]": one name per line; LIST defaults to
 * $SLURM_JOB_NODELIST as in Slurm. */
static int show_hostnames(const char *expr)
{
    if (!expr)
        expr = getenv("SLURM_JOB_NODELIST");
    if (!expr) {
        cmd_error(PROG, "host list is empty");
        return 1;
    }
    struct hostlist *hl = NULL;
    int err = hostlist_expand(expr, &hl);
    if (err) {
        cmd_error(PROG, "Invalid hostlist: %s", expr);
        return 1;
    }
    for (size_t i = 0; i < hostlist_count(hl); i++)
        printf("%s\n", hostlist_nth(hl, i));
    hostlist_destroy(hl);
    return 0;
}

/* "scontrol show hostlist LIST": the ranged form, in the order given. */
static int show_hostlist(const char *expr)
{
    if (!expr) {
        cmd_error(PROG, "host list is empty");
        return 1;
    }
    struct hostlist *hl = NULL;
    if (hostlist_expand(expr, &hl) != TS_OK) {
        cmd_error(PROG, "Invalid hostlist: %s", expr);
        return 1;
    }
    char *ranged = hostlist_compress(hl);
    hostlist_destroy(hl);
    if (!ranged) {
        cmd_error(PROG, "%s", ts_strerror(TS_ENOMEM));
        return 1;
    }
    printf("%s\n", ranged);
    free(ranged);
    return 0;
}

static int cmd_show(struct scontrol *s, int argc, char **argv)
{
    const char *entity = argv[1];
    const char *arg = argc > 2 ? argv[2] : NULL;
    if (!strcasecmp(entity, "config") || !strcasecmp(entity, "conf")) {
        if (arg) {
            fprintf(stderr, "too many arguments for keyword:show config\n");
            return 1;
        }
        return show_config(s);
    }
    if (!strcasecmp(entity, "hostnames"))
        return show_hostnames(arg);
    if (!strcasecmp(entity, "hostlist") || !strcasecmp(entity, "hostlistsorted")) {
        if (!arg)
            return show_hostlist(NULL);
        if (!strcasecmp(entity, "hostlist"))
            return show_hostlist(arg);
        struct hostlist *hl = NULL;
        if (hostlist_expand(arg, &hl) != TS_OK) {
            cmd_error(PROG, "Invalid hostlist: %s", arg);
            return 1;
        }
        hostlist_uniq(hl);
        char *ranged = hostlist_compress(hl);
        hostlist_destroy(hl);
        if (ranged)
            printf("%s\n", ranged);
        free(ranged);
        return ranged ? 0 : 1;
    }
    fprintf(stderr, "invalid entity:%s for keyword:show \n", entity);
    return 1;
}

/* ------------------------------------------------------------------------------------ */

static const struct {
    const char *keyword;
    int min_args, max_args; /* words after the keyword */
    command_fn fn;
} commands[] = {
    {"ping", 0, 0, cmd_ping},
    {"show", 1, 2, cmd_show},
};

static int run_command(struct scontrol *s, int argc, char **argv)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcasecmp(argv[0], commands[i].keyword))
            continue;
        if (argc - 1 < commands[i].min_args) {
            fprintf(stderr, "too few arguments for keyword:%s\n", commands[i].keyword);
            return 1;
        }
        if (argc - 1 > commands[i].max_args) {
            fprintf(stderr, "too many arguments for keyword:%s\n", commands[i].keyword);
            return 1;
        }
        return commands[i].fn(s, argc, argv);
    }
    fprintf(stderr, "invalid keyword: %s\n", argv[0]);
    return 1;
}

/* Commands from standard input, one per line, until EOF, "quit" or "exit". */
static int interactive(struct scontrol *s)
{
    char line[4096];
    int rc = 0, tty = isatty(0);
    for (;;) {
        if (tty) {
            printf("%s: ", PROG);
            fflush(stdout);
        }
        if (!fgets(line, sizeof(line), stdin))
            break;
        char *words[64];
        int n = 0;
        char *save = NULL;
        for (char *w = strtok_r(line, " \t\r\n", &save); w && n < 64;
             w = strtok_r(NULL, " \t\r\n", &save))
            words[n++] = w;
        if (n == 0)
            continue;
        if (!strcasecmp(words[0], "quit") || !strcasecmp(words[0], "exit"))
            break;
        rc = run_command(s, n, words);
        fflush(stdout);
    }
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out,
            "scontrol [<OPTION>] [<COMMAND>]\n"
            "    Valid <OPTION> values are:\n"
            "     --config=FILE  use FILE instead of $TESSERA_CONF or "
            "/etc/tessera/tessera.conf\n"
            "     -h, --help     print this description of use\n"
            "     -V, --version  print the version\n"
            "\n"
            "    Valid <COMMAND> values are:\n"
            "     ping                      print status of the controller\n"
            "     show config               print the controller's configuration\n"
            "     show hostnames [LIST]     print one host name per line\n"
            "     show hostlist LIST        print the ranged form of LIST\n"
            "     show hostlistsorted LIST  sorted, duplicates removed\n"
            "     quit, exit                leave interactive mode\n"
            "\n"
            "    Without <COMMAND>, commands are read from standard input.\n");
}

int main(int argc, char **argv)
{
    struct scontrol s = {0};
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"usage", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    argv[0] = (char *)PROG; /* getopt's messages name the command as Slurm's do */
    int ch;
    /* "+": stop at the first keyword, so its arguments are never taken for options */
    while ((ch = getopt_long(argc, argv, "+hV", longopts, NULL)) != -1) {
        switch (ch) {
        case 'f': s.conf_path = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("tessera %s\n", TESSERA_VERSION); return 0;
        default: fprintf(stderr, "Try \"scontrol --help\" for more information\n"); return 1;
        }
    }
    int rc = optind < argc ? run_command(&s, argc - optind, argv + optind) : interactive(&s);
    ctl_close(&s.ctl);
    return rc;
}
