// One media frame in, on the hub (a leaf's audio) and on a leg (the hub's): its audio frame header
// read into a reused object, a malformed one counted, a repeated sequence number of its source
// dropped (the link's gap tracker says so). What the audio then goes to is the caller's.
import { CONFERENCE_HEADER_BYTES } from "../../../shared/conference/frame.ts";
import type { CounterHandle } from "../../common/metrics.ts";
import {
  AUDIO_FRAME_HEADER_BYTES,
  type AudioFrameHeader,
  readAudioFrameHeader,
} from "../backend-protocol.ts";
import type { ConferenceLink } from "./link.ts";

/** The audio payload of the media frame at buf[20..20+len] of `source` (header into `a`), or undefined. */
export function mediaIn(
  link: ConferenceLink,
  source: number,
  buf: Buffer,
  len: number,
  now: number,
  a: AudioFrameHeader,
  badMedia: CounterHandle,
): Buffer | undefined {
  const frame = buf.subarray(CONFERENCE_HEADER_BYTES, CONFERENCE_HEADER_BYTES + len);
  if (readAudioFrameHeader(frame, a) !== "ok") {
    badMedia.inc();
    return undefined;
  }
  if (link.onMedia(source, a.sequenceNumber, now) === "duplicate") return undefined;
  return frame.subarray(AUDIO_FRAME_HEADER_BYTES);
}
