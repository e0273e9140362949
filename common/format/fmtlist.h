/* A compiled output format: literal text and fields in their order, each field with a
 * width and a side, over a printer's own table of fields. squeue's job and step formats
 * and sinfo's compile into it (common/format/jobfmt_squeue.c, stepfmt.c,
 * nodefmt_fields.c); each printer keeps its table, and a field here is a pointer to one
 * of its rows. Lines are laid out here, with the printer saying what each cell holds. */
#ifndef TESSERA_COMMON_FMTLIST_H
#define TESSERA_COMMON_FMTLIST_H

#include <stddef.h>
#include <stdio.h>

struct fmtlist_item {
    const void *field; /* the printer's row for this field; NULL: literal text */
    char *text;        /* the literal */
    int width;         /* 0: the value's own width */
    int right;         /* right-justified ("." in the format) */
    int grow;          /* "#": at least width, as wide as the longest value (sinfo) */
};

struct fmtlist {
    struct fmtlist_item *items;
    size_t n, cap;
};

/* The printer's row for a format letter, or NULL when the letter means nothing to it. */
typedef const void *(*fmtlist_lookup_fn)(char letter);

/* Compile a "%[.#][width]X" format (common/format/fmtspec.h) into l, fields looked up by
 * lookup. A letter lookup does not know (or a width too large, or a "%" at the end) is
 * TS_EOPTVALUE, with errbuf saying "Invalid <what> format specification: <text>" as
 * Slurm's commands word it (what: "job", "job step", "node"); TS_ENOMEM. l may hold
 * items already; on error it holds what was added before the error (free it). */
int fmtlist_compile(struct fmtlist *l, const char *format, fmtlist_lookup_fn lookup,
                    const char *what, char *errbuf, size_t errlen);
/* Append literal text (nothing when len is 0) or a field; TS_OK or TS_ENOMEM. */
int fmtlist_add_literal(struct fmtlist *l, const char *text, size_t len);
int fmtlist_add_field(struct fmtlist *l, const void *field, int width, int right);
/* The error of a bad specification spec[0..len) in errbuf, as fmtlist_compile words it;
 * returns TS_EOPTVALUE. */
int fmtlist_spec_error(char *errbuf, size_t errlen, const char *what, const char *spec,
                       size_t len);
/* Free the items (l itself is the caller's) and leave l empty. */
void fmtlist_clear(struct fmtlist *l);

/* One cell as a printer fills it; it starts as the item says, with cut set. */
struct fmtlist_cell {
    const char *text;
    int width; /* 0 (or less): the text as it is */
    int right;
    int cut; /* a longer text is cut to the width (Slurm cuts values, and most headers) */
};

/* Write a cell: padded to its width on its side, or cut to it. */
void fmtlist_put_cell(FILE *f, const struct fmtlist_cell *cell);

/* Fill cell for item i (a field; literals are written as they are): cell->text must be
 * set; buf (len bytes) is room for the text. */
typedef void (*fmtlist_cell_fn)(void *arg, size_t i, const struct fmtlist_item *it,
                                struct fmtlist_cell *cell, char *buf, size_t len);

/* Write one line of l to f, ending in "\n", each field's cell filled by fill. */
void fmtlist_put_line(FILE *f, const struct fmtlist *l, fmtlist_cell_fn fill, void *arg,
                      char *buf, size_t len);
/* The same line as a malloc'd text, with buflen bytes of room for a cell; NULL when out
 * of memory. */
char *fmtlist_line(const struct fmtlist *l, fmtlist_cell_fn fill, void *arg, size_t buflen);

#endif
