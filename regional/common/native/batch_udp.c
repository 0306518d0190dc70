// Batched UDP for the relay's data path and the transceiver's backbone socket: one socket per
// handle, readiness from a uv_poll on the libuv loop of the calling thread (main or worker
// thread), recvmmsg into preallocated slots and sendmmsg from slots + headers (or the caller's
// memory) described by the JS side. It decides nothing: the JS engine sees
// each batch, then fills the outgoing batches in place. Errors on the data path are counted in
// the handle's stats array, never thrown; only setup errors (socket, bind, connect) throw.
#include "sock.h"
#include <netinet/udp.h>

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[256];
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_value code, text, error;
  const char *name = err == EADDRINUSE      ? "EADDRINUSE"
                     : err == EADDRNOTAVAIL ? "EADDRNOTAVAIL"
                     : err == EACCES        ? "EACCES"
                     : err == EAFNOSUPPORT  ? "EAFNOSUPPORT"
                     : err == EINVAL        ? "EINVAL"
                                            : "ESOCKET";
  napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, msg, NAPI_AUTO_LENGTH, &text);
  napi_create_error(env, code, text, &error);
  napi_throw(env, error);
  return NULL;
}

static napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

static void free_sock(sock_t *s) {
  free(s->slots);
  free(s->slot_refs);
  free(s->bigs);
  free(s->big_refs);
  free(s->is_big);
  free(s->rmsg);
  free(s->riov);
  free(s->raddr);
  free(s->tmsg);
  free(s->tiov);
  free(s->taddr);
  free(s->gmsg);
  free(s->giov);
  free(s->gctl);
  free(s->gcount);
  free(s->gfirst);
  free(s->rctl);
  free(s);
}

static void on_handle_closed(uv_handle_t *h) {
  sock_t *s = h->data;
  s->handle_closed = 1;
  if (s->finalized) free_sock(s);
}

static void cleanup_hook(void *arg);

/* Stops polling, closes the fd, drops every reference. Idempotent; memory goes in on_handle_closed. */
static void close_sock(sock_t *s, int from_cleanup) {
  if (s->closing) return;
  s->closing = 1;
  s->polling = 0;
  uv_close((uv_handle_t *)&s->poll, on_handle_closed); /* stops the poll before the fd goes */
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  napi_env env = s->env;
  if (!from_cleanup) {
    napi_remove_env_cleanup_hook(env, cleanup_hook, s);
    for (int i = 0; i < 6; i++)
      if (s->refs[i]) napi_delete_reference(env, s->refs[i]);
    for (uint32_t i = 0; i < s->batch; i++) {
      if (s->slot_refs[i]) napi_delete_reference(env, s->slot_refs[i]);
      if (s->big_refs[i]) napi_delete_reference(env, s->big_refs[i]);
    }
    if (s->cb_ref) napi_delete_reference(env, s->cb_ref);
    if (s->self_ref) napi_delete_reference(env, s->self_ref);
    if (s->actx) napi_async_destroy(env, s->actx);
  }
  memset(s->refs, 0, sizeof s->refs);
  s->cb_ref = NULL;
  s->self_ref = NULL;
  s->actx = NULL;
}

static void cleanup_hook(void *arg) { close_sock(arg, 1); }

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  sock_t *s = data;
  s->finalized = 1;
  if (!s->closing) close_sock(s, 0);
  else if (s->handle_closed) free_sock(s);
}

/* The handle is an External, not a wrapped object: every flush starts here, and reading an
 * External is a type check and a load, where napi_unwrap is a private-property lookup through
 * V8's runtime (about 1 % of the relay's CPU at 40k pps). The magic word rejects Externals that
 * are not ours; the memory stays valid until the External itself is collected (finalize). */
static sock_t *unwrap(napi_env env, napi_value v) {
  void *p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok || p == NULL) return NULL;
  sock_t *s = p;
  return s->magic == SOCK_MAGIC ? s : NULL;
}

static int get_u32(napi_env env, napi_value v, uint32_t *out) {
  return napi_get_value_uint32(env, v, out) == napi_ok;
}

static int get_typed(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  napi_typedarray_type t;
  napi_value ab;
  size_t off;
  if (napi_get_typedarray_info(env, v, &t, len, data, &ab, &off) != napi_ok) return 0;
  return t == want;
}

