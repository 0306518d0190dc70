// Shared test fixtures: a four-cluster world (Frankfurt, Ashburn, São Paulo, Sydney) and clients
// at fixed coordinates.
import type { ClusterSpec, Topology } from "../../shared/topology/schema.ts";
import { validateTopology } from "../../shared/topology/schema.ts";

export const CLUSTERS = [
  {
    id: 1,
    name: "fra",
    region: "eu-central",
    continent: "EU",
    countries: ["DE", "FR", "NL", "PL"],
    latitude: 50.11,
    longitude: 8.68,
  },
  {
    id: 2,
    name: "iad",
    region: "us-east",
    continent: "NA",
    countries: ["US", "CA"],
    latitude: 38.95,
    longitude: -77.45,
  },
  {
    id: 3,
    name: "gru",
    region: "sa-east",
    continent: "SA",
    countries: ["BR", "AR", "CL"],
    latitude: -23.43,
    longitude: -46.47,
  },
  {
    id: 4,
    name: "syd",
    region: "ap-southeast",
    continent: "OC",
    countries: ["AU", "NZ"],
    latitude: -33.87,
    longitude: 151.21,
  },
] as const;

export type CityName = "sydney" | "frankfurt" | "virginia" | "saoPaulo" | "tokyo" | "lisbon" | "johannesburg";

export const CITIES: Record<
  CityName,
  { latitude: string; longitude: string; country: string; continent: string; colo: string; expect: string }
> = {
  sydney: {
    latitude: "-33.8688",
    longitude: "151.2093",
    country: "AU",
    continent: "OC",
    colo: "SYD",
    expect: "syd",
  },
  frankfurt: {
    latitude: "50.1109",
    longitude: "8.6821",
    country: "DE",
    continent: "EU",
    colo: "FRA",
    expect: "fra",
  },
  virginia: {
    latitude: "37.5407",
    longitude: "-77.4360",
    country: "US",
    continent: "NA",
    colo: "IAD",
    expect: "iad",
  },
  saoPaulo: {
    latitude: "-23.5505",
    longitude: "-46.6333",
    country: "BR",
    continent: "SA",
    colo: "GRU",
    expect: "gru",
  },
  tokyo: {
    latitude: "35.6762",
    longitude: "139.6503",
    country: "JP",
    continent: "AS",
    colo: "NRT",
    expect: "syd",
  },
  lisbon: {
    latitude: "38.7223",
    longitude: "-9.1393",
    country: "PT",
    continent: "EU",
    colo: "LIS",
    expect: "fra",
  },
  johannesburg: {
    latitude: "-26.2041",
    longitude: "28.0473",
    country: "ZA",
    continent: "AF",
    colo: "JNB",
    expect: "gru",
  },
};

export function topologyFor(
  urls: Record<string, string>,
  overrides: Partial<Record<string, Partial<ClusterSpec>>> = {},
  globalVip = "198.51.100.10:3478",
): Topology {
  const raw = {
    version: 1,
    globalVip,
    defaultClusterId: 1,
    clusters: CLUSTERS.map((c) => ({
      ...c,
      countries: [...c.countries],
      signallingUrl: urls[c.name] ?? `http://127.0.0.1:9/${c.name}`,
      backbone: `127.0.0.1:${5100 + c.id}`,
      backboneCidrs: ["127.0.0.0/8"],
      capacity: 100,
      ...overrides[c.name],
    })),
    pops: [
      {
        id: 1,
        name: "pop-fra",
        region: "eu-central",
        latitude: 50.11,
        longitude: 8.68,
        vip: "198.51.100.10:3478",
        backbone: "127.0.0.1:4478",
      },
      {
        id: 2,
        name: "pop-syd",
        region: "ap-southeast",
        latitude: -33.87,
        longitude: 151.21,
        vip: "198.51.100.10:3478",
        backbone: "127.0.0.1:4479",
        clusterId: 4,
      },
    ],
  };
  const r = validateTopology(raw);
  if (!r.ok) throw new Error(r.errors.join("\n"));
  return r.topology;
}

/** A minimal, structurally valid browser-like offer. */
export const OFFER = [
  "v=0",
  "o=- 4611731400430051336 2 IN IP4 127.0.0.1",
  "s=-",
  "t=0 0",
  "a=group:BUNDLE 0 1",
  "m=audio 9 UDP/TLS/RTP/SAVPF 111",
  "c=IN IP4 0.0.0.0",
  "a=ice-ufrag:Hk3f",
  "a=ice-pwd:abcdefghijklmnopqrstuvwx",
  "a=fingerprint:sha-256 0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0:0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0",
  "a=setup:actpass",
  "a=mid:0",
  "a=sendrecv",
  "a=rtcp-mux",
  "a=rtpmap:111 opus/48000/2",
  "m=application 9 UDP/DTLS/SCTP webrtc-datachannel",
  "c=IN IP4 0.0.0.0",
  "a=ice-ufrag:Hk3f",
  "a=ice-pwd:abcdefghijklmnopqrstuvwx",
  "a=fingerprint:sha-256 0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0:0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0",
  "a=setup:actpass",
  "a=mid:1",
  "a=sctp-port:5000",
  "",
].join("\r\n");
