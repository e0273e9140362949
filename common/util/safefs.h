/* Files and folders through directory file descriptors, never following a symbolic link:
 * what a root daemon uses wherever a path may pass through something a user could change
 * (the node daemon's spool, docs/architecture.md "The node daemon's spool").
 *
 * Every name is one path component (no '/', not "." or ".."); a caller walks folders one
 * fd at a time, each opened O_DIRECTORY|O_NOFOLLOW, so a folder swapped for a link between
 * two calls is refused instead of followed.
 *
 * The functions marked "async-signal-safe" make system calls only (no allocation, no
 * stdio, no locks): a child forked from a threaded daemon may call them before exec.
 */
#ifndef TESSERA_COMMON_SAFEFS_H
#define TESSERA_COMMON_SAFEFS_H

#include <dirent.h>
#include <stddef.h>
#include <sys/types.h>

/* How deep safefs_remove_tree descends (each level holds one fd open). */
#define SAFEFS_MAX_DEPTH 32

/* 1 when name is one usable path component. Async-signal-safe. */
int safefs_name_ok(const char *name);

/* Open the folder name in dirfd (read-only, O_CLOEXEC) into *out. TS_ENOENT when missing,
 * TS_EPERM when it is a symbolic link or not a folder, TS_ESYS otherwise (errno says). */
int safefs_open_dir(int dirfd, const char *name, int *out);

/* The same, making the folder first when it is missing (then with exactly mode, whatever
 * the umask). */
int safefs_make_dir(int dirfd, const char *name, mode_t mode, int *out);

/* A stream over the entries of the open folder fd, from the first (fd itself is left
 * open and may be listed again); NULL on failure. closedir() when done. */
DIR *safefs_list(int fd);

/* The names in the open folder fd (without "." and ".."), at most max of them, in *n;
 * NULL when there are none or on failure. Free with safefs_names_free. */
char **safefs_names(int fd, size_t max, size_t *n);
void safefs_names_free(char **names, size_t n);

/* TS_OK when the open folder fd belongs to owner and its mode grants none of the bits in
 * deny (S_IWGRP|S_IWOTH: nobody else may write; 077: nobody else may do anything); else
 * TS_EPERM with the reason in why ("owned by uid 1000", "mode 0777"). */
int safefs_check_dir(int fd, uid_t owner, mode_t deny, char *why, size_t len);

/* Remove name in dirfd: a file or a link (the link itself, never its target), or a folder
 * and everything in it, each level opened without following links. TS_OK also when name
 * does not exist; TS_ETOOBIG when the tree is deeper than SAFEFS_MAX_DEPTH (what is
 * deeper stays); TS_ESYS when something could not be removed. */
int safefs_remove_tree(int dirfd, const char *name);

/* Create a new file name in dirfd for writing (O_EXCL: never an existing file, never
 * through a link) into *out. TS_EEXIST when name exists. Async-signal-safe. */
int safefs_create(int dirfd, const char *name, mode_t mode, int *out);

/* Write all of buf to fd (retrying short writes and EINTR). Async-signal-safe. */
int safefs_write_all(int fd, const void *buf, size_t len);

/* Replace name in dirfd with buf, atomically: written to "<name>.tmp", flushed to disk,
 * then renamed over name, so a reader sees the old file or the whole new one. name must
 * leave room for the suffix (at most 250 bytes). Async-signal-safe. */
int safefs_write_atomic(int dirfd, const char *name, const void *buf, size_t len, mode_t mode);

/* Read the regular file name in dirfd (not through a link, never blocking on a FIFO) into
 * buf, at most cap - 1 bytes, NUL-terminated; its length in *len. TS_ENOENT when missing,
 * TS_EPERM when not a regular file, TS_ETOOBIG when larger than cap - 1 bytes. */
int safefs_read_small(int dirfd, const char *name, char *buf, size_t cap, size_t *len);

#endif
