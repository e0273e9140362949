/* JobDesc <-> JSON, field by field from protobuf-c's descriptor, so that a field added to
 * jobdesc.proto reaches filters without more code here. */
#include "ctld/jobjson.h"

#include "common/util/errors.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_PTR(msg, off) ((char *)(msg) + (off))

static int present(const Tessera__JobDesc *d, const ProtobufCFieldDescriptor *f)
{
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return *(const size_t *)FIELD_PTR(d, f->quantifier_offset) > 0;
    if (f->type == PROTOBUF_C_TYPE_STRING)
        return *(char *const *)FIELD_PTR(d, f->offset) != NULL;
    return *(const protobuf_c_boolean *)FIELD_PTR(d, f->quantifier_offset);
}

/* s with every byte that is not part of valid UTF-8 replaced by '?' (malloc'd). */
static char *utf8_fixed(const char *s)
{
    size_t len = strlen(s);
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned char b = p[i];
        size_t n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        int ok = n > 0 && i + n <= len;
        for (size_t k = 1; ok && k < n; k++)
            ok = (p[i + k] & 0xc0) == 0x80;
        if (ok && n > 1) { /* one character each; let jansson judge overlong forms */
            char one[5] = {0};
            memcpy(one, s + i, n);
            json_t *t = json_string(one);
            ok = t != NULL;
            json_decref(t);
        }
        if (!ok) {
            out[i++] = '?';
            continue;
        }
        memcpy(out + i, s + i, n);
        i += n;
    }
    out[len] = '\0';
    return out;
}

/* A string; with lossy, text that is not UTF-8 has its stray bytes as '?'. */
static json_t *string_value(const char *s, int lossy)
{
    json_t *v = json_string(s);
    if (v || !lossy)
        return v;
    char *fixed = utf8_fixed(s);
    v = fixed ? json_string(fixed) : NULL;
    free(fixed);
    return v;
}

static json_t *scalar(const Tessera__JobDesc *d, const ProtobufCFieldDescriptor *f, int lossy)
{
    const void *p = FIELD_PTR(d, f->offset);
    switch (f->type) {
    case PROTOBUF_C_TYPE_STRING: return string_value(*(char *const *)p, lossy);
    case PROTOBUF_C_TYPE_BOOL: return json_boolean(*(const protobuf_c_boolean *)p);
    case PROTOBUF_C_TYPE_INT32: return json_integer(*(const int32_t *)p);
    case PROTOBUF_C_TYPE_UINT32: return json_integer(*(const uint32_t *)p);
    case PROTOBUF_C_TYPE_INT64: return json_integer(*(const int64_t *)p);
    case PROTOBUF_C_TYPE_UINT64: return json_integer((json_int_t) * (const uint64_t *)p);
    default: return NULL; /* JobDesc has no other types */
    }
}

