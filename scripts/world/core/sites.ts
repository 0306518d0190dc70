// The sites file: client sites (name, coordinates, what Cloudflare would put in request.cf) and
// the link assumptions that turn RTTs into emulated links. Every problem names its path.

export interface Site {
  name: string;
  latitude: number;
  longitude: number;
  country: string;
  continent: string;
  colo: string;
}

export interface LinkAssumptions {
  /** A client's last mile + metro RTT, ms: added to every client path (ping tables are server to server). */
  metroRttMs: number;
  /** Public internet: one-way jitter = jitterMs + jitterPerMs x one-way delay; loss likewise. */
  public: { jitterMs: number; jitterPerMs: number; lossPct: number; lossPerMs: number; burst: number };
  /** Operator backbone: RTT = public RTT x rttFactor; fixed jitter and loss. */
  backbone: { rttFactor: number; jitterMs: number; lossPct: number; burst: number };
}

export interface SitesFile {
  sites: Site[];
  links: LinkAssumptions;
}

export const DEFAULT_LINKS: LinkAssumptions = {
  metroRttMs: 20,
  public: { jitterMs: 1, jitterPerMs: 0.02, lossPct: 0.2, lossPerMs: 0.005, burst: 3 },
  backbone: { rttFactor: 0.9, jitterMs: 0.2, lossPct: 0.01, burst: 1 },
};

export const MAX_SITES = 12;

type Obj = Record<string, unknown>;

export function parseSites(raw: unknown): { ok: true; file: SitesFile } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const o = (typeof raw === "object" && raw !== null ? raw : {}) as Obj;
  const list = Array.isArray(o.sites) ? (o.sites as Obj[]) : [];
  if (list.length === 0 || list.length > MAX_SITES) errors.push(`sites: must hold 1-${MAX_SITES} sites`);
  const names = new Set<string>();
  const sites: Site[] = list.map((s, i) => {
    const p = `sites[${i}]`;
    const str = (k: string, re: RegExp, what: string): string => {
      const v = s?.[k];
      if (typeof v !== "string" || !re.test(v))
        errors.push(`${p}.${k}: must be ${what}, got ${JSON.stringify(v)}`);
      return String(v);
    };
    const num = (k: string, lim: number): number => {
      const v = s?.[k];
      if (typeof v !== "number" || !(Math.abs(v) <= lim))
        errors.push(`${p}.${k}: must be a number within ±${lim}`);
      return Number(v);
    };
    const name = str("name", /^[a-z][a-z0-9-]{0,30}$/, "a lowercase name");
    if (names.has(name)) errors.push(`${p}.name: duplicates another site (${name})`);
    names.add(name);
    return {
      name,
      latitude: num("latitude", 90),
      longitude: num("longitude", 180),
      country: str("country", /^[A-Z]{2}$/, "an ISO 3166 alpha-2 code"),
      continent: str("continent", /^(AF|AN|AS|EU|NA|OC|SA)$/, "a continent code"),
      colo: str("colo", /^[A-Z]{3}$/, "an IATA code"),
    };
  });
  const l = (o.links ?? {}) as Obj;
  const pick = <T extends Obj>(key: string, def: T): T => {
    const v = (l[key] ?? {}) as Obj;
    const out: Obj = { ...def };
    for (const [k, d] of Object.entries(def)) {
      if (v[k] === undefined) continue;
      if (typeof v[k] !== "number" || !Number.isFinite(v[k]) || (v[k] as number) < 0)
        errors.push(`links.${key}.${k}: must be a number >= 0, got ${JSON.stringify(v[k])}`);
      else out[k] = v[k];
      void d;
    }
    return out as T;
  };
  const metro = l.metroRttMs ?? DEFAULT_LINKS.metroRttMs;
  if (typeof metro !== "number" || metro < 0 || metro > 100) errors.push("links.metroRttMs: must be 0-100");
  const links: LinkAssumptions = {
    metroRttMs: Number(metro),
    public: pick("public", DEFAULT_LINKS.public),
    backbone: pick("backbone", DEFAULT_LINKS.backbone),
  };
  if (links.public.burst < 1 || links.backbone.burst < 1) errors.push("links.*.burst: must be >= 1 packet");
  return errors.length ? { ok: false, errors } : { ok: true, file: { sites, links } };
}
