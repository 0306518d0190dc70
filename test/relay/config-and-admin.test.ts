// Configuration from the environment (and RELAY_CONFIG_FILE), metric merging across workers, and
// IPv6 clients through the POP engine.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../regional/relay/config.ts";
import { PopEngine } from "../../regional/relay/core/pop-engine.ts";
import { SourceList } from "../../regional/relay/core/sources.ts";
import { Action, PeerKind } from "../../regional/relay/core/types.ts";
import { mergeExpositions } from "../../regional/relay/shell/metrics.ts";
import { parseIpv6 } from "../../shared/backbone/address.ts";
import {
  decodeFrameHeader,
  encodeFrameHeader,
  FrameType,
  newFrameHeader,
} from "../../shared/backbone/frame.ts";
import { VIRTUAL_TIMERS } from "../support/relay-timers.ts";
import { bindingRequest, bindingSuccess, HINT_KEYS, hint, rtp, txid, verifier } from "./fixtures.ts";

const TOPO = join(import.meta.dirname, "../../config/topology.local.json");

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe("relay configuration", () => {
  it("reads a POP and a cluster relay for the local topology", () => {
    const pop = loadConfig({
      RELAY_ROLE: "pop",
      POP_ID: "1",
      TOPOLOGY_FILE: TOPO,
      GR_HINT_KEYS: HINT_KEYS,
      RELAY_WORKERS: "2",
    });
    expect(pop).toMatchObject({
      role: "pop",
      id: 1,
      workers: 2,
      redisUrl: null,
      adminPort: 0,
      drainMs: 30_000,
    });
    expect(pop.timers).toMatchObject({ halfOpenMs: 5_000, idleMs: 60_000 });
    const cluster = loadConfig({
      RELAY_ROLE: "cluster",
      CLUSTER_ID: "2",
      TOPOLOGY_FILE: TOPO,
      RELAY_TRANSCEIVERS: "1=127.0.0.1:6201",
      ADMIN_PORT: "9202",
    });
    expect(cluster).toMatchObject({
      role: "cluster",
      id: 2,
      adminPort: 9202,
      bindHost: null,
      transceivers: [[1, "127.0.0.1:6201"]],
    });
  });

  it("binds on RELAY_BIND_HOST when the advertised address is not local (NAT, load balancer)", () => {
    const env = { RELAY_ROLE: "pop", POP_ID: "1", TOPOLOGY_FILE: TOPO, GR_HINT_KEYS: HINT_KEYS };
    expect(loadConfig({ ...env, RELAY_BIND_HOST: "0.0.0.0" }).bindHost).toBe("0.0.0.0");
    expect(problems({ ...env, RELAY_BIND_HOST: "any" }).join("\n")).toMatch(
      /RELAY_BIND_HOST: must be an IP address such as 0\.0\.0\.0, got "any"/,
    );
  });

  it("names every problem by its variable and never echoes a secret", () => {
    const p = problems({
      RELAY_ROLE: "cluster",
      CLUSTER_ID: "9",
      TOPOLOGY_FILE: TOPO,
      RELAY_IDLE_MS: "20",
      REDIS_URL: "http://x",
      ADMIN_HOST: "localhost",
    });
    expect(p.join("\n")).toMatch(/CLUSTER_ID: 9 is not a cluster/);
    expect(p.join("\n")).toMatch(/RELAY_IDLE_MS: must be an integer/);
    expect(p.join("\n")).toMatch(/REDIS_URL: must be a redis/);
    expect(p.join("\n")).toMatch(/ADMIN_HOST: must be an IP address/);
    expect(problems({ RELAY_ROLE: "cluster", CLUSTER_ID: "1", TOPOLOGY_FILE: TOPO })).toEqual([
      'RELAY_TRANSCEIVERS: required when REDIS_URL is not set (cluster relay), e.g. "1=127.0.0.1:6101"',
    ]);
    const secret = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0";
    const q = problems({ RELAY_ROLE: "pop", POP_ID: "1", TOPOLOGY_FILE: TOPO, GR_HINT_KEYS: `99:${secret}` });
    expect(q.join("\n")).toMatch(/GR_HINT_KEYS\[0\]: key id 99/);
    expect(q.join("\n")).not.toContain(secret);
    expect(problems({ RELAY_ROLE: "relay" })[0]).toMatch(/RELAY_ROLE: must be "pop" or "cluster"/);
  });

  it("takes values from RELAY_CONFIG_FILE, with the environment winning", () => {
    const dir = mkdtempSync(join(tmpdir(), "relay-cfg-"));
    const file = join(dir, "relay.json");
    writeFileSync(
      file,
      JSON.stringify({
        RELAY_ROLE: "pop",
        POP_ID: 1,
        TOPOLOGY_FILE: TOPO,
        RELAY_DRAIN_MS: 5000,
        RELAY_WORKERS: 3,
      }),
    );
    const cfg = loadConfig({ RELAY_CONFIG_FILE: file, GR_HINT_KEYS: HINT_KEYS, RELAY_WORKERS: "1" });
    expect(cfg).toMatchObject({ role: "pop", drainMs: 5_000, workers: 1 });
    expect(problems({ RELAY_CONFIG_FILE: join(dir, "missing.json") })[0]).toMatch(/RELAY_CONFIG_FILE/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe("metrics across workers", () => {
  it("sums every sample of every worker, histograms included", () => {
    const w = (n: number): string =>
      [
        "# HELP gr_relay_packets_total Datagrams forwarded",
        "# TYPE gr_relay_packets_total counter",
        `gr_relay_packets_total{role="pop",direction="upstream",kind="rtp"} ${n}`,
        "# HELP gr_relay_backbone_rtt_seconds RTT",
        "# TYPE gr_relay_backbone_rtt_seconds histogram",
        `gr_relay_backbone_rtt_seconds_bucket{pop="1",cluster="1",le="0.001"} ${n}`,
        `gr_relay_backbone_rtt_seconds_sum{pop="1",cluster="1"} ${n / 1000}`,
        `gr_relay_backbone_rtt_seconds_count{pop="1",cluster="1"} ${n}`,
        "",
      ].join("\n");
    const merged = mergeExpositions([w(3), w(4)]);
    expect(merged).toContain('gr_relay_packets_total{role="pop",direction="upstream",kind="rtp"} 7');
    expect(merged).toContain('gr_relay_backbone_rtt_seconds_count{pop="1",cluster="1"} 7');
    expect(merged.match(/# TYPE gr_relay_packets_total counter/g)!.length).toBe(1);
  });
});

describe("IPv6 clients", () => {
  it("open, use and close a flow keyed by the full address, with the /64 as prefix", () => {
    const e = new PopEngine({
      popId: 7,
      clusters: [1],
      clusterSources: new Map([[1, new SourceList(["10.1.0.0/16"])]]),
      colocatedClusterId: 0,
      transceivers: { has: () => false },
      hint: verifier(),
      limits: { maxFlows: 100, maxFlowsPerPrefix: 100, maxHalfOpenPerPrefix: 2 },
      timers: VIRTUAL_TIMERS,
      mirror: false,
      restore: null,
      now: 0,
    });
    const id = txid();
    const req = bindingRequest(hint(1, 4), id);
    const client = "2001:db8:1:2::17";
    expect(e.fromClient(1, client, 5000, req, req.length)).toBe(Action.forwardWrapped);
    expect(e.out.peerKind).toBe(PeerKind.cluster);
    const h = newFrameHeader();
    expect(decodeFrameHeader(e.out.header, 28, h)).toBe("ok");
    const ip = new Uint8Array(16);
    parseIpv6(client, ip);
    expect(h.clientIpv6).toBe(true);
    expect(h.clientIp).toEqual(ip);
    // The answer comes back by the same 16-byte address.
    const res = bindingSuccess(id);
    const f = new Uint8Array(28 + res.length);
    h.type = FrameType.data;
    encodeFrameHeader(f, 0, h);
    f.set(res, 28);
    expect(e.fromUpstream(2, PeerKind.cluster, 1, f, f.length)).toBe(Action.toClient);
    expect([e.out.address, e.out.port]).toEqual([client, 5000]);
    // The transceiver validated the address (its own check was answered).
    h.type = FrameType.pathValidated;
    const v = new Uint8Array(28);
    encodeFrameHeader(v, 0, h);
    expect(e.fromUpstream(2, PeerKind.cluster, 1, v, v.length)).toBe(Action.drop);
    expect(e.lookup(client, 5000)!.state).toBe("answered");
    const m = rtp();
    expect(e.fromClient(3, client, 5000, m, m.length)).toBe(Action.forwardWrapped);
    // Same /64, other hosts: the half-open cap of 2 applies to the prefix.
    for (let i = 0; i < 3; i++) {
      const r = bindingRequest(hint(1, 4));
      e.fromClient(4, `2001:db8:1:2::${100 + i}`, 5000, r, r.length);
    }
    expect(e.table.halfOpen).toBe(2);
    // IPv4-mapped addresses from a dual-stack socket are IPv4 flows.
    const r4 = bindingRequest(hint(1, 4));
    expect(e.fromClient(5, "::ffff:198.51.100.7", 6000, r4, r4.length)).toBe(Action.forwardWrapped);
    expect(e.lookup("198.51.100.7", 6000)).not.toBeNull();
  });
});
