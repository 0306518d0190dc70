// The repair meter (test/cascade/repair-meter.ts) on hand-made events: a frame lost and re-sent
// counts as repaired with its extra delay, a frame lost for good as far-end loss, other frames
// (control kinds, other streams, other routes) are not counted.
import { describe, expect, it } from "vitest";
import { quantile, repairMeter } from "./repair-meter.ts";

/** A conference media frame shape: header, then an audio frame with `seq`, then a 16-byte MAC. */
function media(slot: number, seq: number, kind = 1): Buffer {
  const b = Buffer.alloc(20 + 12 + 3 + 16);
  b[0] = 0x47;
  b[1] = 0x16;
  b[2] = kind;
  b.writeUInt16BE(slot, 12);
  b[20] = 1;
  b[21] = 1;
  b.writeUInt16BE(seq, 24);
  return b;
}

describe("repair meter", () => {
  it("counts originals, link loss, repairs with their delay, and far-end loss", () => {
    const m = repairMeter();
    // seq 0..9 from slot 2 every 20 ms over a 30 ms link; 3 and 7 lost; 3 re-sent at 80 ms and delivered.
    for (let s = 0; s < 10; s++) {
      const lost = s === 3 || s === 7;
      m.offered("b->a", "up", media(2, s), s * 20, lost ? "lost" : "queued");
      if (!lost) m.delivered("b->a", "up", media(2, s), s * 20 + 30);
    }
    m.offered("b->a", "up", media(2, 3), 130, "queued");
    m.delivered("b->a", "up", media(2, 3), 160);
    // A duplicate of 5 (a needless retransmission), a NACK-kind frame, another stream and route.
    m.offered("b->a", "up", media(2, 5), 140, "queued");
    m.delivered("b->a", "up", media(2, 5), 170);
    m.offered("b->a", "up", media(2, 99, 2), 150, "queued");
    m.offered("b->a", "up", media(1, 1), 150, "lost");
    m.offered("a->b", "up", media(2, 1), 150, "lost");
    const f = m.figures("b->a", "up", 30);
    expect(f.frames).toBe(11); // ten of slot 2, one of slot 1
    expect(f.lostOnLink).toBe(3);
    expect(f.repaired).toBe(1);
    expect(f.lostFarEnd).toBe(2);
    expect(f.retransmissions).toBe(2);
    expect(f.duplicatesDelivered).toBe(1);
    // Seq 3 would have arrived at 60 + 30; it came at 160: 70 ms late.
    expect(f.repairDelaysMs).toEqual([70]);
    expect(f.farEndLossPct).toBeCloseTo((100 * 2) / 11, 6);
    expect(m.figures("a->b", "up", 30).lostFarEnd).toBe(1);
  });

  it("quantiles by nearest rank", () => {
    const v = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(quantile(v, 0.5)).toBe(5);
    expect(quantile(v, 0.95)).toBe(10);
    expect(quantile([], 0.5)).toBeNaN();
  });
});
