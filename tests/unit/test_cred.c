/* Job credential keys and signatures (common/auth/cred.c): sign and verify, key files, the
 * public half as PEM, refusals of files that are not Ed25519 keys, and the replay guard. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/auth/cred.h"
#include "common/util/errors.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct fixture {
    char dir[64];
    char path[128]; /* dir/key: the usual key file */
    char err[256];
};

static void remove_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char file[512];
        snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
        if (unlink(file) != 0 && (errno == EISDIR || errno == EPERM))
            remove_dir(file);
    }
    closedir(d);
    rmdir(path);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/tessera-cred-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s/key", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    remove_dir(f->dir);
    free(f);
    return 0;
}

/* Entries of dir other than . and .. */
static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            n++;
    closedir(d);
    return n;
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    close(fd);
}

/* The whole file, NUL-terminated (malloc'd). */
static char *read_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    char *buf = calloc(1, 1 << 17);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 17) - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

static void write_pkey(const char *path, EVP_PKEY *pkey, int public_only)
{
    BIO *bio = BIO_new_file(path, "w");
    assert_non_null(bio);
    assert_int_equal(public_only ? PEM_write_bio_PUBKEY(bio, pkey)
                                 : PEM_write_bio_PrivateKey(bio, pkey, NULL, NULL, 0, NULL, NULL),
                     1);
    BIO_free(bio);
}

static void assert_contains(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("\"%s\" does not contain \"%s\"", text, part);
}

static const char msg[] = "job 42 step 0 on node[01-04] uid 1000";

static void test_sign_verify(void **state)
{
    struct cred_key *k;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    uint8_t sig[CRED_SIG_LEN], again[CRED_SIG_LEN];
    assert_int_equal(cred_sign(k, msg, sizeof(msg), sig), TS_OK);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    /* Ed25519 is deterministic: one message, one signature */
    assert_int_equal(cred_sign(k, msg, sizeof(msg), again), TS_OK);
    assert_memory_equal(sig, again, CRED_SIG_LEN);
    /* a shorter message (a prefix) is another message */
    assert_int_equal(cred_verify(k, msg, sizeof(msg) - 1, sig, sizeof(sig)), TS_ECRED_INVALID);
    /* the empty message can be signed too */
    assert_int_equal(cred_sign(k, NULL, 0, sig), TS_OK);
    assert_int_equal(cred_verify(k, NULL, 0, sig, sizeof(sig)), TS_OK);
    assert_int_equal(cred_verify(k, "", 0, sig, sizeof(sig)), TS_OK);
    assert_int_equal(cred_verify(k, "x", 1, sig, sizeof(sig)), TS_ECRED_INVALID);
    cred_key_free(k);
    cred_key_free(NULL);
}

/* A file broadcast credential's signature covers its domain: neither kind of credential
 * verifies as the other, even over the same bytes. */
static void test_bcast_domain(void **state)
{
    struct cred_key *k;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    uint8_t step_sig[CRED_SIG_LEN], bcast_sig[CRED_SIG_LEN];
    assert_int_equal(cred_sign(k, msg, sizeof(msg), step_sig), TS_OK);
    assert_int_equal(cred_sign_bcast(k, msg, sizeof(msg), bcast_sig), TS_OK);
    assert_int_equal(cred_verify_bcast(k, msg, sizeof(msg), bcast_sig, sizeof(bcast_sig)), TS_OK);
    assert_int_equal(cred_verify_bcast(k, msg, sizeof(msg), step_sig, sizeof(step_sig)),
                     TS_ECRED_INVALID);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), bcast_sig, sizeof(bcast_sig)),
                     TS_ECRED_INVALID);
    assert_int_equal(cred_verify_bcast(k, msg, sizeof(msg) - 1, bcast_sig, sizeof(bcast_sig)),
                     TS_ECRED_INVALID);
    cred_key_free(k);
}

