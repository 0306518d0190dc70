// The answer's passive ICE-TCP candidate (RFC 6544 syntax, below every UDP candidate, on the VIP)
// and the topology fields that turn it and the POP's listener on.
import { describe, expect, it } from "vitest";
import {
  finishAnswer,
  hostPriority,
  TCP_CANDIDATE_PRIORITY,
} from "../../regional/transceiver/core/answer.ts";
import { validateTopology } from "../../shared/topology/schema.ts";
import { ports, topology } from "../relay/harness.ts";

const answer =
  "v=0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\na=candidate:abc 1 udp 2130706431 192.0.2.1 3478 typ host generation 0 ufrag U1\r\na=rtpmap:111 opus/48000/2\r\n";

describe("the answer's ICE-TCP candidate", () => {
  it("is a passive TCP host candidate on the VIP, after the UDP ones, with the same ufrag", () => {
    const out = finishAnswer(answer, {
      opusFec: false,
      secondCandidate: { host: "198.51.100.9", port: 3479 },
      tcpCandidate: { host: "192.0.2.1", port: 443 },
    });
    const cands = out.split("\r\n").filter((l) => l.startsWith("a=candidate:"));
    expect(cands).toHaveLength(3);
    expect(cands[2]).toBe(
      `a=candidate:grtcp 1 tcp ${TCP_CANDIDATE_PRIORITY} 192.0.2.1 443 typ host tcptype passive generation 0 ufrag U1`,
    );
    // Foundation: ice-chars only (RFC 8839); priority below every UDP candidate we write.
    expect(/^[A-Za-z0-9+/]{1,32}$/.test("grtcp")).toBe(true);
    expect(TCP_CANDIDATE_PRIORITY).toBeLessThan(hostPriority(0));
    expect(TCP_CANDIDATE_PRIORITY).toBeLessThan(2 ** 31);
  });

  it("is absent unless configured", () => {
    expect(finishAnswer(answer, { opusFec: false })).not.toContain(" tcp ");
  });
});

describe("topology: globalVipTcpPort and pops[].vipTcpPort", () => {
  it("are optional ports", async () => {
    const t = topology(await ports()) as unknown as Record<string, unknown> & {
      pops: Record<string, unknown>[];
    };
    expect(validateTopology(t).ok).toBe(true);
    t.globalVipTcpPort = 443;
    t.pops[0]!.vipTcpPort = 443;
    const r = validateTopology(t);
    expect(r.ok && [r.topology.globalVipTcpPort, r.topology.pops[0]!.vipTcpPort]).toEqual([443, 443]);
  });

  it("name the field when out of range", async () => {
    const t = topology(await ports()) as unknown as Record<string, unknown> & {
      pops: Record<string, unknown>[];
    };
    t.globalVipTcpPort = 0;
    t.pops[0]!.vipTcpPort = "443";
    const r = validateTopology(t);
    expect(r.ok).toBe(false);
    const errors = r.ok ? [] : r.errors;
    expect(errors.some((e) => e.startsWith("topology.globalVipTcpPort"))).toBe(true);
    expect(errors.some((e) => e.startsWith("pops[0].vipTcpPort"))).toBe(true);
  });
});
