// What a lossy backbone hop did to the media crossing it, measured at the link emulator itself
// (a LinkemTap): for every media conference frame, per source stream and sequence number, when
// its first copy was offered, whether the link lost it, and when the first copy of it came out.
// A copy offered again later is a retransmission (the repair); a sequence number that never
// comes out is far-end loss. Pure: times come in as arguments. The header offsets are the
// conference frame's (docs/wire-formats.md §8): byte 2 kind (1 = media), 12-13 source slot,
// payload from 20, a backend-protocol audio frame whose bytes 4-5 are the source's RTP seq.
import type { LinkemTap } from "../../scripts/world/linkem/forwarder.ts";

const MAGIC = 0x47;
const VERSION_TYPE = 0x16;
const KIND_MEDIA = 1;
const PAYLOAD = 20;
const MIN_MEDIA = PAYLOAD + 12 + 16;
/** Streams tracked at once × seqs per stream: a measurement run, not a product table. */
const MAX_ENTRIES = 1 << 17;

interface Entry {
  firstOfferAt: number;
  firstLost: boolean;
  copies: number;
  deliveredCopies: number;
  deliveredAt: number;
}

export interface RepairFigures {
  /** Distinct media frames (source stream, seq) the sender put on the link. */
  frames: number;
  /** Their first copies the link lost (the loss the hop itself caused). */
  lostOnLink: number;
  /** Frames no copy of which came out of the link (what the far end lacks). */
  lostFarEnd: number;
  /** Frames whose first copy was lost and a later copy came out. */
  repaired: number;
  /** Copies offered after the first (retransmissions), and copies delivered beyond the first. */
  retransmissions: number;
  duplicatesDelivered: number;
  linkLossPct: number;
  farEndLossPct: number;
  /**
   * Per repaired frame, how much later it came out than its first copy would have: delivery of the
   * repair minus (first offer + the link's one-way delay). ms, sorted.
   */
  repairDelaysMs: number[];
}

export interface RepairMeter extends LinkemTap {
  /** Figures for frames sent on `route` in `direction` (e.g. the joiner → hub link). */
  figures(route: string, direction: "up" | "down", oneWayDelayMs: number): RepairFigures;
}

/** The media frame's stream key (route, direction, source slot, seq), or null for any other frame. */
function mediaKey(route: string, direction: string, msg: Buffer): string | null {
  if (msg.length < MIN_MEDIA || msg[0] !== MAGIC || msg[1] !== VERSION_TYPE || msg[2] !== KIND_MEDIA)
    return null;
  const slot = msg.readUInt16BE(12);
  const seq = msg.readUInt16BE(PAYLOAD + 4);
  return `${route}|${direction}|${slot}|${seq}`;
}

export function repairMeter(): RepairMeter {
  const entries = new Map<string, Entry>();
  return {
    offered(route, direction, msg, now, result) {
      const k = mediaKey(route, direction, msg);
      if (k === null) return;
      const e = entries.get(k);
      if (e !== undefined) {
        e.copies++;
        return;
      }
      if (entries.size >= MAX_ENTRIES) return;
      entries.set(k, {
        firstOfferAt: now,
        firstLost: result !== "queued",
        copies: 1,
        deliveredCopies: 0,
        deliveredAt: -1,
      });
    },
    delivered(route, direction, msg, now) {
      const k = mediaKey(route, direction, msg);
      if (k === null) return;
      const e = entries.get(k);
      if (e === undefined) return;
      if (e.deliveredCopies++ === 0) e.deliveredAt = now;
    },
    figures(route, direction, oneWayDelayMs) {
      const prefix = `${route}|${direction}|`;
      const f: RepairFigures = {
        frames: 0,
        lostOnLink: 0,
        lostFarEnd: 0,
        repaired: 0,
        retransmissions: 0,
        duplicatesDelivered: 0,
        linkLossPct: 0,
        farEndLossPct: 0,
        repairDelaysMs: [],
      };
      for (const [k, e] of entries) {
        if (!k.startsWith(prefix)) continue;
        f.frames++;
        if (e.firstLost) f.lostOnLink++;
        if (e.deliveredAt < 0) f.lostFarEnd++;
        else if (e.firstLost) {
          f.repaired++;
          f.repairDelaysMs.push(e.deliveredAt - (e.firstOfferAt + oneWayDelayMs));
        }
        f.retransmissions += e.copies - 1;
        if (e.deliveredCopies > 1) f.duplicatesDelivered += e.deliveredCopies - 1;
      }
      f.linkLossPct = f.frames === 0 ? 0 : (100 * f.lostOnLink) / f.frames;
      f.farEndLossPct = f.frames === 0 ? 0 : (100 * f.lostFarEnd) / f.frames;
      f.repairDelaysMs.sort((a, b) => a - b);
      return f;
    },
  };
}

/** The q-quantile (0..1) of sorted values (nearest rank); NaN when empty. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
