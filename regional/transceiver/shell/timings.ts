// Setup timings of one session: marks on performance.now(), each observed once into the region's
// setup histogram, and reported in the status relative to the answer.

import type { CallStatus } from "../call-types.ts";
import type { RegionHandles } from "../metrics.ts";

export class SetupTimings {
  readonly #rh: RegionHandles;
  /** performance.now() when the request arrived. */
  readonly #receivedAt: number;
  answeredAt = 0;
  iceConnectedAt = 0;
  dtlsConnectedAt = 0;
  firstAudioAt = 0;

  constructor(rh: RegionHandles, receivedAt: number) {
    this.#rh = rh;
    this.#receivedAt = receivedAt;
  }

  answered(): void {
    this.answeredAt = performance.now();
    this.#rh.setup.offer_to_answer.observe((this.answeredAt - this.#receivedAt) / 1000);
  }
  /** The first time only; true when this was it. */
  iceConnected(): boolean {
    if (this.iceConnectedAt !== 0) return false;
    this.iceConnectedAt = performance.now();
    this.#rh.setup.answer_to_ice_connected.observe((this.iceConnectedAt - this.answeredAt) / 1000);
    return true;
  }
  dtlsConnected(): boolean {
    if (this.dtlsConnectedAt !== 0) return false;
    this.dtlsConnectedAt = performance.now();
    this.#rh.setup.answer_to_dtls_connected.observe((this.dtlsConnectedAt - this.answeredAt) / 1000);
    return true;
  }
  firstAudio(): void {
    if (this.firstAudioAt !== 0) return;
    this.firstAudioAt = performance.now();
    this.#rh.setup.answer_to_first_audio.observe((this.firstAudioAt - this.answeredAt) / 1000);
  }

  status(): CallStatus["timings"] {
    const ms = (t: number): number | null =>
      t > 0 && this.answeredAt > 0 ? Math.round(t - this.answeredAt) : null;
    return {
      offerToAnswerMs: this.answeredAt > 0 ? Math.round(this.answeredAt - this.#receivedAt) : null,
      answerToIceConnectedMs: ms(this.iceConnectedAt),
      answerToDtlsConnectedMs: ms(this.dtlsConnectedAt),
      answerToFirstAudioMs: ms(this.firstAudioAt),
    };
  }
}
