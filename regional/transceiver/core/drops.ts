// Why the transceiver drops a datagram: the label values of gr_transceiver_drops_total, named
// here so that the sans-IO mux and the metrics share one list.

/** Transceiver drop reasons (gr_transceiver_drops_total). */
export const DROP_REASONS = [
  "bad_frame",
  "unexpected_frame",
  "wrong_transceiver",
  "bad_stun",
  "bad_username",
  "unknown_ufrag",
  "bad_integrity",
  "unknown_address",
  "not_rtp",
  "red_malformed",
  "duplicate_rtp",
  "no_route",
  "stun_replay",
  "path_cap",
  "path_unvalidated",
  "path_in_use",
  "srtp_replay",
  "srtcp_replay",
  "srtp_ssrc_limit",
] as const;
export type DropReason = (typeof DROP_REASONS)[number];
