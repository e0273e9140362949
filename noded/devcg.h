/* Which device files a job's processes may open, on cgroup v2 (docs/containment.md §3):
 * v2 has no devices controller; the kernel asks an eBPF program attached to the cgroup
 * (BPF_PROG_TYPE_CGROUP_DEVICE) at every open or mknod of a device node. This file builds
 * that program from a list of devices to refuse (everything else stays as the levels
 * above allow) and attaches it, with the bpf(2) system call alone: the program is a few
 * instructions per device, no compiler or library is needed. Works wherever a cgroup2
 * filesystem is mounted, also beside v1 controllers. */
#ifndef TESSERA_NODED_DEVCG_H
#define TESSERA_NODED_DEVCG_H

#include <stddef.h>
#include <stdint.h>

/* A device node: 'c' (character) or 'b' (block), with its numbers. */
struct devcg_device {
    char type;
    uint32_t major, minor;
};

/* At most this many devices are refused by one program (5 instructions each). */
#define DEVCG_MAX_DEVICES 1024

/* The refusal of the n devices attached to the cgroup folder open at cgroup_fd (it and
 * its descendants; other programs attached above still apply). TS_EINVAL for a bad list,
 * TS_ESYS when the kernel refuses (errno says; why gets the verifier's first line). */
int devcg_deny(int cgroup_fd, const struct devcg_device *deny, size_t n, char *why,
               size_t len);

/* The device node at path as a devcg_device (TS_EINVAL when it is no device node). */
int devcg_of_path(const char *path, struct devcg_device *out);

#endif
