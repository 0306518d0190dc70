// Edits of werift's answer (pure text work): Opus FEC mirrors the offer, the cluster VIP as a
// second candidate, new remote credentials for an ICE restart and the sdpfrag answering it.

export interface AnswerEdits {
  /** Mirror the offer: keep useinbandfec=1 only when the offer asked for it. */
  opusFec: boolean;
  /** A lower-priority second candidate (the cluster's own VIP). */
  secondCandidate?: { host: string; port: number };
  /** A passive ICE-TCP candidate on the VIP (RFC 6544), below every UDP candidate. */
  tcpCandidate?: { host: string; port: number };
}

/**
 * Priority of the passive TCP candidate: type preference 100 (under host UDP's 126, so a pair over
 * UDP always ranks first and UDP wins wherever it works), local preference 2^13 × 4 (RFC 6544
 * §4.2, passive direction), component 1.
 */
export const TCP_CANDIDATE_PRIORITY = 100 * 2 ** 24 + 2 ** 13 * 4 * 2 ** 8 + 255;

/** RFC 8445 priority of a host candidate with the given local preference, component 1. */
export function hostPriority(localPreference: number): number {
  return 126 * 2 ** 24 + localPreference * 2 ** 8 + 255;
}

/** Adjusts werift's answer: Opus FEC parameter and an optional second candidate. */
export function finishAnswer(sdp: string, e: AnswerEdits): string {
  const lines = sdp.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const opusPts = new Set<string>();
  for (const l of lines) {
    const m = /^a=rtpmap:(\d+) opus\/48000/i.exec(l);
    if (m) opusPts.add(m[1]!);
  }
  const out: string[] = [];
  for (const l of lines) {
    const fm = /^a=fmtp:(\d+) (.*)$/.exec(l);
    if (fm && opusPts.has(fm[1]!)) {
      const params = fm[2]!
        .split(";")
        .map((p) => p.trim())
        .filter((p) => p !== "" && !/^useinbandfec=/i.test(p));
      if (e.opusFec) params.push("useinbandfec=1");
      if (params.length > 0) out.push(`a=fmtp:${fm[1]} ${params.join(";")}`);
      continue;
    }
    out.push(l);
    if (e.secondCandidate && l.startsWith("a=candidate:")) {
      const parts = l.slice("a=candidate:".length).split(" ");
      const ufragAt = parts.indexOf("ufrag");
      const ufrag = ufragAt >= 0 ? ` ufrag ${parts[ufragAt + 1]}` : "";
      const { host, port } = e.secondCandidate;
      out.push(`a=candidate:gr2 1 udp ${hostPriority(32768)} ${host} ${port} typ host generation 0${ufrag}`);
    }
    if (e.tcpCandidate && l.startsWith("a=candidate:") && !l.startsWith("a=candidate:gr2 ")) {
      const parts = l.slice("a=candidate:".length).split(" ");
      const ufragAt = parts.indexOf("ufrag");
      const ufrag = ufragAt >= 0 ? ` ufrag ${parts[ufragAt + 1]}` : "";
      const { host, port } = e.tcpCandidate;
      out.push(
        `a=candidate:grtcp 1 tcp ${TCP_CANDIDATE_PRIORITY} ${host} ${port} typ host tcptype passive generation 0${ufrag}`,
      );
    }
  }
  return `${out.join("\r\n")}\r\n`;
}

/** Puts new remote ICE credentials into an offer (ICE restart through PATCH). */
export function replaceIceCredentials(sdp: string, ufrag: string, pwd: string): string {
  return sdp
    .split(/\r?\n/)
    .filter((l) => !l.startsWith("a=candidate:") && l !== "a=end-of-candidates")
    .map((l) =>
      l.startsWith("a=ice-ufrag:")
        ? `a=ice-ufrag:${ufrag}`
        : l.startsWith("a=ice-pwd:")
          ? `a=ice-pwd:${pwd}`
          : l,
    )
    .join("\r\n");
}

/**
 * The sdpfrag answering an ICE restart (RFC 9725 §4.3.2), taken from the new local answer: the
 * BUNDLE group, then the first m-line with its mid, new credentials and candidates.
 */
export function restartAnswerFrag(answerSdp: string): string {
  const lines = answerSdp.split(/\r?\n/);
  const out: string[] = ["a=ice-options:trickle"];
  const group = lines.find((l) => l.startsWith("a=group:BUNDLE"));
  if (group) out.push(group);
  const first = lines.findIndex((l) => l.startsWith("m="));
  if (first < 0) return `${out.join("\r\n")}\r\n`;
  let end = lines.findIndex((l, i) => i > first && l.startsWith("m="));
  if (end < 0) end = lines.length;
  out.push(lines[first]!);
  const section = lines.slice(first + 1, end);
  for (const prefix of ["a=mid:", "a=ice-ufrag:", "a=ice-pwd:"]) {
    const l = section.find((x) => x.startsWith(prefix));
    if (l) out.push(l);
  }
  for (const l of section) if (l.startsWith("a=candidate:")) out.push(l);
  out.push("a=end-of-candidates");
  return `${out.join("\r\n")}\r\n`;
}

/** ICE credentials of a local description (the first m-section that has them). */
export function localIceCredentials(sdp: string): { ufrag: string; pwd: string } | undefined {
  const u = /^a=ice-ufrag:(\S+)/m.exec(sdp);
  const p = /^a=ice-pwd:(\S+)/m.exec(sdp);
  return u && p ? { ufrag: u[1]!, pwd: p[1]! } : undefined;
}