/* create(family 4|6, host, port, reusePort, bufferBytes, rxArena, bigArena, rxMeta, txHeaders, txMeta,
 * stats, gso, gro?) */
static napi_value js_create(napi_env env, napi_callback_info info) {
  size_t argc = 13;
  napi_value argv[13], self;
  napi_get_cb_info(env, info, &argc, argv, &self, NULL);
  if (argc < 12) return throw_type(env, "create: 12 arguments expected");
  bool gso, gro = false;
  if (napi_get_value_bool(env, argv[11], &gso) != napi_ok) return throw_type(env, "gso must be a boolean");
  if (argc == 13 && napi_get_value_bool(env, argv[12], &gro) != napi_ok) return throw_type(env, "gro must be a boolean");
  uint32_t fam, port, reuse, bufbytes;
  char host[64];
  size_t hl;
  if (!get_u32(env, argv[0], &fam) || (fam != 4 && fam != 6)) return throw_type(env, "family must be 4 or 6");
  if (napi_get_value_string_utf8(env, argv[1], host, sizeof host, &hl) != napi_ok)
    return throw_type(env, "host must be a string");
  if (!get_u32(env, argv[2], &port) || port > 65535) return throw_type(env, "port must be 0-65535");
  bool rb;
  if (napi_get_value_bool(env, argv[3], &rb) != napi_ok) return throw_type(env, "reusePort must be a boolean");
  reuse = rb;
  if (!get_u32(env, argv[4], &bufbytes)) return throw_type(env, "bufferBytes must be a number");
  void *rx, *big, *rxm, *hdr, *txm, *st;
  size_t rxl, bigl, rxml, hdrl, txml, stl;
  bool isbuf;
  if (napi_is_buffer(env, argv[5], &isbuf) != napi_ok || !isbuf ||
      napi_get_buffer_info(env, argv[5], &rx, &rxl) != napi_ok)
    return throw_type(env, "rxArena must be a Buffer");
  if (napi_is_buffer(env, argv[6], &isbuf) != napi_ok || !isbuf ||
      napi_get_buffer_info(env, argv[6], &big, &bigl) != napi_ok)
    return throw_type(env, "bigArena must be a Buffer");
  if (!get_typed(env, argv[7], napi_uint32_array, &rxm, &rxml)) return throw_type(env, "rxMeta must be a Uint32Array");
  if (napi_is_buffer(env, argv[8], &isbuf) != napi_ok || !isbuf ||
      napi_get_buffer_info(env, argv[8], &hdr, &hdrl) != napi_ok)
    return throw_type(env, "txHeaders must be a Buffer");
  if (!get_typed(env, argv[9], napi_uint32_array, &txm, &txml)) return throw_type(env, "txMeta must be a Uint32Array");
  if (!get_typed(env, argv[10], napi_float64_array, &st, &stl) || stl < S_COUNT)
    return throw_type(env, "stats must be a Float64Array of 12+");
  uint32_t batch = (uint32_t)(rxml / RX_META);
  if (batch == 0 || batch > MAX_BATCH || txml < (size_t)batch * TX_META || rxl % batch != 0 || hdrl % batch != 0 ||
      bigl % batch != 0 || (bigl != 0 && bigl / batch <= rxl / batch))
    return throw_type(env, "batch sizes disagree (rxMeta, txMeta, rxArena, bigArena, txHeaders)");

  int af = fam == 4 ? AF_INET : AF_INET6;
  struct sockaddr_storage ss;
  int sl = parse_addr(host, port, af, &ss);
  if (sl == 0) return throw_type(env, "host is not an IP literal of the family");
  int fd = socket(af, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, "socket", errno);
  int one = 1, zero = 0, b = (int)bufbytes;
  /* Port 0 with SO_REUSEPORT: Linux's ephemeral pick skips only ports it could not share, so it may
   * hand out a port another SO_REUSEPORT socket of this user already holds, and the two would split
   * each other's datagrams. So a port-0 socket binds first (a port nobody holds) and joins reuse
   * after; later sockets on that port still join its group. */
  bool reuse_late = reuse && port == 0;
  if (reuse && !reuse_late && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) goto fail_errno;
  if (af == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero); /* as dgram udp6 */
  if (b > 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof b); /* capped by net.core.rmem_max, checked in JS */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
    /* Past rmem_max / wmem_max where the process may (CAP_NET_ADMIN); EPERM otherwise, and the capped
     * size above stands. The receive buffer is what absorbs a stall of the process. */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &b, sizeof b);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &b, sizeof b);
  }
  if (bind(fd, (struct sockaddr *)&ss, (socklen_t)sl) != 0) {
    int e = errno;
    close(fd);
    char what[96];
    snprintf(what, sizeof what, "bind %s port %u", host, port);
    return throw_errno(env, what, e);
  }
  if (reuse_late && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) goto fail_errno;

  sock_t *s = calloc(1, sizeof *s);
  if (!s) {
    close(fd);
    return throw_errno(env, "create", ENOMEM);
  }
  s->env = env;
  s->fd = fd;
  s->family = af;
  s->batch = batch;
  s->rx_dirty = batch; /* every receive header set up on the first call */
  s->slot_bytes = (uint32_t)(rxl / batch);
  s->big_bytes = (uint32_t)(bigl / batch);
  s->hdr_bytes = (uint32_t)(hdrl / batch);
  s->rx_meta = rxm;
  s->hdr = hdr;
  s->tx_meta = txm;
  s->stats = st;
  s->slots = calloc(batch, sizeof *s->slots);
  s->slot_refs = calloc(batch, sizeof *s->slot_refs);
  s->bigs = calloc(batch, sizeof *s->bigs);
  s->big_refs = calloc(batch, sizeof *s->big_refs);
  s->is_big = calloc(batch, 1);
  s->rmsg = calloc(batch, sizeof *s->rmsg);
  s->riov = calloc(2 * (size_t)batch, sizeof *s->riov);
  s->raddr = calloc(batch, sizeof *s->raddr);
  s->tmsg = calloc(batch, sizeof *s->tmsg);
  s->tiov = calloc(2 * (size_t)batch, sizeof *s->tiov);
  s->taddr = calloc(batch, sizeof *s->taddr);
  s->gmsg = calloc(batch, sizeof *s->gmsg);
  s->giov = calloc(2 * (size_t)batch, sizeof *s->giov);
  s->gctl = calloc(batch, CMSG_SPACE(sizeof(uint16_t)));
  s->gcount = calloc(batch, sizeof *s->gcount);
  s->gfirst = calloc(batch, sizeof *s->gfirst);
  s->gso = gso;
  s->gso_max_seg = GSO_MAX_SEG;
  /* Joined datagrams can be up to 64 KiB: only where a slot and its big slot hold that, and the
   * kernel has UDP_GRO (else the socket reads datagrams one by one, as before). */
  if (gro && s->big_bytes >= 65535) {
    int on = 1;
    s->rctl = calloc(batch, CMSG_SPACE(sizeof(int)));
    if (s->rctl && setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof on) == 0) s->gro = 1;
  }
  if (!s->slots || !s->slot_refs || !s->bigs || !s->big_refs || !s->is_big || !s->rmsg || !s->riov || !s->raddr || !s->tmsg || !s->tiov || !s->taddr || !s->gmsg || !s->giov ||
      !s->gctl || !s->gcount || !s->gfirst) {
    close(fd);
    free_sock(s);
    return throw_errno(env, "create", ENOMEM);
  }
  for (uint32_t i = 0; i < batch; i++) {
    s->slots[i] = (uint8_t *)rx + (size_t)i * s->slot_bytes;
    s->bigs[i] = (uint8_t *)big + (size_t)i * s->big_bytes;
  }
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  if (uv_poll_init(loop, &s->poll, fd) != 0) {
    close(fd);
    free_sock(s);
    return throw_errno(env, "uv_poll_init", EINVAL);
  }
  s->poll.data = s;
  for (int i = 0; i < 6; i++) napi_create_reference(env, argv[5 + i], 1, &s->refs[i]);
  s->magic = SOCK_MAGIC;
  napi_add_env_cleanup_hook(env, cleanup_hook, s);
  napi_value obj;
  if (napi_create_external(env, s, finalize, NULL, &obj) != napi_ok) {
    s->finalized = 1; /* no External will ever finalize it: closing frees it */
    close_sock(s, 0);
    return throw_errno(env, "create", ENOMEM);
  }
  return obj;