static void test_flipped_bits(void **state)
{
    struct cred_key *k;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    uint8_t data[sizeof(msg)], sig[CRED_SIG_LEN];
    memcpy(data, msg, sizeof(msg));
    assert_int_equal(cred_sign(k, data, sizeof(data), sig), TS_OK);
    for (size_t bit = 0; bit < sizeof(data) * 8; bit++) {
        data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(cred_verify(k, data, sizeof(data), sig, sizeof(sig)), TS_ECRED_INVALID);
        data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    for (size_t bit = 0; bit < sizeof(sig) * 8; bit++) {
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_int_equal(cred_verify(k, data, sizeof(data), sig, sizeof(sig)), TS_ECRED_INVALID);
        sig[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    /* flipped back: good again, so the refusals above were for the flips */
    assert_int_equal(cred_verify(k, data, sizeof(data), sig, sizeof(sig)), TS_OK);
    cred_key_free(k);
}

static void test_wrong_key(void **state)
{
    struct cred_key *a, *b;
    assert_int_equal(cred_key_generate(&a), TS_OK);
    assert_int_equal(cred_key_generate(&b), TS_OK);
    uint8_t sig[CRED_SIG_LEN];
    assert_int_equal(cred_sign(a, msg, sizeof(msg), sig), TS_OK);
    assert_int_equal(cred_verify(b, msg, sizeof(msg), sig, sizeof(sig)), TS_ECRED_INVALID);
    assert_int_equal(cred_verify(a, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    cred_key_free(a);
    cred_key_free(b);
}

static void test_signature_length(void **state)
{
    struct cred_key *k;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    uint8_t sig[CRED_SIG_LEN + 1] = {0};
    assert_int_equal(cred_sign(k, msg, sizeof(msg), sig), TS_OK);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, CRED_SIG_LEN), TS_OK);
    /* the right 64 bytes, with one too few or one too many */
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, CRED_SIG_LEN - 1), TS_ECRED_INVALID);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, CRED_SIG_LEN + 1), TS_ECRED_INVALID);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, 0), TS_ECRED_INVALID);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), NULL, 0), TS_ECRED_INVALID);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), NULL, CRED_SIG_LEN), TS_ECRED_INVALID);
    cred_key_free(k);
}

