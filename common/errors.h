/* One project-wide set of error codes with stable texts.
 *
 * Codes travel on the wire (Response.error.code) and are kept in logs, so a code's number
 * and text never change once released: add new codes at the end of their group.  Texts
 * that Slurm users and scripts know are Slurm's own wording. */
#ifndef TESSERA_COMMON_ERRORS_H
#define TESSERA_COMMON_ERRORS_H

/* X(name, number, text) */
#define TS_ERRORS(X)                                                                     \
    X(TS_OK, 0, "Success")                                                               \
    /* generic */                                                                        \
    X(TS_ENOMEM, 1, "Out of memory")                                                     \
    X(TS_EINVAL, 2, "Invalid argument")                                                  \
    X(TS_ESYS, 3, "System call failed")                                                  \
    X(TS_ENOENT, 4, "No such file or directory")                                         \
    X(TS_ETOOBIG, 5, "Value too large")                                                  \
    X(TS_ETIMEDOUT, 6, "Operation timed out")                                            \
    X(TS_EAGAIN, 7, "Resource temporarily unavailable")                                  \
    X(TS_ESHUTDOWN, 8, "Daemon is shutting down")                                        \
    X(TS_ENOTSUP, 9, "Operation not supported")                                          \
    X(TS_EPERM, 10, "Access/permission denied")                                          \
    X(TS_EEXIST, 11, "Already exists")                                                   \
    X(TS_EADDRINUSE, 12, "Address already in use")                                       \
    X(TS_EBUSY, 13, "Too many requests or connections")                                  \
    /* parsing (100s) */                                                                 \
    X(TS_EHOSTLIST, 100, "Invalid hostlist")                                             \
    X(TS_EIDSET, 101, "Invalid id set")                                                  \
    X(TS_ETIMEFMT, 102, "Invalid time specification")                                   \
    X(TS_ECONF, 103, "Invalid configuration")                                            \
    X(TS_ECONF_NOTFOUND, 104, "Configuration file not found")                            \
    X(TS_ENUMBER, 105, "Invalid number")                                                 \
    /* wire protocol (200s) */                                                           \
    X(TS_EFRAME_TOOBIG, 200, "Frame exceeds the maximum size")                           \
    X(TS_EFRAME_TRUNCATED, 201, "Connection closed in the middle of a frame")            \
    X(TS_EDECODE, 202, "Message could not be decoded")                                   \
    X(TS_EVERSION, 203, "Protocol version mismatch")                                     \
    X(TS_EPROTO, 204, "Protocol violation")                                              \
    X(TS_ECONNECT, 205, "Unable to contact the daemon")                                  \
    X(TS_ECLOSED, 206, "Connection closed by peer")                                      \
    X(TS_EUNKNOWN_RPC, 207, "Unknown request type")                                      \
    /* authentication (300s) */                                                          \
    X(TS_EAUTH, 300, "Authentication failed")                                            \
    X(TS_EAUTH_CRED, 301, "Invalid authentication credential")                           \
    X(TS_EAUTH_EXPIRED, 302, "Authentication credential expired")                        \
    X(TS_EAUTH_REPLAYED, 303, "Authentication credential replayed")                      \
    X(TS_EAUTH_BINDING, 304, "Authentication credential does not match the message")     \
    X(TS_EAUTH_UNAUTHORIZED, 305, "Authentication credential is for another user")       \
    X(TS_EAUTH_HMAC, 306, "Message authentication code mismatch")                        \
    X(TS_EAUTH_SEQ, 307, "Message sequence number out of order")                         \
    X(TS_EAUTH_MUNGE, 308, "MUNGE daemon unreachable")                                   \
    /* storage (400s) */                                                                 \
    X(TS_ESTORE, 400, "State store error")                                               \
    X(TS_ESTORE_FULL, 401, "State store is full")                                        \
    X(TS_ESTORE_CORRUPT, 402, "State store record is corrupt")                           \
    /* plugins (500s) */                                                                 \
    X(TS_EPLUGIN_NOTFOUND, 500, "Plugin not found")                                      \
    X(TS_EPLUGIN_ABI, 501, "Plugin ABI version mismatch")                                \
    X(TS_EPLUGIN_TYPE, 502, "Plugin is of another type")                                 \
    X(TS_EPLUGIN_INIT, 503, "Plugin initialisation failed")                              \
    /* jobs (1000s); Slurm's wording */                                                  \
    X(TS_EINVALID_JOB_ID, 1000, "Invalid job id specified")

typedef enum ts_err {
#define TS_ERR_ENUM(name, num, text) name = num,
    TS_ERRORS(TS_ERR_ENUM)
#undef TS_ERR_ENUM
} ts_err;

/* The stable text of a code; "Unknown error N" style text for codes this build does not
 * know (a newer peer may send them). Never NULL. The returned text for unknown codes is
 * in a thread-local buffer. */
const char *ts_strerror(int code);

/* True when code is a member of the enum. */
int ts_err_known(int code);

#endif