fail_errno: {
  int e = errno;
  close(fd);
  return throw_errno(env, "setsockopt", e);
}
}

static void on_poll(uv_poll_t *h, int status, int events) {
  (void)events;
  sock_t *s = h->data;
  if (s->closing) return;
  if (status < 0) {
    /* libuv reports POLLERR as UV_EBADF and stops the handle. On a connected UDP socket that is
     * a pending datagram error (ECONNREFUSED: the peer's port closed), not a broken fd: take it
     * (SO_ERROR clears it), count it and poll again, or the socket would stay deaf for good and
     * the peer, back on the same port, would never be heard again. */
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err != 0) {
      s->stats[S_RX_ERR]++;
      s->stats[S_ERRNO] = err;
      if (err == ECONNREFUSED) s->stats[S_REFUSED]++;
      if (uv_poll_start(&s->poll, UV_READABLE, on_poll) == 0) return;
    }
    s->stats[S_RX_ERR]++; /* the fd itself is broken: stop polling it, counted */
    s->stats[S_ERRNO] = -status;
    uv_poll_stop(&s->poll);
    s->polling = 0;
    return;
  }
  napi_env env = s->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, args[2], res;
  napi_get_reference_value(env, s->cb_ref, &cb);
  napi_get_reference_value(env, s->self_ref, &recv);
  int fatal = 0;
  /* The work of one callback is bounded in datagrams, not in batches: a UDP GRO joined datagram
   * holds a whole run (up to ~45 frames), so count its segments, or 8 batches of joined datagrams
   * would hold the event loop for thousands of frames. */
  uint64_t budget = (uint64_t)s->rx_rounds * s->batch, used = 0;
  for (uint32_t round = 0; round < s->rx_rounds && used < budget && !s->closing && !fatal; round++) {
    uint32_t n = recv_batch(s);
    if (n == 0) break;
    used += n;
    for (uint32_t i = 0; s->gro && i < n; i++) { /* a joined datagram counts as its segments */
      uint32_t len = s->rx_meta[(size_t)i * RX_META], fl = s->rx_meta[(size_t)i * RX_META + 1];
      uint32_t seg = fl >> 16;
      if ((fl & FLAG_SEGMENTS) && seg > 0) used += (len + seg - 1) / seg - 1;
    }
    /* A resumable handler may stop after datagram k-1 and return k: the rest of the batch comes in
     * another callback, after the nextTicks and promise continuations the first one queued (each
     * callback from here is outermost, so Node runs them when it returns), as dgram runs them
     * between datagrams. Anything else it returns (undefined) means the batch is done. */
    uint32_t from = 0;
    while (from < n && !s->closing) {
      napi_create_uint32(env, n, &args[0]);
      napi_create_uint32(env, from, &args[1]);
      napi_status st = napi_make_callback(env, s->actx, recv, cb, 2, args, &res);
      if (st == napi_pending_exception) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        napi_fatal_exception(env, exc);
        fatal = 1;
        break;
      }
      uint32_t next;
      if (!s->resumable || st != napi_ok || napi_get_value_uint32(env, res, &next) != napi_ok || next <= from ||
          next >= n)
        break;
      from = next;
    }
    if (n < s->batch) break;
  }
  napi_close_handle_scope(env, scope);
}

