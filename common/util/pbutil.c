#include "common/util/pbutil.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *pbutil_copy(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return NULL;
    protobuf_c_message_pack(msg, buf);
    ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, len, buf);
    free(buf);
    return copy;
}

int pbutil_set_string(char **slot, const char *value)
{
    char *copy = strdup(value ? value : "");
    if (!copy)
        return -1;
    if (*slot && *slot != protobuf_c_empty_string)
        free(*slot);
    *slot = copy;
    return 0;
}
