/* common/text/linelabel.c: --label lines, whole lines only, the rest at the end, long lines in
 * bounded pieces. */
#include "common/text/linelabel.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* What the writer wrote, kept in an unnamed temporary file (a pipe would fill). */
struct sink {
    int fds[2]; /* [1] written, [0] the same file */
};

static void sink_open(struct sink *s)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    s->fds[0] = dup(fileno(f));
    s->fds[1] = dup(fileno(f));
    fclose(f);
    assert_true(s->fds[0] >= 0 && s->fds[1] >= 0);
}

static char *sink_take(struct sink *s)
{
    close(s->fds[1]);
    off_t size = lseek(s->fds[0], 0, SEEK_END);
    assert_true(size >= 0);
    char *buf = malloc((size_t)size + 1);
    assert_non_null(buf);
    assert_int_equal(pread(s->fds[0], buf, (size_t)size, 0), size);
    buf[size] = '\0';
    close(s->fds[0]);
    return buf;
}

static void test_width(void **state)
{
    (void)state;
    assert_int_equal(linelabel_width(0), 1);
    assert_int_equal(linelabel_width(1), 1);
    assert_int_equal(linelabel_width(10), 1);
    assert_int_equal(linelabel_width(11), 2);
    assert_int_equal(linelabel_width(101), 3);
}

static void test_lines_in_pieces(void **state)
{
    (void)state;
    struct sink s;
    struct linelabel l = {0};
    sink_open(&s);
    linelabel_write(&l, s.fds[1], 2, 3, "a", 1);
    linelabel_write(&l, s.fds[1], 2, 3, "b\nc\n\nd", 6);
    linelabel_flush(&l, s.fds[1], 2, 3);
    assert_null(l.partial);
    char *text = sink_take(&s);
    assert_string_equal(text, " 3: ab\n 3: c\n 3: \n 3: d\n");
    free(text);
}

/* A task that never ends its line: pieces of LINELABEL_MAX, each labelled. */
static void test_endless_line_bounded(void **state)
{
    (void)state;
    struct sink s;
    struct linelabel l = {0};
    sink_open(&s);
    size_t big = LINELABEL_MAX * 2 + 10;
    char *data = malloc(big);
    assert_non_null(data);
    memset(data, 'x', big);
    for (size_t off = 0; off < big; off += 1000)
        linelabel_write(&l, s.fds[1], 1, 0, data + off, big - off < 1000 ? big - off : 1000);
    assert_true(l.len <= LINELABEL_MAX);
    linelabel_flush(&l, s.fds[1], 1, 0);
    char *text = sink_take(&s);
    size_t lines = 0;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 3);
    assert_int_equal(strlen(text), big + 3 * strlen("0: \n"));
    assert_int_equal(strncmp(text, "0: xxx", 6), 0);
    free(text);
    free(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_width),
        cmocka_unit_test(test_lines_in_pieces),
        cmocka_unit_test(test_endless_line_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
