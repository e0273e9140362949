/* srun's --label lines: see linelabel.h. */
#include "common/text/linelabel.h"
#include "common/util/safefs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A reader that went away (a closed pipe, a full disk) loses the rest of its lines: there
 * is no one to tell. */
static void write_all(int fd, const void *data, size_t len)
{
    (void)safefs_write_all(fd, data, len);
}

int linelabel_width(uint32_t ntasks)
{
    int width = 0;
    for (uint32_t n = ntasks > 1 ? ntasks - 1 : 0; n > 0; n /= 10)
        width++;
    return width ? width : 1;
}

/* One labelled line: the kept part, then more (without its newline). */
static void put_line(struct linelabel *l, int fd, int width, uint32_t rank, const char *more,
                     size_t len)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof(prefix), "%*u: ", width, rank);
    write_all(fd, prefix, (size_t)n);
    write_all(fd, l->partial, l->len);
    write_all(fd, more, len);
    write_all(fd, "\n", 1);
    l->len = 0;
}

void linelabel_write(struct linelabel *l, int fd, int width, uint32_t rank, const void *data,
                     size_t len)
{
    const char *p = data;
    while (len > 0) {
        const char *nl = memchr(p, '\n', len);
        size_t take = nl ? (size_t)(nl - p) : len;
        if (take > LINELABEL_MAX - l->len)
            take = LINELABEL_MAX - l->len;
        if (nl && (size_t)(nl - p) == take) { /* a whole line */
            put_line(l, fd, width, rank, p, take);
            p += take + 1;
            len -= take + 1;
            continue;
        }
        char *grown = realloc(l->partial, l->len + take);
        if (!grown)
            return;
        l->partial = grown;
        memcpy(l->partial + l->len, p, take);
        l->len += take;
        p += take;
        len -= take;
        if (l->len == LINELABEL_MAX) /* as long as a line may wait: out it goes */
            put_line(l, fd, width, rank, "", 0);
    }
}

void linelabel_flush(struct linelabel *l, int fd, int width, uint32_t rank)
{
    if (l->len)
        put_line(l, fd, width, rank, "", 0);
    linelabel_free(l);
}

void linelabel_free(struct linelabel *l)
{
    free(l->partial);
    l->partial = NULL;
    l->len = 0;
}
