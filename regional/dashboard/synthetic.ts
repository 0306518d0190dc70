// Synthetic Global Relay exporters for the screenshot script and demos: three POP relays, two
// cluster relays, two gateways, two transceivers and the edge, each a real Registry with the contract's metric
// names, fed by a seeded traffic model (diurnal call rate, log-normal latencies per POP and
// region, occasional drop bursts). Served over real HTTP, one path per process. Not used in
// production paths.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type CounterHandle,
  type GaugeHandle,
  type HistogramHandle,
  PROMETHEUS_CONTENT_TYPE,
  Registry,
} from "../common/metrics.ts";

/** Mulberry32: small, seeded, good enough for synthetic traffic. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Pop {
  id: string;
  /** Median first-hop RTT (s). */
  hop: number;
  /** Median backbone RTT to each cluster (s). */
  backbone: Record<string, number>;
  regions: string[];
}

const POPS: Pop[] = [
  { id: "1", hop: 0.011, backbone: { "1": 0.004, "2": 0.046 }, regions: ["EU", "AF"] },
  { id: "2", hop: 0.017, backbone: { "1": 0.044, "2": 0.003 }, regions: ["NA", "SA"] },
  { id: "3", hop: 0.032, backbone: { "1": 0.082, "2": 0.09 }, regions: ["AS", "OC"] },
];
const REGION_CLUSTER: Record<string, string> = { EU: "1", AF: "1", AS: "1", OC: "2", NA: "2", SA: "2" };
const REGION_WEIGHT: Record<string, number> = { EU: 1, NA: 0.9, AS: 0.5, SA: 0.25, AF: 0.1, OC: 0.15 };

