/* The state store's files as they lie on disk, checked before LMDB maps them.
 *
 * LMDB maps data.mdb and trusts its meta pages: a file shorter than the last page the
 * newest meta page names makes the first read past its end a SIGBUS, and a missing or
 * zero-length file is silently initialised as a new, empty environment. So before the
 * environment is opened, store_file_check() reads both meta pages itself (magic, version,
 * page size) and compares the file's length with what the newer valid one names.
 *
 * The marker (STORE_FILE_MARKER in the same folder) is written by the owner of the state
 * once its first state has been committed there (the controller: its schema record).
 * From then on a missing or empty data.mdb is damage, not a new cluster: the
 * administrator removes the marker deliberately to start afresh.
 */
#ifndef TESSERA_COMMON_STORE_FILE_H
#define TESSERA_COMMON_STORE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_FILE_DATA "data.mdb"
#define STORE_FILE_MARKER "tessera-state.marker"

/* What the newer valid meta page of a data file says. */
struct store_file_meta {
    uint32_t page_size;
    uint64_t last_page; /* the last page in use; the file holds pages 0..last_page */
    uint64_t txnid;     /* the last committed transaction */
    uint64_t file_size;
};

/* Check dir's data file before it is opened: TS_OK when it may be opened (also when it is
 * missing or empty and no marker says a state was there: a new state); TS_ESTORE_DAMAGED
 * with a one-line reason in why (no trailing newline) otherwise. meta (may be NULL) gets
 * the file's meta when there is one (zeroed when there is none). */
int store_file_check(const char *dir, struct store_file_meta *meta, char *why, size_t len);

/* Whether dir holds the marker (an error reading the folder counts as "yes": never take
 * a state for new on a guess). */
bool store_file_marked(const char *dir);
/* Write the marker (durably: the file and the folder are synced). TS_OK when it exists
 * afterwards. */
int store_file_mark(const char *dir);

#endif
