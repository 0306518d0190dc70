// The werift glue breaks loudly on an upgrade: the pinned version, every private member the glue
// uses, and the behaviour that depends on them (no socket opened, our candidate advertised,
// datagrams delivered, close reported).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Event, RTCPeerConnection } from "werift";
import { serverPeerConnection } from "../../regional/transceiver/shell/peer.ts";
import {
  type Address,
  assertGlueCompatible,
  attachSharedSocket,
  GLUE_MEMBERS,
  iceTransportCount,
  PINNED_WERIFT_VERSION,
} from "../../regional/transceiver/shell/werift-glue.ts";
import { leanEvent } from "../../regional/transceiver/shell/werift-media.ts";
import { until } from "../support/wait.ts";
import { createTestClient } from "./helpers/client.ts";

describe("werift glue", () => {
  it("runs against the pinned werift version (package.json pins it exactly)", () => {
    const installed = (
      JSON.parse(
        readFileSync(new URL("../../node_modules/werift/package.json", import.meta.url), "utf8"),
      ) as {
        version: string;
      }
    ).version;
    expect(installed).toBe(PINNED_WERIFT_VERSION);
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies.werift).toBe(PINNED_WERIFT_VERSION);
  });

  it("finds every private member it uses", () => {
    expect(() => assertGlueCompatible()).not.toThrow();
    expect(GLUE_MEMBERS["Connection.prototype"]).toContain("ensureProtocol");
    expect(GLUE_MEMBERS["StunProtocol.prototype"]).toContain("datagramReceived");
  });

  it("puts a session on a send function instead of a socket, advertising only the given candidate", async () => {
    const client = createTestClient();
    const offer = await client.createOffer();
    const pc = serverPeerConnection();
    pc.addTransceiver("audio", { direction: "sendrecv" });
    await pc.setRemoteDescription({ type: "offer", sdp: offer.replace(/a=end-of-candidates\r\n/g, "") });
    expect(iceTransportCount(pc)).toBe(1);
    const sent: { data: Buffer; addr: Address }[] = [];
    let closed = 0;
    const att = attachSharedSocket(pc, {
      ufrag: "ABCDEFGHIJKLMNOPQRSTUVWX",
      pwd: "0123456789abcdefghijklmnopqrstuv",
      candidateHost: "192.0.2.10",
      candidatePort: 3478,
      send: (data, addr) => sent.push({ data, addr }),
      onClose: () => closed++,
    });
    await pc.setLocalDescription(await pc.createAnswer());
    const sdp = pc.localDescription!.sdp;
    const candidates = sdp.split("\r\n").filter((l) => l.startsWith("a=candidate:"));
    expect(candidates.length).toBeGreaterThan(0);
    for (const c of candidates)
      expect(c).toMatch(/ 192\.0\.2\.10 3478 typ host .*ufrag ABCDEFGHIJKLMNOPQRSTUVWX/);
    expect(sdp).toContain("a=ice-ufrag:ABCDEFGHIJKLMNOPQRSTUVWX");
    expect(sdp).toContain("a=ice-pwd:0123456789abcdefghijklmnopqrstuv");
    // werift opened no socket of its own: its only protocol is ours.
    const conn = (
      pc as unknown as {
        iceTransports: {
          connection: { protocols: { transport: { type: string; address: { address: string } } }[] };
        }[];
      }
    ).iceTransports[0]!.connection;
    expect(conn.protocols).toHaveLength(1);
    expect(conn.protocols[0]!.transport.address.address).toBe("192.0.2.10");
    // A STUN Binding request delivered through the glue is answered through the send function.
    const { encodeBindingRequest } = await import("../../shared/stun/writer.ts");
    const { hmacSha1 } = await import("../../regional/common/hmac.ts");
    const req = encodeBindingRequest({
      transactionId: new Uint8Array(12).fill(7),
      username: "ABCDEFGHIJKLMNOPQRSTUVWX:abcd",
      password: "0123456789abcdefghijklmnopqrstuv",
      hmacSha1,
    });
    att.deliver(Buffer.from(req), ["198.51.100.7", 40000]);
    await until(() => sent.length > 0, "the Binding success sent");
    expect(sent[0]!.addr).toEqual(["198.51.100.7", 40000]);
    expect(sent[0]!.data.readUInt16BE(0)).toBe(0x0101); // Binding success
    expect(att.selectedAddress()).toBeUndefined();
    await pc.close();
    expect(closed).toBe(1);
    await client.close();
  });

  it("a bare werift peer still opens its own socket (what the glue replaces)", async () => {
    const pc = new RTCPeerConnection({
      iceServers: [],
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: ["127.0.0.1"],
      iceInterfaceAddresses: { udp4: "127.0.0.1" },
    });
    pc.addTransceiver("audio");
    await pc.setLocalDescription(await pc.createOffer());
    expect(pc.localDescription!.sdp).toMatch(/a=candidate:\S+ 1 udp \d+ 127\.0\.0\.1 \d+ typ host/);
    await pc.close();
  });
});

describe("leanEvent: werift's Event.execute without a promise per call", () => {
  it("calls plain subscribers in order with the same arguments, and hands promise subscribers to werift", async () => {
    const ev = new Event<[number, string?]>();
    const calls: unknown[][] = [];
    ev.subscribe((...args) => calls.push(["a", ...args]));
    ev.subscribe((...args) => calls.push(["b", ...args]));
    expect(leanEvent(ev)).toBe(true);
    expect(leanEvent(ev)).toBe(true); // once per object
    ev.execute(1);
    ev.execute(2, "x");
    expect(calls).toEqual([
      ["a", 1],
      ["b", 1],
      ["a", 2, "x"],
      ["b", 2, "x"],
    ]);
    // A promise subscriber (werift's `queuingSubscribe`-style awaiters): werift's own execute runs it.
    const awaited: number[] = [];
    (
      ev as unknown as { event: { promiseStack: { execute(n: number): Promise<void> }[] } }
    ).event.promiseStack.push({
      execute: async (n) => {
        awaited.push(n);
      },
    });
    ev.execute(3);
    await new Promise((r) => setImmediate(r));
    expect(awaited).toEqual([3]);
    expect(calls.at(-1)).toEqual(["b", 3]);
    // werift replaces its subscriber arrays on (un)subscribe: later changes are seen.
    (ev as unknown as { event: { promiseStack: unknown[] } }).event.promiseStack.length = 0;
    const c = ev.subscribe((...args) => calls.push(["c", ...args]));
    ev.execute(5);
    expect(calls.slice(-3)).toEqual([
      ["a", 5],
      ["b", 5],
      ["c", 5],
    ]);
    c.unSubscribe();
    ev.execute(6);
    expect(calls.at(-1)).toEqual(["b", 6]);
    ev.allUnsubscribe();
    ev.execute(7);
    expect(calls.at(-1)).toEqual(["b", 6]);
    ev.subscribe((...args) => calls.push(["d", ...args]));
    ev.complete();
    ev.execute(4);
    expect(calls.at(-1)).toEqual(["b", 6]);
    expect(leanEvent(undefined)).toBe(false);
    expect(leanEvent({ execute: () => {} })).toBe(false);
  });
});
