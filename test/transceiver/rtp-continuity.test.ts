// The client's outbound RTP stream stays continuous when its source changes (backend -> mixer ->
// backend): regional/transceiver/core/rtp-continuity.ts on virtual time.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { RtpContinuity } from "../../regional/transceiver/core/rtp-continuity.ts";

const pkt = (seq: number, ts: number, marker = false) => ({ sequenceNumber: seq, timestamp: ts, marker });

describe("RtpContinuity", () => {
  it("passes one source through unchanged", () => {
    const c = new RtpContinuity();
    for (let i = 0; i < 5; i++) {
      const n = pkt(65533 + i, 4294967000 + i * 960);
      c.map(0, n, i * 20, 48);
      expect(n).toEqual(pkt((65533 + i) & 0xffff, (4294967000 + i * 960) >>> 0));
    }
    expect(c.switches).toBe(0);
  });

  it("maps a new source onto last + 1 with the timestamp advanced by the wall time, marker set", () => {
    const c = new RtpContinuity();
    const a = pkt(1000, 50_000);
    c.map(0, a, 0, 48);
    const b = pkt(1001, 50_960);
    c.map(0, b, 20, 48);
    // The mixer's own numbering, 60 ms later.
    const m = pkt(7, 123);
    c.map(1, m, 80, 48);
    expect(m).toEqual(pkt(1002, 50_960 + 60 * 48, true));
    const m2 = pkt(8, 123 + 960);
    c.map(1, m2, 100, 48);
    expect(m2).toEqual(pkt(1003, 50_960 + 60 * 48 + 960));
    // Back to the backend (whose numbering moved on meanwhile): continues again, not back.
    const back = pkt(1200, 300_000);
    c.map(0, back, 120, 48);
    expect(back).toEqual(pkt(1004, 50_960 + 60 * 48 + 960 + 20 * 48, true));
    expect(c.switches).toBe(2);
  });

  it("never moves the stream back across any sequence of switches (seq strictly +1 per in-order frame)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ source: fc.integer({ min: 0, max: 1 }), seq: fc.integer({ min: 0, max: 65535 }) }),
          {
            minLength: 1,
            maxLength: 60,
          },
        ),
        (runs) => {
          const c = new RtpContinuity();
          let prev: number | undefined;
          let now = 0;
          const next: (number | undefined)[] = [undefined, undefined];
          for (const r of runs) {
            // Each source counts on from its own random start, one frame per 20 ms.
            const was = next[r.source];
            next[r.source] = was === undefined ? r.seq : (was + 1) & 0xffff;
            const n = pkt(next[r.source]!, next[r.source]! * 960);
            now += 20;
            c.map(r.source, n, now, 48);
            if (prev !== undefined) expect(n.sequenceNumber).toBe((prev + 1) & 0xffff);
            prev = n.sequenceNumber;
          }
        },
      ),
    );
  });
});