/* start(handle, onBatch(count, from), resumable?, rounds?): onBatch handles datagrams
 * from..count-1; a resumable one may return where to go on (see on_poll). rounds: batches read per
 * readiness callback before the loop serves other handles (default RX_ROUNDS; 1 for a process
 * whose timers and other sockets must not wait behind 8 batches). */
static napi_value js_start(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc >= 2 && argc <= 4 ? unwrap(env, argv[0]) : NULL;
  if (!s) return throw_type(env, "start(handle, callback, resumable?, rounds?)");
  uint32_t rounds = RX_ROUNDS;
  if (argc == 4 && (!get_u32(env, argv[3], &rounds) || rounds == 0 || rounds > 64))
    return throw_type(env, "rounds must be an integer in 1..64");
  if (s->closing || s->polling) return NULL;
  napi_valuetype t;
  napi_typeof(env, argv[1], &t);
  if (t != napi_function) return throw_type(env, "callback must be a function");
  bool resumable = false;
  if (argc >= 3 && napi_get_value_bool(env, argv[2], &resumable) != napi_ok)
    return throw_type(env, "resumable must be a boolean");
  s->resumable = resumable;
  s->rx_rounds = rounds;
  napi_create_reference(env, argv[1], 1, &s->cb_ref);
  napi_create_reference(env, argv[0], 1, &s->self_ref); /* polling keeps the handle alive */
  napi_value name;
  napi_create_string_utf8(env, "GR_BATCH_UDP", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, argv[0], name, &s->actx);
  if (uv_poll_start(&s->poll, UV_READABLE, on_poll) != 0) return throw_errno(env, "uv_poll_start", EINVAL);
  s->polling = 1;
  return NULL;
}

