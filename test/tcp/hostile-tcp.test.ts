// Hostile ICE-TCP, written the way an attacker would do it, against the POP of a real call (werift
// client, transceiver, cluster relay, echo agent): too many connections from one source and in
// total, slowloris (silence, and a check trickled a byte at a time), framing abuse (a zero length
// first, the largest length, an HTTP request, a TLS ClientHello, garbage after a valid length, a
// forged hint), zero-length packets after routing, and a half-closed socket. Each is bounded and
// counted with transport="tcp", and the call keeps >= 99 % of its audio throughout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TCP_LIMITS, type TcpLimits } from "../../regional/relay/shell/tcp-limits.ts";
import { frame } from "../../shared/tcp/rfc4571.ts";
import { bindingRequest, hint } from "../relay/fixtures.ts";
import { type CallSystem, startCallSystem } from "../security/support/call-system.ts";
import { freeTcpPort } from "../support/ports.ts";
import { TcpClient, until } from "./support.ts";

const LIMITS: TcpLimits = {
  ...DEFAULT_TCP_LIMITS,
  maxConnections: 12,
  maxPerSource: 4,
  // Long enough that the caps test's 19 silent connections all live until it has counted them
  // on a loaded machine; the slowloris test waits this long.
  firstPacketMs: 3000,
};

let s: CallSystem;
let port: number;
let talkingSince = 0;
const open: TcpClient[] = [];

async function tcpMetric(name: string): Promise<number> {
  const text = await (await fetch(`http://${s.pop.addresses.admin}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}
const closed = (reason: string) => tcpMetric(`gr_relay_tcp_closed_total{transport="tcp",reason="${reason}"}`);
const refused = (result: string) =>
  tcpMetric(`gr_relay_tcp_connections_total{transport="tcp",result="${result}"}`);
const dropped = (reason: string) =>
  tcpMetric(`gr_relay_transport_drops_total{transport="tcp",reason="${reason}"}`);

async function connect(host = "127.0.0.1", allowHalfOpen = false): Promise<TcpClient> {
  const c = await TcpClient.connect(port, { allowHalfOpen, localAddress: host });
  open.push(c);
  return c;
}

async function closeAll(): Promise<void> {
  for (const c of open.splice(0)) c.close();
  await until(
    async () => (await tcpMetric('gr_relay_tcp_connections{transport="tcp"}')) === 0,
    "connections gone",
  );
}

describe("hostile ICE-TCP against the POP of a real call", () => {
  beforeAll(async () => {
    port = await freeTcpPort();
    s = await startCallSystem({ vipTcpPort: port, tcp: LIMITS });
    s.talker.start(1);
    talkingSince = Date.now();
  }, 60_000);
  afterAll(async () => {
    for (const c of open.splice(0)) c.close();
    await s?.close();
  });

  it("caps connections per source and in total", async () => {
    for (let i = 0; i < LIMITS.maxPerSource + 3; i++) await connect("127.0.0.1");
    await until(async () => (await refused("source_limit")) === 3, "3 refused by the per-source cap");
    await until(() => open.filter((c) => c.closed).length === 3, "the refused sockets closed");
    // More sources: the total cap holds whatever the spread.
    for (const host of ["127.0.0.2", "127.0.0.3", "127.0.0.4"]) {
      for (let i = 0; i < LIMITS.maxPerSource; i++) await connect(host);
    }
    await until(async () => (await refused("total_limit")) === 4, "4 refused by the total cap");
    expect(await tcpMetric('gr_relay_tcp_connections{transport="tcp"}')).toBe(LIMITS.maxConnections);
    await closeAll();
  });

  it("slowloris: silence and a trickled check are cut at the first-packet deadline", async () => {
    const before = await closed("first_packet_timeout");
    await connect();
    const trickle = await connect();
    const check = frame(bindingRequest(hint(1, 1)));
    let i = 0;
    const timer = setInterval(() => {
      if (i < check.length && !trickle.closed) trickle.raw(check.subarray(i, ++i));
    }, 100);
    try {
      await until(() => open.every((c) => c.closed), "both cut");
    } finally {
      clearInterval(timer);
    }
    expect(await closed("first_packet_timeout")).toBe(before + 2);
    await closeAll();
  });

  it("framing abuse ends the connection, counted by reason", async () => {
    const cases: [string, Uint8Array][] = [
      ["not_routable", Uint8Array.of(0, 0)],
      ["oversized_frame", Uint8Array.of(0xff, 0xff, 1, 2, 3)],
      ["oversized_frame", new TextEncoder().encode("GET / HTTP/1.1\r\nHost: vip\r\n\r\n")],
      ["oversized_frame", Uint8Array.of(0x16, 0x03, 0x01, 0x02, 0x00, 0x01)],
      ["not_routable", frame(Uint8Array.from({ length: 100 }, (_, k) => (k * 31) & 255))],
      // A Binding request whose hint is signed with a key the POP does not have.
      ["not_routable", frame(bindingRequest(hint(1, 1, `3:${Buffer.alloc(32, 1).toString("base64")}`)))],
    ];
    const want = new Map<string, number>();
    for (const [reason] of cases) want.set(reason, (want.get(reason) ?? (await closed(reason))) + 1);
    const hintDrops = async () => (await dropped("bad_mac")) + (await dropped("unknown_key"));
    const badHint = await hintDrops();
    for (const [, bytes] of cases) (await connect()).raw(bytes);
    await until(() => open.every((c) => c.closed), "every abusive connection closed");
    for (const [reason, n] of want) expect(await closed(reason), reason).toBe(n);
    expect(await hintDrops()).toBe(badHint + 1);
    await closeAll();
  });

  it("a routed connection: zero-length packets are counted and skipped; a half-close ends it", async () => {
    // The attacker replays the call's own captured check over TCP: the hint is valid, so the POP
    // routes it (half-open); the transceiver's path rules keep the call where it is.
    const c = await connect("127.0.0.1", true);
    c.send(s.tap.check(false)!);
    await until(
      async () => (await tcpMetric('gr_relay_transport_flows_active{transport="tcp"}')) === 1,
      "flow",
    );
    const empties = await dropped("empty_frame");
    for (let i = 0; i < 50; i++) c.raw(Uint8Array.of(0, 0));
    await until(async () => (await dropped("empty_frame")) === empties + 50, "50 empty packets counted");
    expect(c.closed).toBe(false);
    const peer = await closed("peer_closed");
    c.socket.end(); // FIN, but keep reading: the POP does not keep half-closed connections
    await until(() => c.closed, "the POP closed the half-closed connection");
    expect(await closed("peer_closed")).toBe(peer + 1);
    await until(
      async () => (await tcpMetric('gr_relay_transport_flows_active{transport="tcp"}')) === 0,
      "flow gone",
    );
    await closeAll();
  });

  it("the real call kept >= 99 % of its audio through every attack", async () => {
    // At least 5 s of audio (250 packets), most of it during the attacks above.
    await new Promise((r) => setTimeout(r, Math.max(0, 5_000 - (Date.now() - talkingSince))));
    const r = await s.talker.stop();
    expect(r.sent).toBeGreaterThan(200);
    expect(r.echoed / r.sent).toBeGreaterThanOrEqual(0.99);
    const st = await s.status();
    expect(st.state).toBe("connected");
  });
});
