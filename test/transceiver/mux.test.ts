// The demultiplexer without sockets: an address is bound only by an authenticated Binding
// request, everything else routes by address, a path follows a relay change, a taken address
// leaves its old session, and garbage is counted by reason.
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hmacSha1 } from "../../regional/common/hmac.ts";
import { type ClientPath, Mux, type MuxCall, type PathKey } from "../../regional/transceiver/core/mux.ts";
import type { DropReason } from "../../regional/transceiver/metrics.ts";
import { parseIpv4, parseIpv6, writeIpv4 } from "../../shared/backbone/address.ts";
import { decodeFrameHeader, FrameType, newFrameHeader } from "../../shared/backbone/frame.ts";
import type { StunView } from "../../shared/stun/reader.ts";
import { encodeBindingRequest } from "../../shared/stun/writer.ts";

function header(ip: string, port: number, popId = 1) {
  const h = newFrameHeader();
  h.type = FrameType.data;
  h.popId = popId;
  h.clusterId = 1;
  h.transceiverId = 1;
  h.clientPort = port;
  writeIpv4(h.clientIp, parseIpv4(ip));
  return h;
}

/** Accepts every authenticated check (binds its address), like a session whose paths validated. */
class FakeCall implements MuxCall {
  checks: ClientPath[] = [];
  data: ClientPath[] = [];
  lost: ClientPath[] = [];
  replay = false;
  readonly mux: () => Mux;
  constructor(mux: () => Mux) {
    this.mux = mux;
  }
  isReplay(): boolean {
    return this.replay;
  }
  onCheck(_p: Buffer, _v: StunView, key: PathKey): void {
    this.checks.push(this.mux().bindPath(key, this));
  }
  onDatagram(_p: Buffer, path: ClientPath): void {
    this.data.push(path);
  }
  onPathLost(path: ClientPath): void {
    this.lost.push(path);
  }
}

function setup() {
  const drops: DropReason[] = [];
  const sent: { header: Buffer; payload: Uint8Array; port: number; host: string }[] = [];
  const mux = new Mux(
    (header, payload, port, host) => sent.push({ header: Buffer.from(header), payload, port, host }),
    hmacSha1,
    { drop: (r) => drops.push(r) },
    { now: 1000 },
  );
  return { mux, drops, sent };
}

const enc = new TextEncoder();
const check = (ufrag: string, pwd: string) =>
  Buffer.from(
    encodeBindingRequest({
      transactionId: randomBytes(12),
      username: `${ufrag}:cli1`,
      password: pwd,
      hmacSha1,
    }),
  );
const rtp = Buffer.from([0x80, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 9, 9]);

