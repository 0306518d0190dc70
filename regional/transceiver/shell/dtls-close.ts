// DTLS close_notify on hangup (RFC 6347 §4.1 / RFC 5246 §7.2.1). werift closes its DTLS transport
// without telling the peer (a todo upstream), so a browser's connectionState stays `connected`
// until consent fails, 30 s later. This sends the warning-level close_notify alert as one
// encrypted record through the transport's own context, then closes the peer connection.
// It reaches into werift's DtlsSocket (pinned version, see shell/werift-glue.ts): the members it uses
// are checked on every call and a missing one only skips the alert.
import type { RTCPeerConnection } from "werift";

const ALERT = 21;
const CLOSE_NOTIFY = new Uint8Array([1, 0]); // level warning, description close_notify
/** A hung send must not hold the hangup: the alert is best effort. */
const SEND_BUDGET_MS = 250;

interface DtlsInternals {
  connected: boolean;
  dtls: { version: { major: number; minor: number }; epoch: number; recordSequenceNumber: number };
  cipher: { encryptPacket(pkt: RecordLike): RecordLike };
  transport: { send(buf: Buffer): Promise<void> | void };
}

/** The record shape werift's cipher context encrypts in place (recordLayerHeader + fragment). */
class RecordLike {
  readonly recordLayerHeader: {
    contentType: number;
    protocolVersion: { major: number; minor: number };
    epoch: number;
    sequenceNumber: number;
    contentLen: number;
  };
  fragment: Buffer;
  constructor(header: RecordLike["recordLayerHeader"], fragment: Buffer) {
    this.recordLayerHeader = header;
    this.fragment = fragment;
  }
  serialize(): Buffer {
    const h = this.recordLayerHeader;
    const out = Buffer.alloc(13 + this.fragment.length);
    out.writeUInt8(h.contentType, 0);
    out.writeUInt8(h.protocolVersion.major, 1);
    out.writeUInt8(h.protocolVersion.minor, 2);
    out.writeUInt16BE(h.epoch, 3);
    out.writeUIntBE(h.sequenceNumber, 5, 6);
    out.writeUInt16BE(this.fragment.length, 11);
    this.fragment.copy(out, 13);
    return out;
  }
}

function internals(x: unknown): DtlsInternals | null {
  const d = x as Partial<DtlsInternals> | undefined;
  if (!d?.connected || !d.dtls || !d.cipher || typeof d.cipher.encryptPacket !== "function") return null;
  if (typeof d.transport?.send !== "function") return null;
  return d as DtlsInternals;
}

/** Sends close_notify on every connected DTLS transport of `pc`; resolves when handed to ICE. */
export async function sendCloseNotify(pc: RTCPeerConnection): Promise<number> {
  let sent = 0;
  for (const t of pc.dtlsTransports) {
    const d = internals((t as unknown as { dtls?: unknown }).dtls);
    if (!d) continue;
    const rec = new RecordLike(
      {
        contentType: ALERT,
        protocolVersion: d.dtls.version,
        epoch: d.dtls.epoch,
        sequenceNumber: ++d.dtls.recordSequenceNumber,
        contentLen: CLOSE_NOTIFY.length,
      },
      Buffer.from(CLOSE_NOTIFY),
    );
    await d.transport.send(d.cipher.encryptPacket(rec).serialize());
    sent++;
  }
  return sent;
}

/** The session's goodbye: close_notify first (best effort, bounded), then werift's close. */
export async function closePeer(pc: RTCPeerConnection): Promise<void> {
  await Promise.race([
    sendCloseNotify(pc).catch(() => 0),
    new Promise((r) => setTimeout(r, SEND_BUDGET_MS).unref()),
  ]);
  await pc.close();
}
