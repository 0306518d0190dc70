// Wire-format micro-benchmarks (npm run bench:wire): ops/s and ns/op on one core for the relay's
// per-datagram work. Targets from issue 2: classification + USERNAME extraction > 5M/s, hint
// verification > 200k/s, frame encode and decode > 10M/s each.
//
//   node bench/wire/run.ts [--rounds 7] [--ms 300] [--json]
//
// Each case runs `rounds` timed rounds of about `ms` milliseconds after a warm-up and reports the
// median (and the best) round. Rates are per second of this process's CPU time (user + system,
// process.cpuUsage), so time the machine spent on other processes does not count against us (the
// machine is shared); the wall-clock rate is reported next to it, with the load average. Inputs rotate through 64 distinct datagrams so branch predictors
// and caches see realistic variety. The hint case also measures the same verifier with a
// createHmac-based MacSync in the same run, as the baseline the midstate HMAC is compared to.
import { createHmac, createSecretKey } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { PerformanceObserver } from "node:perf_hooks";
import { hmacSha1, nodeMac } from "../../regional/common/hmac.ts";
import { parseIpv4, writeIpv4 } from "../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FRAME_HEADER_BYTES,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";
import { HintVerifier, type MacSync, mintHint } from "../../shared/hint/codec.ts";
import { newHintFields } from "../../shared/hint/layout.ts";
import { type Keyring, parseKeyring } from "../../shared/keys.ts";
import { classifyDatagram, DatagramKind } from "../../shared/stun/classify.ts";
import { newStunView, readStun } from "../../shared/stun/reader.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const ROUNDS = option("rounds", 7);
const ROUND_MS = option("ms", 300);
const JSON_ONLY = process.argv.includes("--json");

export interface Result {
  name: string;
  /** Timed window (performance.now() ms), to attribute garbage collections to the case. */
  window: [number, number];
  /** Operations in the timed rounds. */
  ops: number;
  /** Per CPU second (median round). */
  nsPerOp: number;
  opsPerSec: number;
  bestOpsPerSec: number;
  /** Per wall-clock second (median round). */
  wallOpsPerSec: number;
  target?: number;
}

let sink = 0;

/** Runs `body(iterations)` in rounds; `body` does `iterations` operations. */
function measure(name: string, body: (n: number) => void, target?: number): Result {
  // calibrate: grow the batch until one batch takes >= 20 ms of CPU, warming the JIT on the way
  let batch = 1024;
  for (;;) {
    const c0 = process.cpuUsage();
    body(batch);
    const c = process.cpuUsage(c0);
    if (c.user + c.system >= 20_000 || batch >= 1 << 28) break;
    batch *= 2;
  }
  const perRound = Math.max(1, Math.round(ROUND_MS / 20)) * batch;
  body(perRound); // warm-up round
  const start = performance.now();
  const rates: number[] = [];
  const wallRates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    body(perRound);
    const ns = Number(process.hrtime.bigint() - t0);
    const cpu = process.cpuUsage(c0);
    rates.push((perRound * 1e6) / Math.max(1, cpu.user + cpu.system));
    wallRates.push((perRound * 1e9) / ns);
  }
  const window: [number, number] = [start, performance.now()];
  rates.sort((a, b) => a - b);
  wallRates.sort((a, b) => a - b);
  const median = rates[rates.length >> 1]!;
  return {
    name,
    window,
    ops: perRound * ROUNDS,
    nsPerOp: 1e9 / median,
    opsPerSec: median,
    bestOpsPerSec: rates[rates.length - 1]!,
    wallOpsPerSec: wallRates[wallRates.length >> 1]!,
    ...(target ? { target } : {}),
  };
}