describe("Mux", () => {
  it("binds an address only after a check that passes MESSAGE-INTEGRITY", () => {
    const { mux, drops } = setup();
    const s = new FakeCall(() => mux);
    mux.addUfrag("UFRAG1", enc.encode("p".repeat(32)), s);
    mux.handle(rtp, header("10.0.0.1", 5000), "127.0.0.1", 4000);
    expect(drops).toEqual(["unknown_address"]);
    mux.handle(
      check("UFRAG1", "wrong-password-wrong-password-00"),
      header("10.0.0.1", 5000),
      "127.0.0.1",
      4000,
    );
    expect(drops).toEqual(["unknown_address", "bad_integrity"]);
    mux.handle(check("OTHER", "p".repeat(32)), header("10.0.0.1", 5000), "127.0.0.1", 4000);
    expect(drops.at(-1)).toBe("unknown_ufrag");
    expect(s.checks).toHaveLength(0);
    mux.handle(check("UFRAG1", "p".repeat(32)), header("10.0.0.1", 5000), "127.0.0.1", 4000);
    expect(s.checks).toHaveLength(1);
    expect(s.checks[0]!.address).toBe("10.0.0.1:5000");
    mux.handle(rtp, header("10.0.0.1", 5000), "127.0.0.1", 4000);
    expect(s.data).toHaveLength(1);
    expect(mux.pathCount).toBe(1);
  });

  it("replies along the path with the frame header echoed, and follows a relay change", () => {
    const { mux, sent } = setup();
    const s = new FakeCall(() => mux);
    mux.addUfrag("U", enc.encode("k".repeat(32)), s);
    mux.handle(check("U", "k".repeat(32)), header("10.0.0.2", 6000, 7), "127.0.0.1", 4001);
    const path = s.checks[0]!;
    mux.send(path, Uint8Array.of(1, 2, 3));
    expect(sent[0]!.port).toBe(4001);
    const h = newFrameHeader();
    expect(decodeFrameHeader(Buffer.concat([sent[0]!.header, Buffer.from([1, 2, 3])]), 31, h)).toBe("ok");
    expect([h.type, h.popId, h.clusterId, h.transceiverId, h.clientPort]).toEqual([
      FrameType.data,
      7,
      1,
      1,
      6000,
    ]);
    // The same client now arrives through another relay (failover): replies follow it.
    mux.handle(rtp, header("10.0.0.2", 6000, 8), "127.0.0.1", 4002);
    mux.send(path, Uint8Array.of(4));
    expect(sent[1]!.port).toBe(4002);
    expect(sent[1]!.header.readUInt16BE(4)).toBe(8);
    mux.sendFlowClose(path, 3);
    expect(sent[2]!.header[1]! & 15).toBe(FrameType.flowClose);
    expect([...sent[2]!.payload]).toEqual([3]);
  });

  it("moves an address to the session that last authenticated from it", () => {
    const { mux } = setup();
    const a = new FakeCall(() => mux);
    const b = new FakeCall(() => mux);
    mux.addUfrag("A", enc.encode("a".repeat(32)), a);
    mux.addUfrag("B", enc.encode("b".repeat(32)), b);
    mux.handle(check("A", "a".repeat(32)), header("10.0.0.3", 7000), "127.0.0.1", 4000);
    mux.handle(check("B", "b".repeat(32)), header("10.0.0.3", 7000), "127.0.0.1", 4000);
    expect(a.lost).toHaveLength(1);
    mux.handle(rtp, header("10.0.0.3", 7000), "127.0.0.1", 4000);
    expect(b.data).toHaveLength(1);
    expect(a.data).toHaveLength(0);
    mux.removeUfrag("B", b);
    mux.handle(check("B", "b".repeat(32)), header("10.0.0.3", 7000), "127.0.0.1", 4000);
    expect(b.checks).toHaveLength(1);
  });

  it("keys IPv6 clients by address and port, and echoes the IPv6 header back", () => {
    const { mux, sent } = setup();
    const s = new FakeCall(() => mux);
    mux.addUfrag("V6", enc.encode("v".repeat(32)), s);
    const h6 = (port: number) => {
      const h = header("0.0.0.0", port);
      h.clientIpv6 = true;
      parseIpv6("2001:db8::7", h.clientIp);
      return h;
    };
    mux.handle(check("V6", "v".repeat(32)), h6(5555), "::1", 4000);
    expect(s.checks[0]!.address).toBe("[2001:db8::7]:5555");
    expect(s.checks[0]!.addr).toEqual(["2001:db8::7", 5555]);
    mux.handle(rtp, h6(5555), "::1", 4000);
    mux.handle(rtp, h6(5556), "::1", 4000); // another port: not bound
    expect(s.data).toHaveLength(1);
    mux.send(s.checks[0]!, Uint8Array.of(9));
    const back = newFrameHeader();
    expect(decodeFrameHeader(Buffer.concat([sent[0]!.header, Buffer.from([9])]), 29, back)).toBe("ok");
    expect(back.clientIpv6).toBe(true);
    expect([...back.clientIp]).toEqual([...h6(5555).clientIp]);
  });

  it("counts malformed STUN and usernames without a colon", () => {
    const { mux, drops } = setup();
    mux.handle(
      Buffer.from([0, 1, 0, 4, 0x21, 0x12, 0xa4, 0x42, ...randomBytes(12)]),
      header("10.0.0.4", 1),
      "127.0.0.1",
      1,
    );
    const noColon = Buffer.from(
      encodeBindingRequest({ transactionId: randomBytes(12), username: "nocolon" }),
    );
    mux.handle(noColon, header("10.0.0.4", 1), "127.0.0.1", 1);
    expect(drops).toEqual(["bad_stun", "bad_username"]);
  });

  it("asks the session to screen a check for replay before MESSAGE-INTEGRITY, and binds nothing then", () => {
    const { mux, drops } = setup();
    const s = new FakeCall(() => mux);
    s.replay = true;
    mux.addUfrag("R", enc.encode("r".repeat(32)), s);
    mux.handle(check("R", "r".repeat(32)), header("10.0.0.5", 5), "127.0.0.1", 1);
    expect(drops).toEqual(["stun_replay"]);
    expect(s.checks).toHaveLength(0);
    expect(mux.pathCount).toBe(0);
  });

  it("tells a new relay at once that a validated path's address was validated", () => {
    const { mux, sent } = setup();
    const s = new FakeCall(() => mux);
    mux.addUfrag("M", enc.encode("m".repeat(32)), s);
    mux.handle(check("M", "m".repeat(32)), header("10.0.0.7", 7007, 3), "127.0.0.1", 4444);
    const path = s.checks[0]!;
    mux.handle(rtp, header("10.0.0.7", 7007, 3), "127.0.0.1", 5555); // relay change, not validated
    expect(sent).toHaveLength(0);
    path.validated = true;
    mux.handle(rtp, header("10.0.0.7", 7007, 4), "127.0.0.1", 6666); // POP failover
    expect(sent).toHaveLength(1);
    const h = newFrameHeader();
    expect(decodeFrameHeader(sent[0]!.header, 28, h)).toBe("ok");
    expect(h).toMatchObject({ type: FrameType.pathValidated, popId: 4, clientPort: 7007 });
    expect(sent[0]!.port).toBe(6666);
    // A session that takes the address over must validate it again.
    const other = new FakeCall(() => mux);
    mux.addUfrag("N", enc.encode("n".repeat(32)), other);
    mux.handle(check("N", "n".repeat(32)), header("10.0.0.7", 7007, 4), "127.0.0.1", 6666);
    expect(path.validated).toBe(false);
  });

  it("sends pathValidated and flowClose along the path with the client's header", () => {
    const { mux, sent } = setup();
    const s = new FakeCall(() => mux);
    mux.addUfrag("P", enc.encode("q".repeat(32)), s);
    mux.handle(check("P", "q".repeat(32)), header("10.0.0.6", 6006, 3), "127.0.0.1", 4444);
    mux.sendPathValidated(s.checks[0]!);
    mux.sendFlowClose(s.checks[0]!, 1);
    const h = newFrameHeader();
    expect(decodeFrameHeader(sent[0]!.header, 28, h)).toBe("ok");
    expect(h).toMatchObject({ type: FrameType.pathValidated, popId: 3, clientPort: 6006 });
    expect(sent[0]!.payload).toHaveLength(0);
    expect(sent[0]!.port).toBe(4444);
    expect(decodeFrameHeader(Buffer.concat([sent[1]!.header, sent[1]!.payload]), 29, h)).toBe("ok");
    expect(h.type).toBe(FrameType.flowClose);
  });
});
