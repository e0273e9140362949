/* Whether the controller takes changes now, decided in one place (ctld/store_guard.c).
 *
 * A change is only acknowledged once it is durable, and the store retries a failed commit
 * until it succeeds (ctld/store.h). While it fails, new changes could only pile up in
 * memory behind it, so they are refused at the door: requests that change state get
 * TS_ESTORE_FAILING, and the scheduler starts nothing. New work (submissions) is also
 * refused while the file system of StateSaveLocation has less than StateMinFreeMB free
 * (TS_ESTORE_LOW_SPACE), so that what ends or frees work still finds room.
 */
#ifndef TESSERA_CTLD_STORE_GUARD_H
#define TESSERA_CTLD_STORE_GUARD_H

struct ctld;
struct rpc_request;

enum ctld_change {
    CTLD_CHANGE_NEW_WORK, /* a submission: refused when failing or low on space */
    CTLD_CHANGE_START,    /* the scheduler's starts: refused when failing */
    CTLD_CHANGE_OTHER,    /* updates, actions, ends reported by nodes: refused when failing */
};

/* TS_OK, TS_ESTORE_FAILING or TS_ESTORE_LOW_SPACE. */
int ctld_change_refusal(struct ctld *c, enum ctld_change kind);
/* Where a handler that changes state starts: answers req with the refusal and returns 1
 * when the change is refused, 0 when it may go on. */
int ctld_refuse_change(struct ctld *c, struct rpc_request *req, enum ctld_change kind);
/* Learn from the store when commits fail and when they work again. */
void ctld_store_guard_init(struct ctld *c);

#endif