// ---- inputs ----------------------------------------------------------------------------------
const secret = (b: number) => Buffer.from(new Uint8Array(32).fill(b)).toString("base64");
const ring: Keyring = parseKeyring(`1:${secret(1)},2:${secret(2)}`, "BENCH_HINT_KEYS", 15);
const mac = nodeMac(ring);
const N = 64;
const rnd = (n: number) => Uint8Array.from({ length: n }, () => (Math.random() * 256) | 0);
const ufrags: Uint8Array[] = [];
const bindings: Uint8Array[] = [];
for (let i = 0; i < N; i++) {
  const ufrag = mintHint({ clusterId: 1 + (i % 3), transceiverId: i, random: rnd(4) }, mac);
  ufrags.push(new TextEncoder().encode(ufrag));
  // what Chrome sends: USERNAME, ICE-CONTROLLING, USE-CANDIDATE, PRIORITY, MESSAGE-INTEGRITY, FINGERPRINT
  bindings.push(
    encodeBindingRequest({
      transactionId: rnd(12),
      username: `${ufrag}:${Buffer.from(rnd(3)).toString("base64")}`,
      password: Buffer.from(rnd(18)).toString("base64"),
      hmacSha1,
      useCandidate: i % 2 === 0,
    }),
  );
}
const rtp = Array.from({ length: N }, () => Uint8Array.of(0x80, 111, ...rnd(158)));
const frameBufs = Array.from({ length: N }, () => new Uint8Array(FRAME_HEADER_BYTES + 160));
const headers = Array.from({ length: N }, (_, i) => {
  const h = newFrameHeader();
  h.popId = 1;
  h.clusterId = 2;
  h.transceiverId = i;
  h.clientPort = 40000 + i;
  writeIpv4(h.clientIp, parseIpv4(`203.0.113.${i}`));
  return h;
});
headers.forEach((h, i) => {
  encodeFrameHeader(frameBufs[i]!, 0, h);
});

// The createHmac MacSync that regional/common/hmac.ts used before the midstate version.
function createHmacMac(r: Keyring): MacSync {
  const keys = new Map(r.keys.map((k) => [k.id, createSecretKey(k.secret)]));
  return {
    activeKeyId: r.active.id,
    sign(keyId, data, out) {
      const key = keys.get(keyId);
      if (key === undefined) return false;
      out.set(createHmac("sha256", key).update(data).digest());
      return true;
    },
  };
}

// Garbage collections during each case's timed rounds: zero over millions of operations means
// the operation allocates nothing that survives to a scavenge (the hot-path rule).
const gcStarts: number[] = [];
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcStarts.push(e.startTime);
});
gcObserver.observe({ entryTypes: ["gc"] });

// ---- cases -----------------------------------------------------------------------------------
const view = newStunView();
const results: Result[] = [];

results.push(
  measure(
    "classify + readStun (USERNAME offsets) on a Binding request",
    (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        const d = bindings[i & (N - 1)]!;
        if (classifyDatagram(d, d.length) === DatagramKind.stun && readStun(d, d.length, view) === "ok") {
          acc += view.colonOffset - view.usernameOffset;
        }
      }
      sink += acc;
    },
    5_000_000,
  ),
);

results.push(
  measure("classify an RTP datagram (the common case after the first packet)", (n) => {
    let acc = 0;
    for (let i = 0; i < n; i++) {
      const d = rtp[i & (N - 1)]!;
      acc += classifyDatagram(d, d.length);
    }
    sink += acc;
  }),
);

const hint = newHintFields();
const verifier = new HintVerifier(mac);
results.push(
  measure(
    "hint verification (HintVerifier + nodeMac, midstate HMAC-SHA256)",
    (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        if (verifier.verify(ufrags[i & (N - 1)]!, 0, 24, hint) === "ok") acc += hint.transceiverId;
      }
      sink += acc;
    },
    200_000,
  ),
);
const baselineVerifier = new HintVerifier(createHmacMac(ring));
results.push(
  measure("hint verification, baseline: createHmac MacSync", (n) => {
    let acc = 0;
    for (let i = 0; i < n; i++) {
      if (baselineVerifier.verify(ufrags[i & (N - 1)]!, 0, 24, hint) === "ok") acc += hint.transceiverId;
    }
    sink += acc;
  }),
);

