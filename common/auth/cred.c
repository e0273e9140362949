#include "common/auth/cred.h"

#include "common/util/errors.h"
#include "common/util/hashmap.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A key file is a few hundred bytes; anything much larger is not one, and reading it whole
 * would let a wrong path (a log, a device) cost us memory. */
#define KEY_FILE_MAX (64 * 1024)

struct cred_key {
    EVP_PKEY *pkey;
    bool priv; /* has the private half: may sign */
};

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
    if (!errbuf || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

static void clear_err(char *errbuf, size_t errlen)
{
    if (errbuf && errlen > 0)
        errbuf[0] = '\0';
}

/* Failures deep down (out of memory, mostly) leave no reason of their own: give the code's
 * text, so errbuf always says something when a call fails. */
static int with_reason(int err, const char *path, char *errbuf, size_t errlen)
{
    if (err && errbuf && errlen > 0 && !errbuf[0])
        set_err(errbuf, errlen, "%s: %s", path, ts_strerror(err));
    return err;
}

static int errno_code(int e)
{
    if (e == ENOENT)
        return TS_ENOENT;
    return e == ENOMEM ? TS_ENOMEM : TS_ESYS;
}

/* Wrap pkey (taking it over, freeing it on failure). */
static int key_wrap(EVP_PKEY *pkey, bool priv, struct cred_key **out)
{
    struct cred_key *k = calloc(1, sizeof(*k));
    if (!k) {
        EVP_PKEY_free(pkey);
        return TS_ENOMEM;
    }
    k->pkey = pkey;
    k->priv = priv;
    *out = k;
    return TS_OK;
}

void cred_key_free(struct cred_key *k)
{
    if (!k)
        return;
    EVP_PKEY_free(k->pkey); /* cleanses the private half */
    free(k);
}

int cred_key_generate(struct cred_key **out)
{
    *out = NULL;
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    if (!pkey) {
        ERR_clear_error();
        return TS_ESYS;
    }
    return key_wrap(pkey, true, out);
}

/* ---- files ---- */

/* Read up to n bytes; the count read (short only at end of file), or -1 with errno. */
static ssize_t read_upto(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

/* Read a whole (small) file into *buf, which holds KEY_FILE_BUF bytes: free it with
 * OPENSSL_clear_free(*buf, KEY_FILE_BUF), as it may hold a private key. */
#define KEY_FILE_BUF (KEY_FILE_MAX + 1) /* one more, to tell a file that is too large */

static int read_small_file(const char *path, char **buf, size_t *len, char *errbuf,
                           size_t errlen)
{
    *buf = NULL;
    char *data = OPENSSL_malloc(KEY_FILE_BUF);
    if (!data)
        return TS_ENOMEM;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read_upto(fd, data, KEY_FILE_BUF);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (n < 0 || n > KEY_FILE_MAX) {
        OPENSSL_clear_free(data, KEY_FILE_BUF);
        if (n > 0) {
            set_err(errbuf, errlen, "%s is too large to be a key file", path);
            return TS_EINVAL;
        }
        set_err(errbuf, errlen, "cannot read %s: %s", path, strerror(e));
        return errno_code(e);
    }
    *buf = data;
    *len = (size_t)n;
    return TS_OK;
}

/* fsync the folder holding path, so that a rename or link into it survives a crash. */
static int sync_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return ENOMEM;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0)
        return errno;
    int rc = fsync(fd) == 0 ? 0 : errno;
    close(fd);
    return rc;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t put = write(fd, data, len);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return errno;
        data += put;
        len -= (size_t)put;
    }
    return 0;
}

/* Write data to a new file path.XXXXXX (mode 0600, synced); *tmp gets its malloc'd name. */
static int write_temp(const char *path, const char *data, size_t len, char **tmp,
                      char *errbuf, size_t errlen)
{
    *tmp = NULL;
    size_t plen = strlen(path);
    char *name = malloc(plen + sizeof(".XXXXXX"));
    if (!name)
        return TS_ENOMEM;
    memcpy(name, path, plen);
    memcpy(name + plen, ".XXXXXX", sizeof(".XXXXXX"));
    /* mkostemp creates the file 0600 (less by the umask), so the key is never readable by
     * others, not even for a moment; fchmod makes it exactly 0600 */
    int fd = mkostemp(name, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        set_err(errbuf, errlen, "cannot create a temporary file for %s: %s", path, strerror(e));
        free(name);
        return errno_code(e);
    }
    int e = fchmod(fd, 0600) == 0 ? 0 : errno;
    if (!e)
        e = write_all(fd, data, len);
    if (!e && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && !e)
        e = errno;
    if (e) {
        set_err(errbuf, errlen, "cannot write %s: %s", name, strerror(e));
        unlink(name);
        free(name);
        return errno_code(e);
    }
    *tmp = name;
    return TS_OK;
}

