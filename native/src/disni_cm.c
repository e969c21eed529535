/*
 * The connection-manager half of NativeDispatcher: event channels, CM ids, address and
 * route resolution, connect/accept/disconnect and the QP a CM id owns (librdmacm).
 *
 * CM events are acknowledged inside _getCmEvent, right after the two ids and the event
 * type are copied out: DiSNI's _ackCmEvent receives only the event type, never the event,
 * so it cannot be the one that releases it. Acknowledging early also keeps
 * rdma_destroy_id from waiting on an event Java has already consumed.
 */
#include "disni.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* Upper bounds for what a connection asks of the device; rdma_cm lowers them further
 * to what the peer accepts. */
#define DISNI_MAX_RD_ATOMIC 16
#define DISNI_MAX_SGE 8

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        return -errno;
    }
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long disni_deadline(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

int disni_time_left(long long deadline_ms)
{
    long long left;

    if (deadline_ms < 0) {
        return -1;
    }
    left = deadline_ms - now_ms();
    return left < 0 ? 0 : (int)left;
}

int disni_wait_readable(int fd, int timeout_ms)
{
    long long deadline = disni_deadline(timeout_ms);

    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN, .revents = 0};
        int n;

        n = poll(&pfd, 1, disni_time_left(deadline));
        if (n > 0) {
            return 1;
        }
        if (n == 0) {
            return 0;
        }
        if (errno != EINTR) {
            return -errno;
        }
    }
}

/* Copies a socket address Java serialized (SockAddrIn) into storage; returns its length or 0. */
static socklen_t read_sockaddr(jlong address, struct sockaddr_storage *out)
{
    const unsigned char *raw = disni_ptr(address);
    sa_family_t family;

    memset(out, 0, sizeof(*out));
    if (raw == NULL) {
        return 0;
    }
    memcpy(&family, raw, sizeof(family));
    if (family == AF_INET) {
        memcpy(out, raw, sizeof(struct sockaddr_in));
        return sizeof(struct sockaddr_in);
    }
    if (family == AF_INET6) {
        memcpy(out, raw, sizeof(struct sockaddr_in6));
        return sizeof(struct sockaddr_in6);
    }
    return 0;
}

static int write_sockaddr(const struct sockaddr *address, jlong target)
{
    size_t length;

    if (address == NULL) {
        return -ENOTCONN;
    }
    if (target == 0) {
        return -EINVAL;
    }
    if (address->sa_family == AF_INET) {
        length = sizeof(struct sockaddr_in);
    } else if (address->sa_family == AF_INET6) {
        length = sizeof(struct sockaddr_in6);
    } else {
        return -EAFNOSUPPORT;
    }
    memset(disni_ptr(target), 0, DISNI_SOCKADDR_SIZE);
    memcpy(disni_ptr(target), address, length);
    return 0;
}

static int bounded(int value, int limit)
{
    return value < limit ? value : limit;
}

/* Fills the RDMA read/atomic depths a connection offers from what the device supports. */
static int fill_conn_param(struct rdma_cm_id *id, struct rdma_conn_param *param, int retry, int rnr_retry)
{
    struct ibv_device_attr attr;
    int rc;

    if (id->verbs == NULL) {
        return -ENODEV;
    }
    rc = ibv_query_device(id->verbs, &attr);
    if (rc != 0) {
        return -rc;
    }
    param->responder_resources = (uint8_t)bounded(attr.max_qp_rd_atom, DISNI_MAX_RD_ATOMIC);
    param->initiator_depth = (uint8_t)bounded(attr.max_qp_init_rd_atom, DISNI_MAX_RD_ATOMIC);
    param->flow_control = 1;
    /* Both retry counters are 3-bit fields on the wire; 7 means "infinite" for rnr_retry. */
    param->retry_count = (uint8_t)bounded(retry < 0 ? 0 : retry, 7);
    param->rnr_retry_count = (uint8_t)bounded(rnr_retry < 0 ? 0 : rnr_retry, 7);
    return 0;
}

