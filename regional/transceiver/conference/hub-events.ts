// Events across the cascade on the hub (docs/transceiver.md "Conferences"): a backend event goes
// to every leaf (kind 6, one stream per leaf link); a joiner's event arrives in order (its
// link's EventInbox, gaps repaired by NACK) and goes to the backend tagged with participant_id
// and slot; one that sets the instructions or tools (events.ts joinerMayNotSend) is refused and
// the joiner told. A large event goes in fragments (link.ts); one over EVENT_MAX_BYTES is not
// carried, only counted: the backend is not sent an `error` for it (a backend answering errors
// with events could loop). Events given up are told to that joiner.
import { EVENT_MAX_BYTES, eventSeq, eventUtf8 } from "../../../shared/conference/event.ts";
import { CONFERENCE_HEADER_BYTES } from "../../../shared/conference/frame.ts";
import { eventNotAllowedError, eventsLostEvent, readJoinerEvent } from "./events.ts";
import type { HubCall, HubRoutes, Joiner } from "./hub-routes.ts";
import type { ConferenceMetrics } from "./metrics.ts";

export class HubEvents {
  readonly #call: HubCall;
  readonly #m: ConferenceMetrics;
  readonly #routes: HubRoutes;

  constructor(call: HubCall, m: ConferenceMetrics, routes: HubRoutes) {
    this.#call = call;
    this.#m = m;
    this.#routes = routes;
  }

  /** A backend event: to every connected leaf. */
  fromBackend(text: string, now: number): void {
    const live = this.#routes.live;
    if (live.length === 0) return;
    const bytes = eventUtf8(text);
    if (bytes.length > EVENT_MAX_BYTES) {
      this.#m.drops.event_too_large.inc();
      return;
    }
    for (let i = 0; i < live.length; i++) {
      const j = live[i]!;
      if (j.link.event(0, j.slot, bytes, now)) this.#m.events.out.inc();
    }
  }

  /** A joiner's event fragment (payload at buf[20..20+len]): joined in order, then `deliver`. */
  fromLeaf(j: Joiner, buf: Buffer, len: number, now: number): void {
    const seq = eventSeq(buf, CONFERENCE_HEADER_BYTES);
    if (!j.link.onEvent(j.slot, seq, now)) return;
    this.lost(j, j.link.events.push(seq, buf, CONFERENCE_HEADER_BYTES, len, now, j.deliver), now);
  }

  /**
   * A joiner's event, in order: to the backend, tagged. One a joiner may not send (the session's:
   * events.ts joinerMayNotSend) is not carried; the joiner gets an error. Enforced here, on the
   * backend's side of the cascade, whatever the leg let through.
   */
  deliver(j: Joiner, text: string): void {
    const tagged = readJoinerEvent(text, j.id, j.slot);
    if (tagged === undefined) {
      this.#m.drops.bad_event.inc();
      return;
    }
    if (typeof tagged !== "string") {
      this.#m.drops.event_not_allowed.inc();
      j.link.event(0, j.slot, eventNotAllowedError(tagged.refused), performance.now());
      return;
    }
    this.#m.events.in.inc();
    this.#call.sendEventToBackend(tagged);
  }

  /** Events of j's given up: j's client is told, over the hub-to-leaf event stream. */
  lost(j: Joiner, lost: number, now: number): void {
    if (lost === 0) return;
    this.#m.eventsLost.inc(lost);
    j.link.event(0, j.slot, eventsLostEvent("to_backend", lost), now);
  }
}
