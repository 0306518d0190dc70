// DTLS record sequence numbers must never repeat within an epoch (RFC 6347 §4.1): the peer's
// replay window drops a repeated (epoch, sequence_number) silently (§4.1.2.6). werift (pinned,
// see shell/werift-glue.ts) sends its Finished as epoch 1 record N (the handshake's epoch-0 count + 1)
// and then restarts the counter at 0, so its N-th application record after the handshake repeats
// (1, N) and Chromium drops it. Mostly an SCTP packet, which SCTP retransmits; but when the
// hangup's close_notify is that record, the browser never closes. So, once the transport
// connects, the counter continues past every epoch-1 record of the handshake's last flight.
// Reaches into werift's DtlsSocket: a missing member only skips the fix.
import type { RTCDtlsTransport, RTCPeerConnection } from "werift";

const RECORD_HEADER_BYTES = 13;

interface SequenceInternals {
  dtls: { epoch: number; recordSequenceNumber: number; lastMessage: unknown };
}

function internals(x: unknown): SequenceInternals | null {
  const d = x as Partial<SequenceInternals> | undefined;
  const c = d?.dtls;
  if (!c || typeof c.recordSequenceNumber !== "number" || typeof c.epoch !== "number") return null;
  return d as SequenceInternals;
}

/** The highest sequence number of an `epoch` record in `flight` (serialized records), or -1. */
export function highestSequence(flight: unknown, epoch: number): number {
  let max = -1;
  if (!Array.isArray(flight)) return max;
  for (const buf of flight) {
    if (!(buf instanceof Uint8Array)) continue;
    const b = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
    for (let off = 0; off + RECORD_HEADER_BYTES <= b.length; ) {
      if (b.readUInt16BE(off + 3) === epoch) max = Math.max(max, b.readUIntBE(off + 5, 6));
      off += RECORD_HEADER_BYTES + b.readUInt16BE(off + 11);
    }
  }
  return max;
}

/** Moves the transport's record counter past the handshake's records of the current epoch. */
export function continueRecordSequence(t: RTCDtlsTransport): boolean {
  const d = internals((t as unknown as { dtls?: unknown }).dtls);
  if (!d) return false;
  const used = highestSequence(d.dtls.lastMessage, d.dtls.epoch);
  if (used > d.dtls.recordSequenceNumber) d.dtls.recordSequenceNumber = used;
  return true;
}

/** Applies continueRecordSequence to each DTLS transport of `pc` as it connects. */
export function guardRecordSequence(pc: RTCPeerConnection): void {
  for (const t of pc.dtlsTransports) {
    // Synchronous with werift's own state change, before SCTP starts on the transport.
    t.onStateChange.subscribe((state) => {
      if (state === "connected") continueRecordSequence(t);
    });
  }
}
