// Shared between the addon's Node-API face (batch_udp.c) and its system-call half (mmsg.c).
#ifndef GR_BATCH_SOCK_H
#define GR_BATCH_SOCK_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* recvmmsg, sendmmsg */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#define MAX_BATCH 1024
#define RX_META 8 /* len, flags, family, port, addr[4] */
#define TX_META 10 /* slot, offset, len, header, family, port, addr[4] */
#define RX_ROUNDS 8 /* batches per readiness callback before yielding to other handles (default) */
#define FLAG_TRUNCATED 1u
#define FLAG_BIG 2u /* longer than a slot: the whole datagram is in its big slot */
/* UDP GRO (create's gro): the kernel joined several datagrams of one peer into one; each but the
 * last is as long as the segment size carried in the flags word's upper 16 bits. */
#define FLAG_SEGMENTS 4u
#define NO_HEADER 0xffffffffu
#define GSO_MAX_SEG 1400 /* segment (datagram) size that fits a 1500-byte MTU with IPv6 headers */

/* Indices of the stats Float64Array (mirrored in native/index.ts). */
enum { S_RX, S_RX_BATCHES, S_RX_TRUNC, S_RX_ERR, S_TX, S_TX_BLOCKED, S_TX_ERR, S_TX_CALLS, S_ERRNO, S_TX_GSO, S_REFUSED, S_RX_GRO, S_COUNT };
/* S_REFUSED: ECONNREFUSED seen on the socket (the connected peer's port is closed), any call.
 * S_RX_GRO: datagrams received joined by UDP GRO (each holds several). */

/* First word of every sock_t: the handle is an External (see unwrap in batch_udp.c), and this
 * tells ours from any other addon's. */
#define SOCK_MAGIC 0x47526275u /* "GRbu" */

typedef struct sock_s {
  uint32_t magic;
  uv_poll_t poll;
  napi_env env;
  int fd;
  int family;
  int closing;
  int handle_closed;
  int finalized;
  int polling;
  int resumable; /* start(..., true): the handler may stop early and name where to go on */
  uint32_t rx_rounds; /* batches per readiness callback (start's 4th argument, else RX_ROUNDS) */
  uint32_t rx_dirty;  /* receive headers to set up again before the next recvmmsg (those it used) */
  uint32_t batch;
  uint32_t slot_bytes;
  uint32_t big_bytes;
  uint32_t hdr_bytes;
  uint8_t **slots;
  napi_ref *slot_refs;
  uint8_t **bigs; /* big slot i: its first slot_bytes are copied from slot i on a long datagram */
  napi_ref *big_refs;
  uint8_t *is_big;
  uint32_t *rx_meta;
  uint8_t *hdr;
  uint32_t *tx_meta;
  double *stats;
  napi_ref refs[6]; /* rx arena, big arena, rx meta, tx headers, tx meta, stats: kept alive */
  napi_ref self_ref;
  napi_ref cb_ref;
  napi_async_context actx;
  struct mmsghdr *rmsg;
  struct iovec *riov;
  struct sockaddr_storage *raddr;
  struct mmsghdr *tmsg;
  struct iovec *tiov;
  struct sockaddr_storage *taddr;
  /* UDP GRO: the socket asked for joined datagrams (UDP_GRO); rctl holds a control buffer per slot. */
  int gro;
  uint8_t *rctl;
  /* UDP GSO trains (gso.c): several same-length datagrams to one peer as one send. */
  int gso;
  uint32_t gso_max_seg; /* longest datagram put in a train: lowered when a route's MTU refuses one */
  struct mmsghdr *gmsg;
  struct iovec *giov;
  uint8_t *gctl;
  uint16_t *gcount;
  uint32_t *gfirst;
} sock_t;

int fill_addr(struct sockaddr_storage *ss, int sock_family, uint32_t fam, uint32_t port, const uint32_t *a);
int parse_addr(const char *host, uint32_t port, int family, struct sockaddr_storage *ss);
/* recvmmsg into the slots, metadata into rx_meta; returns the count (0: nothing, or counted error). */
uint32_t recv_batch(sock_t *s);
/* Sends t's first n txMeta rows from r's slots with sendmmsg; returns how many went (rest counted). */
uint32_t flush_batch(sock_t *t, sock_t *r, uint32_t n);
/* Sends t's first n txMeta rows from arena[offset, offset+len) (the slot word is ignored). */
uint32_t flush_arena(sock_t *t, uint8_t *base, size_t cap, uint32_t n);
/* Groups t->tmsg[0..built) into GSO trains in t->gmsg; returns the number of trains. */
uint32_t gso_trains(sock_t *t, uint32_t built);
/* Bytes of one message (the sum of its iovecs). */
size_t msg_bytes(const struct msghdr *h);
/* One datagram from caller memory; 1 sent, 0 not (counted). */
uint32_t send_one(sock_t *s, const uint8_t *data, uint32_t len, uint32_t fam, uint32_t port, const uint32_t *addr);

#endif