results.push(
  measure(
    "frame header encode (IPv4 client)",
    (n) => {
      for (let i = 0; i < n; i++) encodeFrameHeader(frameBufs[i & (N - 1)]!, 0, headers[i & (N - 1)]!);
      sink += frameBufs[0]![9]!;
    },
    10_000_000,
  ),
);
const decoded = newFrameHeader();
results.push(
  measure(
    "frame header decode + validate",
    (n) => {
      let acc = 0;
      for (let i = 0; i < n; i++) {
        const b = frameBufs[i & (N - 1)]!;
        if (decodeFrameHeader(b, b.length, decoded) === "ok") acc += decoded.transceiverId;
      }
      sink += acc;
    },
    10_000_000,
  ),
);

// ---- report ----------------------------------------------------------------------------------
await new Promise((resolve) => setTimeout(resolve, 50)); // let the observer deliver
gcObserver.disconnect();
const gcsIn = (r: Result): number => gcStarts.filter((t) => t >= r.window[0] && t <= r.window[1]).length;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const hintNew = results.find((r) => r.name.startsWith("hint verification ("))!;
const hintOld = results.find((r) => r.name.startsWith("hint verification, baseline"))!;
const summary = {
  msg: "bench-wire",
  node: process.version,
  cpu: cpus()[0]?.model ?? "unknown",
  loadAverage: loadavg().map((x) => Number(x.toFixed(2))),
  rounds: ROUNDS,
  roundMs: ROUND_MS,
  results: results.map((r) => ({
    name: r.name,
    nsPerOp: Number(r.nsPerOp.toFixed(1)),
    opsPerSec: Math.round(r.opsPerSec),
    bestOpsPerSec: Math.round(r.bestOpsPerSec),
    wallOpsPerSec: Math.round(r.wallOpsPerSec),
    ops: r.ops,
    gcs: gcsIn(r),
    ...(r.target ? { target: r.target, meetsTarget: r.opsPerSec >= r.target } : {}),
  })),
  hintSpeedupVsCreateHmac: Number((hintNew.opsPerSec / hintOld.opsPerSec).toFixed(2)),
};
if (!JSON_ONLY) {
  console.log(
    `bench:wire on ${process.version}, ${summary.cpu}, load ${summary.loadAverage.join(" ")}; median of ${ROUNDS} rounds of ~${ROUND_MS} ms; rates per CPU second (wall-clock rate in brackets)\n`,
  );
  console.log(
    `${"case".padEnd(70)} ${"ns/op".padStart(8)} ${"ops/s".padStart(13)} ${"(wall)".padStart(14)} ${"target".padStart(12)} ${"GCs/ops".padStart(12)}`,
  );
  for (const r of results) {
    const t = r.target
      ? `${r.opsPerSec >= r.target ? "ok" : "MISS"} >${fmt(r.target / 1e6 >= 1 ? r.target / 1e6 : r.target / 1e3)}${r.target >= 1e6 ? "M" : "k"}`
      : "";
    const gc = `${gcsIn(r)}/${r.ops >= 1e6 ? `${(r.ops / 1e6).toFixed(0)}M` : `${(r.ops / 1e3).toFixed(0)}k`}`;
    console.log(
      `${r.name.padEnd(70)} ${r.nsPerOp.toFixed(1).padStart(8)} ${fmt(r.opsPerSec).padStart(13)} ${`(${fmt(r.wallOpsPerSec)})`.padStart(14)} ${t.padStart(12)} ${gc.padStart(12)}`,
    );
  }
  console.log(`\nmidstate HMAC vs createHmac (same run): ${summary.hintSpeedupVsCreateHmac}x`);
}
console.log(JSON.stringify(summary));
if (sink === 0.5) console.log(""); // keep results observable
