// Load generator and sink for the relay benchmark (compiled by bench/relay/run.ts with gcc).
// One thread sends paced datagrams round-robin over N flows (one UDP socket per flow), each
// stamped with a sequence number and CLOCK_MONOTONIC send time; another receives what the
// forwarder under test delivers to the sink socket (recvmmsg batches) and measures loss and
// one-way latency. Prints one JSON line.
//
// usage: loadgen TARGET_IP TARGET_PORT SINK_PORT FLOWS RATE_PPS DURATION_MS PAYLOAD SINK_OFFSET FLOWFILE
// FLOWFILE (binary, may be "-"): per flow: u16 local port (0 = any), u16 prefix length + prefix
// bytes (put before every payload, e.g. TURN ChannelData), u16 init length + init bytes (sent
// once before the load, e.g. a STUN Binding request with a routing hint).
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXF 4096
#define BATCH 64
#define CHUNK 4
#define HBUCKETS 200000 /* 1 us buckets up to 200 ms */

static int fds[MAXF];
static uint8_t *prefix[MAXF];
static int prefix_len[MAXF];
static int nflows, payload, sink_off;
static volatile int sending_done = 0;
static uint64_t sent = 0, received = 0, bad = 0;
static uint32_t *hist;
static uint32_t run_tag;

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int sink_fd;
static void *sink_thread(void *arg) {
  (void)arg;
  struct mmsghdr msgs[BATCH];
  struct iovec iov[BATCH];
  static uint8_t bufs[BATCH][2048];
  for (int i = 0; i < BATCH; i++) {
    iov[i].iov_base = bufs[i];
    iov[i].iov_len = sizeof bufs[i];
    memset(&msgs[i], 0, sizeof msgs[i]);
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  struct timespec to = {0, 20000000};
  for (;;) {
    int n = recvmmsg(sink_fd, msgs, BATCH, MSG_WAITFORONE, &to);
    uint64_t t = now_ns();
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) {
        if (sending_done == 2) break;
        continue;
      }
      break;
    }
    for (int i = 0; i < n; i++) {
      int len = msgs[i].msg_len;
      uint8_t *q = bufs[i] + sink_off;
      uint32_t tag;
      if (len < sink_off + 24) {
        bad++;
        continue;
      }
      memcpy(&tag, q + 4, 4);
      if (q[0] != 0x80 || q[1] != 111 || tag != run_tag) {
        bad++; /* not ours: flow-opening packets, or late ones from an earlier run */
        continue;
      }
      uint64_t st;
      memcpy(&st, bufs[i] + sink_off + 12, 8);
      received++;
      uint64_t us = (t - st) / 1000;
      hist[us < HBUCKETS ? us : HBUCKETS - 1]++;
    }
  }
  return NULL;
}

