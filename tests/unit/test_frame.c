/* Frames: incremental reading cut at every byte, oversized lengths, truncation. */
#include "common/net/frame.h"
#include "common/util/errors.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Two frames back to back: "hello" and an empty one, then "xyz". */
static size_t build_stream(uint8_t *buf)
{
    size_t n = 0;
    frame_header_encode(buf + n, 5);
    n += 4;
    memcpy(buf + n, "hello", 5);
    n += 5;
    frame_header_encode(buf + n, 0);
    n += 4;
    frame_header_encode(buf + n, 3);
    n += 4;
    memcpy(buf + n, "xyz", 3);
    n += 3;
    return n;
}

/* Feed the stream in pieces of `step` bytes and collect the frames. */
static void read_in_steps(const uint8_t *stream, size_t len, size_t step)
{
    static const char *const expect[] = {"hello", "", "xyz"};
    struct frame_reader r;
    frame_reader_init(&r, 64);
    size_t got = 0;
    for (size_t off = 0; off < len;) {
        size_t chunk = len - off < step ? len - off : step;
        size_t done = 0;
        while (done < chunk) {
            size_t used = 0, avail = chunk - done;
            assert_int_equal(frame_reader_feed(&r, stream + off + done, avail, &used), TS_OK);
            done += used;
            if (frame_reader_ready(&r)) {
                size_t plen = 99;
                uint8_t *p = frame_reader_take(&r, &plen);
                assert_non_null(p);
                assert_true(got < 3);
                assert_int_equal(plen, strlen(expect[got]));
                assert_memory_equal(p, expect[got], plen);
                free(p);
                got++;
            } else {
                assert_int_equal(used, avail); /* no frame yet: everything consumed */
            }
        }
        off += chunk;
    }
    assert_int_equal(got, 3);
    assert_int_equal(frame_reader_eof(&r), TS_OK);
    frame_reader_release(&r);
}

static void test_every_cut(void **state)
{
    uint8_t stream[64];
    size_t len = build_stream(stream);
    for (size_t step = 1; step <= len; step++)
        read_in_steps(stream, len, step);
}

static void test_truncated_at_every_byte(void **state)
{
    uint8_t stream[64];
    build_stream(stream);
    /* cutting inside the first frame (after 1..8 bytes) must be reported as truncation */
    for (size_t cut = 1; cut < 9; cut++) {
        struct frame_reader r;
        frame_reader_init(&r, 64);
        size_t used = 0;
        assert_int_equal(frame_reader_feed(&r, stream, cut, &used), TS_OK);
        assert_int_equal(used, cut);
        assert_false(frame_reader_ready(&r));
        assert_int_equal(frame_reader_eof(&r), TS_EFRAME_TRUNCATED);
        frame_reader_release(&r);
    }
}

static void test_oversized(void **state)
{
    struct frame_reader r;
    frame_reader_init(&r, 1024);
    uint8_t hdr[4];
    frame_header_encode(hdr, 1025);
    size_t used = 0;
    /* refused as soon as the header is complete: nothing allocated for the body */
    assert_int_equal(frame_reader_feed(&r, hdr, 3, &used), TS_OK);
    assert_int_equal(frame_reader_feed(&r, hdr + 3, 1, &used), TS_EFRAME_TOOBIG);
    assert_null(r.payload);
    frame_reader_release(&r);

    /* the largest length the wire can carry */
    frame_reader_init(&r, FRAME_DEFAULT_MAX);
    memset(hdr, 0xff, sizeof(hdr));
    assert_int_equal(frame_reader_feed(&r, hdr, 4, &used), TS_EFRAME_TOOBIG);
    frame_reader_release(&r);

    /* exactly the maximum is fine */
    frame_reader_init(&r, 16);
    uint8_t buf[20] = {0};
    frame_header_encode(buf, 16);
    assert_int_equal(frame_reader_feed(&r, buf, 20, &used), TS_OK);
    assert_int_equal(used, 20);
    assert_true(frame_reader_ready(&r));
    frame_reader_release(&r);
}

/* A server reads a stranger's first frame with a small maximum, byte count by byte
 * count (need), and raises the maximum once the credential is proven. */
static void test_handshake_then_raised_max(void **state)
{
    struct frame_reader r;
    frame_reader_init(&r, 8);
    assert_int_equal(frame_reader_need(&r), 4);
    assert_false(frame_reader_partial(&r));
    assert_int_equal(frame_reader_declared(&r), 0);
    uint8_t buf[4 + 8] = {0};
    frame_header_encode(buf, 8);
    size_t used = 0;
    assert_int_equal(frame_reader_feed(&r, buf, 2, &used), TS_OK);
    assert_true(frame_reader_partial(&r));
    assert_int_equal(frame_reader_need(&r), 2);
    assert_int_equal(frame_reader_declared(&r), 0);
    assert_int_equal(frame_reader_feed(&r, buf + 2, 2, &used), TS_OK);
    assert_int_equal(frame_reader_declared(&r), 8);
    assert_int_equal(frame_reader_need(&r), 8);
    assert_int_equal(frame_reader_feed(&r, buf + 4, 8, &used), TS_OK);
    assert_true(frame_reader_ready(&r));
    assert_int_equal(frame_reader_need(&r), 0);
    assert_false(frame_reader_partial(&r));
    size_t len;
    free(frame_reader_take(&r, &len));
    /* the next frame may be larger once allowed, not before */
    uint8_t hdr[4];
    frame_header_encode(hdr, 100);
    frame_reader_set_max(&r, 100);
    assert_int_equal(frame_reader_feed(&r, hdr, 4, &used), TS_OK);
    assert_int_equal(frame_reader_declared(&r), 100);
    frame_reader_release(&r);
    frame_reader_init(&r, 8);
    assert_int_equal(frame_reader_feed(&r, hdr, 4, &used), TS_EFRAME_TOOBIG);
    frame_reader_release(&r);
}

static void test_take_without_frame(void **state)
{
    struct frame_reader r;
    frame_reader_init(&r, 16);
    size_t len = 7;
    assert_null(frame_reader_take(&r, &len));
    assert_int_equal(len, 7);
    frame_reader_release(&r);
}

static void test_header_encode(void **state)
{
    uint8_t h[4];
    assert_int_equal(frame_header_encode(h, 0x01020304), TS_OK);
    assert_int_equal(h[0], 1);
    assert_int_equal(h[1], 2);
    assert_int_equal(h[2], 3);
    assert_int_equal(h[3], 4);
    assert_int_equal(frame_header_encode(h, (size_t)UINT32_MAX + 1), TS_EFRAME_TOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_cut),
        cmocka_unit_test(test_truncated_at_every_byte),
        cmocka_unit_test(test_oversized),
        cmocka_unit_test(test_take_without_frame),
        cmocka_unit_test(test_handshake_then_raised_max),
        cmocka_unit_test(test_header_encode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
