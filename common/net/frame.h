/* Length-prefixed frames: a 4-byte big-endian payload length, then the payload.
 *
 * The reader is incremental (feed it whatever read(2) returned, cut anywhere) and never
 * allocates more than the declared length of one frame, which it checks against its
 * maximum before allocating: an oversized length is an error as soon as its 4 bytes are
 * in, without reading or buffering the body. */
#ifndef TESSERA_COMMON_FRAME_H
#define TESSERA_COMMON_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_HEADER_SIZE 4
#define FRAME_DEFAULT_MAX (16u << 20) /* 16 MiB: room for large batch scripts */
/* The largest frame a server reads from a peer that has not authenticated yet
 * (docs/protocol.md, section 3): the credential's frame. A client whose first request does
 * not fit sends its credential alone first. */
#define FRAME_HANDSHAKE_MAX (64u << 10)

struct frame_reader {
    size_t max;                       /* largest payload accepted */
    uint8_t header[FRAME_HEADER_SIZE];
    size_t header_have;
    uint8_t *payload;                 /* allocated once the header is complete */
    size_t payload_len;
    size_t payload_have;
    int ready;                        /* a complete frame waits in payload */
};

void frame_reader_init(struct frame_reader *r, size_t max);
/* Change the largest payload accepted from the next frame on (a frame already begun keeps
 * the length it declared). */
void frame_reader_set_max(struct frame_reader *r, size_t max);
/* Free any partial or unclaimed frame; the reader can be used again after init. */
void frame_reader_release(struct frame_reader *r);

/* Consume bytes from buf until one frame is complete or buf is exhausted. *used is set to
 * the bytes consumed (the rest belongs to later frames). Returns TS_OK (check
 * frame_reader_ready), TS_EFRAME_TOOBIG or TS_ENOMEM; after an error the reader is
 * unusable until released. */
int frame_reader_feed(struct frame_reader *r, const uint8_t *buf, size_t len, size_t *used);
static inline int frame_reader_ready(const struct frame_reader *r)
{
    return r->ready;
}
/* Take the completed payload (caller frees; non-NULL even for a zero-length frame) and
 * reset the reader for the next frame. NULL when no frame is ready. */
uint8_t *frame_reader_take(struct frame_reader *r, size_t *len);
/* Bytes still missing to complete the header, or else the frame begun: a reader that
 * must not buffer beyond the current frame reads no more than this. */
size_t frame_reader_need(const struct frame_reader *r);
/* 1 while a frame is begun (some header byte in) and not complete. */
int frame_reader_partial(const struct frame_reader *r);
/* The length the frame being read declared; 0 until its header is complete. */
size_t frame_reader_declared(const struct frame_reader *r);
/* The peer closed: TS_OK when between frames, TS_EFRAME_TRUNCATED inside one. */
int frame_reader_eof(const struct frame_reader *r);

/* Write the header for a payload of len bytes; TS_EFRAME_TOOBIG above UINT32_MAX. */
int frame_header_encode(uint8_t out[FRAME_HEADER_SIZE], size_t len);

#endif