static uint16_t rd16(FILE *f) {
  uint8_t b[2];
  if (fread(b, 1, 2, f) != 2) {
    fprintf(stderr, "flowfile truncated\n");
    exit(2);
  }
  return (uint16_t)(b[0] << 8 | b[1]);
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: loadgen IP PORT SINKPORT FLOWS RATE DURATION_MS PAYLOAD SINK_OFFSET FLOWFILE\n");
    return 2;
  }
  const char *ip = argv[1];
  int port = atoi(argv[2]), sink_port = atoi(argv[3]);
  nflows = atoi(argv[4]);
  double rate = atof(argv[5]);
  int duration_ms = atoi(argv[6]);
  payload = atoi(argv[7]);
  sink_off = atoi(argv[8]);
  if (nflows < 1 || nflows > MAXF || payload < 24 || payload > 1400) return 2;
  hist = calloc(HBUCKETS, sizeof(uint32_t));
  run_tag = (uint32_t)now_ns() ^ (uint32_t)getpid() << 16;

  sink_fd = socket(AF_INET, SOCK_DGRAM, 0);
  int rbuf = 4 << 20;
  setsockopt(sink_fd, SOL_SOCKET, SO_RCVBUF, &rbuf, sizeof rbuf);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(sink_port)};
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  if (bind(sink_fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
    perror("bind sink");
    return 1;
  }
  struct timeval rto = {0, 20000};
  setsockopt(sink_fd, SOL_SOCKET, SO_RCVTIMEO, &rto, sizeof rto);
  struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, ip, &dst.sin_addr);
  FILE *ff = strcmp(argv[9], "-") == 0 ? NULL : fopen(argv[9], "rb");
  int bufsz = 4 << 20;
  for (int i = 0; i < nflows; i++) {
    fds[i] = socket(AF_INET, SOCK_DGRAM, 0);
    setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof bufsz);
    struct sockaddr_in src = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &src.sin_addr);
    uint8_t *init = NULL;
    int init_len = 0;
    if (ff) {
      src.sin_port = htons(rd16(ff));
      prefix_len[i] = rd16(ff);
      prefix[i] = malloc(prefix_len[i] + 1);
      if (prefix_len[i] && fread(prefix[i], 1, prefix_len[i], ff) != (size_t)prefix_len[i]) return 2;
      init_len = rd16(ff);
      init = malloc(init_len + 1);
      if (init_len && fread(init, 1, init_len, ff) != (size_t)init_len) return 2;
    }
    int one = 1;
    setsockopt(fds[i], SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fds[i], (struct sockaddr *)&src, sizeof src) < 0) {
      perror("bind");
      return 1;
    }
    if (connect(fds[i], (struct sockaddr *)&dst, sizeof dst) < 0) {
      perror("connect");
      return 1;
    }
    if (init_len) send(fds[i], init, init_len, 0);
    free(init);
  }
  if (ff) fclose(ff);

  usleep(150000); /* let the init packets open the flows */
  pthread_t th;
  pthread_create(&th, NULL, sink_thread, NULL);

  static uint8_t sbuf[CHUNK][1600];
  struct mmsghdr smsg[CHUNK];
  struct iovec siov[CHUNK];
  uint64_t start = now_ns();
  uint64_t end = start + (uint64_t)duration_ms * 1000000ull;
  double interval = 1e9 / rate;
  uint64_t seq = 0;
  int f = 0;
  for (;;) {
    uint64_t t = now_ns();
    if (t >= end) break;
    uint64_t due = (uint64_t)((t - start) / interval) + 1;
    if (seq >= due) {
      /* ahead of schedule: yield the core to the sink thread and the forwarder */
      struct timespec nap = {0, 20000};
      nanosleep(&nap, NULL);
      continue;
    }
    uint64_t burst = due - seq;
    if (burst > BATCH) burst = BATCH;
    /* sendmmsg in chunks of up to CHUNK datagrams per flow, rotating flows between chunks */
    uint64_t k = 0;
    while (k < burst) {
      int n = (int)(burst - k < CHUNK ? burst - k : CHUNK);
      int pl = prefix_len[f];
      for (int j = 0; j < n; j++) {
        uint8_t *b = sbuf[j];
        if (pl) memcpy(b, prefix[f], pl);
        uint8_t *p = b + pl;
        p[0] = 0x80;
        p[1] = 111;
        p[2] = (uint8_t)(seq >> 8);
        p[3] = (uint8_t)seq;
        memcpy(p + 4, &run_tag, 4);
        uint64_t ts = now_ns();
        memcpy(p + 12, &ts, 8);
        uint32_t s32 = (uint32_t)seq;
        memcpy(p + 20, &s32, 4);
        siov[j].iov_base = b;
        siov[j].iov_len = pl + payload;
        memset(&smsg[j], 0, sizeof smsg[j]);
        smsg[j].msg_hdr.msg_iov = &siov[j];
        smsg[j].msg_hdr.msg_iovlen = 1;
        seq++;
      }
      int m = sendmmsg(fds[f], smsg, n, 0);
      if (m > 0) sent += m;
      k += n;
      if (++f == nflows) f = 0;
    }
  }
  sending_done = 1;
  usleep(200000);
  sending_done = 2;
  pthread_join(th, NULL);
  uint64_t total = 0, acc = 0;
  for (int i = 0; i < HBUCKETS; i++) total += hist[i];
  long p50 = -1, p99 = -1, p999 = -1;
  for (int i = 0; i < HBUCKETS; i++) {
    acc += hist[i];
    if (p50 < 0 && acc * 2 >= total) p50 = i;
    if (p99 < 0 && acc * 100 >= total * 99) p99 = i;
    if (p999 < 0 && acc * 1000 >= total * 999) p999 = i;
  }
  double secs = (double)duration_ms / 1000.0;
  printf("{\"sent\":%lu,\"received\":%lu,\"bad\":%lu,\"offered_pps\":%.0f,\"p50_us\":%ld,\"p99_us\":%ld,\"p999_us\":%ld}\n",
         (unsigned long)sent, (unsigned long)received, (unsigned long)bad, sent / secs, p50, p99, p999);
  return 0;
}
