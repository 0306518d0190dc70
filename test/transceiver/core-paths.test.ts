// The path/consent state machine on virtual time: no sockets, no clocks, seeded transaction ids.
import { describe, expect, it } from "vitest";
import { DEFAULT_PATH_LIMITS, PathBook, type PathEvent } from "../../regional/transceiver/core/paths.ts";
import { TransactionCache, txidKey } from "../../regional/transceiver/core/replay.ts";

const T0 = 5_000_000;

function book(over: Partial<typeof DEFAULT_PATH_LIMITS> = {}) {
  let n = 0;
  const b = new PathBook<number>({ ...DEFAULT_PATH_LIMITS, quietMs: 1000, ...over }, () => {
    const t = new Uint8Array(12);
    t[11] = ++n;
    return t;
  });
  const drain = (): PathEvent<number>[] => b.events.splice(0);
  return { b, drain };
}

const tx = (i: number) => String.fromCharCode(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, i >> 8, i & 255);
const req = (i: number) => Uint8Array.of(i);
/** A success response carrying our check's transaction id at offset 8. */
const answerTo = (txid: Uint8Array) => {
  const b = new Uint8Array(20);
  b.set(txid, 8);
  return b;
};

describe("PathBook", () => {
  it("holds a new address's requests, sends one check, and validates only on its answer", () => {
    const { b, drain } = book();
    expect(b.request(T0, 1, tx(1), false, req(1), 0)).toBe("hold");
    const [check] = drain();
    expect(check).toMatchObject({ type: "check", key: 1 });
    expect(b.state(1)).toBe("candidate");
    expect(b.datagram(T0 + 1, 1, 0)).toBe(false);
    const txid = (check as { txid: Uint8Array }).txid;
    // An answer from another address, or with another id, is not ours.
    expect(b.awaits(2, answerTo(txid), 8)).toBe(false);
    expect(b.awaits(1, answerTo(new Uint8Array(12)), 8)).toBe(false);
    expect(b.awaits(1, answerTo(txid), 8)).toBe(true);
    b.validate(T0 + 20, 1, 0);
    const ev = drain();
    expect(ev[0]).toEqual({ type: "validated", key: 1, held: [req(1)] });
    expect(ev[1]).toEqual({ type: "selected", key: 1, previous: undefined });
    expect(b.selected).toBe(1);
    expect(b.request(T0 + 30, 1, tx(2), false, req(2), T0 + 30)).toBe("deliver");
  });

  it("drops a transaction id seen from another address (replay) but not a retransmission", () => {
    const { b, drain } = book();
    b.request(T0, 1, tx(1), false, req(1), 0);
    b.validate(T0 + 10, 1, 0);
    drain();
    expect(b.isReplay(T0 + 20, tx(1), 1)).toBe(false);
    expect(b.request(T0 + 20, 1, tx(1), false, req(1), T0 + 20)).toBe("deliver");
    expect(b.isReplay(T0 + 30, tx(1), 99)).toBe(true);
    expect(b.request(T0 + 30, 99, tx(1), true, req(1), T0 + 20)).toBe("stun_replay");
    expect(b.size).toBe(1);
    expect(b.stats.replays).toBe(2);
    expect(drain()).toEqual([]);
  });

  it("moves the media path to a validated address at once on USE-CANDIDATE, else once the old one is quiet", () => {
    const { b, drain } = book();
    b.request(T0, 1, tx(1), false, req(1), 0);
    b.validate(T0, 1, 0);
    drain();
    // A second address, validated, without USE-CANDIDATE, while path 1 is active: a spare.
    b.request(T0 + 100, 2, tx(2), false, req(2), T0 + 100);
    b.validate(T0 + 110, 2, T0 + 100);
    expect(drain().map((e) => e.type)).toEqual(["check", "validated"]);
    expect(b.selected).toBe(1);
    expect(b.datagram(T0 + 500, 2, T0 + 450)).toBe(true);
    expect(b.selected).toBe(1);
    // Path 1 falls quiet: the next datagram from 2 takes over.
    expect(b.datagram(T0 + 1500, 2, T0 + 450)).toBe(true);
    expect(drain()).toEqual([{ type: "selected", key: 2, previous: 1 }]);
    // A nominating check from a held candidate selects it as soon as it validates.
    b.request(T0 + 1600, 3, tx(3), true, req(3), T0 + 1600);
    b.validate(T0 + 1620, 3, T0 + 1610);
    expect(drain().map((e) => e.type)).toEqual(["check", "validated", "selected"]);
    expect(b.selected).toBe(3);
    expect(b.stats.moves).toBe(2);
  });

  it("caps paths per session, expires unanswered candidates and idle spares, never the media path", () => {
    const { b, drain } = book({ maxPaths: 3, candidateTtlMs: 2000, validatedIdleMs: 10_000 });
    b.request(T0, 1, tx(1), false, req(1), 0);
    b.validate(T0, 1, 0);
    b.request(T0, 2, tx(2), false, req(2), T0);
    b.request(T0, 3, tx(3), false, req(3), T0);
    drain();
    expect(b.request(T0 + 10, 4, tx(4), false, req(4), T0)).toBe("path_cap");
    expect(b.stats.capped).toBe(1);
    b.tick(T0 + 1999);
    expect(b.size).toBe(3);
    // After the TTL the cap has room again (a new request expires the old candidates first).
    expect(b.request(T0 + 2000, 4, tx(5), false, req(4), T0 + 2000)).toBe("hold");
    expect(drain().filter((e) => e.type === "released")).toEqual([
      { type: "released", key: 2, validated: false },
      { type: "released", key: 3, validated: false },
    ]);
    b.validate(T0 + 2010, 4, T0 + 2000);
    drain();
    b.tick(T0 + 60_000);
    // 4 was a validated spare, idle; 1 is the media path and stays.
    expect(drain()).toEqual([{ type: "released", key: 4, validated: true }]);
    expect(b.selected).toBe(1);
    expect(b.size).toBe(1);
  });

  it("sends at most maxChecks checks to a candidate, at most one per interval, with one transaction id", () => {
    const { b, drain } = book({ maxChecks: 2, checkIntervalMs: 200, maxHeld: 2 });
    for (let i = 0; i < 10; i++) b.request(T0 + i * 50, 7, tx(100 + i), false, req(i), 0);
    const checks = drain().filter((e) => e.type === "check") as { txid: Uint8Array }[];
    expect(checks).toHaveLength(2);
    expect(checks[0]!.txid).toEqual(checks[1]!.txid);
    b.validate(T0 + 600, 7, 0);
    // Only the newest held requests are handed on.
    expect(drain()[0]).toEqual({ type: "validated", key: 7, held: [req(8), req(9)] });
  });

  it("a hostile flood of distinct candidates costs at most maxPaths entries and one check each", () => {
    const { b, drain } = book({ maxPaths: 4, candidateTtlMs: 3000 });
    let checks = 0;
    for (let i = 0; i < 30_000; i++) {
      const now = T0 + Math.floor(i / 10); // 30,000 sources over 3 s
      b.request(now, 1000 + i, tx(i), false, req(0), 0);
      checks += drain().filter((e) => e.type === "check").length;
      expect(b.size).toBeLessThanOrEqual(4);
    }
    expect(checks).toBeLessThanOrEqual(8);
    b.tick(T0 + 10_000);
    drain();
    expect(b.size).toBe(0);
    expect(b.rememberedTransactions).toBeLessThanOrEqual(DEFAULT_PATH_LIMITS.replay.capacity);
  });
});

describe("TransactionCache", () => {
  it("forgets ids after the window and beyond its capacity", () => {
    const c = new TransactionCache<number>({ capacity: 3, windowMs: 1000 });
    c.remember(0, "a", 1);
    expect(c.isReplay(999, "a", 2)).toBe(true);
    expect(c.isReplay(1000, "a", 2)).toBe(false);
    for (const id of ["b", "c", "d", "e"]) c.remember(1100, id, 1);
    expect(c.size).toBe(3);
    expect(c.isReplay(1100, "b", 2)).toBe(false);
    expect(c.isReplay(1100, "e", 2)).toBe(true);
  });

  it("keys 12 bytes at an offset", () => {
    const b = Uint8Array.from({ length: 20 }, (_, i) => i);
    expect(txidKey(b, 8)).toBe(String.fromCharCode(8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19));
  });
});
