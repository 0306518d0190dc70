// Topology validation: the local file is valid, every problem is reported with its path, and the
// validator never throws on any JSON value.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseTopology, TopologyError, validateTopology } from "../../shared/topology/schema.ts";

const localText = readFileSync(new URL("../../config/topology.local.json", import.meta.url), "utf8");
// biome-ignore lint/suspicious/noExplicitAny: the tests edit parsed JSON freely
type Json = any;
const local = (): Record<string, Json> => JSON.parse(localText);

function errorsOf(raw: unknown): string[] {
  const r = validateTopology(raw);
  return r.ok ? [] : r.errors;
}

describe("topology", () => {
  it("config/topology.local.json is valid and typed", () => {
    const t = parseTopology(localText, "config/topology.local.json");
    expect(t.clusters.map((c) => c.id)).toEqual([1, 2]);
    expect(t.pops[0]!.vip).toBe("127.0.0.1:3478");
    expect(t.defaultClusterId).toBe(1);
  });

  it("fills backboneCidrs from the backbone address when absent", () => {
    const raw = local();
    delete raw.clusters[0].backboneCidrs;
    raw.pops[0].backbone = "[::1]:4478";
    delete raw.pops[0].backboneCidrs;
    const r = validateTopology(raw);
    expect(r.ok && r.topology.clusters[0]!.backboneCidrs).toEqual(["127.0.0.1/32"]);
    expect(r.ok && r.topology.pops[0]!.backboneCidrs).toEqual(["::1/128"]);
  });

  it.each<[string, (t: Record<string, Json>) => void, string[]]>([
    ["wrong version", (t) => (t.version = 2), ["topology.version: must be 1, got 2"]],
    ["unknown top-level field", (t) => (t.clusterz = []), ["topology.clusterz: is not a known field"]],
    [
      "missing globalVip",
      (t) => delete t.globalVip,
      ["topology.globalVip: must be a non-empty string, got undefined"],
    ],
    [
      "hostname VIP",
      (t) => (t.globalVip = "relay.example.com:3478"),
      ['topology.globalVip: "relay.example.com" is not an IPv4 address'],
    ],
    [
      "no clusters",
      (t) => (t.clusters = []),
      [
        "topology.clusters: must be a non-empty array",
        "topology.defaultClusterId: names no cluster (1)",
      ].slice(0, 1),
    ],
    ["cluster not an object", (t) => (t.clusters[1] = 7), ["clusters[1]: must be an object"]],
    [
      "cluster id 0",
      (t) => (t.clusters[0].id = 0),
      [
        "clusters[0].id: must be an integer 1-65535, got 0",
        "topology.defaultClusterId: names no cluster (1)",
      ],
    ],
    [
      "cluster id 65536",
      (t) => (t.clusters[1].id = 65536),
      ["clusters[1].id: must be an integer 1-65535, got 65536"],
    ],
    ["duplicate cluster id", (t) => (t.clusters[1].id = 1), ["clusters[1].id: duplicates clusters[0] (1)"]],
    [
      "duplicate cluster name",
      (t) => (t.clusters[1].name = "fra-local"),
      ['clusters[1].name: duplicates clusters[0] ("fra-local")'],
    ],
    [
      "upper-case name",
      (t) => (t.clusters[0].name = "FRA"),
      ["clusters[0].name: must be lower-case letters, digits and '-' (1-63), got \"FRA\""],
    ],
    [
      "continent",
      (t) => (t.clusters[0].continent = "EUROPE"),
      ['clusters[0].continent: must be one of AF, AN, AS, EU, NA, OC, SA, got "EUROPE"'],
    ],
    [
      "countries",
      (t) => (t.clusters[0].countries = ["de"]),
      ['clusters[0].countries: must be an array of ISO 3166 alpha-2 codes such as "DE"'],
    ],
    [
      "latitude",
      (t) => (t.clusters[1].latitude = 91),
      ["clusters[1].latitude: must be a number between -90 and 90, got 91"],
    ],
    [
      "longitude string",
      (t) => (t.pops[0].longitude = "8.6"),
      ['pops[0].longitude: must be a number between -180 and 180, got "8.6"'],
    ],
    [
      "signallingUrl",
      (t) => (t.clusters[0].signallingUrl = "ftp://x"),
      ['clusters[0].signallingUrl: must be an http(s) URL, got "ftp://x"'],
    ],
    [
      "backbone without port",
      (t) => (t.clusters[0].backbone = "10.0.0.1"),
      ['clusters[0].backbone: expected "ip:port" or "[ipv6]:port", got "10.0.0.1"'],
    ],
    [
      "backbone port 0",
      (t) => (t.pops[0].backbone = "10.0.0.1:0"),
      ["pops[0].backbone: port 0 is outside 1-65535"],
    ],
    [
      "bad CIDR entry",
      (t) => (t.clusters[1].backboneCidrs = ["10.0.0.0/8", "10.0.0.0/40"]),
      ["clusters[1].backboneCidrs[1]: IPv4 prefix /40 is over 32"],
    ],
    [
      "empty CIDR list",
      (t) => (t.pops[0].backboneCidrs = []),
      ["pops[0].backboneCidrs: must be a non-empty array of CIDRs"],
    ],
    [
      "capacity",
      (t) => (t.clusters[0].capacity = 0),
      ["clusters[0].capacity: must be a number between 1 and 10000000, got 0"],
    ],
    [
      "optional vip invalid",
      (t) => (t.clusters[0].vip = "1.2.3.4"),
      ['clusters[0].vip: expected "ip:port" or "[ipv6]:port", got "1.2.3.4"'],
    ],
    ["pop unknown field", (t) => (t.pops[0].vips = "x"), ["pops[0].vips: is not a known field"]],
    [
      "odd unknown key is quoted",
      (t) => (t.pops[0]["a.b: c"] = 1),
      ['pops[0]["a.b: c"]: is not a known field'],
    ],
    [
      "pop clusterId names no cluster",
      (t) => (t.pops[0].clusterId = 9),
      ["pops[0].clusterId: names no cluster (9)"],
    ],
    [
      "defaultClusterId names no cluster",
      (t) => (t.defaultClusterId = 3),
      ["topology.defaultClusterId: names no cluster (3)"],
    ],
    [
      "duplicate pop",
      (t) => t.pops.push({ ...t.pops[0] }),
      ["pops[1].id: duplicates pops[0] (1)", 'pops[1].name: duplicates pops[0] ("local-pop")'],
    ],
  ])("%s", (_name, edit, expected) => {
    const raw = local();
    edit(raw);
    expect(errorsOf(raw)).toEqual(expected);
  });

  it("reports every problem at once", () => {
    const raw = local();
    raw.version = 0;
    raw.clusters[0].latitude = -100;
    raw.pops[0].vip = "nope";
    const errors = errorsOf(raw);
    expect(errors).toHaveLength(3);
    expect(errors.map((e) => e.split(":")[0])).toEqual([
      "topology.version",
      "clusters[0].latitude",
      "pops[0].vip",
    ]);
  });

  it("parseTopology throws a TopologyError naming the source and listing the errors", () => {
    const raw = local();
    raw.clusters[0].id = "one";
    try {
      parseTopology(JSON.stringify(raw), "/etc/gr/topology.json");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TopologyError);
      const err = e as TopologyError;
      expect(err.source).toBe("/etc/gr/topology.json");
      expect(err.errors[0]).toBe('clusters[0].id: must be an integer 1-65535, got "one"');
      expect(err.message).toContain("invalid topology (/etc/gr/topology.json):\n  clusters[0].id");
    }
    expect(() => parseTopology("{", "x.json")).toThrow(/invalid topology \(x.json\):\n {2}not valid JSON/);
    expect(() => parseTopology("[]", "x.json")).toThrow(/topology: must be a JSON object/);
  });

  it("never throws on any JSON value, including mutated valid topologies", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(validateTopology(v).ok).toBe(false);
      }),
      { numRuns: 1000 },
    );
    const paths: ((t: Json) => Record<string, unknown>)[] = [
      (t) => t,
      (t) => t.clusters[0],
      (t) => t.clusters[1],
      (t) => t.pops[0],
    ];
    fc.assert(
      fc.property(fc.nat(paths.length - 1), fc.string(), fc.jsonValue(), (p, key, value) => {
        const t = local();
        const target = paths[p]!(t);
        const keys = Object.keys(target);
        const k = keys.includes(key) || key.length > 3 ? key : keys[key.length % keys.length]!;
        target[k] = value;
        const r = validateTopology(t);
        if (!r.ok) {
          for (const e of r.errors) {
            expect(e).toMatch(
              /^(topology|clusters\[\d+\]|pops\[\d+\])(\.[A-Za-z_$][\w$]*|\[("([^"\\]|\\.)*"|\d+)\])*: /,
            );
          }
        }
      }),
      { numRuns: 2000 },
    );
  });
});
