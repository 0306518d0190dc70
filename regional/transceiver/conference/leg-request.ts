// The body of POST /v1/legs (docs/transceiver.md): a create request (sdp, client, ingress,
// session) plus the conference the leg joins, as the hub's admission described it. Every field
// is checked; a problem is a 400 naming it.
import { newConferenceHeader, parseConferenceIdHex } from "../../../shared/conference/frame.ts";
import { parseHostPort } from "../../../shared/topology/address.ts";
import { parseCreateBody } from "../api-body.ts";
import { MAX_PARTICIPANT_SLOT, OWNER_SLOT } from "../backend-protocol.ts";
import type { CreateRequest } from "../calls.ts";
import type { ConferenceConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import { allowed, ipBytes } from "./addr.ts";
import type { LegSpec } from "./leg.ts";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const bad = (what: string): ApiError => new ApiError("body_malformed", `conference.${what}`);
const id16 = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;

export function parseLegBody(v: unknown, c: ConferenceConfig): { create: CreateRequest; spec: LegSpec } {
  const create = parseCreateBody(v);
  const conf = (v as Obj).conference;
  if (!isObj(conf)) throw new ApiError("body_malformed", "conference: must be an object");
  const { callId, participantId, slot, conferenceId, hub } = conf;
  if (typeof callId !== "string" || !/^[A-Za-z0-9_-]{1,128}$/.test(callId))
    throw bad("callId: must be a call id");
  if (typeof participantId !== "string" || !/^prt_[A-Za-z0-9_-]{16}$/.test(participantId))
    throw bad('participantId: must be "prt_" and 16 base64url characters');
  if (!Number.isInteger(slot) || (slot as number) <= OWNER_SLOT || (slot as number) > MAX_PARTICIPANT_SLOT)
    throw bad(`slot: must be an integer ${OWNER_SLOT + 1}-${MAX_PARTICIPANT_SLOT}`);
  const h = newConferenceHeader();
  if (typeof conferenceId !== "string" || !parseConferenceIdHex(conferenceId, h))
    throw bad("conferenceId: must be 16 hex characters");
  if (!isObj(hub)) throw bad("hub: must be an object");
  const address = typeof hub.address === "string" ? parseHostPort(hub.address) : "must be a string";
  if (typeof address === "string") throw bad(`hub.address: ${address}`);
  const ip = ipBytes(address);
  if (address.port === 0 || ip === undefined || !allowed(c.cidrs, address.ipv6, ip))
    throw bad("hub.address: must be a conference address inside the backbone");
  if (!id16(hub.clusterId) || !id16(hub.transceiverId))
    throw bad("hub.clusterId, hub.transceiverId: must be integers 1-65535");
  return {
    create,
    spec: {
      callId,
      participantId,
      slot: slot as number,
      hi: h.conferenceHi,
      lo: h.conferenceLo,
      hub: { address, clusterId: hub.clusterId as number, transceiverId: hub.transceiverId as number },
    },
  };
}
