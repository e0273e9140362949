/* A small pool of threads that decode MUNGE credentials, so that the event loop never
 * waits on munged. Results come back to the loop thread through loop_post(). */
#ifndef TESSERA_COMMON_AUTHPOOL_H
#define TESSERA_COMMON_AUTHPOOL_H

#include "common/auth/auth.h"

struct loop;
struct authpool;

#define AUTHPOOL_DEFAULT_THREADS 4

/* cb runs on the loop thread with the decode result (id valid only when err is TS_OK,
 * and only during the call). */
typedef void (*authpool_cb)(void *arg, int err, const struct auth_identity *id);

/* Threads decode as the server running as server_uid, through MUNGE's socket (NULL: its
 * default). */
int authpool_create(struct loop *loop, const char *socket, uid_t server_uid, int nthreads,
                    struct authpool **out);
/* Stop and join the threads. Requests still queued are dropped without callback; results
 * already posted to the loop are still delivered if the loop runs again, so destroy the
 * pool only once the callers of authpool_submit can no longer be called (at shutdown). */
void authpool_destroy(struct authpool *pool);

/* Queue cred (copied) for decoding. */
int authpool_submit(struct authpool *pool, const char *cred, size_t len, authpool_cb cb,
                    void *arg);

#endif