/* connect(handle, host, port) */
static napi_value js_connect(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 3 ? unwrap(env, argv[0]) : NULL;
  if (!s || s->closing) return throw_type(env, "connect(handle, host, port) on an open handle");
  char host[64];
  size_t hl;
  uint32_t port;
  if (napi_get_value_string_utf8(env, argv[1], host, sizeof host, &hl) != napi_ok || !get_u32(env, argv[2], &port))
    return throw_type(env, "connect: host string and port number expected");
  struct sockaddr_storage ss;
  int sl = parse_addr(host, port, s->family, &ss);
  if (sl == 0) return throw_type(env, "connect: host is not an IP literal of the socket's family");
  if (connect(s->fd, (struct sockaddr *)&ss, (socklen_t)sl) != 0) return throw_errno(env, "connect", errno);
  return NULL;
}

/* flush(tx, rx, count): sends tx's count messages described in its txMeta; returns how many went. */
static napi_value js_flush(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *t = argc == 3 ? unwrap(env, argv[0]) : NULL;
  sock_t *r = argc == 3 ? unwrap(env, argv[1]) : NULL;
  uint32_t n;
  if (!t || !r || !get_u32(env, argv[2], &n)) return throw_type(env, "flush(tx, rx, count)");
  if (n > t->batch) n = t->batch;
  uint32_t sent = 0;
  if (r->closing) t->stats[S_TX_ERR] += n; /* its slots may be gone with its references */
  else sent = flush_batch(t, r, n);
  napi_create_uint32(env, sent, &out);
  return out;
}

/* flushArena(tx, arena, count): sends tx's count rows whose data is at arena[offset, offset+len);
 * returns how many went. For senders whose datagrams are built in JS memory (the transceiver). */
static napi_value js_flush_arena(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3], out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *t = argc == 3 ? unwrap(env, argv[0]) : NULL;
  void *data;
  size_t dl;
  uint32_t n;
  if (!t || napi_get_buffer_info(env, argv[1], &data, &dl) != napi_ok || !get_u32(env, argv[2], &n))
    return throw_type(env, "flushArena(tx, arena, count)");
  if (n > t->batch) n = t->batch;
  uint32_t sent = t->closing ? 0 : flush_arena(t, (uint8_t *)data, dl, n);
  napi_create_uint32(env, sent, &out);
  return out;
}

/* sendOne(handle, buffer, offset, length, family 0|4|6, port, addr Uint32Array(4)): one datagram from
 * JS memory (held datagrams of restored flows, outside the batch). Returns 1 sent, 0 not. */
static napi_value js_send_one(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7], out;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 7 ? unwrap(env, argv[0]) : NULL;
  void *data, *addr;
  size_t dl, al;
  uint32_t off, len, fam, port;
  if (!s || napi_get_buffer_info(env, argv[1], &data, &dl) != napi_ok || !get_u32(env, argv[2], &off) ||
      !get_u32(env, argv[3], &len) || !get_u32(env, argv[4], &fam) || !get_u32(env, argv[5], &port) ||
      !get_typed(env, argv[6], napi_uint32_array, &addr, &al) || al < 4 || off > dl || len > dl - off)
    return throw_type(env, "sendOne(handle, buffer, offset, length, family, port, addr)");
  uint32_t ok = s->closing ? 0 : send_one(s, (const uint8_t *)data + off, len, fam, port, addr);
  napi_create_uint32(env, ok, &out);
  return out;
}

/* replaceSlot(handle, index, buffer, big): the engine kept the datagram in this slot (a held datagram
 * of a flow being restored); later batches are received into `buffer` instead. */
static napi_value js_replace_slot(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 4 ? unwrap(env, argv[0]) : NULL;
  uint32_t i;
  void *data;
  size_t dl;
  bool big;
  if (!s || !get_u32(env, argv[1], &i) || i >= s->batch || napi_get_buffer_info(env, argv[2], &data, &dl) != napi_ok ||
      napi_get_value_bool(env, argv[3], &big) != napi_ok || dl < (big ? s->big_bytes : s->slot_bytes))
    return throw_type(env, "replaceSlot(handle, index < batch, Buffer of the slot's size, big)");
  if (s->closing) return NULL;
  napi_ref *ref = big ? &s->big_refs[i] : &s->slot_refs[i];
  if (*ref) napi_delete_reference(env, *ref);
  napi_create_reference(env, argv[2], 1, ref);
  if (big) s->bigs[i] = data;
  else s->slots[i] = data;
  if (s->rx_dirty < i + 1) s->rx_dirty = i + 1; /* its receive header points at the old memory */
  return NULL;
}

