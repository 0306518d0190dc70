// Great-circle distance (haversine on the mean Earth radius). Accurate to ~0.5 %, far finer than
// the difference between any two cluster choices; fibre paths are longer still.
const R_KM = 6371.0088;
const RAD = Math.PI / 180;

export function greatCircleKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const dLat = (lat2 - lat1) * RAD;
  const dLon = (lon2 - lon1) * RAD;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * RAD) * Math.cos(lat2 * RAD) * Math.sin(dLon / 2) ** 2;
  return 2 * R_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * Rough population-weighted centres of each continent (Cloudflare's continent codes), used to
 * order clusters when a request carries a continent but no coordinates.
 */
export const CONTINENT_CENTRES: Record<string, readonly [number, number]> = {
  AF: [5, 20],
  AN: [-80, 0],
  AS: [28, 95],
  EU: [50, 10],
  NA: [38, -90],
  OC: [-28, 140],
  SA: [-15, -55],
};
