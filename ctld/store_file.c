/* The state store's files checked before LMDB maps them (see store_file.h).
 *
 * LMDB keeps two meta pages at the start of data.mdb (pages 0 and 1), written
 * alternately; the one with the higher transaction id is current. A meta page is a page
 * header followed by the meta record, both in the machine's own layout, with pgno_t,
 * txnid_t and mdb_size_t of the width of size_t, W below (the layout of LMDB 0.9's mdb.c):
 *
 *   page header:  pgno (W), pad (2), flags (2), lower/upper (4)          P_META = 0x08
 *   meta record:  magic (4) = 0xBEEFC0DE, version (4) = 1, address (W), mapsize (W),
 *                 two database records of 8 + 5 W bytes (the free pages' one carries the
 *                 page size in its first 4 bytes), last page (W), txnid (W)
 */
#include "ctld/store_file.h"

#include "common/util/errors.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORD sizeof(size_t)
#define PAGE_HEADER (WORD + 8)
#define PAGE_FLAGS_AT (WORD + 2)
#define P_META 0x08u
#define META_MAGIC 0xBEEFC0DEu
#define META_VERSION 1u
#define META_PSIZE_AT (8 + 2 * WORD)
#define META_LAST_PAGE_AT (24 + 12 * WORD)
#define META_TXNID_AT (24 + 13 * WORD)
#define META_BYTES (PAGE_HEADER + META_TXNID_AT + WORD)
#define PAGE_MIN 512u
#define PAGE_MAX 65536u

/* Said after every damage: what to do about it (docs/configuration.md). */
#define RESTORE_HINT "restore data.mdb from a backup made with mdb_copy"

static uint64_t read_word(const unsigned char *p)
{
    size_t v;
    memcpy(&v, p, sizeof(v));
    return (uint64_t)v;
}

static uint32_t read_u32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

/* One meta page at off: TS_OK and *out, or a reason in why. */
static int read_meta(int fd, off_t off, int index, struct store_file_meta *out, char *why,
                     size_t len)
{
    unsigned char page[META_BYTES];
    ssize_t n = pread(fd, page, sizeof(page), off);
    if (n != (ssize_t)sizeof(page)) {
        snprintf(why, len, "meta page %d is cut off (the file ends before it)", index);
        return TS_ESTORE_DAMAGED;
    }
    const unsigned char *m = page + PAGE_HEADER;
    uint16_t flags;
    memcpy(&flags, page + PAGE_FLAGS_AT, sizeof(flags));
    uint32_t psize = read_u32(m + META_PSIZE_AT);
    if (!(flags & P_META) || read_u32(m) != META_MAGIC) {
        snprintf(why, len, "page %d is not an LMDB meta page", index);
        return TS_ESTORE_DAMAGED;
    }
    if (read_u32(m + 4) != META_VERSION) {
        snprintf(why, len, "meta page %d has LMDB data version %u, not %u", index,
                 read_u32(m + 4), META_VERSION);
        return TS_ESTORE_DAMAGED;
    }
    if (psize < PAGE_MIN || psize > PAGE_MAX || (psize & (psize - 1))) {
        snprintf(why, len, "meta page %d names a page size of %u bytes", index, psize);
        return TS_ESTORE_DAMAGED;
    }
    out->page_size = psize;
    out->last_page = read_word(m + META_LAST_PAGE_AT);
    out->txnid = read_word(m + META_TXNID_AT);
    return TS_OK;
}

/* The newer of the two meta pages; both must be sound, as LMDB reads both. */
static int current_meta(int fd, struct store_file_meta *out, char *why, size_t len)
{
    struct store_file_meta m0, m1;
    int err = read_meta(fd, 0, 0, &m0, why, len);
    if (!err)
        err = read_meta(fd, (off_t)m0.page_size, 1, &m1, why, len);
    if (err)
        return err;
    *out = m1.txnid > m0.txnid ? m1 : m0;
    if (out->last_page < 1 || out->last_page >= (uint64_t)LLONG_MAX / out->page_size) {
        snprintf(why, len, "its meta page names last page %llu",
                 (unsigned long long)out->last_page);
        return TS_ESTORE_DAMAGED;
    }
    return TS_OK;
}

