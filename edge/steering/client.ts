// What the edge knows about the caller's location, read from request.cf. Coordinates arrive as
// strings; anything missing, unparseable or out of range is simply absent (steering falls back).
import type { ClientLocation as ClusterClient } from "../../shared/signalling/call-request.ts";
import type { CfProperties } from "../platform.ts";

export interface ClientLocation {
  latitude?: number;
  longitude?: number;
  /** ISO 3166 alpha-2 ("DE"); Cloudflare uses "XX" for unknown and "T1" for Tor. */
  country?: string;
  /** Cloudflare continent code (AF AN AS EU NA OC SA). */
  continent?: string;
  colo?: string;
}

const num = (v: unknown, limit: number): number | undefined => {
  if (v === undefined || v === null || v === "") return undefined;
  const n = typeof v === "number" ? v : Number(v);
  return Number.isFinite(n) && Math.abs(n) <= limit ? n : undefined;
};

export function clientLocationFromCf(cf: CfProperties | undefined): ClientLocation {
  const out: ClientLocation = {};
  if (!cf) return out;
  const lat = num(cf.latitude, 90);
  const lon = num(cf.longitude, 180);
  if (lat !== undefined && lon !== undefined) {
    out.latitude = lat;
    out.longitude = lon;
  }
  if (typeof cf.country === "string" && /^[A-Z]{2}$/.test(cf.country) && cf.country !== "XX")
    out.country = cf.country;
  if (typeof cf.continent === "string" && /^[A-Z]{2}$/.test(cf.continent)) out.continent = cf.continent;
  if (typeof cf.colo === "string" && /^[A-Z]{3,4}$/.test(cf.colo)) out.colo = cf.colo;
  return out;
}

/** The bounded `region` label and the `client.region` sent to clusters: continent code or "unknown". */
export function regionLabel(loc: ClientLocation): string {
  return loc.continent ?? "unknown";
}

/** The `client` the edge tells a cluster about (shared/signalling/call-request.ts ClientLocation). */
export function clusterClient(loc: ClientLocation): ClusterClient {
  return {
    region: regionLabel(loc),
    country: loc.country,
    continent: loc.continent,
    colo: loc.colo,
    latitude: loc.latitude,
    longitude: loc.longitude,
  };
}
