// The floor of the batched relay's design on this machine (compiled by bench/relay/run.ts with gcc):
// the same system calls as the relay's batched path, and nothing else. epoll for readiness,
// recvmmsg of up to 64 datagrams, then one sendmmsg on a socket connected to the sink, as one UDP
// GSO train when the batch's datagrams have one length (the relay's frames do), else one message
// each. No flow table, no header, no JavaScript: what is left is the kernel's cost per wake-up and
// per datagram, which no forwarder in user space avoids.
//
// usage: floor LISTEN_PORT SINK_PORT
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#define BATCH 64
#define SLOT 2048

static uint8_t slots[BATCH][SLOT];
static struct mmsghdr rx[BATCH], tx[BATCH];
static struct iovec riov[BATCH], tiov[BATCH];

static int udp(uint16_t port, int bind_not_connect) {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  int buf = 4 << 20;
  setsockopt(fd, SOL_SOCKET, bind_not_connect ? SO_RCVBUF : SO_SNDBUF, &buf, sizeof buf);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
  if ((bind_not_connect ? bind(fd, (void *)&a, sizeof a) : connect(fd, (void *)&a, sizeof a)) != 0) {
    perror(bind_not_connect ? "bind" : "connect");
    exit(1);
  }
  return fd;
}

/* Sends datagrams 0..n-1: one GSO train if they share a length, else one message each. */
static void send_batch(int out, int n) {
  int same = 1;
  for (int i = 1; i < n; i++) same &= rx[i].msg_len == rx[0].msg_len;
  if (n > 1 && same) {
    union {
      char buf[CMSG_SPACE(sizeof(uint16_t))];
      struct cmsghdr align;
    } ctl;
    struct msghdr h = {0};
    for (int i = 0; i < n; i++) tiov[i] = (struct iovec){slots[i], rx[i].msg_len};
    h.msg_iov = tiov;
    h.msg_iovlen = n;
    h.msg_control = ctl.buf;
    h.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t seg = (uint16_t)rx[0].msg_len;
    memcpy(CMSG_DATA(c), &seg, sizeof seg);
    if (sendmsg(out, &h, MSG_DONTWAIT) >= 0) return;
  }
  for (int i = 0; i < n; i++) {
    tiov[i] = (struct iovec){slots[i], rx[i].msg_len};
    memset(&tx[i].msg_hdr, 0, sizeof tx[i].msg_hdr);
    tx[i].msg_hdr.msg_iov = &tiov[i];
    tx[i].msg_hdr.msg_iovlen = 1;
  }
  sendmmsg(out, tx, (unsigned)n, MSG_DONTWAIT);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: floor LISTEN_PORT SINK_PORT\n");
    return 2;
  }
  int in = udp((uint16_t)atoi(argv[1]), 1), out = udp((uint16_t)atoi(argv[2]), 0);
  int ep = epoll_create1(0);
  struct epoll_event ev = {.events = EPOLLIN};
  epoll_ctl(ep, EPOLL_CTL_ADD, in, &ev);
  for (int i = 0; i < BATCH; i++) {
    riov[i] = (struct iovec){slots[i], SLOT};
    rx[i].msg_hdr.msg_iov = &riov[i];
    rx[i].msg_hdr.msg_iovlen = 1;
  }
  printf("{\"msg\":\"ready\"}\n");
  fflush(stdout);
  for (;;) {
    struct epoll_event got;
    if (epoll_wait(ep, &got, 1, -1) <= 0) continue;
    int n;
    do {
      n = recvmmsg(in, rx, BATCH, MSG_DONTWAIT, NULL);
      if (n > 0) send_batch(out, n);
    } while (n == BATCH); /* a full batch: more may be waiting (the relay reads up to 8 rounds) */
  }
}
