/* Bytes waiting for a non-blocking socket: frames are appended whole, and flushed as far
 * as the socket takes them. Shared by the RPC server's connections and rpc_peer. */
#ifndef TESSERA_COMMON_OUTBUF_H
#define TESSERA_COMMON_OUTBUF_H

#include <stddef.h>
#include <stdint.h>

struct outbuf {
    uint8_t *data;
    size_t len, off, cap; /* data[off..len) waits */
};

/* Append one frame (length header and payload). TS_OK, TS_ENOMEM, TS_EFRAME_TOOBIG. */
int outbuf_frame(struct outbuf *ob, const uint8_t *payload, size_t len);
/* Write what fd takes now. TS_OK (everything sent, or the socket is full: see
 * outbuf_pending) or TS_ECLOSED (the peer is gone). */
int outbuf_flush(struct outbuf *ob, int fd);
static inline size_t outbuf_pending(const struct outbuf *ob)
{
    return ob->len - ob->off;
}
void outbuf_free(struct outbuf *ob);

#endif
