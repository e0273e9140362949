/* Generic resources as administrators configure them (docs/gres.md §1), in Slurm's forms:
 *
 *  - a node's Gres= in tessera.conf: "gpu:a100:4,bandwidth:10G" (gres_spec.c);
 *  - gres.conf: "NodeName=n[1-2] Name=gpu Type=a100 File=/dev/nvidia[0-3] Cores=0-15",
 *    "Name=bandwidth Count=10G", "AutoDetect=nvidia" (gres_conf.c);
 *  - what the NVIDIA driver lists in /proc/driver/nvidia/gpus/ (gres_detect.c).
 *
 * Pure parsers: every input is bounded before memory is spent on it, and errors are
 * written as "FILE:LINE: what is wrong" into the caller's buffer. */
#ifndef TESSERA_COMMON_GRES_CONF_H
#define TESSERA_COMMON_GRES_CONF_H

#include "common/gres/gres.h"

#include <stddef.h>
#include <stdint.h>

#define GRES_SPEC_MAX_LEN 1024        /* characters of one Gres= / GresTypes= value */
#define GRES_SPEC_MAX_ITEMS 32        /* resources on one node, names in GresTypes */
#define GRES_COUNT_MAX (UINT64_C(1) << 60) /* a counted resource ("bandwidth:1E") at most */
#define GRES_UNITS_MAX 1024           /* device files of one node */
#define GRES_FILE_MAX 255             /* characters of one device path */
#define GRES_CONF_MAX_SIZE (1u << 20) /* bytes of gres.conf */
#define GRES_CONF_MAX_LINE 4096       /* characters of one logical line */
#define GRES_CONF_MAX_RECORDS 4096    /* lines that say something */

/* ---- counts and node specs (gres_spec.c) ----------------------------------------------- */

/* "4", "10K", "10G": a count with an optional K, M, G, T, P suffix (powers of 1024, as
 * Slurm), 1 to GRES_COUNT_MAX. TS_OK or TS_ENUMBER. */
int gres_count_parse(const char *s, uint64_t *out);
/* The inverse: the largest suffix that divides count exactly ("10G", "4"). */
void gres_count_format(uint64_t count, char *buf, size_t len);
/* A resource name: letters, digits and "_", shorter than GRES_NAME_MAX. */
int gres_valid_name(const char *s);
/* A type: letters, digits and "_-.", shorter than GRES_TYPE_MAX. */
int gres_valid_type(const char *s);

/* A node's Gres= ("gpu", "gpu:4", "gpu:a100:4,bandwidth:10G"; a missing count is 1):
 * *items malloc'd (NULL and *n 0 for ""). A name and type given twice, or more than
 * GRES_SPEC_MAX_ITEMS entries, is an error. TS_OK or TS_EINVAL with the reason in err. */
int gres_spec_parse(const char *spec, struct gres_count **items, size_t *n, char *err,
                    size_t errlen);
/* Back to the text ("(null)"-free: "" for none); TS_ETOOBIG when buf is too small. */
int gres_spec_format(const struct gres_count *items, size_t n, char *buf, size_t len);
/* GresTypes= ("gpu,bandwidth"): names separated by commas, at most GRES_SPEC_MAX_ITEMS. */
int gres_types_valid(const char *types);
/* Whether name is one of types ("gpu,bandwidth"). */
int gres_types_contains(const char *types, const char *name);

/* Whether reported (what a node daemon found) gives fewer units than the node's Gres=
 * (configured) says; then why gets Slurm's reason "gres/gpu count reported lower than
 * configured (2 < 4)" and 1 is returned. An untyped configured entry counts every type of
 * its name. */
int gres_check_reported(const struct gres_count *configured, size_t nconfigured,
                        const struct gres_count *reported, size_t nreported, char *why,
                        size_t len);

/* ---- gres.conf (gres_conf.c) ------------------------------------------------------------ */

enum gres_autodetect {
    GRES_AUTODETECT_UNSET, /* the line says nothing */
    GRES_AUTODETECT_OFF,
    GRES_AUTODETECT_NVIDIA, /* the driver's procfs files (AutoDetect=nvidia or nvml) */
};

