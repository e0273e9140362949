/* Job credentials: the Ed25519 key that signs them, and the replay guard that checks them.
 *
 * The controller holds the private key and signs each step launch's credential; node
 * daemons hold only the public half and verify. Keys are files in PEM: PKCS#8 for the
 * private key, SubjectPublicKeyInfo for the public one, so `openssl pkey` reads and makes
 * them too. Signing and verifying with one key from several threads at once is safe.
 *
 * The replay guard is the node daemon's memory of the credentials it has accepted, kept
 * until they expire; it reads no clock, so the caller passes the times in.
 */
#ifndef TESSERA_COMMON_CRED_H
#define TESSERA_COMMON_CRED_H

#include <stddef.h>
#include <stdint.h>

#define CRED_SIG_LEN 64

/* How long a step credential may wait between its creation and its launch on a node: the
 * controller signs it with this lifetime, and node daemons remember revoked jobs at least
 * this long (noded/revoked.h). */
#define CRED_STEP_LIFETIME 120

struct cred_key; /* an Ed25519 key: a private one (signs and verifies) or a public one */

/* A new private key. TS_OK, TS_ENOMEM or TS_ESYS (OpenSSL failed). */
int cred_key_generate(struct cred_key **out);

/* PEM (PKCS#8) private key file. errbuf gets a one-line reason ("cannot read X: ...",
 * "X is not an Ed25519 private key"). Errors: TS_ENOENT (no such file), TS_ESYS (another
 * reading failure), TS_EINVAL (not an Ed25519 private key, or passphrase protected: a
 * daemon never prompts), TS_ENOMEM. errbuf may be NULL. */
int cred_key_load_private(const char *path, struct cred_key **out, char *errbuf, size_t errlen);

/* Write the private key: mode 0600, written to a temporary file in the same folder then
 * renamed, so a crash never leaves half a key. Replaces an existing file. Errors: TS_EINVAL
 * (k is a public key), TS_ESYS, TS_ENOMEM. */
int cred_key_save_private(const struct cred_key *k, const char *path, char *errbuf, size_t errlen);

/* The controller's start-up: load path, or generate and save a new key when the file does
 * not exist (any other failure is an error: never silently replace a key). Two processes
 * starting at once end with the same key: the second one loads the first one's file. */
int cred_key_load_or_create(const char *path, struct cred_key **out, char *errbuf, size_t errlen);

/* The public half as PEM text (malloc'd, NUL-terminated), for node daemons. */
int cred_key_public_pem(const struct cred_key *k, char **pem);

/* A public key from SubjectPublicKeyInfo PEM text (len bytes, no NUL needed). TS_EINVAL
 * when it is not an Ed25519 public key. */
int cred_key_from_public_pem(const char *pem, size_t len, struct cred_key **out);

/* A public key file; errors and errbuf as cred_key_load_private. */
int cred_key_load_public(const char *path, struct cred_key **out, char *errbuf, size_t errlen);

/* Sign with a private key (TS_EINVAL for a public one). */
int cred_sign(const struct cred_key *k, const void *data, size_t len, uint8_t sig[CRED_SIG_LEN]);

/* TS_OK, or TS_ECRED_INVALID for a bad signature (any length other than 64 too). */
int cred_verify(const struct cred_key *k, const void *data, size_t len, const uint8_t *sig,
                size_t siglen);

/* File broadcast credentials (sbcast, docs/security.md "File broadcast") are signed over
 * CRED_BCAST_DOMAIN (its NUL included) followed by the packed credential, so that a step
 * credential never verifies as one, nor one as a step credential: both are signed with
 * the same key, and a step layout's bytes might decode as a broadcast credential. The
 * lifetime is a step credential's, which revocations on the nodes outlive. */
#define CRED_BCAST_DOMAIN "tessera-bcast-v1"
#define CRED_BCAST_LIFETIME CRED_STEP_LIFETIME

/* cred_sign and cred_verify of a file broadcast credential (TS_ENOMEM too). */
int cred_sign_bcast(const struct cred_key *k, const void *data, size_t len,
                    uint8_t sig[CRED_SIG_LEN]);
int cred_verify_bcast(const struct cred_key *k, const void *data, size_t len, const uint8_t *sig,
                      size_t siglen);

void cred_key_free(struct cred_key *k); /* NULL ok */

/* Credentials seen and not yet expired, by a 64-bit identity (the node daemon uses
 * job_id << 32 | step_id). */
struct cred_replay;

struct cred_replay *cred_replay_create(void); /* NULL when out of memory */

/* TS_OK and remembers id until `expires`; TS_ECRED_REPLAYED when id is already there.
 * Forgets entries whose expiry is before `now` (bounded memory). TS_ECRED_EXPIRED when
 * `expires` is itself before `now`: the guard would forget such an id at once, so it could
 * not refuse its replays. TS_ENOMEM leaves the guard as it was. */
int cred_replay_check(struct cred_replay *r, uint64_t id, int64_t expires, int64_t now);

/* Entries remembered now (for statistics and tests). */
size_t cred_replay_count(const struct cred_replay *r);

void cred_replay_free(struct cred_replay *r); /* NULL ok */

#endif
