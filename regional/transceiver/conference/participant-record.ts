// A hub's participant records (GET /v1/calls/{id}/participants[/{pid}], docs/transceiver.md):
// the owner's client, then each joiner with its leg (null until its hello: the edge routes a
// participant's PATCH and status there), its address, the leg-hub round trip and repair counters.

import { OWNER_PARTICIPANT_ID } from "../../../shared/conference/payloads.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import { OWNER_SLOT } from "../backend-protocol.ts";
import type { Joiner } from "./hub-routes.ts";

export function participantRecords(
  createdAt: number,
  joiners: Iterable<Joiner>,
  addressText: (a: HostPort) => string,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [
    {
      participantId: OWNER_PARTICIPANT_ID,
      slot: OWNER_SLOT,
      state: "connected",
      joinedAt: new Date(createdAt).toISOString(),
      leg: null,
    },
  ];
  for (const j of joiners) {
    out.push({
      participantId: j.id,
      slot: j.slot,
      state: j.state,
      joinedAt: j.joinedAt === null ? null : new Date(j.joinedAt).toISOString(),
      leg: j.leg?.toJSON() ?? null,
      address: j.link.to ? addressText(j.link.to) : null,
      rttMs: j.link.rttMs,
      repair: j.link.repairStats(),
      events: { delivered: j.link.events.delivered, lost: j.link.events.lost },
    });
  }
  return out;
}
