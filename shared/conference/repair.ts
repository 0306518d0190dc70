// Per-hop repair by NACK (docs/wire-formats.md §8): the sender's history and the receiver's gap
// tracker, in two files to keep each small.

export {
  DEFAULT_RTT_MS,
  GapTracker,
  MAX_MISSING,
  NACK_GIVE_UP_MS,
  NACK_MIN_RETRY_MS,
  NACK_RETRIES,
  type PacketVerdict,
  SEQ_WINDOW,
} from "./gap-tracker.ts";
export { nackSeqs, RETRANSMIT_BUDGET, SEND_HISTORY_FRAMES, SendHistory } from "./send-history.ts";
