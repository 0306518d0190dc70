// The dashboard's Conferences row (docs/operations/conferences.md, "What to watch"): conference
// frames between hubs and legs, their repair by NACK, drops by reason, and how many conferences
// and joiners the transceivers hold. Part of the one catalogue (panels.ts). Pure data.
import type { PanelDef } from "./core/panel-def.ts";

const CLUSTER = ["cluster"] as const;

export const CONFERENCE_PANELS: readonly PanelDef[] = [
  {
    id: "conference_frames",
    title: "Conference frames",
    section: "conferences",
    kind: "rate",
    metric: "gr_transceiver_conference_frames_total",
    by: ["direction"],
    filters: CLUSTER,
    unit: "per_second",
    help: "Conference frames per second between hubs and legs (MAC-valid, of a known conference), in and out: 50 per second per participant stream.",
  },
  {
    id: "conference_participants",
    title: "Conference participants",
    section: "conferences",
    kind: "gauge",
    metric: "gr_transceiver_conference_participants",
    by: ["cluster"],
    filters: CLUSTER,
    unit: "count",
    help: "Joiners admitted on the calls each cluster's transceivers hub (the owners' clients not counted).",
  },
  {
    id: "conference_repaired",
    title: "Conference frames repaired",
    section: "conferences",
    kind: "rate",
    metric: "gr_transceiver_conference_repaired_total",
    by: ["direction"],
    filters: CLUSTER,
    unit: "per_second",
    help: "Repair by NACK per hop: in = gaps a retransmission filled, out = media frames sent again for a NACK.",
  },
  {
    id: "conference_lost",
    title: "Conference frames lost",
    section: "conferences",
    kind: "rate",
    metric: "gr_transceiver_conference_lost_total",
    by: ["direction"],
    filters: CLUSTER,
    unit: "per_second",
    help: "in = media frames never repaired (given up after 500 ms); out = NACKed frames no longer in the history. Far-end loss after repair = lost in / frames in.",
  },
  {
    id: "conference_drops",
    title: "Conference drops by reason",
    section: "conferences",
    kind: "rate",
    metric: "gr_transceiver_conference_drops_total",
    by: ["reason"],
    filters: CLUSTER,
    unit: "per_second",
    help: "Conference datagrams dropped: bad_mac / unknown_key = keyrings disagree, bad_address = a leg outside the backbone CIDRs, replay, unknown_conference, ...",
  },
  {
    id: "conferences_active",
    title: "Conferences active",
    section: "conferences",
    kind: "gauge",
    metric: "gr_transceiver_conferences_active",
    by: ["cluster"],
    filters: CLUSTER,
    unit: "count",
    help: "Hub conferences and legs each cluster's transceivers hold now.",
  },
];
