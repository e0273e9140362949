/* A batch script's login environment (--export=NONE, or an --export list without ALL):
 * what the user's login shell sets up, under the variables the job passes (docs/job-states.md,
 * section 8).
 *
 * Read in the script's own process after it became the user, so root never runs a
 * user's profile: that process starts the user's shell as a login shell ("-bash -c ...")
 * with a minimal environment (HOME, SHELL, USER, LOGNAME, PATH), the shell prints its
 * environment with `env -0` on a pipe of its own (not its standard output, which a
 * profile may write to), and the process waits for it a bounded time. Whatever fails (a
 * shell that refuses the login, as /usr/sbin/nologin does; a profile that hangs; more
 * output than the bound) gives the minimal environment instead, and one warning line in
 * the job's error output.
 *
 * loginenv_prepare allocates everything before the fork (the daemon has threads);
 * loginenv_merge uses system calls only. */
#ifndef TESSERA_NODED_LOGINENV_H
#define TESSERA_NODED_LOGINENV_H

#include <limits.h>
#include <pwd.h>
#include <stddef.h>

/* Slurm's default for --get-user-env: 8 seconds. */
#define LOGINENV_TIMEOUT_MS 8000u
/* The login shell's output and entries beyond these are a failure, not a truncation. */
#define LOGINENV_MAX_BYTES (256u * 1024u)
#define LOGINENV_MAX_VARS 4096u

struct loginenv {
    int known;                  /* the user has a passwd entry */
    unsigned timeout_ms;
    char shell[PATH_MAX];
    char argv0[PATH_MAX + 1];   /* "-" and the shell's last name: a login shell */
    char home[PATH_MAX];
    char *minimal[6];           /* HOME, SHELL, USER, LOGNAME, PATH, NULL */
    char *buf;                  /* what the shell printed */
    char **vars;                /* its entries */
    size_t cap;
    char **out;                 /* the merged environment */
    size_t out_cap;
};

/* pw: the user's entry (NULL when there is none: the merge then keeps the passed
 * variables alone, with the warning); n_passed: how many variables the job passes. */
int loginenv_prepare(struct loginenv *le, const struct passwd *pw, size_t n_passed,
                     unsigned timeout_ms);
/* In the script's process, already the user: the login environment with passed (NULL
 * terminated) over it. Returns le's array; on a failure the minimal one under passed, and
 * a warning on fd 2. */
char **loginenv_merge(struct loginenv *le, char *const *passed);
void loginenv_release(struct loginenv *le);

#endif