static void say(char *why, size_t len, const char *dir, const char *what)
{
    snprintf(why, len, "the state in %s is damaged: %s/%s %s", dir, dir, STORE_FILE_DATA,
             what);
}

/* A data file missing or empty where the marker says a state was kept. */
static int lost_state(const char *dir, const char *what, char *why, size_t len)
{
    char text[512];
    snprintf(text, sizeof(text),
             "%s, but %s says a state was kept there; %s, or remove %s/%s to start a new "
             "cluster deliberately",
             what, STORE_FILE_MARKER, RESTORE_HINT, dir, STORE_FILE_MARKER);
    say(why, len, dir, text);
    return TS_ESTORE_DAMAGED;
}

static int check_open_file(const char *dir, int fd, bool marked, struct store_file_meta *meta,
                           char *why, size_t len)
{
    struct stat stt;
    if (fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode)) {
        say(why, len, dir, "is not a regular file");
        return TS_ESTORE_DAMAGED;
    }
    if (stt.st_size == 0)
        return marked ? lost_state(dir, "is empty", why, len) : TS_OK;
    char reason[256];
    int err = current_meta(fd, meta, reason, sizeof(reason));
    meta->file_size = (uint64_t)stt.st_size;
    if (err) {
        char text[512];
        snprintf(text, sizeof(text), "cannot be read as LMDB: %s; %s", reason, RESTORE_HINT);
        say(why, len, dir, text);
        return TS_ESTORE_DAMAGED;
    }
    uint64_t need = (meta->last_page + 1) * meta->page_size;
    if (meta->file_size < need) {
        char text[512];
        snprintf(text, sizeof(text),
                 "is %llu bytes, but its meta page names %llu (pages of %u bytes up to page "
                 "%llu): the file was cut short; %s",
                 (unsigned long long)meta->file_size, (unsigned long long)need,
                 meta->page_size, (unsigned long long)meta->last_page, RESTORE_HINT);
        say(why, len, dir, text);
        return TS_ESTORE_DAMAGED;
    }
    if (marked && meta->txnid == 0)
        return lost_state(dir, "holds no committed transaction", why, len);
    return TS_OK;
}

int store_file_check(const char *dir, struct store_file_meta *meta, char *why, size_t len)
{
    struct store_file_meta none = {0};
    struct store_file_meta *m = meta ? meta : &none;
    *m = (struct store_file_meta){0};
    why[0] = '\0';
    bool marked = store_file_marked(dir);
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE_DATA) >= sizeof(path)) {
        snprintf(why, len, "StateSaveLocation %s: path too long", dir);
        return TS_EINVAL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT)
        return marked ? lost_state(dir, "is missing", why, len) : TS_OK;
    if (fd < 0) {
        snprintf(why, len, "cannot open %s: %s", path, strerror(errno));
        return errno == ELOOP ? TS_ESTORE_DAMAGED : TS_ESYS;
    }
    int err = check_open_file(dir, fd, marked, m, why, len);
    close(fd);
    return err;
}

bool store_file_marked(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE_MARKER) >= sizeof(path))
        return true;
    struct stat stt;
    return lstat(path, &stt) == 0 || errno != ENOENT;
}

static int sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return TS_ESYS;
    int rc = fsync(fd);
    close(fd);
    return rc == 0 ? TS_OK : TS_ESYS;
}

int store_file_mark(const char *dir)
{
    static const char text[] =
        "This folder holds a Tessera controller's state (data.mdb). While this file exists,\n"
        "the controller refuses to start when data.mdb is missing or empty instead of\n"
        "starting a new cluster. Remove it only to start a new cluster deliberately.\n";
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, STORE_FILE_MARKER) >= sizeof(path))
        return TS_EINVAL;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST ? TS_OK : TS_ESYS;
    errno = 0;
    int err = write(fd, text, sizeof(text) - 1) == (ssize_t)(sizeof(text) - 1) && fsync(fd) == 0
                  ? TS_OK
                  : TS_ESYS;
    int saved = err ? (errno ? errno : ENOSPC) : 0; /* a short write sets no errno */
    close(fd);
    if (err) {
        unlink(path); /* a half-written marker would still count; try again later */
        errno = saved;
        return err;
    }
    return sync_dir(dir);
}
