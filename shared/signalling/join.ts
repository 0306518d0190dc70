// The join contract between the edge and the cluster (docs/cascade design, docs/transceiver.md):
// the owner's admit answer (POST /v1/calls/{callId}/participants), the leg request the edge
// builds from it (POST /v1/legs at the joiner's cluster) and the leg's 201 answer. Pure; the
// readers never throw and return undefined for anything that is not the contract's shape.
import type { CreateCallRequest } from "./call-request.ts";

/** `prt_` + 16 base64url characters (12 random bytes). */
export const PARTICIPANT_ID = /^prt_[A-Za-z0-9_-]{16}$/;
const CONFERENCE_ID = /^[0-9a-f]{16}$/;
/** "ip:port", IPv6 in brackets; the transceiver checks it again. */
const HUB_ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:.]{2,45}\]):\d{1,5}$/;

export interface HubInfo {
  address: string;
  clusterId: number;
  transceiverId: number;
}

/** 201 body of POST /v1/calls/{callId}/participants at the owner's transceiver. */
export interface AdmitResponse {
  participantId: string;
  slot: number;
  conferenceId: string;
  hub: HubInfo;
}

export interface LegConference extends AdmitResponse {
  callId: string;
}

/** Body of POST /v1/legs: a call request plus where its conference lives. */
export interface CreateLegRequest extends CreateCallRequest {
  conference: LegConference;
}

/** 201 body of POST /v1/legs. */
export interface CreateLegResponse {
  legId: string;
  sdp: string;
  etag: string;
  clusterId: number;
  transceiverId: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isU16 = (v: unknown, min = 0): v is number =>
  typeof v === "number" && Number.isInteger(v) && v >= min && v <= 65535;

export function readHubInfo(v: unknown): HubInfo | undefined {
  if (!isObj(v) || typeof v.address !== "string" || !HUB_ADDRESS.test(v.address)) return undefined;
  if (!isU16(v.clusterId, 1) || !isU16(v.transceiverId, 1)) return undefined;
  return { address: v.address, clusterId: v.clusterId, transceiverId: v.transceiverId };
}

export function readAdmitResponse(v: unknown): AdmitResponse | undefined {
  if (!isObj(v) || typeof v.participantId !== "string" || !PARTICIPANT_ID.test(v.participantId))
    return undefined;
  // Slots 0 (backend) and 1 (owner's client) are never a joiner's.
  if (!isU16(v.slot, 2)) return undefined;
  if (typeof v.conferenceId !== "string" || !CONFERENCE_ID.test(v.conferenceId)) return undefined;
  const hub = readHubInfo(v.hub);
  if (!hub) return undefined;
  return { participantId: v.participantId, slot: v.slot, conferenceId: v.conferenceId, hub };
}

export function readCreateLegResponse(v: unknown): CreateLegResponse | undefined {
  if (!isObj(v) || typeof v.legId !== "string" || typeof v.sdp !== "string") return undefined;
  return {
    legId: v.legId,
    sdp: v.sdp,
    etag: typeof v.etag === "string" ? v.etag : "",
    clusterId: typeof v.clusterId === "number" ? v.clusterId : 0,
    transceiverId: typeof v.transceiverId === "number" ? v.transceiverId : 0,
  };
}
