// What the client measures on its echoed audio, pure: each payload carries a magic, a sequence
// number and the send time; RTT per echo, interarrival jitter (RFC 3550's running estimate, on
// the round trip), loss over the packets sent, and the longest gap between echoes.

const MAGIC = 0x47525731; // "GRW1"
export const PAYLOAD_BYTES = 40;

export class MediaMeter {
  readonly seen = new Set<number>();
  rtts: number[] = [];
  jitter = 0;
  #lastTransit = Number.NaN;
  lastAt = Number.NaN;
  maxGapMs = 0;
  firstAt = Number.NaN;
  #waiters: ((at: number) => void)[] = [];
  readonly #buf = Buffer.alloc(PAYLOAD_BYTES);

  payload(seq: number, now: number): Buffer {
    const b = Buffer.from(this.#buf);
    b.writeUInt32BE(MAGIC, 0);
    b.writeUInt32BE(seq, 4);
    b.writeDoubleBE(now, 8);
    return b;
  }

  received(payload: Buffer, now: number): void {
    if (payload.length < 16 || payload.readUInt32BE(0) !== MAGIC) return;
    const seq = payload.readUInt32BE(4);
    if (this.seen.has(seq)) return;
    this.seen.add(seq);
    const rtt = now - payload.readDoubleBE(8);
    this.rtts.push(rtt);
    if (!Number.isNaN(this.#lastTransit))
      this.jitter += (Math.abs(rtt - this.#lastTransit) - this.jitter) / 16;
    this.#lastTransit = rtt;
    if (!Number.isNaN(this.lastAt)) this.maxGapMs = Math.max(this.maxGapMs, now - this.lastAt);
    else {
      this.firstAt = now;
      for (const w of this.#waiters.splice(0)) w(now);
    }
    this.lastAt = now;
  }

  firstEcho(timeoutMs: number): Promise<number> {
    if (!Number.isNaN(this.firstAt)) return Promise.resolve(this.firstAt);
    return new Promise((res, rej) => {
      const t = setTimeout(() => rej(new Error("timeout")), timeoutMs);
      this.#waiters.push((at) => {
        clearTimeout(t);
        res(at);
      });
    });
  }
}

const median = (xs: number[]): number => {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** The client's figures; loss counts only packets sent after the first echo came back. */
export function clientStats(
  m: MediaMeter,
  sent: number,
): { rttMs: number; jitterMs: number; lossPct: number; gapMs: number; echoes: number; sent: number } {
  const first = Math.min(...m.seen);
  const window = Number.isFinite(first) ? sent - first : 0;
  let got = 0;
  for (const s of m.seen) if (s >= first) got++;
  const r = (x: number): number => Math.round(x * 100) / 100;
  return {
    rttMs: r(median(m.rtts)),
    jitterMs: r(m.jitter),
    lossPct: window > 0 ? r((100 * (window - got)) / window) : 100,
    gapMs: r(m.maxGapMs),
    echoes: m.rtts.length,
    sent,
  };
}
