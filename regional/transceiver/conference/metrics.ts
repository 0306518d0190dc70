// Conference metrics (docs/metrics.md): drops by reason, and frames, bytes, repaired and lost
// frames per direction. Registered on the transceiver's registry; handles bound once, so the
// per-datagram path counts without allocating.
import {
  type CounterHandle,
  type GaugeHandle,
  type HistogramHandle,
  LATENCY_BUCKETS,
} from "../../common/metrics.ts";
import type { TransceiverMetrics } from "../metrics.ts";

/** Why a conference datagram is dropped (gr_transceiver_conference_drops_total{reason}). */
export const CONFERENCE_DROP_REASONS = [
  "truncated",
  "bad_magic",
  "unsupported_version",
  "bad_type",
  "bad_kind",
  "unknown_key",
  "bad_mac",
  "bad_payload",
  "replay",
  "unknown_conference",
  "unknown_participant",
  "not_admitted",
  "bad_address",
  "bad_media",
  "no_route",
  // A participant's frame from a leg other than the one its first hello bound.
  "wrong_leg",
  // A frame addressed to another slot than the receiver's.
  "wrong_destination",
  // An event over EVENT_MAX_BYTES (not sent, or its fragments joined past it at the receiver),
  // one that is not UTF-8 or (a joiner's) not a JSON object, a fragment out of place (a
  // continuation without its first fragment, a first one cutting an unfinished event).
  "event_too_large",
  "bad_event",
  "event_fragment",
  // A joiner's event of a type only the owner may send (session.update...): not carried.
  "event_not_allowed",
] as const;
export type ConferenceDropReason = (typeof CONFERENCE_DROP_REASONS)[number];

export type Direction = "in" | "out";

export interface DirectionHandles {
  frames: CounterHandle;
  bytes: CounterHandle;
  /** Media frames sent again for a NACK (out) / gaps filled by a retransmission (in). */
  repaired: CounterHandle;
  /** Media frames given up on (in: never arrived; out: a NACK for a frame no longer held). */
  lost: CounterHandle;
  nacks: CounterHandle;
}

export class ConferenceMetrics {
  readonly drops: Record<ConferenceDropReason, CounterHandle>;
  readonly in: DirectionHandles;
  readonly out: DirectionHandles;
  readonly conferences: GaugeHandle;
  readonly participants: GaugeHandle;
  /** Leg <-> hub round trips (keepalive timing echo), seconds. */
  readonly rtt: HistogramHandle;
  /** Events given up (a gap the repair did not fill), counted where they should have arrived. */
  readonly eventsLost: CounterHandle;
  /** Events carried (out) and delivered in order (in). */
  readonly events: Record<Direction, CounterHandle>;

  constructor(m: TransceiverMetrics) {
    const r = m.registry;
    const cluster = m.cluster;
    const drops = r.counter(
      "gr_transceiver_conference_drops_total",
      "Conference datagrams dropped by the transceiver",
      ["cluster", "reason"],
    );
    this.drops = Object.fromEntries(
      CONFERENCE_DROP_REASONS.map((reason) => [reason, drops.with({ cluster, reason })]),
    ) as Record<ConferenceDropReason, CounterHandle>;
    const frames = r.counter("gr_transceiver_conference_frames_total", "Conference frames", [
      "cluster",
      "direction",
    ]);
    const bytes = r.counter("gr_transceiver_conference_bytes_total", "Conference frame bytes", [
      "cluster",
      "direction",
    ]);
    const repaired = r.counter(
      "gr_transceiver_conference_repaired_total",
      "Media frames retransmitted for a NACK (out) or recovered by one (in)",
      ["cluster", "direction"],
    );
    const lost = r.counter(
      "gr_transceiver_conference_lost_total",
      "Media frames never repaired (in) or asked for after they left the history (out)",
      ["cluster", "direction"],
    );
    const nacks = r.counter("gr_transceiver_conference_nacks_total", "NACK frames", ["cluster", "direction"]);
    const dir = (direction: Direction): DirectionHandles => ({
      frames: frames.with({ cluster, direction }),
      bytes: bytes.with({ cluster, direction }),
      repaired: repaired.with({ cluster, direction }),
      lost: lost.with({ cluster, direction }),
      nacks: nacks.with({ cluster, direction }),
    });
    this.in = dir("in");
    this.out = dir("out");
    this.rtt = r
      .histogram(
        "gr_transceiver_conference_rtt_seconds",
        "Leg-hub round-trip time (keepalive echo)",
        ["cluster"],
        LATENCY_BUCKETS,
      )
      .with({ cluster });
    this.eventsLost = r
      .counter("gr_transceiver_conference_events_lost_total", "Conference events never repaired", ["cluster"])
      .with({ cluster });
    const events = r.counter("gr_transceiver_conference_events_total", "Conference events", [
      "cluster",
      "direction",
    ]);
    this.events = {
      in: events.with({ cluster, direction: "in" }),
      out: events.with({ cluster, direction: "out" }),
    };
    this.conferences = r
      .gauge("gr_transceiver_conferences_active", "Conferences this transceiver takes part in (hub or leg)", [
        "cluster",
      ])
      .with({ cluster });
    this.participants = r
      .gauge(
        "gr_transceiver_conference_participants",
        "Joiners admitted on the calls this transceiver hubs",
        ["cluster"],
      )
      .with({ cluster });
  }
}

/** The drop reason of a decode status ("bad-mac" → "bad_mac"). */
export function dropReasonOf(status: string): ConferenceDropReason {
  return status.replace(/-/g, "_") as ConferenceDropReason;
}
