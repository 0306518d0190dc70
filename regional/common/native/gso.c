// UDP generic segmentation offload for the outgoing batch: consecutive datagrams to the same peer
// with the same length (the last of a run may be shorter) go to the kernel as one send with a
// UDP_SEGMENT control message, so the IP stack is crossed once per run instead of once per
// datagram; the kernel (or the NIC) cuts them apart again and the peer receives the same
// datagrams. Only MTU-safe sizes are grouped; a kernel or route that refuses it turns it off for
// the socket (flush_batch falls back to plain sends).
#include "sock.h"
#include <netinet/udp.h>

#define GSO_MAX_SEGS 64 /* UDP_MAX_SEGMENTS on older kernels */
#define GSO_MAX_BYTES 65000

size_t msg_bytes(const struct msghdr *h) {
  size_t n = 0;
  for (size_t i = 0; i < h->msg_iovlen; i++) n += h->msg_iov[i].iov_len;
  return n;
}

static int same_peer(const struct msghdr *a, const struct msghdr *b) {
  if (a->msg_name == NULL || b->msg_name == NULL) return a->msg_name == b->msg_name;
  return a->msg_namelen == b->msg_namelen && memcmp(a->msg_name, b->msg_name, a->msg_namelen) == 0;
}

uint32_t gso_trains(sock_t *t, uint32_t built) {
  uint32_t trains = 0, iov = 0, i = 0;
  const size_t ctl = CMSG_SPACE(sizeof(uint16_t));
  while (i < built) {
    const struct msghdr *first = &t->tmsg[i].msg_hdr;
    size_t seg = msg_bytes(first), total = seg;
    uint32_t j = i + 1;
    if (seg > 0 && seg <= t->gso_max_seg) {
      while (j < built && j - i < GSO_MAX_SEGS && same_peer(first, &t->tmsg[j].msg_hdr)) {
        size_t len = msg_bytes(&t->tmsg[j].msg_hdr);
        if (len > seg || len == 0 || total + len > GSO_MAX_BYTES) break;
        total += len;
        j++;
        if (len < seg) break; /* a shorter one ends the run */
      }
    }
    struct msghdr *h = &t->gmsg[trains].msg_hdr;
    memset(h, 0, sizeof *h);
    h->msg_name = first->msg_name;
    h->msg_namelen = first->msg_namelen;
    h->msg_iov = &t->giov[iov];
    for (uint32_t k = i; k < j; k++) {
      const struct msghdr *m = &t->tmsg[k].msg_hdr;
      for (size_t v = 0; v < m->msg_iovlen; v++) t->giov[iov++] = m->msg_iov[v];
    }
    h->msg_iovlen = iov - (uint32_t)(h->msg_iov - t->giov);
    if (j - i > 1) {
      h->msg_control = t->gctl + (size_t)trains * ctl;
      h->msg_controllen = ctl;
      struct cmsghdr *c = CMSG_FIRSTHDR(h);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
      uint16_t size = (uint16_t)seg;
      memcpy(CMSG_DATA(c), &size, sizeof size);
    }
    t->gcount[trains] = (uint16_t)(j - i);
    t->gfirst[trains] = i;
    trains++;
    i = j;
  }
  return trains;
}
