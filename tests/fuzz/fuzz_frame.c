/* libFuzzer target: what a server does with bytes from the network. The input is fed to
 * the frame reader in pieces whose sizes come from the input itself; every complete frame
 * is unpacked as an Envelope, checked against a session, and its body unpacked as a
 * Request and a Response. Nothing may crash, leak or read out of bounds, and the reader
 * must never hold more than its maximum. */
#include "common/net/frame.h"
#include "common/net/wire.h"
#include "common/util/errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void handle(struct wire_session *s, const uint8_t *payload, size_t len)
{
    Tessera__Envelope *env = NULL;
    int err = wire_unpack(payload, len, &env);
    if (env && err == TS_OK) {
        wire_verify(s, env);
        Tessera__Request *req = tessera__request__unpack(NULL, env->body.len, env->body.data);
        if (req)
            tessera__request__free_unpacked(req, NULL);
        Tessera__Response *resp = tessera__response__unpack(NULL, env->body.len, env->body.data);
        if (resp)
            tessera__response__free_unpacked(resp, NULL);
    }
    if (env)
        tessera__envelope__free_unpacked(env, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t key[WIRE_KEY_SIZE] = {7};
    struct wire_session s;
    wire_session_init(&s, WIRE_SERVER, key);
    struct frame_reader r;
    frame_reader_init(&r, 4096);
    /* the first byte picks the piece size, so frames are cut in every way */
    size_t step = size ? (size_t)data[0] % 17 + 1 : 1;
    size_t off = size ? 1 : 0;
    while (off < size) {
        size_t n = size - off < step ? size - off : step, used = 0;
        if (frame_reader_feed(&r, data + off, n, &used) != TS_OK)
            break;
        if (r.payload_len > r.max)
            abort();
        off += used;
        if (frame_reader_ready(&r)) {
            size_t len = 0;
            uint8_t *payload = frame_reader_take(&r, &len);
            handle(&s, payload, len);
            free(payload);
        }
    }
    frame_reader_eof(&r);
    frame_reader_release(&r);
    return 0;
}
