// The system-call half of the batched UDP addon: recvmmsg into preallocated slots (long datagrams
// continue into big slots), sendmmsg from rows describing slot, offset, length, header and
// destination. Data-path errors are counted in the handle's stats, never raised.
#include "sock.h"
#include <netinet/udp.h>

#define GRO_CTL CMSG_SPACE(sizeof(int))

int fill_addr(struct sockaddr_storage *ss, int sock_family, uint32_t fam, uint32_t port,
                     const uint32_t *a) {
  memset(ss, 0, sizeof *ss);
  if (fam == 4 && sock_family == AF_INET) {
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    in->sin_addr.s_addr = htonl(a[0]);
    return sizeof *in;
  }
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons((uint16_t)port);
  if (fam == 4) { /* IPv4 client of a dual-stack socket: ::ffff:a.b.c.d */
    in6->sin6_addr.s6_addr[10] = 0xff;
    in6->sin6_addr.s6_addr[11] = 0xff;
    uint32_t be = htonl(a[0]);
    memcpy(&in6->sin6_addr.s6_addr[12], &be, 4);
  } else {
    memcpy(&in6->sin6_addr, a, 16);
  }
  return sizeof *in6;
}

int parse_addr(const char *host, uint32_t port, int family, struct sockaddr_storage *ss) {
  memset(ss, 0, sizeof *ss);
  if (family == AF_INET) {
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &in->sin_addr) == 1) return sizeof *in;
    return 0;
  }
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons((uint16_t)port);
  if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) return sizeof *in6;
  struct in_addr v4; /* an IPv4 literal on an IPv6 socket: mapped */
  if (inet_pton(AF_INET, host, &v4) == 1) {
    in6->sin6_addr.s6_addr[10] = 0xff;
    in6->sin6_addr.s6_addr[11] = 0xff;
    memcpy(&in6->sin6_addr.s6_addr[12], &v4, 4);
    return sizeof *in6;
  }
  return 0;
}

uint32_t recv_batch(sock_t *s) {
  uint32_t n = s->batch;
  /* A long datagram goes on past the slot into its big slot (memory touched only when used).
   * Only the headers the last call filled are set up again: the kernel writes back into those
   * alone (name and control lengths, flags), and a wake-up at moderate rates brings a few
   * datagrams, where setting up all 64 touched a hundred cold cache lines for nothing. */
  int two = s->big_bytes > s->slot_bytes;
  uint32_t dirty = s->rx_dirty < n ? s->rx_dirty : n;
  for (uint32_t i = 0; i < dirty; i++) {
    struct iovec *iov = &s->riov[2 * (size_t)i];
    iov[0].iov_base = s->slots[i];
    iov[0].iov_len = s->slot_bytes;
    if (two) {
      iov[1].iov_base = s->bigs[i] + s->slot_bytes;
      iov[1].iov_len = s->big_bytes - s->slot_bytes;
    }
    struct msghdr *h = &s->rmsg[i].msg_hdr;
    h->msg_name = &s->raddr[i];
    h->msg_namelen = sizeof s->raddr[i];
    h->msg_iov = iov;
    h->msg_iovlen = two ? 2 : 1;
    h->msg_control = s->gro ? s->rctl + (size_t)i * GRO_CTL : NULL;
    h->msg_controllen = s->gro ? GRO_CTL : 0;
    h->msg_flags = 0;
  }
  int r;
  do r = recvmmsg(s->fd, s->rmsg, n, MSG_DONTWAIT, NULL);
  while (r < 0 && errno == EINTR);
  /* The datagrams it filled, and the one after (a failed receive there writes nothing back, but
   * this does not rely on it). */
  s->rx_dirty = r < 0 ? 1 : (uint32_t)r + 1;
  if (r < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      s->stats[S_RX_ERR]++; /* e.g. ECONNREFUSED on a connected socket (ICMP): consumed, not fatal */
      s->stats[S_ERRNO] = errno;
      if (errno == ECONNREFUSED) s->stats[S_REFUSED]++;
    }
    return 0;
  }
  s->stats[S_RX] += r;
  s->stats[S_RX_BATCHES]++;
  for (int i = 0; i < r; i++) {
    uint32_t *m = &s->rx_meta[(size_t)i * RX_META];
    const struct msghdr *h = &s->rmsg[i].msg_hdr;
    m[0] = s->rmsg[i].msg_len;
    m[1] = 0;
    s->is_big[i] = 0;
    if (m[0] > s->slot_bytes) {
      memcpy(s->bigs[i], s->slots[i], s->slot_bytes);
      s->is_big[i] = 1;
      m[1] = FLAG_BIG;
    }
    if (h->msg_flags & MSG_TRUNC) {
      m[1] |= FLAG_TRUNCATED;
      s->stats[S_RX_TRUNC]++;
    }
    if (s->gro && h->msg_controllen > 0) {
      for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c != NULL; c = CMSG_NXTHDR((struct msghdr *)h, c)) {
        if (c->cmsg_level != SOL_UDP || c->cmsg_type != UDP_GRO) continue;
        int seg;
        memcpy(&seg, CMSG_DATA(c), sizeof seg);
        if (seg > 0 && seg < 65536 && (uint32_t)seg < m[0]) {
          m[1] |= FLAG_SEGMENTS | ((uint32_t)seg << 16);
          s->stats[S_RX_GRO]++;
        }
      }
    }
    const struct sockaddr_storage *ss = &s->raddr[i];
    if (ss->ss_family == AF_INET) {
      const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
      m[2] = 4;
      m[3] = ntohs(in->sin_port);
      m[4] = ntohl(in->sin_addr.s_addr);
    } else {
      const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
      m[3] = ntohs(in6->sin6_port);
      if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
        uint32_t be;
        memcpy(&be, &in6->sin6_addr.s6_addr[12], 4);
        m[2] = 4;
        m[4] = ntohl(be);
      } else {
        m[2] = 6;
        memcpy(&m[4], &in6->sin6_addr, 16); /* network byte order, read as bytes */
      }
    }
  }
  return (uint32_t)r;
}