static jlong JNICALL create_event_channel(JNIEnv *env, jobject self)
{
    struct rdma_event_channel *channel;
    int rc;

    (void)self;
    channel = rdma_create_event_channel();
    if (channel == NULL) {
        disni_throw_errno(env, "rdma_create_event_channel", errno);
        return -1;
    }
    /* Non-blocking so a thread that loses a race for an event goes back to poll(). */
    rc = set_nonblocking(channel->fd);
    if (rc != 0) {
        rdma_destroy_event_channel(channel);
        disni_throw_errno(env, "rdma_create_event_channel: fcntl", rc);
        return -1;
    }
    return disni_handle(channel);
}

static jlong JNICALL create_id(JNIEnv *env, jobject self, jlong channel, jshort port_space)
{
    struct rdma_cm_id *id = NULL;

    (void)self;
    if (rdma_create_id(disni_ptr(channel), &id, NULL, (enum rdma_port_space)(uint16_t)port_space) != 0) {
        disni_throw_errno(env, "rdma_create_id", errno);
        return -1;
    }
    return disni_handle(id);
}

static jlong JNICALL create_qp(JNIEnv *env, jobject self, jlong id_handle, jlong pd, jlong send_cq,
                               jlong recv_cq, jint qp_type, jint max_send_wr, jint max_recv_wr,
                               jint max_inline)
{
    struct rdma_cm_id *id = disni_ptr(id_handle);
    struct ibv_qp_init_attr attr;
    struct ibv_device_attr device;
    int rc;

    (void)self;
    if (id->verbs == NULL) {
        disni_throw(env, "rdma_create_qp: the CM id is not bound to a device yet (resolve or bind it first)");
        return -1;
    }
    if (max_send_wr < 0 || max_recv_wr < 0 || max_inline < 0) {
        disni_throw(env, "rdma_create_qp: negative queue capacity");
        return -1;
    }
    rc = ibv_query_device(id->verbs, &device);
    if (rc != 0) {
        disni_throw_errno(env, "rdma_create_qp: ibv_query_device", rc);
        return -1;
    }
    memset(&attr, 0, sizeof(attr));
    attr.send_cq = disni_ptr(send_cq);
    attr.recv_cq = disni_ptr(recv_cq);
    attr.qp_type = (enum ibv_qp_type)qp_type;
    attr.cap.max_send_wr = (uint32_t)max_send_wr;
    attr.cap.max_recv_wr = (uint32_t)max_recv_wr;
    attr.cap.max_inline_data = (uint32_t)max_inline;
    /* DiSNI does not pass SGE counts; allow a few so multi-segment requests work. */
    attr.cap.max_send_sge = (uint32_t)bounded(device.max_sge, DISNI_MAX_SGE);
    attr.cap.max_recv_sge = (uint32_t)bounded(device.max_sge, DISNI_MAX_SGE);
    attr.sq_sig_all = 0;
    if (rdma_create_qp(id, disni_ptr(pd), &attr) != 0) {
        disni_throw_errno(env, "rdma_create_qp", errno);
        return -1;
    }
    return disni_handle(id->qp);
}

static void JNICALL bind_addr(JNIEnv *env, jobject self, jlong id, jlong address)
{
    struct sockaddr_storage storage;

    (void)self;
    if (read_sockaddr(address, &storage) == 0) {
        disni_throw(env, "rdma_bind_addr: missing or unsupported address (IPv4 and IPv6 only)");
        return;
    }
    if (rdma_bind_addr(disni_ptr(id), (struct sockaddr *)&storage) != 0) {
        disni_throw_errno(env, "rdma_bind_addr", errno);
    }
}

