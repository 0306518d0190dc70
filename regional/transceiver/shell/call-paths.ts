// A session's client paths on the shared socket: the shell around core/paths.ts. It is the
// session's MuxCall: authenticated checks from a new address are held while our own check goes
// there; only an answered check binds the address for media (and tells the relays with a
// pathValidated frame); werift (the ICE agent) only ever hears from validated addresses, so it
// never pairs, answers or sends media to a spoofed one. Datagrams from a candidate are dropped
// (`path_unvalidated`); a replayed transaction id (`stun_replay`), a full book (`path_cap`) and an
// address in use by another live session (`path_in_use`) are dropped and counted.
import { randomBytes } from "node:crypto";
import type { DatagramKind } from "../../../shared/stun/classify.ts";
import { type HmacSha1, verifyMessageIntegrity } from "../../../shared/stun/integrity.ts";
import type { StunView } from "../../../shared/stun/reader.ts";
import { encodeBindingRequest } from "../../../shared/stun/writer.ts";
import { type ClientPath, isSuccessResponse, type Mux, type MuxCall, type PathKey } from "../core/mux.ts";
import type { PathBook, PathEvent } from "../core/paths.ts";
import { txidKey } from "../core/replay.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { Address, IceAttachment } from "./werift-glue.ts";

export interface PathHost {
  /** Our check's USERNAME and key: the client's ufrag, our current ufrag, the client's ice-pwd. */
  remoteUfrag(): string;
  localUfrag(): string;
  /** The media path moved to a new (validated) address. */
  onMoved(path: ClientPath): void;
  /** An authenticated answer to one of werift's consent checks on the media path. */
  onConsent(): void;
}

/** PRIORITY of our checks: a peer-reflexive candidate's (RFC 8445 §5.1.2). */
const CHECK_PRIORITY = 0x6e001eff;
const enc = new TextEncoder();

export class CallPaths implements MuxCall {
  readonly #mux: Mux;
  readonly #metrics: TransceiverMetrics;
  readonly #hmac: HmacSha1;
  readonly #host: PathHost;
  readonly book: PathBook<PathKey>;
  #att: IceAttachment | undefined;
  /** Paths of this session by mux key (at most the book's maxPaths). */
  readonly #byKey = new Map<PathKey, ClientPath>();
  #current: ClientPath | undefined;
  #ended = false;
  #txid = "";
  #remotePwd = "";
  #remotePwdBytes = new Uint8Array(0);
  readonly #tieBreaker = randomBytes(8).readBigUInt64BE(0);
  /** Requests to hand to werift once this call's events are applied. */
  #deliver: { payload: Uint8Array; addr: Address }[] = [];
  packetsFromClient = 0;
  packetsToClient = 0;

  constructor(
    mux: Mux,
    metrics: TransceiverMetrics,
    hmac: HmacSha1,
    book: PathBook<PathKey>,
    host: PathHost,
  ) {
    this.#mux = mux;
    this.#metrics = metrics;
    this.#hmac = hmac;
    this.book = book;
    this.#host = host;
  }

  attach(att: IceAttachment): void {
    this.#att = att;
  }

  get pathCount(): number {
    return this.#byKey.size;
  }

