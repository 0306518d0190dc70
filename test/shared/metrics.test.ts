// shared/metrics/registry.ts: Prometheus text exposition format 0.0.4.
import { describe, expect, it } from "vitest";
import { LATENCY_BUCKETS, PROMETHEUS_CONTENT_TYPE, Registry } from "../../shared/metrics/registry.ts";

/** Parses sample lines into name{labels} → value (a minimal reader of the text format). */
function samples(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?) (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    out.set(m[1]!, m[2]!);
  }
  return out;
}

describe("Registry.render", () => {
  it("renders counters, gauges and histograms with HELP and TYPE, ending in a newline", () => {
    const r = new Registry();
    const packets = r.counter("gr_relay_packets_total", "Datagrams relayed.", ["role", "direction", "kind"]);
    const flows = r.gauge("gr_relay_flows_active", "Flows in the table.", ["role"]);
    const rtt = r.histogram(
      "gr_relay_backbone_rtt_seconds",
      "Backbone RTT.",
      ["pop", "cluster"],
      [0.001, 0.01, 0.1],
    );
    const h = packets.with({ role: "pop", direction: "in", kind: "stun" });
    h.inc();
    h.inc(2);
    packets.with({ role: "pop", direction: "out", kind: "rtp" }).inc(5);
    flows.with({ role: "pop" }).set(7);
    flows.with({ role: "pop" }).dec();
    const hist = rtt.with({ pop: "1", cluster: "2" });
    for (const v of [0.0005, 0.001, 0.005, 0.5]) hist.observe(v);

    const text = r.render();
    expect(text.endsWith("\n")).toBe(true);
    expect(text).toContain(
      "# HELP gr_relay_packets_total Datagrams relayed.\n# TYPE gr_relay_packets_total counter\n",
    );
    expect(text).toContain("# TYPE gr_relay_flows_active gauge\n");
    expect(text).toContain("# TYPE gr_relay_backbone_rtt_seconds histogram\n");
    const s = samples(text);
    expect(s.get('gr_relay_packets_total{role="pop",direction="in",kind="stun"}')).toBe("3");
    expect(s.get('gr_relay_packets_total{role="pop",direction="out",kind="rtp"}')).toBe("5");
    expect(s.get('gr_relay_flows_active{role="pop"}')).toBe("6");
    // buckets are cumulative, le is inclusive, +Inf equals the count
    expect(s.get('gr_relay_backbone_rtt_seconds_bucket{pop="1",cluster="2",le="0.001"}')).toBe("2");
    expect(s.get('gr_relay_backbone_rtt_seconds_bucket{pop="1",cluster="2",le="0.01"}')).toBe("3");
    expect(s.get('gr_relay_backbone_rtt_seconds_bucket{pop="1",cluster="2",le="0.1"}')).toBe("3");
    expect(s.get('gr_relay_backbone_rtt_seconds_bucket{pop="1",cluster="2",le="+Inf"}')).toBe("4");
    expect(Number(s.get('gr_relay_backbone_rtt_seconds_sum{pop="1",cluster="2"}'))).toBeCloseTo(0.5065, 10);
    expect(s.get('gr_relay_backbone_rtt_seconds_count{pop="1",cluster="2"}')).toBe("4");
    expect(hist.count).toBe(4);
  });

  it("the same label set returns the same handle; label order follows the declaration", () => {
    const r = new Registry();
    const c = r.counter("x_total", "x", ["a", "b"]);
    expect(c.with({ b: "2", a: "1" })).toBe(c.with({ a: "1", b: "2" }));
    c.with({ b: "2", a: "1" }).inc();
    expect(r.render()).toContain('x_total{a="1",b="2"} 1\n');
  });

  it("unlabelled metrics render without braces; a family with no series renders only HELP and TYPE", () => {
    const r = new Registry();
    r.counter("up_total", "u").with().inc();
    r.gauge("empty", "nothing yet", ["role"]);
    expect(r.render()).toBe(
      "# HELP up_total u\n# TYPE up_total counter\nup_total 1\n# HELP empty nothing yet\n# TYPE empty gauge\n",
    );
  });

  it("escapes label values and HELP text; prints infinities as Prometheus does", () => {
    const r = new Registry();
    r.gauge("g", 'help with \\ and\nnewline and "quotes"', ["reason"])
      .with({ reason: 'a"b\\c\nd' })
      .set(Number.POSITIVE_INFINITY);
    r.gauge("n", "n").with().set(Number.NEGATIVE_INFINITY);
    const text = r.render();
    expect(text).toContain('# HELP g help with \\\\ and\\nnewline and "quotes"\n');
    expect(text).toContain('g{reason="a\\"b\\\\c\\nd"} +Inf\n');
    expect(text).toContain("n -Inf\n");
    expect(text.split("\n").filter((l) => l.startsWith("g{"))).toHaveLength(1);
  });

  it("refuses duplicate names and unbounded label sets", () => {
    const r = new Registry();
    const c = r.counter("dup_total", "d", ["id"]);
    expect(() => r.gauge("dup_total", "d")).toThrow(/registered twice/);
    for (let i = 0; i < 2000; i++) c.with({ id: String(i) });
    expect(() => c.with({ id: "2000" })).toThrow(/too many label sets/);
  });

  it("default latency buckets are increasing and the content type is the 0.0.4 text format", () => {
    for (let i = 1; i < LATENCY_BUCKETS.length; i++)
      expect(LATENCY_BUCKETS[i]!).toBeGreaterThan(LATENCY_BUCKETS[i - 1]!);
    expect(PROMETHEUS_CONTENT_TYPE).toBe("text/plain; version=0.0.4; charset=utf-8");
  });
});

describe("tryWith (labels from requests)", () => {
  it("drops a new label set beyond the bound instead of throwing, and keeps counting the old ones", () => {
    const r = new Registry();
    const c = r.counter("gr_test_requests_total", "t", ["id"]);
    for (let i = 0; i < 2000; i++) c.tryWith({ id: String(i) })!.inc();
    expect(c.tryWith({ id: "new" })).toBeUndefined();
    c.tryWith({ id: "7" })!.inc();
    expect(c.with({ id: "7" }).value).toBe(2);
    expect(r.render()).not.toContain('id="new"');
  });
});
