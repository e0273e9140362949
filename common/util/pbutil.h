/* Small helpers over protobuf-c messages. */
#ifndef TESSERA_COMMON_PBUTIL_H
#define TESSERA_COMMON_PBUTIL_H

#include <protobuf-c/protobuf-c.h>

/* A deep copy of msg in protobuf-c's own layout (one pack and one unpack), so that it is
 * freed with the type's free_unpacked and owns every string. NULL when out of memory. */
void *pbutil_copy(const ProtobufCMessage *msg);

/* Replace a string field of an unpacked message (which uses malloc): the old value is
 * freed unless it is protobuf-c's shared empty string (proto3's absent string). */
int pbutil_set_string(char **slot, const char *value);

#endif
