/*
 * The verbs half of NativeDispatcher: protection domains, completion channels and queues,
 * memory regions, posting work requests and polling completions (libibverbs), plus the
 * layout handshake NativeDispatcher performs at construction.
 *
 * The data path (_postSend, _postRecv, _pollCQ, _reqNotifyCQ) allocates nothing and takes
 * no locks of its own.
 */
#include "disni.h"

#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/*
 * Receive requests, scatter/gather entries and work completions are written (or read) by
 * Java in exactly libibverbs' layout, so they are handed over without copying. These
 * checks pin that assumption to the headers the library is built against.
 */
_Static_assert(sizeof(struct ibv_sge) == 16, "ibv_sge layout");
_Static_assert(offsetof(struct ibv_sge, addr) == 0, "ibv_sge.addr");
_Static_assert(offsetof(struct ibv_sge, length) == 8, "ibv_sge.length");
_Static_assert(offsetof(struct ibv_sge, lkey) == 12, "ibv_sge.lkey");
_Static_assert(sizeof(struct ibv_recv_wr) == 32, "ibv_recv_wr layout");
_Static_assert(offsetof(struct ibv_recv_wr, next) == 8, "ibv_recv_wr.next");
_Static_assert(offsetof(struct ibv_recv_wr, sg_list) == 16, "ibv_recv_wr.sg_list");
_Static_assert(offsetof(struct ibv_recv_wr, num_sge) == 24, "ibv_recv_wr.num_sge");
_Static_assert(sizeof(struct ibv_wc) == 48, "ibv_wc layout");
_Static_assert(offsetof(struct ibv_wc, status) == 8, "ibv_wc.status");
_Static_assert(offsetof(struct ibv_wc, opcode) == 12, "ibv_wc.opcode");
_Static_assert(offsetof(struct ibv_wc, vendor_err) == 16, "ibv_wc.vendor_err");
_Static_assert(offsetof(struct ibv_wc, byte_len) == 20, "ibv_wc.byte_len");
_Static_assert(offsetof(struct ibv_wc, imm_data) == 24, "ibv_wc.imm_data");
_Static_assert(offsetof(struct ibv_wc, qp_num) == 28, "ibv_wc.qp_num");
_Static_assert(offsetof(struct ibv_wc, src_qp) == 32, "ibv_wc.src_qp");
_Static_assert(offsetof(struct ibv_wc, wc_flags) == 36, "ibv_wc.wc_flags");
_Static_assert(offsetof(struct ibv_wc, pkey_index) == 40, "ibv_wc.pkey_index");
_Static_assert(offsetof(struct ibv_wc, slid) == 42, "ibv_wc.slid");
_Static_assert(offsetof(struct ibv_wc, sl) == 44, "ibv_wc.sl");
_Static_assert(offsetof(struct ibv_wc, dlid_path_bits) == 45, "ibv_wc.dlid_path_bits");
_Static_assert(sizeof(struct sockaddr_in6) == DISNI_SOCKADDR_SIZE, "socket address buffer size");

/* Send requests are translated in batches of this many, on the stack. */
#define DISNI_SEND_BATCH 32
/* A list longer than this is taken to be corrupt (a cycle in the next pointers). */
#define DISNI_MAX_CHAIN 65536

static uint64_t load_u64(const unsigned char *base, size_t offset)
{
    uint64_t value;

    memcpy(&value, base + offset, sizeof(value));
    return value;
}

static uint32_t load_u32(const unsigned char *base, size_t offset)
{
    uint32_t value;

    memcpy(&value, base + offset, sizeof(value));
    return value;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        return -errno;
    }
    return 0;
}

static jlong JNICALL alloc_pd(JNIEnv *env, jobject self, jlong context)
{
    struct ibv_pd *pd;

    (void)self;
    pd = ibv_alloc_pd(disni_ptr(context));
    if (pd == NULL) {
        disni_throw_errno(env, "ibv_alloc_pd", errno);
        return -1;
    }
    return disni_handle(pd);
}

