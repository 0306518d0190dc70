// Round-trip times between places on the emulated planet. Where both ends are within SNAP_KM of a
// city in the table, the table's figure is used; otherwise a straight-line fit of RTT to
// great-circle distance (the same fit the table's long links follow). Sources: docs/world.md.

export interface Place {
  latitude: number;
  longitude: number;
}

export interface City extends Place {
  name: string;
}

export const CITIES: City[] = [
  { name: "sydney", latitude: -33.87, longitude: 151.21 },
  { name: "singapore", latitude: 1.35, longitude: 103.82 },
  { name: "frankfurt", latitude: 50.11, longitude: 8.68 },
  { name: "virginia", latitude: 39.04, longitude: -77.49 },
  { name: "sao-paulo", latitude: -23.55, longitude: -46.63 },
];

/**
 * Measured RTT (ms) per city pair, from two published tables (docs/world.md names them): "wp"
 * rows are the WonderProxy city-pair ping table (2011) with the proxy city named, "aws" rows the
 * AWS inter-region average latency table (2017) between the regions in these cities.
 */
export const RTT_TABLE: { a: string; b: string; ms: number; source: string }[] = [
  { a: "sydney", b: "virginia", ms: 251, source: "wp: Sydney-Baltimore 251.07" },
  { a: "sydney", b: "frankfurt", ms: 345, source: "wp: Sydney-Milan 344.70" },
  { a: "frankfurt", b: "virginia", ms: 98, source: "wp: Paris-Baltimore 97.71" },
  { a: "sydney", b: "singapore", ms: 175, source: "aws: Sydney-Singapore 175.3" },
  { a: "sydney", b: "sao-paulo", ms: 323, source: "aws: Sydney-Sao Paulo 322.5" },
  { a: "singapore", b: "frankfurt", ms: 326, source: "aws: Singapore-Frankfurt 325.9" },
  { a: "singapore", b: "virginia", ms: 217, source: "aws: Singapore-N. Virginia 216.7" },
  { a: "singapore", b: "sao-paulo", ms: 328, source: "aws: Singapore-Sao Paulo 328.1" },
  { a: "frankfurt", b: "sao-paulo", ms: 195, source: "aws: Frankfurt-Sao Paulo 194.9" },
  { a: "virginia", b: "sao-paulo", ms: 120, source: "aws: N. Virginia-Sao Paulo 119.5" },
];

const SNAP_KM = 500;
/** Fit for pairs the table lacks: a fixed cost plus a slope per great-circle km. */
const FIT_BASE_MS = 5;
const FIT_MS_PER_KM = 0.0155;

export function distanceKm(a: Place, b: Place): number {
  const rad = Math.PI / 180;
  const dLat = (b.latitude - a.latitude) * rad;
  const dLon = (b.longitude - a.longitude) * rad;
  const h =
    Math.sin(dLat / 2) ** 2 +
    Math.cos(a.latitude * rad) * Math.cos(b.latitude * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6371 * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function cityOf(p: Place): City | null {
  let best: City | null = null;
  let bestKm = SNAP_KM;
  for (const c of CITIES) {
    const d = distanceKm(p, c);
    if (d <= bestKm) {
      best = c;
      bestKm = d;
    }
  }
  return best;
}

/**
 * Public-internet RTT between the cities of two places (server to server, as ping tables measure
 * it; a client's last mile is added by the caller). 0 when both are in the same city.
 */
export function publicRttMs(a: Place, b: Place): { ms: number; source: string } {
  const ca = cityOf(a);
  const cb = cityOf(b);
  if (ca && cb && ca.name === cb.name) return { ms: 0, source: "same city" };
  if (ca && cb) {
    const row = RTT_TABLE.find(
      (r) => (r.a === ca.name && r.b === cb.name) || (r.a === cb.name && r.b === ca.name),
    );
    if (row) return { ms: row.ms, source: row.source };
  }
  const km = distanceKm(a, b);
  if (km < 50) return { ms: 0, source: "same city" };
  return { ms: Math.round(FIT_BASE_MS + FIT_MS_PER_KM * km), source: "fit" };
}