/* The private key as PKCS#8 PEM, in a memory BIO that cleanses itself when freed. */
static int private_pem(const struct cred_key *k, BIO **out)
{
    *out = NULL;
    if (!k || !k->priv)
        return TS_EINVAL;
    BIO *bio = BIO_new(BIO_s_secmem());
    if (!bio)
        return TS_ENOMEM;
    if (PEM_write_bio_PrivateKey(bio, k->pkey, NULL, NULL, 0, NULL, NULL) != 1) {
        BIO_free(bio);
        ERR_clear_error();
        return TS_ESYS;
    }
    *out = bio;
    return TS_OK;
}

/* Write k's private key to a temporary file beside path; see write_temp. */
static int save_temp(const struct cred_key *k, const char *path, char **tmp, char *errbuf,
                     size_t errlen)
{
    BIO *bio;
    int err = private_pem(k, &bio);
    if (err) {
        set_err(errbuf, errlen, err == TS_EINVAL ? "no private key to write to %s"
                                                 : "cannot encode the key for %s", path);
        return err;
    }
    char *data;
    long len = BIO_get_mem_data(bio, &data);
    err = write_temp(path, data, (size_t)len, tmp, errbuf, errlen);
    BIO_free(bio);
    return err;
}

int cred_key_save_private(const struct cred_key *k, const char *path, char *errbuf, size_t errlen)
{
    clear_err(errbuf, errlen);
    char *tmp;
    int err = save_temp(k, path, &tmp, errbuf, errlen);
    if (err)
        return with_reason(err, path, errbuf, errlen);
    int e = rename(tmp, path) == 0 ? 0 : errno;
    if (e) {
        set_err(errbuf, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(e));
        unlink(tmp);
    } else if ((e = sync_parent(path)) != 0) {
        set_err(errbuf, errlen, "cannot sync the folder of %s: %s", path, strerror(e));
    }
    free(tmp);
    return e ? errno_code(e) : TS_OK;
}

/* PEM_read_bio_PrivateKey asks this for the passphrase of an encrypted key. Without it,
 * OpenSSL's default would prompt on the terminal: a daemon must fail instead. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    return -1;
}

/* A key of pem text; what names the text in errbuf ("X is not ..."). */
static int parse_key(const char *pem, size_t len, bool priv, const char *what,
                     struct cred_key **out, char *errbuf, size_t errlen)
{
    const char *kind = priv ? "private" : "public";
    if (len == 0 || len > INT_MAX) {
        set_err(errbuf, errlen, "%s is not an Ed25519 %s key (%s)", what, kind,
                len ? "too large" : "empty");
        return TS_EINVAL;
    }
    BIO *bio = BIO_new_mem_buf(pem, (int)len);
    if (!bio)
        return TS_ENOMEM;
    EVP_PKEY *pkey = priv ? PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL)
                          : PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    BIO_free(bio);
    ERR_clear_error(); /* leave no stale OpenSSL errors for the next caller to trip on */
    if (!pkey) {
        set_err(errbuf, errlen, "%s is not an Ed25519 %s key (%s)", what, kind,
                priv ? "no PEM private key found, or one protected by a passphrase"
                     : "no PEM public key found");
        return TS_EINVAL;
    }
    if (!EVP_PKEY_is_a(pkey, "ED25519")) {
        const char *type = EVP_PKEY_get0_type_name(pkey);
        set_err(errbuf, errlen, "%s is not an Ed25519 %s key (%s key)", what, kind,
                type ? type : "different");
        EVP_PKEY_free(pkey);
        return TS_EINVAL;
    }
    return key_wrap(pkey, priv, out);
}

static int load_key(const char *path, bool priv, struct cred_key **out, char *errbuf,
                    size_t errlen)
{
    *out = NULL;
    clear_err(errbuf, errlen);
    char *pem;
    size_t len;
    int err = read_small_file(path, &pem, &len, errbuf, errlen);
    if (!err) {
        err = parse_key(pem, len, priv, path, out, errbuf, errlen);
        OPENSSL_clear_free(pem, KEY_FILE_BUF);
    }
    return with_reason(err, path, errbuf, errlen);
}