static void JNICALL listen_id(JNIEnv *env, jobject self, jlong id, jint backlog)
{
    (void)self;
    if (rdma_listen(disni_ptr(id), backlog) != 0) {
        disni_throw_errno(env, "rdma_listen", errno);
    }
}

static void JNICALL resolve_addr(JNIEnv *env, jobject self, jlong id, jlong source, jlong destination,
                                 jint timeout_ms)
{
    struct sockaddr_storage src;
    struct sockaddr_storage dst;
    struct sockaddr *src_ptr = NULL;

    (void)self;
    if (source != 0) {
        if (read_sockaddr(source, &src) == 0) {
            disni_throw(env, "rdma_resolve_addr: unsupported source address family");
            return;
        }
        src_ptr = (struct sockaddr *)&src;
    }
    if (destination == 0 || read_sockaddr(destination, &dst) == 0) {
        disni_throw(env, "rdma_resolve_addr: missing or unsupported destination address");
        return;
    }
    if (rdma_resolve_addr(disni_ptr(id), src_ptr, (struct sockaddr *)&dst, timeout_ms) != 0) {
        disni_throw_errno(env, "rdma_resolve_addr", errno);
    }
}

static void JNICALL resolve_route(JNIEnv *env, jobject self, jlong id, jint timeout_ms)
{
    (void)self;
    if (rdma_resolve_route(disni_ptr(id), timeout_ms) != 0) {
        disni_throw_errno(env, "rdma_resolve_route", errno);
    }
}

static jint JNICALL get_cm_event(JNIEnv *env, jobject self, jlong channel_handle, jlong listen_id_out,
                                 jlong id_out, jint timeout_ms)
{
    struct rdma_event_channel *channel = disni_ptr(channel_handle);
    long long deadline = disni_deadline(timeout_ms);
    struct rdma_cm_event *event;
    jlong ids[2];
    int type;

    (void)env;
    (void)self;
    for (;;) {
        int ready = disni_wait_readable(channel->fd, disni_time_left(deadline));

        if (ready <= 0) {
            return ready == 0 ? -ETIMEDOUT : ready;
        }
        if (rdma_get_cm_event(channel, &event) == 0) {
            break;
        }
        if (errno != EAGAIN && errno != EINTR) {
            return -errno;
        }
        /* Another thread took the event; wait for the next one within the same deadline. */
    }
    ids[0] = disni_handle(event->listen_id);
    ids[1] = disni_handle(event->id);
    type = (int)event->event;
    memcpy(disni_ptr(listen_id_out), &ids[0], sizeof(ids[0]));
    memcpy(disni_ptr(id_out), &ids[1], sizeof(ids[1]));
    rdma_ack_cm_event(event);
    return type;
}

static void JNICALL connect_id(JNIEnv *env, jobject self, jlong id_handle, jint retry, jint rnr_retry,
                               jlong private_data, jbyte private_data_len)
{
    struct rdma_cm_id *id = disni_ptr(id_handle);
    struct rdma_conn_param param;
    int rc;

    (void)self;
    memset(&param, 0, sizeof(param));
    rc = fill_conn_param(id, &param, retry, rnr_retry);
    if (rc != 0) {
        disni_throw_errno(env, "rdma_connect", rc);
        return;
    }
    if (private_data != 0 && private_data_len != 0) {
        param.private_data = disni_ptr(private_data);
        param.private_data_len = (uint8_t)private_data_len;
    }
    if (rdma_connect(id, &param) != 0) {
        disni_throw_errno(env, "rdma_connect", errno);
    }
}

static void JNICALL accept_id(JNIEnv *env, jobject self, jlong id_handle, jint retry, jint rnr_retry)
{
    struct rdma_cm_id *id = disni_ptr(id_handle);
    struct rdma_conn_param param;
    int rc;

    (void)self;
    memset(&param, 0, sizeof(param));
    rc = fill_conn_param(id, &param, retry, rnr_retry);
    if (rc != 0) {
        disni_throw_errno(env, "rdma_accept", rc);
        return;
    }
    if (rdma_accept(id, &param) != 0) {
        disni_throw_errno(env, "rdma_accept", errno);
    }
}