#define GRES_FLAG_COUNT_ONLY 0x1u /* Flags=CountOnly: no device files to confine */
#define GRES_FLAG_ENV_MASK 0x7eu   /* Flags=nvidia_gpu_env, amd_gpu_env, ... (kept) */

/* One line of gres.conf, or one unit group of a node once resolved. */
struct gres_record {
    int line;                  /* in its file; 0 for detected or configured units */
    char *nodes;               /* NodeName= as given; NULL: every node */
    char name[GRES_NAME_MAX];  /* "" on a line that only sets AutoDetect= */
    char type[GRES_TYPE_MAX];
    uint64_t count;            /* Count=, else the number of files, else 1 */
    char **files;              /* File= expanded ("/dev/nvidia0", ...) */
    size_t nfiles;
    char *cores;               /* Cores= as given (an id set), NULL: none */
    char *links;               /* Links= as given, NULL: none */
    unsigned flags;            /* GRES_FLAG_* */
    enum gres_autodetect autodetect; /* AutoDetect= on this line */
};

struct gres_conf {
    char *file;                /* for messages */
    struct gres_record *records;
    size_t nrecords;
};

/* Parse gres.conf's text; file names it in messages. TS_OK, TS_ENOMEM, or TS_ECONF with
 * "FILE:LINE: what is wrong" in err. */
int gres_conf_parse(const char *text, const char *file, struct gres_conf **out, char *err,
                    size_t errlen);
/* Read path (at most GRES_CONF_MAX_SIZE bytes) and parse it; a file that does not exist
 * is an empty gres.conf (it is optional, as Slurm's). */
int gres_conf_load(const char *path, struct gres_conf **out, char *err, size_t errlen);
void gres_conf_destroy(struct gres_conf *gc);
/* Free what a record holds and zero it. */
void gres_record_clear(struct gres_record *r);

/* The units of one node: a list of records without node names. */
struct gres_units {
    struct gres_record *v;
    size_t n;
};
void gres_units_clear(struct gres_units *u);
/* A copy of src (without its node names) at the end of u: TS_OK or TS_ENOMEM. */
int gres_units_push(struct gres_units *u, const struct gres_record *src);

/* What node has: gres.conf's records for it (names must be in types, GresTypes=); with
 * detection on for it (its last AutoDetect=, else the file's global one), the GPUs found
 * under root ("" on a node, a test's folder otherwise) instead of gres.conf's gpu lines;
 * then every entry of configured (the node's Gres=) whose name nothing above gave, as a
 * counted resource of its configured count (Slurm's rule: gres.conf may be omitted where
 * the node line says all). gc may be NULL (no gres.conf). TS_OK, TS_ENOMEM or TS_ECONF
 * with the reason in err. */
int gres_node_units(const struct gres_conf *gc, const char *node, const char *types,
                    const struct gres_count *configured, size_t nconfigured, const char *root,
                    struct gres_units *out, char *err, size_t errlen);

/* Drop the device files that do not exist under root (a GPU fallen off its bus, a typo in
 * gres.conf): each takes its unit with it, and a group left without units goes. Returns
 * how many were dropped; the first one's path is written into missing. */
size_t gres_units_drop_missing(struct gres_units *u, const char *root, char *missing,
                               size_t len);

/* ---- detection (gres_detect.c) ---------------------------------------------------------- */

/* Append one unit per GPU the NVIDIA driver lists under root/proc/driver/nvidia/gpus/
 * (each folder's "information" file): name "gpu", type from its Model: line (lower case,
 * blanks and other characters a type cannot hold as "_"), file /dev/nvidia<Device Minor>.
 * In the order of their minor numbers. No such folder: nothing found, TS_OK. */
int gres_detect_nvidia(const char *root, struct gres_units *out, char *err, size_t errlen);
/* One "information" file's text: its type and minor number. TS_OK or TS_EINVAL. */
int gres_detect_parse_information(const char *text, char *type, size_t typelen,
                                  uint32_t *minor);

#endif
