/* Unit tests for common/format/fmtlist: the compiled format that squeue's job and step
 * formats and sinfo's share. A small table of fields stands for a printer's; lines are
 * laid out through a fill callback that reads it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/format/fmtlist.h"
#include "common/util/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct field {
    char letter;
    const char *header;
    const char *value;
};

static const struct field fields[] = {
    {'i', "ID", "12345"},
    {'n', "NAME", "a-long-name"},
    {'s', "ST", "R"},
};

static const void *lookup(char c)
{
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (fields[i].letter == c)
            return &fields[i];
    return NULL;
}

static void value_cell(void *arg, size_t i, const struct fmtlist_item *it,
                       struct fmtlist_cell *cell, char *buf, size_t len)
{
    const struct field *fd = it->field;

    cell->text = arg ? fd->header : fd->value;
}

/* The line of l, values (header 0) or headers (header 1); freed by the test. */
static char *line(const struct fmtlist *l, int header)
{
    static int yes = 1;
    char *text = fmtlist_line(l, value_cell, header ? &yes : NULL, 64);

    assert_non_null(text);
    return text;
}

static void assert_line(const struct fmtlist *l, int header, const char *want)
{
    char *text = line(l, header);

    assert_string_equal(text, want);
    free(text);
}

static void test_compile_items(void **state)
{
    struct fmtlist l = {0};
    char err[128] = "";

    assert_int_equal(fmtlist_compile(&l, "%.8i|%5n%%%#s", lookup, "test", err, sizeof(err)),
                     TS_OK);
    assert_int_equal(l.n, 5);
    assert_ptr_equal(l.items[0].field, &fields[0]);
    assert_int_equal(l.items[0].width, 8);
    assert_true(l.items[0].right);
    assert_null(l.items[1].field);
    assert_string_equal(l.items[1].text, "|");
    assert_ptr_equal(l.items[2].field, &fields[1]);
    assert_int_equal(l.items[2].width, 5);
    assert_false(l.items[2].right);
    assert_string_equal(l.items[3].text, "%");
    assert_ptr_equal(l.items[4].field, &fields[2]);
    assert_true(l.items[4].grow);
    assert_int_equal(l.items[4].width, 0);
    assert_string_equal(err, "");
    /* compiling again appends */
    assert_int_equal(fmtlist_compile(&l, "%s", lookup, "test", err, sizeof(err)), TS_OK);
    assert_int_equal(l.n, 6);
    fmtlist_clear(&l);
    assert_int_equal(l.n, 0);
    assert_null(l.items);
}

static void test_errors_name_the_spec(void **state)
{
    struct fmtlist l = {0};
    char err[128] = "";

    assert_int_equal(fmtlist_compile(&l, "%i %Q", lookup, "job step", err, sizeof(err)),
                     TS_EOPTVALUE);
    assert_string_equal(err, "Invalid job step format specification: Q");
    fmtlist_clear(&l);
    assert_int_equal(fmtlist_compile(&l, "%i %", lookup, "node", err, sizeof(err)),
                     TS_EOPTVALUE);
    assert_string_equal(err, "Invalid node format specification: ");
    fmtlist_clear(&l);
    /* no room for the message is no message, and no harm */
    assert_int_equal(fmtlist_compile(&l, "%Q", lookup, "job", NULL, 0), TS_EOPTVALUE);
    fmtlist_clear(&l);
    assert_int_equal(fmtlist_spec_error(err, sizeof(err), "job", "Bogus:9", 5), TS_EOPTVALUE);
    assert_string_equal(err, "Invalid job format specification: Bogus");
}

static void test_add_by_hand(void **state)
{
    struct fmtlist l = {0};

    /* what squeue -O builds: a field, then its suffix; an empty suffix adds nothing */
    assert_int_equal(fmtlist_add_field(&l, &fields[1], 4, 1), TS_OK);
    assert_int_equal(fmtlist_add_literal(&l, "", 0), TS_OK);
    assert_int_equal(fmtlist_add_literal(&l, "::x", 2), TS_OK);
    assert_int_equal(l.n, 2);
    assert_false(l.items[0].grow);
    assert_string_equal(l.items[1].text, "::");
    assert_line(&l, 0, "a-lo::\n");
    fmtlist_clear(&l);
    /* many items: the list grows */
    for (int i = 0; i < 100; i++)
        assert_int_equal(fmtlist_add_field(&l, &fields[2], 0, 0), TS_OK);
    assert_int_equal(l.n, 100);
    char *text = line(&l, 0);
    assert_int_equal(strlen(text), 101);
    free(text);
    fmtlist_clear(&l);
}

static void test_lines_pad_and_cut(void **state)
{
    struct fmtlist l = {0};

    assert_int_equal(fmtlist_compile(&l, "%.8i %4n|%s %n", lookup, "test", NULL, 0), TS_OK);
    assert_line(&l, 1, "      ID NAME|ST NAME\n");
    assert_line(&l, 0, "   12345 a-lo|R a-long-name\n");
    fmtlist_clear(&l);
    /* an empty format is an empty line */
    assert_int_equal(fmtlist_compile(&l, NULL, lookup, "test", NULL, 0), TS_OK);
    assert_int_equal(l.n, 0);
    assert_line(&l, 0, "\n");
    fmtlist_clear(&l);
}

static char *cell_text(const struct fmtlist_cell *c)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    assert_non_null(f);
    fmtlist_put_cell(f, c);
    assert_int_equal(fclose(f), 0);
    return text;
}

static void assert_cell(const char *value, int width, int right, int cut, const char *want)
{
    struct fmtlist_cell c = {value, width, right, cut};
    char *text = cell_text(&c);

    assert_string_equal(text, want);
    free(text);
}

static void test_cells(void **state)
{
    assert_cell("abcdef", 0, 0, 1, "abcdef"); /* natural width */
    assert_cell("abcdef", -1, 1, 1, "abcdef");
    assert_cell("abc", 5, 0, 1, "abc  ");
    assert_cell("abc", 5, 1, 1, "  abc");
    assert_cell("abcdef", 4, 0, 1, "abcd");
    assert_cell("abcdef", 4, 1, 1, "abcd");
    /* sinfo's uncut headers: right-justified, never cut */
    assert_cell("abcdef", 4, 1, 0, "abcdef");
    assert_cell("ab", 4, 1, 0, "  ab");
    /* left-justified text is cut even when cut is off: Slurm cuts those */
    assert_cell("abcdef", 4, 0, 0, "abcd");
}

/* The callback sees each field's index and may change width, side and cut. */
static void index_cell(void *arg, size_t i, const struct fmtlist_item *it,
                       struct fmtlist_cell *cell, char *buf, size_t len)
{
    snprintf(buf, len, "%zu", i);
    cell->text = buf;
    cell->width = 3;
    cell->right = (i == 0);
}

static void test_fill_sees_index(void **state)
{
    struct fmtlist l = {0};

    assert_int_equal(fmtlist_compile(&l, "%i-%n-%s", lookup, "test", NULL, 0), TS_OK);
    char *text = fmtlist_line(&l, index_cell, NULL, 16);
    assert_non_null(text);
    assert_string_equal(text, "  0-2  -4  \n");
    free(text);
    fmtlist_clear(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compile_items),
        cmocka_unit_test(test_errors_name_the_spec),
        cmocka_unit_test(test_add_by_hand),
        cmocka_unit_test(test_lines_pad_and_cut),
        cmocka_unit_test(test_cells),
        cmocka_unit_test(test_fill_sees_index),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
