#include "common/auth/authpool.h"

#include "common/net/loop.h"
#include "common/util/errors.h"
#include "common/util/log.h"

#include <openssl/crypto.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One credential on its way through the pool: queued, decoded by a thread, then posted
 * back to the loop where its callback runs and it is freed. */
struct auth_job {
    struct auth_job *next;
    char *cred;
    authpool_cb cb;
    void *arg;
    int err;
    struct auth_identity id;
};

struct authpool {
    struct loop *loop;
    char *socket;
    uid_t server_uid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct auth_job *head, *tail; /* FIFO of queued jobs */
    int stopping;
    int nthreads;
    pthread_t *threads;
};

static void job_free(struct auth_job *job)
{
    if (!job)
        return;
    OPENSSL_cleanse(&job->id, sizeof(job->id));
    free(job->cred);
    free(job);
}

/* On the loop thread: hand the result over. */
static void deliver(struct loop *loop, void *arg)
{
    struct auth_job *job = arg;
    job->cb(job->arg, job->err, job->err ? NULL : &job->id);
    job_free(job);
}

static struct auth_job *next_job(struct authpool *pool)
{
    pthread_mutex_lock(&pool->lock);
    while (!pool->head && !pool->stopping)
        pthread_cond_wait(&pool->cond, &pool->lock);
    struct auth_job *job = NULL;
    if (!pool->stopping) {
        job = pool->head;
        pool->head = job->next;
        if (!pool->head)
            pool->tail = NULL;
    }
    pthread_mutex_unlock(&pool->lock);
    return job;
}

static void *worker(void *arg)
{
    struct authpool *pool = arg;
    struct auth_job *job;
    while ((job = next_job(pool))) {
        job->err = auth_decode(pool->socket, pool->server_uid, job->cred, &job->id);
        if (loop_post(pool->loop, deliver, job) != TS_OK) {
            log_error("auth: cannot post a decoded credential to the loop");
            job_free(job);
        }
    }
    return NULL;
}

int authpool_create(struct loop *loop, const char *socket, uid_t server_uid, int nthreads,
                    struct authpool **out)
{
    *out = NULL;
    struct authpool *pool = calloc(1, sizeof(*pool));
    if (!pool)
        return TS_ENOMEM;
    pool->loop = loop;
    pool->server_uid = server_uid;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->cond, NULL);
    if (socket && !(pool->socket = strdup(socket)))
        goto error;
    if (nthreads < 1)
        nthreads = AUTHPOOL_DEFAULT_THREADS;
    pool->threads = calloc((size_t)nthreads, sizeof(pthread_t));
    if (!pool->threads)
        goto error;
    for (; pool->nthreads < nthreads; pool->nthreads++)
        if (pthread_create(&pool->threads[pool->nthreads], NULL, worker, pool) != 0)
            goto error;
    *out = pool;
    return TS_OK;
error:
    authpool_destroy(pool);
    return TS_ENOMEM;
}

void authpool_destroy(struct authpool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = 1;
    pthread_cond_broadcast(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->nthreads; i++)
        pthread_join(pool->threads[i], NULL);
    while (pool->head) {
        struct auth_job *job = pool->head;
        pool->head = job->next;
        job_free(job);
    }
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->cond);
    free(pool->threads);
    free(pool->socket);
    free(pool);
}

int authpool_submit(struct authpool *pool, const char *cred, size_t len, authpool_cb cb,
                    void *arg)
{
    struct auth_job *job = calloc(1, sizeof(*job));
    if (!job || !(job->cred = strndup(cred, len))) {
        free(job);
        return TS_ENOMEM;
    }
    job->cb = cb;
    job->arg = arg;
    pthread_mutex_lock(&pool->lock);
    if (pool->tail)
        pool->tail->next = job;
    else
        pool->head = job;
    pool->tail = job;
    pthread_cond_signal(&pool->cond);
    pthread_mutex_unlock(&pool->lock);
    return TS_OK;
}
