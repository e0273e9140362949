/* Running one filter (docs/filters.md): an administrator's executable as a child process
 * of the controller, never waited for on the loop. Its first argument is the job's JSON
 * file; its output goes to the controller's log (truncated); after FilterTimeout seconds
 * its process group is killed. At most 64 run at once; more wait their turn (in order),
 * their FilterTimeout counting from their start. */
#ifndef TESSERA_CTLD_FILTER_RUN_H
#define TESSERA_CTLD_FILTER_RUN_H

#include <stddef.h>

struct ctld;
struct filter_run;

enum filter_end {
    FILTER_EXITED,    /* code holds its exit status */
    FILTER_SIGNALED,  /* it died of a signal (code holds the signal) */
    FILTER_TIMEOUT,   /* killed after FilterTimeout */
    FILTER_NOT_FOUND, /* missing or not executable */
};

struct filter_result {
    enum filter_end end;
    int code;
    char first_err[200]; /* the first line it wrote to stderr ("" if none) */
};

typedef void (*filter_done_fn)(struct ctld *c, void *arg, const struct filter_result *r);

/* Start path with the arguments args (NULL-terminated; args[0] is its first argument).
 * what names the job in logs ("job 93", "submission from uid 1000"). done runs once, on
 * the loop, never before this returns (also for a filter that is not found). TS_OK or a
 * ts_err (nothing runs then, done is not called). */
int filter_run_start(struct ctld *c, const char *path, const char *const args[],
                     const char *what, filter_done_fn done, void *arg);

/* The base name of a filter's path, for messages. */
const char *filter_name(const char *path);

/* Shutdown: kill every running filter; none is reported any more (done is not called),
 * so what their callers kept may be freed. The killed ones are reaped by the loop's last
 * turns; filter_run_free_all() frees what is left, just before the loop goes. */
void filter_run_shutdown(struct ctld *c);
void filter_run_free_all(struct ctld *c);

#endif
