// A joiner's handle on its own leg (issue 16 follow-up): the owner's participant record
// (GET /v1/calls/{callId}/participants/{pid} at the hub) names the leg once its hello arrived;
// the leg is an ordinary call at its own cluster (GET / PATCH /v1/calls/{legId} there). Pure:
// the readers never throw and return undefined for anything that is not the contract's shape.
import { CALL_ID_PATTERN } from "../callid/callid.ts";

/** Where a participant's leg lives (the hub learns it from the leg's hello). */
export interface ParticipantLeg {
  clusterId: number;
  transceiverId: number;
  legId: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isU16 = (v: unknown): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 65535;

/**
 * The `leg` of an owner's participant record: the leg, null while it is not known yet (admitted,
 * no hello), undefined when the record is not the contract's shape.
 */
export function readParticipantLeg(record: unknown): ParticipantLeg | null | undefined {
  if (!isObj(record)) return undefined;
  const leg = record.leg;
  if (leg === null) return null;
  if (!isObj(leg) || !isU16(leg.clusterId) || !isU16(leg.transceiverId)) return undefined;
  if (typeof leg.legId !== "string" || !CALL_ID_PATTERN.test(leg.legId)) return undefined;
  return { clusterId: leg.clusterId, transceiverId: leg.transceiverId, legId: leg.legId };
}

/** What a joiner sees of its leg's call status (GET /v1/calls/{legId} at the leg's cluster). */
export interface LegStatus {
  /** The leg call's state (connecting | connected | ended), or "unknown": its cluster did not say. */
  state: string;
  /** The client's address on the selected path (through the relays), null before ICE. */
  clientAddress?: string | null;
  codec?: string | null;
  iceRttMs?: number | null;
  iceRestarts?: number;
  endReason?: string | null;
}

const STATES = new Set(["connecting", "connected", "ended"]);
const str = (v: unknown, max = 200): v is string => typeof v === "string" && v.length <= max;
const num = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** The fields of a leg's call status a joiner is shown; "unknown" for anything else. */
export function readLegStatus(status: unknown): LegStatus {
  if (!isObj(status) || !str(status.state) || !STATES.has(status.state)) return { state: "unknown" };
  const out: LegStatus = { state: status.state };
  const nullable = <T>(v: unknown, ok: (x: unknown) => x is T): T | null | undefined =>
    v === null ? null : ok(v) ? v : undefined;
  const clientAddress = nullable(status.clientAddress, (x): x is string => str(x, 64));
  if (clientAddress !== undefined) out.clientAddress = clientAddress;
  const codec = nullable(status.codec, (x): x is string => str(x, 32));
  if (codec !== undefined) out.codec = codec;
  const rtt = nullable(status.iceRttMs, num);
  if (rtt !== undefined) out.iceRttMs = rtt;
  if (num(status.iceRestarts) && Number.isInteger(status.iceRestarts)) out.iceRestarts = status.iceRestarts;
  const endReason = nullable(status.endReason, (x): x is string => str(x, 64));
  if (endReason !== undefined) out.endReason = endReason;
  return out;
}

/**
 * The roster entry with its leg's status merged into `leg` (readLegStatus keeps only status
 * fields, so the status never renames the leg).
 */
export function withLegStatus(record: Obj, status: LegStatus): Obj {
  const leg = isObj(record.leg) ? record.leg : {};
  return { ...record, leg: { ...leg, ...status } };
}

/**
 * A participant record as the edge shows it: never the cascade's backbone address (`address`,
 * the leg transceiver's conference socket: the topology's, of no use outside), and the leg's
 * `clientAddress` (a joiner's public address) only to an API key: a call's invitees share one
 * scoped client secret, so any of them would read every other's address.
 */
export function publicRecord(record: Obj, clientAddress: boolean): Obj {
  const { address: _backbone, ...out } = record;
  if (!clientAddress && isObj(out.leg) && "clientAddress" in out.leg) {
    const { clientAddress: _client, ...leg } = out.leg;
    out.leg = leg;
  }
  return out;
}

/** The participants list (`{ participants: [...] }`) with each record as publicRecord makes it. */
export function publicList(body: unknown, clientAddress: boolean): unknown {
  if (!isObj(body) || !Array.isArray(body.participants)) return body;
  return {
    ...body,
    participants: body.participants.map((p) => (isObj(p) ? publicRecord(p, clientAddress) : p)),
  };
}
