// The link emulator's tunnels on real sockets (two emulators on loopback addresses, as two
// cluster namespaces): each program sees the other at one address both ways (what the hub's
// per-leg address check needs), the outgoing half of the link is delayed and loses what its
// config says, and a datagram from a program the tunnel does not serve is dropped and counted.
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { parseLinkemConfig } from "../../scripts/world/linkem/config.ts";
import { Tunnels } from "../../scripts/world/linkem/tunnel.ts";
import { freeUdpPort } from "../support/ports.ts";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});

const bind = async (port: number): Promise<Socket> => {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(port, "127.0.0.1", () => r()));
  cleanup.push(() => s.close());
  return s;
};
const until = async (cond: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
};

/** Side A's programs on p1, side B's on p2; A's fabric 127.0.1.1, B's 127.0.2.1. */
async function pair(outA: Record<string, number>, outB: Record<string, number>) {
  const [p1, p2] = [await freeUdpPort(), await freeUdpPort()];
  const side = async (
    ports: number[],
    bindIp: string,
    remoteIp: string,
    aliasIp: string,
    remotePorts: number[],
    out: Record<string, number>,
  ) => {
    const cfg = parseLinkemConfig({
      fronts: [
        {
          listen: `${bindIp}:${await freeUdpPort()}`,
          target: "127.0.0.1:9",
          routes: [{ from: "10.0.0.0/8", bindIp, up: { delayMs: 0 }, down: { delayMs: 0 } }],
        },
      ],
      tunnels: [{ name: "t", local: "127.0.0.1", ports, bindIp, remoteIp, aliasIp, remotePorts, out }],
    });
    const t = new Tunnels();
    await t.start(cfg.tunnels, 7);
    cleanup.push(() => t.close());
    return t;
  };
  const a = await side([p1], "127.0.1.1", "127.0.2.1", "127.0.3.1", [p2], outA);
  const b = await side([p2], "127.0.2.1", "127.0.1.1", "127.0.4.1", [p1], outB);
  return { a, b, p1, p2, x1: await bind(p1), x2: await bind(p2) };
}

describe("linkem tunnels", () => {
  it("give each program one address both ways, through the delayed outgoing half", async () => {
    const { p1, p2, x1, x2 } = await pair({ delayMs: 40 }, { delayMs: 10 });
    const at2: { from: RemoteInfo; at: number }[] = [];
    const at1: { from: RemoteInfo; at: number }[] = [];
    x2.on("message", (_m, from) => {
      at2.push({ from, at: performance.now() });
      x2.send("pong", from.port, from.address);
    });
    x1.on("message", (_m, from) => at1.push({ from, at: performance.now() }));
    const sent = performance.now();
    x1.send("ping", p2, "127.0.3.1"); // program 2 as side A sees it
    await until(() => at1.length === 1, "the reply");
    // Program 2 sees program 1 at B's alias for it; program 1 sees the reply from where it sent.
    expect(at2[0]!.from).toMatchObject({ address: "127.0.4.1", port: p1 });
    expect(at1[0]!.from).toMatchObject({ address: "127.0.3.1", port: p2 });
    expect(at2[0]!.at - sent).toBeGreaterThanOrEqual(39);
    expect(at1[0]!.at - sent).toBeGreaterThanOrEqual(49);
  });

  it("loses what the config says on its outgoing half, and drops programs it does not serve", async () => {
    const { a, p2, x1, x2 } = await pair({ delayMs: 1, lossPct: 50 }, { delayMs: 1 });
    let got = 0;
    x2.on("message", () => got++);
    for (let i = 0; i < 400; i++) x1.send("x", p2, "127.0.3.1");
    await until(() => a.stats().t!.offered === 400, "every datagram offered");
    // Each one delivered or lost (1 ms later), and every delivered one read by program 2.
    await until(() => {
      const st = a.stats().t!;
      return st.delivered + st.lost + st.queueFull === 400 && got === st.delivered;
    }, "every datagram delivered or lost, and read");
    expect(got).toBe(a.stats().t!.delivered);
    expect(got).toBeGreaterThan(120);
    expect(got).toBeLessThan(280);
    const stranger = await bind(0);
    stranger.send("x", p2, "127.0.3.1");
    await until(() => a.drops.no_route === 1, "the stranger's datagram dropped");
  });
});
