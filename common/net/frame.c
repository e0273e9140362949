#include "common/net/frame.h"

#include "common/util/errors.h"

#include <stdlib.h>
#include <string.h>

void frame_reader_init(struct frame_reader *r, size_t max)
{
    memset(r, 0, sizeof(*r));
    r->max = max;
}

void frame_reader_set_max(struct frame_reader *r, size_t max)
{
    r->max = max;
}

void frame_reader_release(struct frame_reader *r)
{
    free(r->payload);
    frame_reader_init(r, r->max);
}

static uint32_t header_length(const uint8_t h[FRAME_HEADER_SIZE])
{
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

/* The header just completed: check the length and allocate the payload buffer. */
static int begin_payload(struct frame_reader *r)
{
    r->payload_len = header_length(r->header);
    if (r->payload_len > r->max)
        return TS_EFRAME_TOOBIG;
    /* +1 so that a zero-length frame still has a buffer to hand over */
    r->payload = malloc(r->payload_len + 1);
    if (!r->payload)
        return TS_ENOMEM;
    r->payload_have = 0;
    return TS_OK;
}

int frame_reader_feed(struct frame_reader *r, const uint8_t *buf, size_t len, size_t *used)
{
    size_t off = 0;
    *used = 0;
    if (r->ready)
        return TS_OK; /* the caller must take the frame first */
    while (off < len && r->header_have < FRAME_HEADER_SIZE) {
        r->header[r->header_have++] = buf[off++];
        if (r->header_have == FRAME_HEADER_SIZE) {
            int err = begin_payload(r);
            if (err) {
                *used = off;
                return err;
            }
        }
    }
    if (r->header_have == FRAME_HEADER_SIZE) {
        size_t want = r->payload_len - r->payload_have;
        size_t n = len - off < want ? len - off : want;
        memcpy(r->payload + r->payload_have, buf + off, n);
        r->payload_have += n;
        off += n;
        if (r->payload_have == r->payload_len)
            r->ready = 1;
    }
    *used = off;
    return TS_OK;
}

uint8_t *frame_reader_take(struct frame_reader *r, size_t *len)
{
    if (!r->ready)
        return NULL;
    uint8_t *p = r->payload;
    *len = r->payload_len;
    r->payload = NULL;
    frame_reader_init(r, r->max);
    return p;
}

size_t frame_reader_need(const struct frame_reader *r)
{
    if (r->ready)
        return 0;
    if (r->header_have < FRAME_HEADER_SIZE)
        return FRAME_HEADER_SIZE - r->header_have;
    return r->payload_len - r->payload_have;
}

int frame_reader_partial(const struct frame_reader *r)
{
    return r->header_have > 0 && !r->ready;
}

size_t frame_reader_declared(const struct frame_reader *r)
{
    return r->header_have == FRAME_HEADER_SIZE ? r->payload_len : 0;
}

int frame_reader_eof(const struct frame_reader *r)
{
    if (r->header_have == 0 && !r->ready)
        return TS_OK;
    return r->ready ? TS_OK : TS_EFRAME_TRUNCATED;
}

int frame_header_encode(uint8_t out[FRAME_HEADER_SIZE], size_t len)
{
    if (len > UINT32_MAX)
        return TS_EFRAME_TOOBIG;
    out[0] = (uint8_t)(len >> 24);
    out[1] = (uint8_t)(len >> 16);
    out[2] = (uint8_t)(len >> 8);
    out[3] = (uint8_t)len;
    return TS_OK;
}