/* sendmmsg until all went, the buffer is full or (GSO) the kernel refuses a train. counts: datagrams
 * per message (NULL: one each). Returns datagrams sent; *refused: index of a refused GSO train, or n,
 * and *why its errno. */
static uint32_t send_msgs(sock_t *t, struct mmsghdr *msgs, const uint16_t *counts, uint32_t n, uint32_t *refused,
                          int *why) {
  uint32_t sent = 0, at = 0;
  *refused = n;
  *why = 0;
  while (at < n && !t->closing) {
    int k = sendmmsg(t->fd, &msgs[at], n - at, MSG_DONTWAIT);
    t->stats[S_TX_CALLS]++;
    if (k > 0) {
      for (int i = 0; i < k; i++) {
        uint32_t c = counts ? counts[at + (uint32_t)i] : 1;
        sent += c;
        if (c > 1) t->stats[S_TX_GSO]++;
      }
      at += (uint32_t)k;
      continue;
    }
    int e = errno;
    if (e == EINTR) continue;
    t->stats[S_ERRNO] = e;
    if (e == ECONNREFUSED) t->stats[S_REFUSED]++;
    uint32_t c = counts ? counts[at] : 1;
    /* No GSO here (device, route or kernel), or a segment longer than the route's MTU allows
     * (EMSGSIZE on recent kernels, EINVAL on older ones) that a plain send fragments and delivers:
     * the caller resends plainly. */
    if (c > 1 && (e == EIO || e == EINVAL || e == EOPNOTSUPP || e == ENOPROTOOPT || e == EMSGSIZE)) {
      *refused = at;
      *why = e;
      break;
    }
    if (e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS) { /* kernel buffer full: the rest is lost */
      for (uint32_t i = at; i < n; i++) t->stats[S_TX_BLOCKED] += counts ? counts[i] : 1;
      break;
    }
    t->stats[S_TX_ERR] += c; /* this message (e.g. a pending ECONNREFUSED); go on with the rest */
    at++;
  }
  return sent;
}