static json_t *strings(const Tessera__JobDesc *d, const ProtobufCFieldDescriptor *f, int lossy)
{
    size_t n = *(const size_t *)FIELD_PTR(d, f->quantifier_offset);
    char *const *v = *(char *const *const *)FIELD_PTR(d, f->offset);
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++) {
        if (json_array_append_new(a, string_value(v[i], lossy)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static char *dump(const Tessera__JobDesc *d, json_t *o, int lossy);

char *jobjson_dump(const Tessera__JobDesc *d)
{
    return dump(d, json_object(), 0);
}

char *jobjson_dump_job(const Tessera__JobDesc *d, uint32_t job_id, uint32_t het_job_id,
                       uint32_t het_job_offset)
{
    json_t *o = json_object();
    if (o && (json_object_set_new(o, "job_id", json_integer(job_id)) != 0 ||
              (het_job_id &&
               (json_object_set_new(o, "het_job_id", json_integer(het_job_id)) != 0 ||
                json_object_set_new(o, "het_job_offset", json_integer(het_job_offset)) != 0)))) {
        json_decref(o);
        o = NULL;
    }
    return dump(d, o, 1);
}

/* d's fields into o (stolen), as text. */
static char *dump(const Tessera__JobDesc *d, json_t *o, int lossy)
{
    const ProtobufCMessageDescriptor *md = &tessera__job_desc__descriptor;
    int failed = !o;
    for (unsigned i = 0; !failed && i < md->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &md->fields[i];
        if (!present(d, f))
            continue;
        json_t *v = f->label == PROTOBUF_C_LABEL_REPEATED ? strings(d, f, lossy)
                                                          : scalar(d, f, lossy);
        if (!v || json_object_set_new(o, f->name, v) != 0)
            failed = 1;
    }
    char *body = failed ? NULL : json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    char *text = body ? malloc(strlen(body) + 2) : NULL;
    if (text)
        sprintf(text, "%s\n", body);
    free(body);
    return text;
}

/* ------------------------------------------------------------------------------------ */

static int bad(char *errbuf, size_t errlen, const char *key, const char *why)
{
    snprintf(errbuf, errlen, "\"%s\": %s", key, why);
    return TS_EINVAL;
}

static int set_integer(void *p, ProtobufCType type, json_int_t v)
{
    switch (type) {
    case PROTOBUF_C_TYPE_INT32:
        if (v < INT32_MIN || v > INT32_MAX)
            return -1;
        *(int32_t *)p = (int32_t)v;
        return 0;
    case PROTOBUF_C_TYPE_UINT32:
        if (v < 0 || v > (json_int_t)UINT32_MAX)
            return -1;
        *(uint32_t *)p = (uint32_t)v;
        return 0;
    case PROTOBUF_C_TYPE_INT64:
        *(int64_t *)p = (int64_t)v;
        return 0;
    case PROTOBUF_C_TYPE_UINT64:
        if (v < 0)
            return -1;
        *(uint64_t *)p = (uint64_t)v;
        return 0;
    default:
        return -1;
    }
}

static int set_strings(Tessera__JobDesc *d, const ProtobufCFieldDescriptor *f, json_t *v,
                       char *errbuf, size_t errlen)
{
    if (!json_is_array(v))
        return bad(errbuf, errlen, f->name, "must be an array of strings");
    size_t n = json_array_size(v);
    char **items = calloc(n + 1, sizeof(*items));
    if (!items)
        return TS_ENOMEM;
    /* stored first, so that a failure below is freed with the message */
    *(char ***)FIELD_PTR(d, f->offset) = items;
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(v, i);
        if (!json_is_string(s))
            return bad(errbuf, errlen, f->name, "must be an array of strings");
        if (!(items[i] = strdup(json_string_value(s))))
            return TS_ENOMEM;
        *(size_t *)FIELD_PTR(d, f->quantifier_offset) = i + 1;
    }
    return TS_OK;
}

static int set_field(Tessera__JobDesc *d, const ProtobufCFieldDescriptor *f, json_t *v,
                     char *errbuf, size_t errlen)
{
    if (json_is_null(v))
        return TS_OK;
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
        return set_strings(d, f, v, errbuf, errlen);
    void *p = FIELD_PTR(d, f->offset);
    if (f->type == PROTOBUF_C_TYPE_STRING) {
        if (!json_is_string(v))
            return bad(errbuf, errlen, f->name, "must be a string");
        if (!(*(char **)p = strdup(json_string_value(v))))
            return TS_ENOMEM;
        return TS_OK;
    }
    if (f->type == PROTOBUF_C_TYPE_BOOL) {
        if (!json_is_boolean(v))
            return bad(errbuf, errlen, f->name, "must be true or false");
        *(protobuf_c_boolean *)p = json_is_true(v);
    } else if (!json_is_integer(v) || set_integer(p, f->type, json_integer_value(v))) {
        return bad(errbuf, errlen, f->name, "must be a whole number in range");
    }
    *(protobuf_c_boolean *)FIELD_PTR(d, f->quantifier_offset) = 1;
    return TS_OK;
}

int jobjson_parse(const char *text, Tessera__JobDesc **out, char *errbuf, size_t errlen)
{
    *out = NULL;
    errbuf[0] = '\0';
    json_error_t jerr;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    if (!o || !json_is_object(o)) {
        snprintf(errbuf, errlen, "not a JSON object%s%s", o ? "" : ": ", o ? "" : jerr.text);
        json_decref(o);
        return TS_EINVAL;
    }
    Tessera__JobDesc *d = malloc(sizeof(*d));
    if (!d) {
        json_decref(o);
        return TS_ENOMEM;
    }
    tessera__job_desc__init(d);
    int err = TS_OK;
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        const ProtobufCFieldDescriptor *f =
            protobuf_c_message_descriptor_get_field_by_name(&tessera__job_desc__descriptor, key);
        err = f ? set_field(d, f, v, errbuf, errlen) : bad(errbuf, errlen, key, "unknown key");
        if (err)
            break;
    }
    json_decref(o);
    if (err) {
        tessera__job_desc__free_unpacked(d, NULL);
        return err;
    }
    *out = d;
    return TS_OK;
}