  /** The media path: werift's selected pair if it is one of ours, else the one we selected. */
  mediaPath(): ClientPath | undefined {
    const sel = this.#att?.selectedAddress();
    return (sel ? this.#find(sel) : undefined) ?? this.#current;
  }

  // ---- MuxCall -----------------------------------------------------------------------

  isReplay(payload: Buffer, view: StunView, key: PathKey): boolean {
    if (this.#ended) return false;
    this.#txid = txidKey(payload, view.transactionIdOffset);
    return this.book.isReplay(this.#mux.clock.now, this.#txid, key);
  }

  onCheck(payload: Buffer, view: StunView, key: PathKey): void {
    if (this.#ended) return;
    const mux = this.#mux;
    const now = mux.clock.now;
    const other = mux.pathOf(key);
    if (
      other?.session !== undefined &&
      other.session !== this &&
      other.validated &&
      now - other.lastSeen < this.book.limits.validatedIdleMs
    ) {
      // Another session proved its client is at this address and it is still in use: a check
      // for us from there is a replay or a forgery, and must not take the path away.
      this.#metrics.drops.path_in_use.inc();
      return;
    }
    const verdict = this.book.request(
      now,
      key,
      this.#txid,
      view.useCandidate,
      payload,
      this.#current?.lastSeen ?? 0,
    );
    if (verdict === "stun_replay" || verdict === "path_cap") {
      this.#metrics.drops[verdict].inc();
      this.#apply();
      return;
    }
    const path = mux.bindPath(key, this);
    this.#byKey.set(key, path);
    this.packetsFromClient++;
    if (verdict === "deliver") {
      // A relay that lost the flow (restart without a mirror) rebuilt it half-open from this
      // check: the address is still ours and validated, so say so again before werift answers.
      if (path.validated) mux.sendPathValidated(path);
      this.#deliver.push({ payload, addr: path.addr });
    }
    this.#apply();
  }

  onDatagram(payload: Buffer, path: ClientPath, _kind: DatagramKind, view: StunView | null): void {
    if (this.#ended) return;
    this.packetsFromClient++;
    const att = this.#att!;
    if (path === this.#current) {
      if (view !== null && isSuccessResponse(view) && this.#verifyResponse(payload, view)) {
        // RFC 7675 consent: an authenticated answer to one of werift's checks on the media path.
        this.#host.onConsent();
      }
      att.deliver(payload, path.addr);
      return;
    }
    const now = this.#mux.clock.now;
    const key = path.key;
    if (
      view !== null &&
      isSuccessResponse(view) &&
      this.book.awaits(key, payload, view.transactionIdOffset)
    ) {
      if (this.#verifyResponse(payload, view)) {
        this.book.validate(now, key, this.#current?.lastSeen ?? 0);
        this.#apply();
      } else {
        this.#metrics.drops.bad_integrity.inc();
      }
      return;
    }
    if (!this.book.datagram(now, key, this.#current?.lastSeen ?? 0)) {
      this.#metrics.drops.path_unvalidated.inc();
      return;
    }
    this.#apply();
    att.deliver(payload, path.addr);
  }

  onPathLost(path: ClientPath): void {
    if (this.#byKey.get(path.key) !== path) return;
    this.#byKey.delete(path.key);
    if (this.#current === path) this.#current = undefined;
    this.book.release(path.key);
    this.#apply();
  }

  #verifyResponse(payload: Buffer, view: StunView): boolean {
    const pwd = this.#att!.remotePassword();
    if (pwd !== this.#remotePwd) {
      this.#remotePwd = pwd;
      this.#remotePwdBytes = enc.encode(pwd);
    }
    return verifyMessageIntegrity(payload, view, this.#remotePwdBytes, this.#hmac);
  }

  // ---- events from the book -----------------------------------------------------------

  #apply(): void {
    const events = this.book.events;
    for (let i = 0; i < events.length; i++) this.#event(events[i]!);
    events.length = 0;
    if (this.#deliver.length === 0) return;
    const queued = this.#deliver;
    this.#deliver = [];
    for (const d of queued) this.#att!.deliver(d.payload as Buffer, d.addr);
  }

  #event(e: PathEvent<PathKey>): void {
    const path = this.#byKey.get(e.key);
    switch (e.type) {
      case "check":
        if (path !== undefined) this.#sendCheck(path, e.txid);
        return;
      case "validated":
        if (path === undefined) return;
        this.#metrics.pathEvent("validated");
        path.validated = true;
        // Before anything werift sends there: the relays lift the half-open limits first.
        this.#mux.sendPathValidated(path);
        for (const payload of e.held) this.#deliver.push({ payload, addr: path.addr });
        return;
      case "selected": {
        if (path === undefined) return;
        const moved = this.#current !== undefined && this.#current !== path;
        this.#att?.moveSelectedPair(path.ip, path.port);
        this.#current = path;
        if (moved || e.previous !== undefined) this.#host.onMoved(path);
        return;
      }
      case "released":
        this.#metrics.pathEvent(e.validated ? "released" : "expired");
        if (path === undefined) return;
        this.#byKey.delete(e.key);
        if (this.#current === path) this.#current = undefined;
        if (path.session === this) this.#mux.removePath(path);
        return;
    }
  }

  #sendCheck(path: ClientPath, txid: Uint8Array): void {
    const att = this.#att;
    if (att === undefined) return;
    const check = encodeBindingRequest({
      transactionId: txid,
      username: `${this.#host.remoteUfrag()}:${this.#host.localUfrag()}`,
      password: att.remotePassword(),
      hmacSha1: this.#hmac,
      priority: CHECK_PRIORITY,
      controlling: false,
      tieBreaker: this.#tieBreaker,
    });
    this.#metrics.pathEvent("checked");
    this.packetsToClient++;
    this.#mux.send(path, check);
  }

  // ---- werift's datagrams to the client -------------------------------------------------

  /** werift sends to `addr`: only along a validated path of this session. */
  sendTo(data: Buffer, addr: Address): void {
    let p = this.#current;
    if (p === undefined || p.port !== addr[1] || p.ip !== addr[0]) {
      p = this.#find(addr);
      if (p === undefined) {
        this.#metrics.drops.no_route.inc();
        return;
      }
      if (!this.book.isValidated(p.key)) {
        this.#metrics.drops.path_unvalidated.inc();
        return;
      }
      const sel = this.#att?.selectedAddress();
      if (sel !== undefined && sel[0] === p.ip && sel[1] === p.port) {
        this.#current = p;
        this.book.adopt(p.key);
      }
    }
    this.packetsToClient++;
    this.#mux.send(p, data);
  }

  #find(addr: Address): ClientPath | undefined {
    for (const p of this.#byKey.values()) if (p.port === addr[1] && p.ip === addr[0]) return p;
    return undefined;
  }

  // ---- timers and end -------------------------------------------------------------------

  tick(now: number): void {
    if (this.#ended) return;
    this.book.tick(now);
    this.#apply();
  }

  /** Stops taking datagrams (the session ended); the paths stay for the goodbyes. */
  stop(): void {
    this.#ended = true;
  }

  /** Tells the relays every path's flow is over (media path first) and unbinds them. */
  closeAll(reason: number): void {
    const current = this.mediaPath();
    const paths = [...this.#byKey.values()].sort((a) => (a === current ? -1 : 1));
    for (const p of paths) {
      if (p.session !== this) continue;
      this.#mux.sendFlowClose(p, reason);
      this.#mux.removePath(p);
    }
    this.#byKey.clear();
    this.#current = undefined;
    this.book.clear();
  }
}