int cred_key_load_private(const char *path, struct cred_key **out, char *errbuf, size_t errlen)
{
    return load_key(path, true, out, errbuf, errlen);
}

int cred_key_load_public(const char *path, struct cred_key **out, char *errbuf, size_t errlen)
{
    return load_key(path, false, out, errbuf, errlen);
}

/* Save k as path unless path exists. link() rather than rename(): link never replaces, so
 * a controller starting at the same moment cannot swap our key for its own. *raced is set
 * when path appeared meanwhile. */
static int create_new(const struct cred_key *k, const char *path, bool *raced, char *errbuf,
                      size_t errlen)
{
    *raced = false;
    char *tmp;
    int err = save_temp(k, path, &tmp, errbuf, errlen);
    if (err)
        return err;
    int e = link(tmp, path) == 0 ? 0 : errno;
    unlink(tmp);
    if (e == EEXIST)
        *raced = true;
    else if (e)
        set_err(errbuf, errlen, "cannot create %s: %s", path, strerror(e));
    else if ((e = sync_parent(path)) != 0)
        set_err(errbuf, errlen, "cannot sync the folder of %s: %s", path, strerror(e));
    free(tmp);
    return e && e != EEXIST ? errno_code(e) : TS_OK;
}

int cred_key_load_or_create(const char *path, struct cred_key **out, char *errbuf, size_t errlen)
{
    int err = cred_key_load_private(path, out, errbuf, errlen);
    if (err != TS_ENOENT)
        return err;
    struct cred_key *k;
    if ((err = cred_key_generate(&k)) != TS_OK) {
        set_err(errbuf, errlen, "cannot generate a key for %s", path);
        return err;
    }
    bool raced;
    clear_err(errbuf, errlen); /* the "cannot read" of the missing file is no error now */
    err = create_new(k, path, &raced, errbuf, errlen);
    if (err || raced) {
        cred_key_free(k);
        /* whoever won the race wrote a whole key: use theirs */
        return err ? with_reason(err, path, errbuf, errlen)
                   : cred_key_load_private(path, out, errbuf, errlen);
    }
    *out = k;
    return TS_OK;
}

/* ---- public keys ---- */

int cred_key_public_pem(const struct cred_key *k, char **pem)
{
    *pem = NULL;
    if (!k)
        return TS_EINVAL;
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return TS_ENOMEM;
    int err = TS_ESYS;
    if (PEM_write_bio_PUBKEY(bio, k->pkey) == 1) {
        char *data;
        long len = BIO_get_mem_data(bio, &data);
        err = (*pem = strndup(data, (size_t)len)) ? TS_OK : TS_ENOMEM;
    }
    BIO_free(bio);
    ERR_clear_error();
    return err;
}

int cred_key_from_public_pem(const char *pem, size_t len, struct cred_key **out)
{
    *out = NULL;
    if (!pem)
        return TS_EINVAL;
    return parse_key(pem, len, false, "the text", out, NULL, 0);
}

/* ---- signatures ---- */

/* Ed25519 signs the message itself (no separate digest), hence the NULL digest and the
 * one-shot EVP_DigestSign/EVP_DigestVerify: Ed25519 has no streaming interface. */
int cred_sign(const struct cred_key *k, const void *data, size_t len, uint8_t sig[CRED_SIG_LEN])
{
    static const uint8_t empty[1];
    if (!k || !k->priv || (!data && len))
        return TS_EINVAL;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx)
        return TS_ENOMEM;
    size_t siglen = CRED_SIG_LEN;
    int ok = EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
             EVP_DigestSign(ctx, sig, &siglen, data ? data : empty, len) == 1 &&
             siglen == CRED_SIG_LEN;
    EVP_MD_CTX_free(ctx);
    if (!ok)
        ERR_clear_error();
    return ok ? TS_OK : TS_ESYS;
}

int cred_verify(const struct cred_key *k, const void *data, size_t len, const uint8_t *sig,
                size_t siglen)
{
    static const uint8_t empty[1];
    if (!k || (!data && len))
        return TS_EINVAL;
    if (!sig || siglen != CRED_SIG_LEN)
        return TS_ECRED_INVALID;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    if (!ctx)
        return TS_ENOMEM;
    int rc = -1;
    if (EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k->pkey) == 1)
        rc = EVP_DigestVerify(ctx, sig, siglen, data ? data : empty, len);
    EVP_MD_CTX_free(ctx);
    ERR_clear_error();
    /* only 1 is a good signature; 0 is a bad one and below 0 a failure: both refuse */
    return rc == 1 ? TS_OK : TS_ECRED_INVALID;
}