/* One message of t's batch: optional header, then [data, data+len), to row m's destination. */
static void build_msg(sock_t *t, uint32_t built, const uint32_t *m, uint32_t hdr, uint8_t *data, uint32_t len) {
  struct iovec *iov = &t->tiov[2 * (size_t)built];
  int k = 0;
  if (hdr != NO_HEADER) {
    iov[k].iov_base = t->hdr + (size_t)hdr * t->hdr_bytes;
    iov[k++].iov_len = t->hdr_bytes;
  }
  iov[k].iov_base = data;
  iov[k++].iov_len = len;
  struct msghdr *h = &t->tmsg[built].msg_hdr;
  memset(h, 0, sizeof *h);
  h->msg_iov = iov;
  h->msg_iovlen = (size_t)k;
  if (m[4] != 0) {
    h->msg_name = &t->taddr[built];
    h->msg_namelen = (socklen_t)fill_addr(&t->taddr[built], t->family, m[4], m[5], &m[6]);
  }
}

/* Sends t->tmsg[0..built): as GSO trains where the socket may, else one message per datagram. */
static uint32_t send_built(sock_t *t, uint32_t built) {
  uint32_t sent = 0, refused, from = 0;
  int why;
  if (t->gso && built > 1) {
    uint32_t trains = gso_trains(t, built);
    if (trains < built) {
      sent = send_msgs(t, t->gmsg, t->gcount, trains, &refused, &why);
      if (refused == trains) from = built;
      else {
        from = t->gfirst[refused];
        /* Too long for the route: later trains stay under this size (shorter ones still go). */
        size_t seg = msg_bytes(&t->tmsg[from].msg_hdr);
        if (why == EMSGSIZE && seg > 1) t->gso_max_seg = (uint32_t)seg - 1;
        else t->gso = 0;
      }
    }
  }
  if (from < built) sent += send_msgs(t, &t->tmsg[from], NULL, built - from, &refused, &why);
  t->stats[S_TX] += sent;
  return sent;
}

uint32_t flush_batch(sock_t *t, sock_t *r, uint32_t n) {
  uint32_t built = 0, bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t *m = &t->tx_meta[(size_t)i * TX_META];
    uint32_t slot = m[0], off = m[1], len = m[2], hdr = m[3];
    uint32_t cap = slot < r->batch && r->is_big[slot] ? r->big_bytes : r->slot_bytes;
    if (slot >= r->batch || off > cap || len > cap - off || (hdr != NO_HEADER && hdr >= t->batch)) {
      bad++;
      continue;
    }
    build_msg(t, built++, m, hdr, (r->is_big[slot] ? r->bigs[slot] : r->slots[slot]) + off, len);
  }
  t->stats[S_TX_ERR] += bad;
  return send_built(t, built);
}

uint32_t flush_arena(sock_t *t, uint8_t *base, size_t cap, uint32_t n) {
  uint32_t built = 0, bad = 0;
  for (uint32_t i = 0; i < n; i++) {
    const uint32_t *m = &t->tx_meta[(size_t)i * TX_META];
    uint32_t off = m[1], len = m[2], hdr = m[3];
    if (off > cap || len > cap - off || (hdr != NO_HEADER && hdr >= t->batch)) {
      bad++;
      continue;
    }
    build_msg(t, built++, m, hdr, base + off, len);
  }
  t->stats[S_TX_ERR] += bad;
  return send_built(t, built);
}

uint32_t send_one(sock_t *s, const uint8_t *data, uint32_t len, uint32_t fam, uint32_t port, const uint32_t *addr) {
  uint32_t ok = 0;
  struct iovec iov = {(void *)data, len};
  struct sockaddr_storage ss;
  struct msghdr h;
  memset(&h, 0, sizeof h);
  h.msg_iov = &iov;
  h.msg_iovlen = 1;
  if (fam != 0) {
    h.msg_name = &ss;
    h.msg_namelen = (socklen_t)fill_addr(&ss, s->family, fam, port, addr);
  }
  ssize_t r;
  do r = sendmsg(s->fd, &h, MSG_DONTWAIT);
  while (r < 0 && errno == EINTR);
  if (r >= 0) {
    ok = 1;
    s->stats[S_TX]++;
  } else {
    s->stats[S_ERRNO] = errno;
    if (errno == ECONNREFUSED) s->stats[S_REFUSED]++;
    s->stats[errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? S_TX_BLOCKED : S_TX_ERR]++;
  }
  return ok;
}
