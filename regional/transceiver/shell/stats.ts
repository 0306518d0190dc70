// Periodic call-quality samples into the region's histograms: ICE RTT from the selected pair,
// RTCP RTT, jitter and loss (as deltas between samples) read from werift's receiver and sender
// state (werift-media.ts): no getStats() report is built.
import type { RTCRtpTransceiver } from "werift";
import type { RegionHandles } from "../metrics.ts";
import type { IceAttachment } from "./werift-glue.ts";
import { type InboundState, type MediaStats, mediaStatsOf } from "./werift-media.ts";

export class CallStats {
  #lastLost = 0;
  #lastReceived = 0;
  #nextAt = 0;
  readonly #in: InboundState = { packetsReceived: 0, packetsLost: 0, jitter: 0 };
  #media: MediaStats | undefined;

  /** Samples when due (jittered interval, so sessions do not sample in step). */
  maybeSample(
    now: number,
    intervalMs: number,
    audio: RTCRtpTransceiver,
    att: IceAttachment,
    rh: RegionHandles,
  ): void {
    if (now < this.#nextAt) return;
    this.#nextAt = now + intervalMs * (0.75 + Math.random() * 0.5);
    this.#media ??= mediaStatsOf(audio);
    this.sample(this.#media, att, rh);
  }

  /** One sample now (what maybeSample does when due). */
  sample(media: MediaStats, att: Pick<IceAttachment, "selectedRtt">, rh: RegionHandles): void {
    const rtt = att.selectedRtt();
    if (rtt !== undefined) rh.iceRtt.observe(rtt);
    const rtcpRtt = media.rtcpRtt();
    if (rtcpRtt !== undefined) rh.rtcpRtt.observe(rtcpRtt);
    const s = this.#in;
    if (!media.inbound(s)) return;
    rh.jitter.observe(s.jitter);
    const dl = Math.max(0, s.packetsLost - this.#lastLost);
    const dr = Math.max(0, s.packetsReceived - this.#lastReceived);
    this.#lastLost = s.packetsLost;
    this.#lastReceived = s.packetsReceived;
    if (dl + dr > 0) rh.loss.observe(dl / (dl + dr));
  }
}
