#include "common/net/outbuf.h"

#include "common/net/frame.h"
#include "common/util/errors.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int append(struct outbuf *ob, const void *data, size_t len)
{
    if (ob->off > 0 && ob->off == ob->len)
        ob->off = ob->len = 0;
    if (ob->len + len > ob->cap) {
        if (ob->off > 0) { /* compact before growing */
            memmove(ob->data, ob->data + ob->off, ob->len - ob->off);
            ob->len -= ob->off;
            ob->off = 0;
        }
        size_t cap = ob->cap ? ob->cap : 4096;
        while (cap < ob->len + len)
            cap *= 2;
        if (cap > ob->cap) {
            uint8_t *p = realloc(ob->data, cap);
            if (!p)
                return TS_ENOMEM;
            ob->data = p;
            ob->cap = cap;
        }
    }
    memcpy(ob->data + ob->len, data, len);
    ob->len += len;
    return TS_OK;
}

int outbuf_frame(struct outbuf *ob, const uint8_t *payload, size_t len)
{
    uint8_t header[FRAME_HEADER_SIZE];
    int err = frame_header_encode(header, len);
    if (!err)
        err = append(ob, header, sizeof(header));
    if (!err)
        err = append(ob, payload, len);
    return err;
}

int outbuf_flush(struct outbuf *ob, int fd)
{
    while (ob->off < ob->len) {
        ssize_t n = send(fd, ob->data + ob->off, ob->len - ob->off, MSG_NOSIGNAL);
        if (n > 0) {
            ob->off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return TS_OK;
        return TS_ECLOSED;
    }
    return TS_OK;
}

void outbuf_free(struct outbuf *ob)
{
    free(ob->data);
    memset(ob, 0, sizeof(*ob));
}
