// Link parameters as written in a link emulator config (JSON), checked field by field: a bad
// value names its path and what was expected, so a broken world file fails before anything starts.
import type { LinkParams } from "./link.ts";
import { burstyLoss } from "./loss.ts";

/** The JSON form: loss as a mean rate and a mean burst length. */
export interface LinkSpec {
  delayMs: number;
  jitterMs?: number;
  lossPct?: number;
  /** Mean loss burst, packets (1 = independent losses). */
  burst?: number;
  queue?: number;
}

export type ParsedLink = { ok: true; params: LinkParams } | { ok: false; reason: string };

const num = (v: unknown, min: number, max: number): v is number =>
  typeof v === "number" && Number.isFinite(v) && v >= min && v <= max;

export function parseLinkSpec(raw: unknown, path: string): ParsedLink {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { ok: false, reason: `${path}: must be an object like {"delayMs": 20}` };
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!["delayMs", "jitterMs", "lossPct", "burst", "queue"].includes(k))
      return { ok: false, reason: `${path}.${k}: is not a known field` };
  const checks: [string, unknown, number, number, number][] = [
    ["delayMs", o.delayMs, 0, 10_000, Number.NaN],
    ["jitterMs", o.jitterMs, 0, 1_000, 0],
    ["lossPct", o.lossPct, 0, 100, 0],
    ["burst", o.burst, 1, 1_000, 1],
    ["queue", o.queue, 1, 1 << 20, 4096],
  ];
  const v: Record<string, number> = {};
  for (const [k, val, min, max, def] of checks) {
    if (val === undefined && !Number.isNaN(def)) v[k] = def;
    else if (!num(val, min, max))
      return {
        ok: false,
        reason: `${path}.${k}: must be a number ${min}-${max}, got ${JSON.stringify(val)}`,
      };
    else v[k] = val;
  }
  if (!Number.isInteger(v.queue)) return { ok: false, reason: `${path}.queue: must be an integer` };
  if (v.lossPct === 100)
    return { ok: false, reason: `${path}.lossPct: 100 would cut the link; remove it instead` };
  return {
    ok: true,
    params: {
      delayMs: v.delayMs!,
      jitterMs: v.jitterMs!,
      loss: burstyLoss(v.lossPct!, v.burst!),
      queue: v.queue!,
    },
  };
}