static jlong JNICALL create_comp_channel(JNIEnv *env, jobject self, jlong context)
{
    struct ibv_comp_channel *channel;
    int rc;

    (void)self;
    channel = ibv_create_comp_channel(disni_ptr(context));
    if (channel == NULL) {
        disni_throw_errno(env, "ibv_create_comp_channel", errno);
        return -1;
    }
    /* Non-blocking so a thread that loses a race for an event goes back to poll(). */
    rc = set_nonblocking(channel->fd);
    if (rc != 0) {
        ibv_destroy_comp_channel(channel);
        disni_throw_errno(env, "ibv_create_comp_channel: fcntl", rc);
        return -1;
    }
    return disni_handle(channel);
}

static jlong JNICALL create_cq(JNIEnv *env, jobject self, jlong context, jlong channel, jint entries,
                               jint comp_vector)
{
    struct ibv_cq *cq;

    (void)self;
    if (entries <= 0) {
        disni_throw(env, "ibv_create_cq: the number of entries must be positive");
        return -1;
    }
    cq = ibv_create_cq(disni_ptr(context), entries, NULL, disni_ptr(channel), comp_vector);
    if (cq == NULL) {
        disni_throw_errno(env, "ibv_create_cq", errno);
        return -1;
    }
    return disni_handle(cq);
}

/*
 * DiSNI 2.1 always passes a null attribute pointer: with rdma_cm the connection manager
 * drives every state transition. The call then reports the QP's current state.
 */
static jint JNICALL modify_qp(JNIEnv *env, jobject self, jlong qp_handle, jlong attr)
{
    struct ibv_qp_attr current;
    struct ibv_qp_init_attr init;
    int rc;

    (void)self;
    if (attr != 0) {
        disni_throw(env, "ibv_modify_qp: explicit QP attributes are not supported; rdma_cm manages QP state");
        return -EINVAL;
    }
    rc = ibv_query_qp(disni_ptr(qp_handle), &current, IBV_QP_STATE, &init);
    return rc == 0 ? (jint)current.qp_state : -rc;
}

static jlong JNICALL reg_mr(JNIEnv *env, jobject self, jlong pd, jlong address, jint length, jint access,
                            jlong lkey_out, jlong rkey_out, jlong handle_out)
{
    struct ibv_mr *mr;
    uint32_t values[3];

    (void)self;
    if (length < 0) {
        disni_throw(env, "ibv_reg_mr: negative length");
        return -1;
    }
    mr = ibv_reg_mr(disni_ptr(pd), disni_ptr(address), (size_t)length, (unsigned int)access);
    if (mr == NULL) {
        disni_throw_errno(env, "ibv_reg_mr", errno);
        return -1;
    }
    values[0] = mr->lkey;
    values[1] = mr->rkey;
    values[2] = mr->handle;
    memcpy(disni_ptr(lkey_out), &values[0], sizeof(values[0]));
    memcpy(disni_ptr(rkey_out), &values[1], sizeof(values[1]));
    memcpy(disni_ptr(handle_out), &values[2], sizeof(values[2]));
    return disni_handle(mr);
}

/* Returns the RC transport's on-demand-paging capabilities, or -1 without ODP support. */
static jint JNICALL query_odp_support(JNIEnv *env, jobject self, jlong context)
{
    struct ibv_device_attr_ex attr;

    (void)env;
    (void)self;
    memset(&attr, 0, sizeof(attr));
    if (ibv_query_device_ex(disni_ptr(context), NULL, &attr) != 0) {
        return -1;
    }
    if ((attr.odp_caps.general_caps & IBV_ODP_SUPPORT) == 0) {
        return -1;
    }
    return (jint)attr.odp_caps.per_transport_caps.rc_odp_caps;
}

