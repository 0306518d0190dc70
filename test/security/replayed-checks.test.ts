// Attacks 1 and 2 of the security audit, as the attacker does them: a real werift call through a
// real POP, cluster relay and transceiver (echo agent behind it); the attacker sits on the client's
// path (the Tap), copies the client's STUN Binding requests (MESSAGE-INTEGRITY valid) and sends the
// same bytes to the VIP from other addresses on 127/8 that never answer anything (a spoofer cannot
// receive). Attack 1: one replayed USE-CANDIDATE check must not move the call or draw its SRTP.
// Attack 2: the same check from 30,000 sources in 30,000 /24s must not draw more bytes to any
// source than it sent, must not hurt the call, and all state it creates must go away again; also
// once the check is older than the transceiver's replay window (the second line of defence).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep, until } from "../transceiver/helpers/harness.ts";
import {
  attackerSocket,
  type CallSystem,
  drops,
  heapAfterGc,
  metric,
  mib,
  type SpoofResult,
  sessionPaths,
  spoof,
  startCallSystem,
} from "./support/call-system.ts";

const SOURCES = 30_000;
const SPREAD_MS = 5_000;

/** Spoofs `check` from SOURCES sources while the call talks; asserts what attack 2 requires. */
async function reflectionAttack(s: CallSystem, check: Buffer, tag: number): Promise<SpoofResult> {
  const { t, pop, callId } = s;
  const popFlows = () => metric(pop.addresses.admin, 'gr_relay_flows_active{role="pop"}');
  const baseline = {
    muxPaths: t.mux.pathCount,
    sessionPaths: sessionPaths(t, callId),
    popFlows: await popFlows(),
    heap: heapAfterGc(),
  };
  const address = (await s.status()).clientAddress;
  let maxSessionPaths = 0;
  let maxMuxPaths = 0;
  const sampler = setInterval(() => {
    maxSessionPaths = Math.max(maxSessionPaths, sessionPaths(t, callId));
    maxMuxPaths = Math.max(maxMuxPaths, t.mux.pathCount);
  }, 50);
  s.talker.start(tag);
  const result = await spoof(s.vipPort, check, SOURCES, SPREAD_MS);
  const echo = await s.talker.stop();
  clearInterval(sampler);
  const figures = {
    checkBytes: check.length,
    result,
    echo,
    maxSessionPaths,
    maxMuxPaths,
    popFlowsCreated: await metric(pop.addresses.admin, 'gr_relay_flows_created_total{role="pop"}'),
    transceiverDrops: { stun_replay: drops(t, "stun_replay"), path_cap: drops(t, "path_cap") },
    ourChecks: t.metrics.pathEventCount?.("checked"),
  };
  expect(result.errors).toBe(0);
  expect(result.sentBytes).toBe(SOURCES * check.length);
  // Amplification per source, measured at the sources: never more bytes back than sent.
  expect(result.maxRatio).toBeLessThanOrEqual(1);
  // The call: >= 99 % of its audio echoed during the attack, same address, still connected.
  expect(echo.echoed / echo.sent).toBeGreaterThanOrEqual(0.99);
  const st = await s.status();
  expect(st.clientAddress).toBe(address);
  expect(st.state).toBe("connected");
  // Per-session state for unvalidated paths stayed bounded...
  expect(maxSessionPaths).toBeLessThanOrEqual(4);
  expect(maxMuxPaths).toBeLessThanOrEqual(baseline.muxPaths + 4);
  // ... and everything the attack created is released (well within 60 s).
  await until(
    async () =>
      t.mux.pathCount === baseline.muxPaths &&
      sessionPaths(t, callId) === baseline.sessionPaths &&
      (await popFlows()) <= baseline.popFlows,
    "state back to baseline",
    60_000,
  );
  // The whole test process (transceiver, both relays, the client, the echo agent), after a GC.
  const heap = heapAfterGc();
  console.log(JSON.stringify({ ...figures, heapBaselineMiB: mib(baseline.heap), heapAfterMiB: mib(heap) }));
  expect(heap).toBeLessThanOrEqual(baseline.heap * 1.1);
  return result;
}

describe("replayed STUN checks (attacks 1 and 2)", () => {
  let s: CallSystem;
  beforeAll(async () => {
    s = await startCallSystem();
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  it("attack 1: one replayed USE-CANDIDATE check from another address moves nothing and draws no SRTP", async () => {
    const { t, tap } = s;
    const check = tap.check(true)!;
    const before = await s.status();
    expect(before.clientAddress).toBe(tap.outsideAddress);
    const replays = drops(t, "stun_replay");
    const attacker = await attackerSocket("127.0.3.7");
    s.talker.start(1);
    await sleep(500);
    attacker.sock.send(check, s.vipPort, "127.0.0.1");
    // Until the transceiver dropped it, or (the attack working) the call moved to the attacker.
    await until(
      async () =>
        drops(t, "stun_replay") > replays || (await s.status()).clientAddress !== before.clientAddress,
      "the replay reached the transceiver",
    );
    await sleep(2000);
    const echo = await s.talker.stop();
    const st = await s.status();
    const got = attacker.rx.reduce((n, m) => n + m.length, 0);
    console.log(
      JSON.stringify({
        attack: 1,
        replayBytes: check.length,
        bytesToAttacker: got,
        datagramsToAttacker: attacker.rx.length,
        clientAddress: st.clientAddress,
        echo,
      }),
    );
    expect(st.clientAddress).toBe(tap.outsideAddress);
    expect(st.addressChanges).toBe(before.addressChanges);
    expect(st.state).toBe("connected");
    expect(got).toBeLessThanOrEqual(check.length);
    expect(attacker.rx.filter((m) => m[0]! >= 128 && m[0]! < 192)).toEqual([]); // no RTP/SRTP
    expect(echo.echoed / echo.sent).toBeGreaterThanOrEqual(0.99);
    attacker.sock.close();
  });

  it(`attack 2: the same check from ${SOURCES} sources: amplification <= 1 each, the call keeps >= 99 % echo, state is released`, async () => {
    const r = await reflectionAttack(s, s.tap.check(false)!, 2);
    // Every replay was recognised: nothing went back to any source.
    expect(r.receivedBytes).toBe(0);
  }, 120_000);
});

describe("replayed STUN checks older than the replay window (attack 2, second line of defence)", () => {
  let s: CallSystem;
  beforeAll(async () => {
    // A 1 s window stands in for a capture replayed long after it was made.
    s = await startCallSystem({ pathLimits: { replay: { capacity: 256, windowMs: 1000 } } });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
  });

  it(`${SOURCES} sources: each new address costs at most one check of ours, never more bytes than it sent`, async () => {
    const check = s.tap.check(false)!;
    await sleep(1500); // the transceiver has forgotten the check's transaction id
    const ourChecks = (): number => s.t.metrics.pathEventCount?.("checked") ?? 0;
    const checked = ourChecks();
    const r = await reflectionAttack(s, check, 3);
    // Only a few sources became candidates (the cap, then the id is remembered again); each got
    // one check, no larger than the replay, and none ever validated.
    const ours = ourChecks() - checked;
    expect(ours).toBeGreaterThan(0);
    expect(r.answeredSources).toBeLessThanOrEqual(ours);
    expect(r.receivedDatagrams).toBeLessThanOrEqual(ours);
    expect(s.t.metrics.pathEventCount?.("validated")).toBe(1);
  }, 120_000);
});
