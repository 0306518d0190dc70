// SRTP packet index estimation (RFC 3711 3.3.1), in place of werift 0.25.2's
// Context.updateRolloverCount, which install.ts swaps this in for. werift's guesses a wrap only
// within 100 seqs of it: a longer gap across the wrap (65300 -> 200) keeps the ROC, and seq 0
// after any seq above 100 (5000 -> 0) bumps it; either breaks the stream for good.
//
// werift calls the method for protect (on the committed state), then hands `rolloverCounter` to
// its cipher as the packet's ROC. So `rolloverCounter` here is the packet's estimate v, and the
// RFC's ROC (of the highest index s_l) is kept beside it in `roc`: a late packet from before a
// wrap is sent or checked with ROC - 1 without moving ROC or s_l back. Unprotect (unprotect.ts,
// in place of werift's SrtpContext.decryptRtp) estimates with packetRoc and commits with
// commitIndex only once the packet authenticated.

/** werift's per-SSRC SRTP state, with the RFC's ROC added (`roc`). */
export interface SrtpSsrcState {
  /** The ROC the cipher uses for this packet (werift reads it after the call). */
  rolloverCounter: number;
  /** s_l: the seq of the highest index seen. */
  lastSequenceNumber: number;
  /** werift's flag: a packet of this SSRC was seen. */
  rolloverHasProcessed?: boolean;
  /** ROC of the highest index seen (absent until the first packet). */
  roc?: number;
}

const HALF = 0x8000;

/**
 * RFC 3711 3.3.1: the ROC of a packet with `seq`, given the ROC and s_l of the highest index
 * seen. ROC - 1 is never below 0 (as libsrtp: at ROC 0 a seq far behind s_l reads as ahead).
 */
export function estimateRoc(roc: number, sl: number, seq: number): number {
  if (sl < HALF) return seq - sl > HALF && roc > 0 ? roc - 1 : roc;
  return sl - HALF > seq ? roc + 1 : roc;
}

/** The ROC (v) of a packet with `seq` against the state `s` (undefined: the SSRC's first). */
export function packetRoc(s: SrtpSsrcState | undefined, seq: number): number {
  if (s === undefined) return 0;
  if (!s.rolloverHasProcessed) return s.rolloverCounter;
  return estimateRoc(s.roc ?? s.rolloverCounter, s.lastSequenceNumber, seq);
}

/** Moves `s` for a packet with `seq` and ROC `v` (from packetRoc): ROC and s_l only forward. */
export function commitIndex(s: SrtpSsrcState, seq: number, v: number): void {
  if (!s.rolloverHasProcessed) {
    // The first packet sets s_l; its ROC is the initial one (0 for DTLS-SRTP, RFC 3711 3.3.1).
    s.rolloverHasProcessed = true;
    s.roc = v;
    s.lastSequenceNumber = seq;
    return;
  }
  const roc = s.roc ?? s.rolloverCounter;
  s.rolloverCounter = v;
  if (v > roc || (v === roc && seq > s.lastSequenceNumber)) {
    s.roc = v;
    s.lastSequenceNumber = seq;
  } else {
    s.roc = roc;
  }
}

/** The replacement for werift's `Context.prototype.updateRolloverCount(seq, state)`. */
export function updateRolloverCount(this: unknown, seq: number, s: SrtpSsrcState): void {
  commitIndex(s, seq, packetRoc(s, seq));
}
