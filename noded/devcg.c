#include "noded/devcg.h"

#include "common/util/errors.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define PROLOGUE 4   /* loads of the device's type, major and minor */
#define PER_DEVICE 5 /* three comparisons, "refuse", exit */
#define EPILOGUE 2   /* "allow", exit */

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
    return (struct bpf_insn){.code = code, .dst_reg = dst, .src_reg = src, .off = off,
                             .imm = imm};
}

/* r1 points at struct bpf_cgroup_dev_ctx: r2 = device type, r3 = major, r4 = minor; for
 * each refused device a block that returns 0 when all three match; else return 1. */
static void build(const struct devcg_device *deny, size_t n, struct bpf_insn *p)
{
    size_t k = 0;
    p[k++] = insn(BPF_LDX | BPF_MEM | BPF_W, 2, 1,
                  (int16_t)offsetof(struct bpf_cgroup_dev_ctx, access_type), 0);
    p[k++] = insn(BPF_ALU64 | BPF_AND | BPF_K, 2, 0, 0, 0xFFFF); /* the type, not access */
    p[k++] = insn(BPF_LDX | BPF_MEM | BPF_W, 3, 1,
                  (int16_t)offsetof(struct bpf_cgroup_dev_ctx, major), 0);
    p[k++] = insn(BPF_LDX | BPF_MEM | BPF_W, 4, 1,
                  (int16_t)offsetof(struct bpf_cgroup_dev_ctx, minor), 0);
    for (size_t i = 0; i < n; i++) {
        int32_t type = deny[i].type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
        /* a mismatch jumps over the rest of this block to the next one */
        p[k++] = insn(BPF_JMP | BPF_JNE | BPF_K, 2, 0, 4, type);
        p[k++] = insn(BPF_JMP | BPF_JNE | BPF_K, 3, 0, 3, (int32_t)deny[i].major);
        p[k++] = insn(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 2, (int32_t)deny[i].minor);
        p[k++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
        p[k++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    }
    p[k++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1);
    p[k++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static int load(const struct bpf_insn *p, size_t count, char *why, size_t len)
{
    char log[1024] = "";
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    a.insns = (uint64_t)(uintptr_t)p;
    a.insn_cnt = (uint32_t)count;
    a.license = (uint64_t)(uintptr_t)"GPL";
    a.log_buf = (uint64_t)(uintptr_t)log;
    a.log_size = sizeof(log);
    a.log_level = 1;
    int fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
    if (fd < 0)
        snprintf(why, len, "the device program was refused: %s%s%.*s", strerror(errno),
                 log[0] ? ": " : "", (int)strcspn(log, "\n"), log);
    return fd;
}

int devcg_deny(int cgroup_fd, const struct devcg_device *deny, size_t n, char *why,
               size_t len)
{
    why[0] = '\0';
    if (n > DEVCG_MAX_DEVICES)
        return TS_EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((deny[i].type != 'c' && deny[i].type != 'b') || deny[i].major > INT32_MAX ||
            deny[i].minor > INT32_MAX)
            return TS_EINVAL;
    size_t count = PROLOGUE + n * PER_DEVICE + EPILOGUE;
    struct bpf_insn *p = calloc(count, sizeof(*p));
    if (!p)
        return TS_ENOMEM;
    build(deny, n, p);
    int prog = load(p, count, why, len);
    free(p);
    if (prog < 0)
        return TS_ESYS;
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.target_fd = (uint32_t)cgroup_fd;
    a.attach_bpf_fd = (uint32_t)prog;
    a.attach_type = BPF_CGROUP_DEVICE;
    a.attach_flags = BPF_F_ALLOW_MULTI; /* what levels above attached still applies */
    int err = syscall(SYS_bpf, BPF_PROG_ATTACH, &a, sizeof(a)) == 0 ? TS_OK : TS_ESYS;
    int attach_errno = errno;
    if (err)
        snprintf(why, len, "the device program could not be attached: %s",
                 strerror(attach_errno));
    close(prog); /* the cgroup holds it now, until the folder goes */
    errno = attach_errno;
    return err;
}

int devcg_of_path(const char *path, struct devcg_device *out)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return TS_ENOENT;
    if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
        return TS_EINVAL;
    out->type = S_ISBLK(st.st_mode) ? 'b' : 'c';
    out->major = major(st.st_rdev);
    out->minor = minor(st.st_rdev);
    return TS_OK;
}