static void test_public_pem(void **state)
{
    struct cred_key *k, *pub, *pub2;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    char *pem;
    assert_int_equal(cred_key_public_pem(k, &pem), TS_OK);
    assert_true(strncmp(pem, "-----BEGIN PUBLIC KEY-----\n", 27) == 0);
    assert_null(strstr(pem, "PRIVATE"));
    /* parsed from a copy without a NUL after it: len alone bounds the text */
    size_t len = strlen(pem);
    char *exact = malloc(len);
    assert_non_null(exact);
    memcpy(exact, pem, len);
    assert_int_equal(cred_key_from_public_pem(exact, len, &pub), TS_OK);
    free(exact);

    uint8_t sig[CRED_SIG_LEN];
    assert_int_equal(cred_sign(k, msg, sizeof(msg), sig), TS_OK);
    assert_int_equal(cred_verify(pub, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    sig[0] ^= 1;
    assert_int_equal(cred_verify(pub, msg, sizeof(msg), sig, sizeof(sig)), TS_ECRED_INVALID);
    /* a public key cannot sign */
    assert_int_equal(cred_sign(pub, msg, sizeof(msg), sig), TS_EINVAL);

    /* the public key's PEM is the same text again */
    char *pem2;
    assert_int_equal(cred_key_public_pem(pub, &pem2), TS_OK);
    assert_string_equal(pem, pem2);
    assert_int_equal(cred_key_from_public_pem(pem2, strlen(pem2), &pub2), TS_OK);

    /* a wrong key's public half does not verify */
    struct cred_key *other;
    assert_int_equal(cred_key_generate(&other), TS_OK);
    sig[0] ^= 1;
    assert_int_equal(cred_verify(pub2, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    char *opem;
    assert_int_equal(cred_key_public_pem(other, &opem), TS_OK);
    assert_string_not_equal(pem, opem);
    struct cred_key *opub;
    assert_int_equal(cred_key_from_public_pem(opem, strlen(opem), &opub), TS_OK);
    assert_int_equal(cred_verify(opub, msg, sizeof(msg), sig, sizeof(sig)), TS_ECRED_INVALID);

    /* texts that are not an Ed25519 public key */
    struct cred_key *bad = (struct cred_key *)1;
    assert_int_equal(cred_key_from_public_pem("garbage", 7, &bad), TS_EINVAL);
    assert_null(bad);
    assert_int_equal(cred_key_from_public_pem(pem, 0, &bad), TS_EINVAL);
    assert_int_equal(cred_key_from_public_pem(pem, len / 2, &bad), TS_EINVAL); /* truncated */
    EVP_PKEY *ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    assert_non_null(ec);
    BIO *bio = BIO_new(BIO_s_mem());
    assert_int_equal(PEM_write_bio_PUBKEY(bio, ec), 1);
    char *ecpem;
    long eclen = BIO_get_mem_data(bio, &ecpem);
    assert_int_equal(cred_key_from_public_pem(ecpem, (size_t)eclen, &bad), TS_EINVAL);
    assert_null(bad);
    BIO_free(bio);
    EVP_PKEY_free(ec);

    free(pem);
    free(pem2);
    free(opem);
    cred_key_free(k);
    cred_key_free(pub);
    cred_key_free(pub2);
    cred_key_free(other);
    cred_key_free(opub);
}

static void test_save_load(void **state)
{
    struct fixture *f = *state;
    struct cred_key *k, *loaded;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    /* 0600 comes from the code, not from a kind umask */
    mode_t old = umask(0);
    int err = cred_key_save_private(k, f->path, f->err, sizeof(f->err));
    umask(old);
    assert_int_equal(err, TS_OK);
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(count_entries(f->dir), 1); /* no temporary file left */
    char *text = read_file(f->path);
    assert_true(strncmp(text, "-----BEGIN PRIVATE KEY-----\n", 28) == 0); /* PKCS#8 */
    free(text);

    assert_int_equal(cred_key_load_private(f->path, &loaded, f->err, sizeof(f->err)), TS_OK);
    uint8_t sig[CRED_SIG_LEN];
    assert_int_equal(cred_sign(loaded, msg, sizeof(msg), sig), TS_OK);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    cred_key_free(loaded);

    /* saving over a readable file leaves a 0600 file with the new key */
    struct cred_key *k2;
    assert_int_equal(cred_key_generate(&k2), TS_OK);
    chmod(f->path, 0644);
    assert_int_equal(cred_key_save_private(k2, f->path, f->err, sizeof(f->err)), TS_OK);
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(count_entries(f->dir), 1);
    assert_int_equal(cred_key_load_private(f->path, &loaded, NULL, 0), TS_OK);
    assert_int_equal(cred_sign(loaded, msg, sizeof(msg), sig), TS_OK);
    assert_int_equal(cred_verify(k2, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    assert_int_equal(cred_verify(k, msg, sizeof(msg), sig, sizeof(sig)), TS_ECRED_INVALID);
    cred_key_free(loaded);
    cred_key_free(k2);
    cred_key_free(k);
}

static void test_save_errors(void **state)
{
    struct fixture *f = *state;
    struct cred_key *k, *pub;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    char path[256];

    /* a folder that does not exist */
    snprintf(path, sizeof(path), "%s/missing/key", f->dir);
    assert_int_not_equal(cred_key_save_private(k, path, f->err, sizeof(f->err)), TS_OK);
    assert_contains(f->err, path);
    assert_contains(f->err, "No such file or directory");

    /* the rename fails (a folder is in the way): the temporary file goes too */
    snprintf(path, sizeof(path), "%s/dir", f->dir);
    assert_int_equal(mkdir(path, 0700), 0);
    f->err[0] = '\0';
    assert_int_equal(cred_key_save_private(k, path, f->err, sizeof(f->err)), TS_ESYS);
    assert_contains(f->err, "cannot rename");
    assert_int_equal(count_entries(f->dir), 1);

    /* a public key has nothing to save */
    char *pem;
    assert_int_equal(cred_key_public_pem(k, &pem), TS_OK);
    assert_int_equal(cred_key_from_public_pem(pem, strlen(pem), &pub), TS_OK);
    f->err[0] = '\0';
    assert_int_equal(cred_key_save_private(pub, f->path, f->err, sizeof(f->err)), TS_EINVAL);
    assert_contains(f->err, "no private key");
    assert_int_equal(count_entries(f->dir), 1);
    free(pem);
    cred_key_free(pub);
    cred_key_free(k);
}

static void test_load_or_create(void **state)
{
    struct fixture *f = *state;
    struct cred_key *first, *second;
    assert_int_equal(cred_key_load_or_create(f->path, &first, f->err, sizeof(f->err)), TS_OK);
    assert_string_equal(f->err, ""); /* success leaves no reason behind */
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_int_equal(count_entries(f->dir), 1);
    char *text = read_file(f->path);

    uint8_t sig[CRED_SIG_LEN];
    assert_int_equal(cred_sign(first, msg, sizeof(msg), sig), TS_OK);
    /* the next start loads the same key: the earlier signature still verifies */
    assert_int_equal(cred_key_load_or_create(f->path, &second, f->err, sizeof(f->err)), TS_OK);
    assert_int_equal(cred_verify(second, msg, sizeof(msg), sig, sizeof(sig)), TS_OK);
    char *again = read_file(f->path);
    assert_string_equal(text, again); /* the file was not rewritten */
    assert_int_equal(count_entries(f->dir), 1);
    free(text);
    free(again);
    cred_key_free(first);
    cred_key_free(second);
}

/* Controllers starting at the same moment (a restart racing a failover, say) must end with
 * one key, not each its own: every racer signs with the key left in the file. */
static void test_load_or_create_race(void **state)
{
    struct fixture *f = *state;
    enum { RACERS = 8 };
    int go[2];
    assert_int_equal(pipe(go), 0);
    pid_t pids[RACERS];
    for (int i = 0; i < RACERS; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] > 0)
            continue;
        /* child: wait for the start, then write its public key to dir/pub<i> */
        close(go[1]);
        char c;
        while (read(go[0], &c, 1) < 0 && errno == EINTR)
            ;
        struct cred_key *k;
        char *pem, out[160];
        if (cred_key_load_or_create(f->path, &k, NULL, 0) != TS_OK ||
            cred_key_public_pem(k, &pem) != TS_OK)
            _exit(1);
        snprintf(out, sizeof(out), "%s/pub%d", f->dir, i);
        FILE *fp = fopen(out, "w");
        _exit(fp && fputs(pem, fp) >= 0 && fclose(fp) == 0 ? 0 : 1);
    }
    close(go[0]);
    close(go[1]); /* all start */
    for (int i = 0; i < RACERS; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    struct cred_key *k;
    char *pem;
    assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_OK);
    assert_int_equal(cred_key_public_pem(k, &pem), TS_OK);
    for (int i = 0; i < RACERS; i++) {
        char path[160];
        snprintf(path, sizeof(path), "%s/pub%d", f->dir, i);
        char *theirs = read_file(path);
        assert_string_equal(theirs, pem);
        free(theirs);
    }
    assert_int_equal(count_entries(f->dir), 1 + RACERS); /* no temporary files */
    free(pem);
    cred_key_free(k);
}

static void test_load_or_create_keeps_bad_file(void **state)
{
    struct fixture *f = *state;
    struct cred_key *k = NULL;
    /* a file that is not a key is an error, and stays as it was */
    write_file(f->path, "not a key\n", 10);
    assert_int_equal(cred_key_load_or_create(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_null(k);
    assert_contains(f->err, "is not an Ed25519 private key");
    char *text = read_file(f->path);
    assert_string_equal(text, "not a key\n");
    free(text);
    assert_int_equal(count_entries(f->dir), 1);

    /* an unreadable path other than a missing file (a folder) is an error too */
    unlink(f->path);
    assert_int_equal(mkdir(f->path, 0700), 0);
    assert_int_equal(cred_key_load_or_create(f->path, &k, f->err, sizeof(f->err)), TS_ESYS);
    assert_null(k);
    assert_contains(f->err, "cannot read");
    struct stat st;
    assert_int_equal(stat(f->path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));

    /* a dangling symlink: not replaced by a new key */
    char link[256], target[256];
    snprintf(link, sizeof(link), "%s/link", f->dir);
    snprintf(target, sizeof(target), "%s/nowhere", f->dir);
    assert_int_equal(symlink(target, link), 0);
    assert_int_not_equal(cred_key_load_or_create(link, &k, f->err, sizeof(f->err)), TS_OK);
    assert_null(k);
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(count_entries(f->dir), 2); /* key (a folder) and link: nothing else */
}

static void test_load_errors(void **state)
{
    struct fixture *f = *state;
    struct cred_key *k = (struct cred_key *)1;
    char path[256];

    /* missing */
    snprintf(path, sizeof(path), "%s/absent", f->dir);
    assert_int_equal(cred_key_load_private(path, &k, f->err, sizeof(f->err)), TS_ENOENT);
    assert_null(k);
    assert_contains(f->err, "cannot read");
    assert_contains(f->err, path);
    assert_int_equal(cred_key_load_public(path, &k, f->err, sizeof(f->err)), TS_ENOENT);
    assert_contains(f->err, "cannot read");

    /* garbage, empty, too large */
    write_file(f->path, "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", 58);
    f->err[0] = '\0';
    assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_null(k);
    assert_contains(f->err, f->path);
    assert_contains(f->err, "is not an Ed25519 private key");
    write_file(f->path, "", 0);
    assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_contains(f->err, "is not an Ed25519 private key");
    size_t big = 200 * 1024;
    char *junk = malloc(big);
    assert_non_null(junk);
    memset(junk, 'A', big);
    write_file(f->path, junk, big);
    free(junk);
    assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_contains(f->err, "too large");

    /* no errbuf, or a tiny one: still the error, and no overflow */
    assert_int_equal(cred_key_load_private(path, &k, NULL, 0), TS_ENOENT);
    char tiny[8];
    assert_int_equal(cred_key_load_private(path, &k, tiny, sizeof(tiny)), TS_ENOENT);
    assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
}

/* Keys of other types, written by OpenSSL as a user might: each is refused with a reason
 * that names the file and the type found. */
static void test_load_other_key_types(void **state)
{
    struct fixture *f = *state;
    struct {
        const char *type;
        EVP_PKEY *pkey;
    } other[] = {
        {"EC", EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256")},
        {"RSA", EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024)},
        {"X25519", EVP_PKEY_Q_keygen(NULL, NULL, "X25519")},
        {"ED448", EVP_PKEY_Q_keygen(NULL, NULL, "ED448")},
    };
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
        struct cred_key *k = (struct cred_key *)1;
        assert_non_null(other[i].pkey);
        write_pkey(f->path, other[i].pkey, 0);
        f->err[0] = '\0';
        assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
        assert_null(k);
        assert_contains(f->err, f->path);
        assert_contains(f->err, "is not an Ed25519 private key");
        assert_contains(f->err, other[i].type);
        /* and the same for the public half */
        write_pkey(f->path, other[i].pkey, 1);
        f->err[0] = '\0';
        assert_int_equal(cred_key_load_public(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
        assert_contains(f->err, "is not an Ed25519 public key");
        assert_contains(f->err, other[i].type);
        EVP_PKEY_free(other[i].pkey);
    }
}

/* Ed25519 keys in the wrong place or form: a public key where the private one should be,
 * the private key given to a node daemon, a passphrase-protected key (refused, not asked
 * for). */
static void test_load_wrong_form(void **state)
{
    struct fixture *f = *state;
    struct cred_key *k = (struct cred_key *)1, *key;
    EVP_PKEY *pkey = EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    assert_non_null(pkey);

    write_pkey(f->path, pkey, 1);
    assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_null(k);
    assert_contains(f->err, "is not an Ed25519 private key");
    assert_int_equal(cred_key_load_public(f->path, &key, f->err, sizeof(f->err)), TS_OK);
    cred_key_free(key);

    write_pkey(f->path, pkey, 0);
    assert_int_equal(cred_key_load_public(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_null(k);
    assert_contains(f->err, "is not an Ed25519 public key");
    assert_int_equal(cred_key_load_private(f->path, &key, f->err, sizeof(f->err)), TS_OK);
    cred_key_free(key);

    BIO *bio = BIO_new_file(f->path, "w");
    assert_non_null(bio);
    char pass[] = "secret";
    assert_int_equal(PEM_write_bio_PKCS8PrivateKey(bio, pkey, EVP_aes_256_cbc(), pass,
                                                   (int)strlen(pass), NULL, NULL),
                     1);
    BIO_free(bio);
    assert_int_equal(cred_key_load_private(f->path, &k, f->err, sizeof(f->err)), TS_EINVAL);
    assert_null(k);
    assert_contains(f->err, "passphrase");
    EVP_PKEY_free(pkey);
}

static void test_replay_basic(void **state)
{
    struct cred_replay *r = cred_replay_create();
    assert_non_null(r);
    uint64_t step0 = (uint64_t)42 << 32 | 0, step1 = (uint64_t)42 << 32 | 1;
    assert_int_equal(cred_replay_check(r, step0, 1000, 10), TS_OK);
    assert_int_equal(cred_replay_check(r, step0, 1000, 11), TS_ECRED_REPLAYED);
    /* a replay with another claimed expiry is still a replay */
    assert_int_equal(cred_replay_check(r, step0, 5000, 12), TS_ECRED_REPLAYED);
    assert_int_equal(cred_replay_check(r, step1, 1000, 12), TS_OK);
    assert_int_equal(cred_replay_check(r, step1, 1000, 13), TS_ECRED_REPLAYED);
    assert_int_equal(cred_replay_count(r), 2);
    cred_replay_free(r);
    cred_replay_free(NULL);
}

static void test_replay_expiry(void **state)
{
    struct cred_replay *r = cred_replay_create();
    assert_non_null(r);
    assert_int_equal(cred_replay_check(r, 7, 100, 10), TS_OK);
    /* still remembered at its expiry... */
    assert_int_equal(cred_replay_check(r, 7, 200, 100), TS_ECRED_REPLAYED);
    assert_int_equal(cred_replay_count(r), 1);
    /* ...and forgotten after it: the id may be used again */
    assert_int_equal(cred_replay_check(r, 7, 200, 101), TS_OK);
    assert_int_equal(cred_replay_count(r), 1);
    assert_int_equal(cred_replay_check(r, 7, 300, 150), TS_ECRED_REPLAYED);
    /* an already expired credential could not be remembered: refused */
    assert_int_equal(cred_replay_check(r, 8, 100, 150), TS_ECRED_EXPIRED);
    assert_int_equal(cred_replay_check(r, 8, 100, 150), TS_ECRED_EXPIRED);
    assert_int_equal(cred_replay_count(r), 1);
    /* the earliest expiry is forgotten first, whatever the order of arrival */
    assert_int_equal(cred_replay_check(r, 9, 400, 150), TS_OK);
    assert_int_equal(cred_replay_check(r, 10, 250, 150), TS_OK);
    assert_int_equal(cred_replay_check(r, 11, 1000, 260), TS_OK); /* forgets 7 and 10 */
    assert_int_equal(cred_replay_count(r), 2);
    assert_int_equal(cred_replay_check(r, 9, 1000, 260), TS_ECRED_REPLAYED);
    assert_int_equal(cred_replay_check(r, 10, 1000, 260), TS_OK);
    assert_int_equal(cred_replay_check(r, 7, 1000, 260), TS_OK);
    cred_replay_free(r);
}

static void test_replay_many(void **state)
{
    enum { N = 100000 };
    struct cred_replay *r = cred_replay_create();
    assert_non_null(r);
    static int64_t expiry[N];
    uint64_t x = 88172645463325252ull; /* xorshift: expiries in no order */
    int64_t later = 0;
    for (uint64_t i = 0; i < N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        expiry[i] = 1000 + (int64_t)(x % 1000);
        if (expiry[i] >= 1500)
            later++;
        assert_int_equal(cred_replay_check(r, i << 32 | (i & 7), expiry[i], 0), TS_OK);
    }
    assert_int_equal(cred_replay_count(r), N);
    for (uint64_t i = 0; i < N; i++)
        assert_int_equal(cred_replay_check(r, i << 32 | (i & 7), 2000, 500), TS_ECRED_REPLAYED);
    /* at 1500 those expiring before are forgotten, the others kept */
    assert_int_equal(cred_replay_check(r, UINT64_MAX, 3000, 1500), TS_OK);
    assert_int_equal(cred_replay_count(r), (size_t)later + 1);
    for (uint64_t i = 0; i < N; i++)
        assert_int_equal(cred_replay_check(r, i << 32 | (i & 7), 3000, 1500),
                         expiry[i] < 1500 ? TS_OK : TS_ECRED_REPLAYED);
    assert_int_equal(cred_replay_count(r), N + 1);
    /* later still, everything is gone */
    assert_int_equal(cred_replay_check(r, 0, 5000, 4000), TS_OK);
    assert_int_equal(cred_replay_count(r), 1);
    cred_replay_free(r);
}

/* A node daemon running for long: a steady stream of credentials with a time-to-live of
 * 100 keeps the guard at about 100 entries however many have gone by. */
static void test_replay_bounded(void **state)
{
    struct cred_replay *r = cred_replay_create();
    assert_non_null(r);
    size_t most = 0;
    for (int64_t t = 0; t < 1000000; t++) {
        assert_int_equal(cred_replay_check(r, (uint64_t)t, t + 100, t), TS_OK);
        size_t n = cred_replay_count(r);
        most = n > most ? n : most;
    }
    assert_int_equal(most, 101);
    cred_replay_free(r);
}

struct signer {
    const struct cred_key *key;
    int failures;
};

static void *signer_main(void *arg)
{
    struct signer *s = arg;
    for (int i = 0; i < 300; i++) {
        uint8_t data[16], sig[CRED_SIG_LEN];
        memset(data, i, sizeof(data));
        if (cred_sign(s->key, data, sizeof(data), sig) != TS_OK ||
            cred_verify(s->key, data, sizeof(data), sig, sizeof(sig)) != TS_OK)
            s->failures++;
        sig[i % CRED_SIG_LEN] ^= 0x80;
        if (cred_verify(s->key, data, sizeof(data), sig, sizeof(sig)) != TS_ECRED_INVALID)
            s->failures++;
    }
    return NULL;
}

/* The controller signs from several threads with one key. */
static void test_threads(void **state)
{
    struct cred_key *k;
    assert_int_equal(cred_key_generate(&k), TS_OK);
    enum { T = 4 };
    pthread_t th[T];
    struct signer s[T];
    for (int i = 0; i < T; i++) {
        s[i] = (struct signer){.key = k};
        assert_int_equal(pthread_create(&th[i], NULL, signer_main, &s[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(s[i].failures, 0);
    }
    cred_key_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sign_verify),
        cmocka_unit_test(test_flipped_bits),
        cmocka_unit_test(test_bcast_domain),
        cmocka_unit_test(test_wrong_key),
        cmocka_unit_test(test_signature_length),
        cmocka_unit_test(test_public_pem),
        cmocka_unit_test_setup_teardown(test_save_load, setup, teardown),
        cmocka_unit_test_setup_teardown(test_save_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_or_create, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_or_create_race, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_or_create_keeps_bad_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_other_key_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_load_wrong_form, setup, teardown),
        cmocka_unit_test(test_replay_basic),
        cmocka_unit_test(test_replay_expiry),
        cmocka_unit_test(test_replay_many),
        cmocka_unit_test(test_replay_bounded),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