export class SyntheticSystem {
  readonly registries = new Map<string, { reg: Registry; labels: Record<string, string> }>();
  readonly #rnd: () => number;
  #t = 0;
  readonly #pops = new Map<
    string,
    {
      hop: Map<string, HistogramHandle>;
      backbone: Map<string, HistogramHandle>;
      active: GaugeHandle;
      halfOpen: GaugeHandle;
      created: CounterHandle;
      packetsUp: CounterHandle;
      packetsDown: CounterHandle;
      drops: (reason: string) => CounterHandle;
    }
  >();
  readonly #clusters = new Map<
    string,
    {
      active: GaugeHandle;
      relayActive: GaugeHandle;
      relayHalfOpen: GaugeHandle;
      created: (region: string) => CounterHandle;
      ended: (reason: string) => CounterHandle;
      failed: (reason: string) => CounterHandle;
      setup: (region: string, stage: string) => HistogramHandle;
      region: (name: string, region: string) => HistogramHandle;
      drops: (reason: string) => CounterHandle;
      sessions: number;
    }
  >();
  readonly #edge: {
    signalling: (region: string, cluster: string, stage: string) => HistogramHandle;
    requests: (status: string) => CounterHandle;
    failovers: (cluster: string) => CounterHandle;
  };

  constructor(seed = 7) {
    this.#rnd = prng(seed);
    for (const p of POPS) {
      const reg = new Registry();
      this.registries.set(`relay-pop-${p.id}`, { reg, labels: { pop: p.id } });
      const hop = reg.histogram("gr_relay_first_hop_rtt_seconds", "first hop", ["pop", "cluster"]);
      const bb = reg.histogram("gr_relay_backbone_rtt_seconds", "backbone", ["pop", "cluster"]);
      const drops = reg.counter("gr_relay_drops_total", "drops", ["role", "reason"]);
      const packets = reg.counter("gr_relay_packets_total", "packets", ["role", "direction", "kind"]);
      this.#pops.set(p.id, {
        hop: new Map(["1", "2"].map((c) => [c, hop.with({ pop: p.id, cluster: c })])),
        backbone: new Map(["1", "2"].map((c) => [c, bb.with({ pop: p.id, cluster: c })])),
        active: reg.gauge("gr_relay_flows_active", "flows", ["role"]).with({ role: "pop" }),
        halfOpen: reg.gauge("gr_relay_flows_half_open", "half-open", ["role"]).with({ role: "pop" }),
        created: reg.counter("gr_relay_flows_created_total", "created", ["role"]).with({ role: "pop" }),
        packetsUp: packets.with({ role: "pop", direction: "upstream", kind: "rtp" }),
        packetsDown: packets.with({ role: "pop", direction: "downstream", kind: "rtp" }),
        drops: (reason) => drops.with({ role: "pop", reason }),
      });
    }
    for (const c of ["1", "2"]) {
      const relay = new Registry();
      this.registries.set(`relay-cluster-${c}`, { reg: relay, labels: { cluster: c } });
      const gw = new Registry();
      this.registries.set(`gateway-${c}`, { reg: gw, labels: { cluster: c } });
      const tg = gw.gauge("gr_gateway_transceivers", "transceivers", ["state"]);
      tg.with({ state: "known" }).set(c === "1" ? 2 : 1);
      tg.with({ state: "usable" }).set(c === "1" ? 2 : 1);
      const trx = new Registry();
      this.registries.set(`transceiver-${c}`, { reg: trx, labels: { cluster: c } });
      const created = trx.counter("gr_transceiver_calls_created_total", "created", ["cluster", "region"]);
      const ended = trx.counter("gr_transceiver_calls_ended_total", "ended", ["cluster", "reason"]);
      const failed = trx.counter("gr_transceiver_calls_failed_total", "failed", ["cluster", "reason"]);
      const setup = trx.histogram("gr_transceiver_setup_seconds", "setup", ["cluster", "region", "stage"]);
      const fams = {
        ice: trx.histogram("gr_transceiver_ice_rtt_seconds", "ice", ["cluster", "region"]),
        rtcp: trx.histogram("gr_transceiver_rtcp_rtt_seconds", "rtcp", ["cluster", "region"]),
        jitter: trx.histogram("gr_transceiver_jitter_seconds", "jitter", ["cluster", "region"]),
        loss: trx.histogram(
          "gr_transceiver_packet_loss_ratio",
          "loss",
          ["cluster", "region"],
          [0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
        ),
      };
      const drops = trx.counter("gr_transceiver_drops_total", "drops", ["cluster", "reason"]);
      this.#clusters.set(c, {
        active: trx.gauge("gr_transceiver_calls_active", "active", ["cluster"]).with({ cluster: c }),
        relayActive: relay.gauge("gr_relay_flows_active", "flows", ["role"]).with({ role: "cluster" }),
        relayHalfOpen: relay
          .gauge("gr_relay_flows_half_open", "half-open", ["role"])
          .with({ role: "cluster" }),
        created: (region) => created.with({ cluster: c, region }),
        ended: (reason) => ended.with({ cluster: c, reason }),
        failed: (reason) => failed.with({ cluster: c, reason }),
        setup: (region, stage) => setup.with({ cluster: c, region, stage }),
        region: (name, region) => fams[name as keyof typeof fams].with({ cluster: c, region }),
        drops: (reason) => drops.with({ cluster: c, reason }),
        sessions: 0,
      });
    }
    const edge = new Registry();
    this.registries.set("edge", { reg: edge, labels: {} });
    const sig = edge.histogram("gr_edge_signalling_seconds", "signalling", ["region", "cluster", "stage"]);
    const req = edge.counter("gr_edge_requests_total", "requests", ["route", "status"]);
    const fo = edge.counter("gr_edge_failovers_total", "failovers", ["cluster"]);
    this.#edge = {
      signalling: (region, cluster, stage) => sig.with({ region, cluster, stage }),
      requests: (status) => req.with({ route: "calls.create", status }),
      failovers: (cluster) => fo.with({ cluster }),
    };
  }

  /** Standard normal (Box-Muller). */
  #normal(): number {
    const u = Math.max(1e-12, this.#rnd());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.#rnd());
  }

  /** Log-normal around a median. */
  #logn(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.#normal());
  }

  #poisson(mean: number): number {
    if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * this.#normal()));
    const l = Math.exp(-mean);
    let k = 0;
    let p = 1;
    do {
      k++;
      p *= this.#rnd();
    } while (p > l);
    return k - 1;
  }

  /** Advances the model by dt seconds of virtual time. */
  step(dt: number): void {
    this.#t += dt;
    const diurnal = 0.65 + 0.35 * Math.sin((this.#t / 600) * Math.PI); // a 20-minute "day"
    // A congestion episode on POP 3 in the middle of each day.
    const congested = Math.sin((this.#t / 600) * Math.PI) > 0.8;
    for (const pop of POPS) {
      const h = this.#pops.get(pop.id)!;
      let flows = 0;
      for (const region of pop.regions) {
        const cluster = REGION_CLUSTER[region]!;
        const c = this.#clusters.get(cluster)!;
        const calls = this.#poisson(6 * dt * diurnal * REGION_WEIGHT[region]!);
        const hopMedian = pop.hop * (congested && pop.id === "3" ? 2.6 : 1);
        const bbMedian = pop.backbone[cluster]!;
        for (let i = 0; i < calls; i++) {
          if (this.#rnd() < 0.012) {
            c.failed(this.#rnd() < 0.5 ? "at_capacity" : "body_malformed").inc();
            this.#edge.requests("503").inc();
            continue;
          }
          c.created(region).inc();
          c.sessions++;
          h.created.inc();
          const sig = this.#logn(0.045 + bbMedian, 0.35);
          this.#edge.signalling(region, cluster, "total").observe(sig + this.#logn(0.012, 0.3));
          this.#edge.signalling(region, cluster, "cluster_hop").observe(sig);
          this.#edge.requests("201").inc();
          if (this.#rnd() < 0.004) this.#edge.failovers(cluster === "1" ? "2" : "1").inc();
          c.setup(region, "offer_to_answer").observe(this.#logn(0.018, 0.3));
          const ice = this.#logn(2 * (hopMedian + bbMedian) + 0.04, 0.35);
          const dtls = ice + this.#logn(2 * (hopMedian + bbMedian) + 0.03, 0.3);
          c.setup(region, "answer_to_ice_connected").observe(ice);
          c.setup(region, "answer_to_dtls_connected").observe(dtls);
          c.setup(region, "answer_to_first_audio").observe(dtls + this.#logn(0.12, 0.5));
          if (this.#rnd() < 0.01) c.ended("ice_failed").inc();
        }
        // RTT samples: a few per flow per scrape interval.
        const sessionsHere = Math.max(1, Math.round(c.sessions * REGION_WEIGHT[region]! * 0.4));
        flows += sessionsHere;
        for (let i = 0; i < Math.min(400, sessionsHere * dt * 0.4); i++) {
          const hop = this.#logn(hopMedian, 0.28);
          const bb = this.#logn(bbMedian, 0.15) + 0.0004;
          h.hop.get(cluster)!.observe(hop);
          h.backbone.get(cluster)!.observe(bb);
          c.region("ice", region).observe(hop + bb + 0.0008);
          if (i % 4 === 0) {
            c.region("rtcp", region).observe(hop + bb + this.#logn(0.002, 0.4));
            c.region("jitter", region).observe(this.#logn(0.004 + hopMedian * 0.08, 0.5));
            c.region("loss", region).observe(this.#rnd() < 0.75 ? 0 : this.#logn(0.004, 1));
          }
        }
      }
      h.active.set(flows);
      h.halfOpen.set(this.#poisson(3 + (pop.id === "2" && congested ? 60 : 0)));
      h.packetsUp.inc(flows * 50 * dt);
      h.packetsDown.inc(flows * 50 * dt);
      h.drops("bad_hint").inc(this.#poisson(0.8 * dt));
      h.drops("no_flow").inc(this.#poisson(0.3 * dt));
      if (pop.id === "2" && congested) h.drops("rate_limited").inc(this.#poisson(6 * dt));
    }
    for (const [, c] of this.#clusters) {
      const ending = Math.round(c.sessions * (1 - Math.exp(-dt / 90)));
      c.sessions -= ending;
      c.ended("hangup").inc(ending);
      c.active.set(c.sessions);
      c.relayActive.set(c.sessions);
      c.relayHalfOpen.set(this.#poisson(1));
      c.drops("unknown_ufrag").inc(this.#poisson(0.2 * dt));
      c.drops("bad_integrity").inc(this.#poisson(0.1 * dt));
    }
  }

  /** DASHBOARD_TARGETS for a server at `base` (e.g. http://127.0.0.1:1234). */
  targets(base: string): string {
    return [...this.registries.entries()]
      .map(([name, { labels }]) => {
        const l = Object.entries(labels)
          .map(([k, v]) => `${k}=${v}`)
          .join(";");
        return `${name}${l ? `{${l}}` : ""}=${base}/${name}/metrics`;
      })
      .join(",");
  }
}

/** Serves every synthetic process at /<name>/metrics on 127.0.0.1 (port 0 by default). */
export async function serveSynthetic(
  system: SyntheticSystem,
  port = 0,
): Promise<{ base: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const name = /^\/([^/]+)\/metrics$/.exec(req.url ?? "")?.[1];
    const r = name === undefined ? undefined : system.registries.get(name);
    if (!r) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": PROMETHEUS_CONTENT_TYPE }).end(r.reg.render());
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