/* CRED_BCAST_DOMAIN, its NUL, then data: malloc'd into *out (NULL when out of memory). */
static size_t bcast_message(const void *data, size_t len, uint8_t **out)
{
    size_t plen = sizeof(CRED_BCAST_DOMAIN);
    *out = (!data && len) || len > SIZE_MAX - plen ? NULL : malloc(plen + len);
    if (!*out)
        return 0;
    memcpy(*out, CRED_BCAST_DOMAIN, plen);
    if (len)
        memcpy(*out + plen, data, len);
    return plen + len;
}

int cred_sign_bcast(const struct cred_key *k, const void *data, size_t len,
                    uint8_t sig[CRED_SIG_LEN])
{
    uint8_t *msg;
    size_t n = bcast_message(data, len, &msg);
    if (!msg)
        return TS_ENOMEM;
    int err = cred_sign(k, msg, n, sig);
    free(msg);
    return err;
}

int cred_verify_bcast(const struct cred_key *k, const void *data, size_t len, const uint8_t *sig,
                      size_t siglen)
{
    uint8_t *msg;
    size_t n = bcast_message(data, len, &msg);
    if (!msg)
        return TS_ENOMEM;
    int err = cred_verify(k, msg, n, sig, siglen);
    free(msg);
    return err;
}

/* ---- replay guard ---- */

/* A hash map answers "seen?"; a min-heap by expiry says what to forget next, so a check
 * costs O(log n) however many credentials are remembered. Each id in the map has exactly
 * one heap entry: ids leave both together, and are added only when absent. */
struct replay_entry {
    int64_t expires;
    uint64_t id;
};

struct cred_replay {
    struct hashmap *seen; /* id -> &present */
    struct replay_entry *heap;
    size_t n, cap;
};

static char present; /* the map's value for every id: it only tells presence */

struct cred_replay *cred_replay_create(void)
{
    struct cred_replay *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    if (!(r->seen = hashmap_create())) {
        free(r);
        return NULL;
    }
    return r;
}

void cred_replay_free(struct cred_replay *r)
{
    if (!r)
        return;
    hashmap_destroy(r->seen);
    free(r->heap);
    free(r);
}

size_t cred_replay_count(const struct cred_replay *r)
{
    return r ? r->n : 0;
}

static void heap_swap(struct replay_entry *h, size_t a, size_t b)
{
    struct replay_entry t = h[a];
    h[a] = h[b];
    h[b] = t;
}

static void heap_up(struct replay_entry *h, size_t i)
{
    while (i > 0 && h[(i - 1) / 2].expires > h[i].expires) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_down(struct replay_entry *h, size_t n, size_t i)
{
    for (;;) {
        size_t least = i, l = 2 * i + 1, rt = l + 1;
        if (l < n && h[l].expires < h[least].expires)
            least = l;
        if (rt < n && h[rt].expires < h[least].expires)
            least = rt;
        if (least == i)
            return;
        heap_swap(h, i, least);
        i = least;
    }
}

/* Forget every id whose expiry is before now. */
static void replay_prune(struct cred_replay *r, int64_t now)
{
    while (r->n > 0 && r->heap[0].expires < now) {
        hashmap_del(r->seen, &r->heap[0].id, sizeof(r->heap[0].id));
        r->heap[0] = r->heap[--r->n];
        heap_down(r->heap, r->n, 0);
    }
}

static int heap_reserve(struct cred_replay *r)
{
    if (r->n < r->cap)
        return TS_OK;
    size_t cap = r->cap ? r->cap * 2 : 64;
    struct replay_entry *h = realloc(r->heap, cap * sizeof(*h));
    if (!h)
        return TS_ENOMEM;
    r->heap = h;
    r->cap = cap;
    return TS_OK;
}

int cred_replay_check(struct cred_replay *r, uint64_t id, int64_t expires, int64_t now)
{
    if (!r)
        return TS_EINVAL;
    replay_prune(r, now);
    if (expires < now)
        return TS_ECRED_EXPIRED;
    if (hashmap_get(r->seen, &id, sizeof(id)))
        return TS_ECRED_REPLAYED;
    /* room in the heap first, so a failure of either step leaves map and heap in step */
    if (heap_reserve(r) != TS_OK || hashmap_put(r->seen, &id, sizeof(id), &present) != TS_OK)
        return TS_ENOMEM;
    r->heap[r->n] = (struct replay_entry){.expires = expires, .id = id};
    heap_up(r->heap, r->n++);
    return TS_OK;
}