/* localAddress(handle) -> [family 4|6, address, port] */
static napi_value js_local_address(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], arr, v;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 1 ? unwrap(env, argv[0]) : NULL;
  if (!s || s->closing) return throw_type(env, "localAddress(handle) on an open handle");
  struct sockaddr_storage ss;
  socklen_t sl = sizeof ss;
  if (getsockname(s->fd, (struct sockaddr *)&ss, &sl) != 0) return throw_errno(env, "getsockname", errno);
  char text[INET6_ADDRSTRLEN];
  uint32_t port;
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, text, sizeof text);
    port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  } else {
    inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, text, sizeof text);
    port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  }
  napi_create_array_with_length(env, 3, &arr);
  napi_create_uint32(env, ss.ss_family == AF_INET ? 4 : 6, &v);
  napi_set_element(env, arr, 0, v);
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &v);
  napi_set_element(env, arr, 1, v);
  napi_create_uint32(env, port, &v);
  napi_set_element(env, arr, 2, v);
  return arr;
}

/* bufferSizes(handle) -> [receive, send] as the kernel granted them (it doubles the request). */
static napi_value js_buffer_sizes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], arr, v;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 1 ? unwrap(env, argv[0]) : NULL;
  if (!s || s->closing) return throw_type(env, "bufferSizes(handle) on an open handle");
  int rcv = 0, snd = 0;
  socklen_t l = sizeof rcv;
  getsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &rcv, &l);
  l = sizeof snd;
  getsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &snd, &l);
  napi_create_array_with_length(env, 2, &arr);
  napi_create_int32(env, rcv, &v);
  napi_set_element(env, arr, 0, v);
  napi_create_int32(env, snd, &v);
  napi_set_element(env, arr, 1, v);
  return arr;
}

/* gro(handle) -> whether the socket reads UDP GRO joined datagrams (create asked, and the kernel agreed). */
static napi_value js_gro(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], v;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 1 ? unwrap(env, argv[0]) : NULL;
  if (!s) return throw_type(env, "gro(handle)");
  napi_get_boolean(env, s->gro != 0, &v);
  return v;
}

/* close(handle): idempotent. */
static napi_value js_close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 1 ? unwrap(env, argv[0]) : NULL;
  if (!s) return throw_type(env, "close(handle)");
  close_sock(s, 0);
  return NULL;
}

/* fd(handle) -> the descriptor, -1 once closed (tests check that close releases it). */
static napi_value js_fd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], v;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  sock_t *s = argc == 1 ? unwrap(env, argv[0]) : NULL;
  if (!s) return throw_type(env, "fd(handle)");
  napi_create_int32(env, s->fd, &v);
  return v;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"create", NULL, js_create, NULL, NULL, NULL, napi_default, NULL},
      {"start", NULL, js_start, NULL, NULL, NULL, napi_default, NULL},
      {"connect", NULL, js_connect, NULL, NULL, NULL, napi_default, NULL},
      {"flush", NULL, js_flush, NULL, NULL, NULL, napi_default, NULL},
      {"flushArena", NULL, js_flush_arena, NULL, NULL, NULL, napi_default, NULL},
      {"sendOne", NULL, js_send_one, NULL, NULL, NULL, napi_default, NULL},
      {"replaceSlot", NULL, js_replace_slot, NULL, NULL, NULL, napi_default, NULL},
      {"localAddress", NULL, js_local_address, NULL, NULL, NULL, napi_default, NULL},
      {"bufferSizes", NULL, js_buffer_sizes, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_default, NULL},
      {"fd", NULL, js_fd, NULL, NULL, NULL, napi_default, NULL},
      {"gro", NULL, js_gro, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  /* What this build can do, for JS that must not run on an older one (start's third argument). */
  napi_value yes;
  napi_get_boolean(env, true, &yes);
  napi_set_named_property(env, exports, "resumableBatches", yes);
  return exports;
}
