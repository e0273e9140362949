/* srun's --label: every line of a task's stream gets "rank: " in front, the rank padded to
 * the width of the step's highest rank. A line is written once it is complete (a task's
 * lines are never cut by another's), what is left at the stream's end with a newline
 * added. A line longer than LINELABEL_MAX is written in pieces of that size, each
 * labelled: a task that never ends a line cannot grow the writer's memory without bound
 * (the step daemon, as root, labels the files it writes). Used by srun and by the step
 * daemon for the files it labels.
 */
#ifndef TESSERA_COMMON_LINELABEL_H
#define TESSERA_COMMON_LINELABEL_H

#include <stddef.h>
#include <stdint.h>

#define LINELABEL_MAX (64 * 1024)

struct linelabel {
    char *partial; /* a line not yet ended */
    size_t len;
};

/* The label width for a step of ntasks tasks (digits of the highest rank, at least 1). */
int linelabel_width(uint32_t ntasks);
/* data of task rank's stream, to fd. Write errors are ignored (the reader is gone). */
void linelabel_write(struct linelabel *l, int fd, int width, uint32_t rank, const void *data,
                     size_t len);
/* The stream ended: what is left, as a line. */
void linelabel_flush(struct linelabel *l, int fd, int width, uint32_t rank);
void linelabel_free(struct linelabel *l);

#endif