static jint JNICALL ack_cm_event(JNIEnv *env, jobject self, jint event_type)
{
    (void)env;
    (void)self;
    (void)event_type;
    return 0; /* already acknowledged in get_cm_event */
}

static jint JNICALL disconnect_id(JNIEnv *env, jobject self, jlong id)
{
    (void)env;
    (void)self;
    return rdma_disconnect(disni_ptr(id)) == 0 ? 0 : -errno;
}

static jint JNICALL destroy_event_channel(JNIEnv *env, jobject self, jlong channel)
{
    (void)env;
    (void)self;
    rdma_destroy_event_channel(disni_ptr(channel));
    return 0;
}

static jint JNICALL destroy_cm_id(JNIEnv *env, jobject self, jlong id)
{
    (void)env;
    (void)self;
    return rdma_destroy_id(disni_ptr(id)) == 0 ? 0 : -errno;
}

static jint JNICALL destroy_qp(JNIEnv *env, jobject self, jlong id)
{
    (void)env;
    (void)self;
    rdma_destroy_qp(disni_ptr(id));
    return 0;
}

static jint JNICALL get_src_addr(JNIEnv *env, jobject self, jlong id, jlong target)
{
    (void)env;
    (void)self;
    return write_sockaddr(rdma_get_local_addr(disni_ptr(id)), target);
}

static jint JNICALL get_dst_addr(JNIEnv *env, jobject self, jlong id, jlong target)
{
    (void)env;
    (void)self;
    return write_sockaddr(rdma_get_peer_addr(disni_ptr(id)), target);
}

static jint JNICALL destroy_ep(JNIEnv *env, jobject self, jlong id)
{
    (void)env;
    (void)self;
    rdma_destroy_ep(disni_ptr(id));
    return 0;
}

static jlong JNICALL get_context(JNIEnv *env, jobject self, jlong id_handle)
{
    struct rdma_cm_id *id = disni_ptr(id_handle);

    (void)self;
    if (id->verbs == NULL) {
        disni_throw(env, "CM id has no device yet: bind it to a local RDMA address or resolve a peer first");
        return -1;
    }
    return disni_handle(id->verbs);
}

const JNINativeMethod disni_cm_methods[] = {
    {"_createEventChannel", "()J", (void *)create_event_channel},
    {"_createId", "(JS)J", (void *)create_id},
    {"_createQP", "(JJJJIIII)J", (void *)create_qp},
    {"_bindAddr", "(JJ)V", (void *)bind_addr},
    {"_listen", "(JI)V", (void *)listen_id},
    {"_resolveAddr", "(JJJI)V", (void *)resolve_addr},
    {"_resolveRoute", "(JI)V", (void *)resolve_route},
    {"_getCmEvent", "(JJJI)I", (void *)get_cm_event},
    {"_connect", "(JIIJB)V", (void *)connect_id},
    {"_accept", "(JII)V", (void *)accept_id},
    {"_ackCmEvent", "(I)I", (void *)ack_cm_event},
    {"_disconnect", "(J)I", (void *)disconnect_id},
    {"_destroyEventChannel", "(J)I", (void *)destroy_event_channel},
    {"_destroyCmId", "(J)I", (void *)destroy_cm_id},
    {"_destroyQP", "(J)I", (void *)destroy_qp},
    {"_getSrcAddr", "(JJ)I", (void *)get_src_addr},
    {"_getDstAddr", "(JJ)I", (void *)get_dst_addr},
    {"_destroyEp", "(J)I", (void *)destroy_ep},
    {"_getContext", "(J)J", (void *)get_context},
};
const int disni_cm_method_count = (int)(sizeof(disni_cm_methods) / sizeof(disni_cm_methods[0]));
