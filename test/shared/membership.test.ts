// Transceiver heartbeat records (shared/membership.ts).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseHeartbeat, transceiverKey, transceiverKeyPattern } from "../../shared/membership.ts";

const good = {
  clusterId: 1,
  transceiverId: 7,
  backbone: "127.0.0.1:40001",
  apiUrl: "http://127.0.0.1:7101",
  load: 3,
  capacity: 100,
  draining: false,
  sentAt: 1_767_225_600_000,
};

describe("heartbeat", () => {
  it("keys", () => {
    expect(transceiverKey(1, 7)).toBe("gr:transceiver:1:7");
    expect(transceiverKeyPattern(1)).toBe("gr:transceiver:1:*");
  });

  it("parses a valid record (IPv4 and IPv6 backbone)", () => {
    expect(parseHeartbeat(JSON.stringify(good))).toEqual(good);
    const v6 = { ...good, backbone: "[::1]:40001" };
    expect(parseHeartbeat(JSON.stringify(v6))).toEqual(v6);
  });

  it.each<[string, Record<string, unknown>]>([
    ["cluster id 0", { clusterId: 0 }],
    ["transceiver id 65536", { transceiverId: 65536 }],
    ["fractional id", { transceiverId: 1.5 }],
    ["backbone host name", { backbone: "transceiver-1:40001" }],
    ["backbone octet over 255", { backbone: "999.0.0.1:40001" }],
    ["backbone port over 65535", { backbone: "127.0.0.1:99999" }],
    ["backbone port 0", { backbone: "127.0.0.1:0" }],
    ["backbone IPv6 without brackets", { backbone: "::1:40001" }],
    ["API URL scheme", { apiUrl: "ftp://x" }],
    ["negative load", { load: -1 }],
    ["infinite capacity", { capacity: Number.POSITIVE_INFINITY }],
    ["draining not boolean", { draining: "no" }],
    ["sentAt missing", { sentAt: undefined }],
  ])("rejects %s", (_n, edit) => {
    expect(parseHeartbeat(JSON.stringify({ ...good, ...edit }))).toBeNull();
  });

  it("never throws on arbitrary text or JSON", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v) ?? ""),
        ),
        (text) => {
          expect(parseHeartbeat(text)).toBeNull();
        },
      ),
    );
  });
});