/* Prefetches an ODP region's pages: the upstream form of the old experimental verb. */
static jint JNICALL prefetch_mr(JNIEnv *env, jobject self, jlong mr_handle, jlong address, jint length)
{
    struct ibv_mr *mr = disni_ptr(mr_handle);
    struct ibv_sge sge;
    int rc;

    (void)self;
    if (length < 0) {
        disni_throw(env, "ibv_advise_mr: negative length");
        return -EINVAL;
    }
    sge.addr = (uint64_t)address;
    sge.length = (uint32_t)length;
    sge.lkey = mr->lkey;
    rc = ibv_advise_mr(mr->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
    return rc == 0 ? 0 : -rc;
}

static void JNICALL dereg_mr(JNIEnv *env, jobject self, jlong mr)
{
    int rc;

    (void)self;
    rc = ibv_dereg_mr(disni_ptr(mr));
    if (rc != 0) {
        disni_throw_errno(env, "ibv_dereg_mr", rc);
    }
}

/*
 * Posts the chain of send requests Java serialized at wr_list (DISNI_SEND_WR_* layout,
 * linked through absolute next pointers). Each request is copied into a zeroed
 * struct ibv_send_wr so fields Java does not write (XRC, memory-window binding, TSO) are
 * never read from stale memory. Requests are posted in batches in list order; on failure
 * the requests before the failing one stay posted, as with one ibv_post_send call.
 */
static void JNICALL post_send(JNIEnv *env, jobject self, jlong qp_handle, jlong wr_list)
{
    struct ibv_qp *qp = disni_ptr(qp_handle);
    const unsigned char *java_wr = disni_ptr(wr_list);
    struct ibv_send_wr batch[DISNI_SEND_BATCH];
    int chained = 0;

    (void)self;
    while (java_wr != NULL) {
        struct ibv_send_wr *bad = NULL;
        int count = 0;
        int rc;

        while (java_wr != NULL && count < DISNI_SEND_BATCH) {
            struct ibv_send_wr *wr = &batch[count];
            int32_t num_sge = (int32_t)load_u32(java_wr, DISNI_SEND_WR_NUMSGE);
            uint64_t sg_list = load_u64(java_wr, DISNI_SEND_WR_SGLIST);

            if (++chained > DISNI_MAX_CHAIN) {
                disni_throw(env, "ibv_post_send: work request list does not end (cyclic next pointers?)");
                return;
            }
            if (num_sge < 0 || (num_sge > 0 && sg_list == 0)) {
                disni_throw(env, "ibv_post_send: work request has an invalid scatter/gather list");
                return;
            }
            memset(wr, 0, sizeof(*wr));
            wr->wr_id = load_u64(java_wr, DISNI_SEND_WR_WRID);
            wr->sg_list = (struct ibv_sge *)(uintptr_t)sg_list;
            wr->num_sge = num_sge;
            wr->opcode = (enum ibv_wr_opcode)load_u32(java_wr, DISNI_SEND_WR_OPCODE);
            wr->send_flags = load_u32(java_wr, DISNI_SEND_WR_FLAGS);
            /* Immediate data travels as the raw 32 bits Java wrote; both ends are DiSNI. */
            wr->imm_data = load_u32(java_wr, DISNI_SEND_WR_IMM);
            wr->wr.rdma.remote_addr = load_u64(java_wr, DISNI_SEND_WR_REMOTE_ADDR);
            wr->wr.rdma.rkey = load_u32(java_wr, DISNI_SEND_WR_RKEY);
            if (count > 0) {
                batch[count - 1].next = wr;
            }
            count++;
            java_wr = (const unsigned char *)(uintptr_t)load_u64(java_wr, DISNI_SEND_WR_NEXT);
        }
        rc = ibv_post_send(qp, batch, &bad);
        if (rc != 0) {
            char what[96];
            long index = bad != NULL ? (long)(bad - batch) + (chained - count) : -1L;

            snprintf(what, sizeof(what), "ibv_post_send (work request %ld of the list)", index);
            disni_throw_errno(env, what, rc);
            return;
        }
    }
}

/* Receive requests are in libibverbs' own layout (see the assertions above). */
static void JNICALL post_recv(JNIEnv *env, jobject self, jlong qp, jlong wr_list)
{
    struct ibv_recv_wr *bad = NULL;
    int rc;

    (void)self;
    rc = ibv_post_recv(disni_ptr(qp), disni_ptr(wr_list), &bad);
    if (rc != 0) {
        disni_throw_errno(env, "ibv_post_recv", rc);
    }
}

static jint JNICALL get_cq_event(JNIEnv *env, jobject self, jlong channel_handle, jint timeout_ms)
{
    struct ibv_comp_channel *channel = disni_ptr(channel_handle);
    long long deadline = disni_deadline(timeout_ms);
    struct ibv_cq *cq;
    void *context;

    (void)env;
    (void)self;
    for (;;) {
        int ready = disni_wait_readable(channel->fd, disni_time_left(deadline));

        if (ready <= 0) {
            return ready == 0 ? -ETIMEDOUT : ready;
        }
        if (ibv_get_cq_event(channel, &cq, &context) == 0) {
            return 0;
        }
        if (errno != EAGAIN && errno != EINTR) {
            return -errno;
        }
        /* Lost a race for the event to another thread: wait again within the deadline. */
    }
}

static jint JNICALL poll_cq(JNIEnv *env, jobject self, jlong cq, jint entries, jlong wc_array)
{
    (void)env;
    (void)self;
    if (entries <= 0) {
        return entries == 0 ? 0 : -EINVAL;
    }
    /* ibv_poll_cq returns the count, or a negative value on failure. */
    return ibv_poll_cq(disni_ptr(cq), entries, disni_ptr(wc_array));
}

static jint JNICALL req_notify_cq(JNIEnv *env, jobject self, jlong cq, jint solicited_only)
{
    int rc;

    (void)env;
    (void)self;
    rc = ibv_req_notify_cq(disni_ptr(cq), solicited_only);
    return rc == 0 ? 0 : -rc;
}

static jint JNICALL ack_cq_event(JNIEnv *env, jobject self, jlong cq, jint events)
{
    (void)env;
    (void)self;
    if (events <= 0) {
        return events == 0 ? 0 : -EINVAL;
    }
    ibv_ack_cq_events(disni_ptr(cq), (unsigned int)events);
    return 0;
}

static jint JNICALL destroy_comp_channel(JNIEnv *env, jobject self, jlong channel)
{
    int rc;

    (void)env;
    (void)self;
    rc = ibv_destroy_comp_channel(disni_ptr(channel));
    return rc == 0 ? 0 : -rc;
}

static jint JNICALL dealloc_pd(JNIEnv *env, jobject self, jlong pd)
{
    int rc;

    (void)env;
    (void)self;
    rc = ibv_dealloc_pd(disni_ptr(pd));
    return rc == 0 ? 0 : -rc;
}

static jint JNICALL destroy_cq(JNIEnv *env, jobject self, jlong cq)
{
    int rc;

    (void)env;
    (void)self;
    rc = ibv_destroy_cq(disni_ptr(cq));
    return rc == 0 ? 0 : -rc;
}

static jint JNICALL get_qp_num(JNIEnv *env, jobject self, jlong qp)
{
    (void)env;
    (void)self;
    return (jint)((struct ibv_qp *)disni_ptr(qp))->qp_num;
}

static jint JNICALL get_context_fd(JNIEnv *env, jobject self, jlong context)
{
    (void)env;
    (void)self;
    return ((struct ibv_context *)disni_ptr(context))->cmd_fd;
}

static jint JNICALL get_context_num_comp_vectors(JNIEnv *env, jobject self, jlong context)
{
    (void)env;
    (void)self;
    return ((struct ibv_context *)disni_ptr(context))->num_comp_vectors;
}

static jint JNICALL get_pd_handle(JNIEnv *env, jobject self, jlong pd)
{
    (void)env;
    (void)self;
    return (jint)((struct ibv_pd *)disni_ptr(pd))->handle;
}

static jint JNICALL sockaddr_in_size(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return DISNI_SOCKADDR_SIZE;
}

static jint JNICALL recv_wr_size(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return (jint)sizeof(struct ibv_recv_wr);
}

static jint JNICALL send_wr_size(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return DISNI_SEND_WR_SIZE;
}

static jint JNICALL sge_size(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return (jint)sizeof(struct ibv_sge);
}

static jint JNICALL wc_size(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return (jint)sizeof(struct ibv_wc);
}

static jint JNICALL remote_address_offset(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return DISNI_SEND_WR_REMOTE_ADDR;
}

static jint JNICALL rkey_offset(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return DISNI_SEND_WR_RKEY;
}

static jint JNICALL version(JNIEnv *env, jobject self)
{
    (void)env;
    (void)self;
    return DISNI_JNI_VERSION;
}

/*
 * rdmanio's own call (VerbsNatives.dupCompChannel0): makes target_fd, a descriptor the
 * caller owns (the read end of a JDK pipe), refer to the completion channel's open file,
 * so that a JDK selector can wait on the channel. The old file behind target_fd is closed
 * by dup3 atomically; the duplicate is closed by its owner, the channel by
 * ibv_destroy_comp_channel, independently of each other.
 */
static jint JNICALL dup_comp_channel(JNIEnv *env, jclass clazz, jlong channel_handle, jint target_fd)
{
    struct ibv_comp_channel *channel = disni_ptr(channel_handle);

    (void)env;
    (void)clazz;
    if (channel == NULL || target_fd < 0 || target_fd == channel->fd) {
        return -EINVAL;
    }
    if (dup3(channel->fd, target_fd, O_CLOEXEC) < 0) {
        return -errno;
    }
    return 0;
}

const JNINativeMethod disni_rdmanio_methods[] = {
    {"dupCompChannel0", "(JI)I", (void *)dup_comp_channel},
};
const int disni_rdmanio_method_count = (int)(sizeof(disni_rdmanio_methods) / sizeof(disni_rdmanio_methods[0]));

const JNINativeMethod disni_verbs_methods[] = {
    {"_allocPd", "(J)J", (void *)alloc_pd},
    {"_createCompChannel", "(J)J", (void *)create_comp_channel},
    {"_createCQ", "(JJII)J", (void *)create_cq},
    {"_modifyQP", "(JJ)I", (void *)modify_qp},
    {"_regMr", "(JJIIJJJ)J", (void *)reg_mr},
    {"_queryOdpSupport", "(J)I", (void *)query_odp_support},
    {"_expPrefetchMr", "(JJI)I", (void *)prefetch_mr},
    {"_deregMr", "(J)V", (void *)dereg_mr},
    {"_postSend", "(JJ)V", (void *)post_send},
    {"_postRecv", "(JJ)V", (void *)post_recv},
    {"_getCqEvent", "(JI)I", (void *)get_cq_event},
    {"_pollCQ", "(JIJ)I", (void *)poll_cq},
    {"_reqNotifyCQ", "(JI)I", (void *)req_notify_cq},
    {"_ackCqEvent", "(JI)I", (void *)ack_cq_event},
    {"_destroyCompChannel", "(J)I", (void *)destroy_comp_channel},
    {"_deallocPd", "(J)I", (void *)dealloc_pd},
    {"_destroyCQ", "(J)I", (void *)destroy_cq},
    {"_getQpNum", "(J)I", (void *)get_qp_num},
    {"_getContextFd", "(J)I", (void *)get_context_fd},
    {"_getContextNumCompVectors", "(J)I", (void *)get_context_num_comp_vectors},
    {"_getPdHandle", "(J)I", (void *)get_pd_handle},
    {"_getSockAddrInSize", "()I", (void *)sockaddr_in_size},
    {"_getIbvRecvWRSize", "()I", (void *)recv_wr_size},
    {"_getIbvSendWRSize", "()I", (void *)send_wr_size},
    {"_getIbvSgeSize", "()I", (void *)sge_size},
    {"_getIbvWCSize", "()I", (void *)wc_size},
    {"_getRemoteAddressOffset", "()I", (void *)remote_address_offset},
    {"_getRKeyOffset", "()I", (void *)rkey_offset},
    {"_getVersion", "()I", (void *)version},
};
const int disni_verbs_method_count = (int)(sizeof(disni_verbs_methods) / sizeof(disni_verbs_methods[0]));
