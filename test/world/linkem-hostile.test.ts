// The link emulator's shell against traffic it must not carry, the way an attacker would send it:
// a source no route covers, more peers than the table holds, garbage bytes. Each is dropped and
// counted by reason; peers already admitted keep flowing.
import { createSocket, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { parseLinkemConfig } from "../../scripts/world/linkem/config.ts";
import { Linkem } from "../../scripts/world/linkem/forwarder.ts";
import { freeUdpPort } from "../support/ports.ts";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.splice(0).reverse()) c();
});

const bind = async (host = "127.0.0.1"): Promise<Socket> => {
  const s = createSocket("udp4");
  await new Promise<void>((r) => s.bind(0, host, () => r()));
  cleanup.push(() => s.close());
  return s;
};
const until = async (cond: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
};

async function emulator(maxPeers: number): Promise<{ em: Linkem; front: number; seen: Buffer[] }> {
  const target = await bind();
  const seen: Buffer[] = [];
  target.on("message", (m) => seen.push(m));
  const front = await freeUdpPort();
  const em = new Linkem(
    parseLinkemConfig({
      seed: 1,
      maxPeers,
      fronts: [
        {
          listen: `127.0.0.1:${front}`,
          target: `127.0.0.1:${target.address().port}`,
          routes: [
            {
              name: "lo1",
              from: "127.0.0.1/32",
              bindIp: "127.0.0.1",
              up: { delayMs: 1 },
              down: { delayMs: 1 },
            },
          ],
        },
      ],
    }),
  );
  await em.start();
  cleanup.push(() => em.close());
  return { em, front, seen };
}

describe("link emulator shell, hostile input", () => {
  it("drops a source no route covers and counts it as no_route", async () => {
    const { em, front, seen } = await emulator(16);
    const stranger = await bind("127.0.0.2");
    for (let i = 0; i < 5; i++) stranger.send(Buffer.from("spoofed"), front, "127.0.0.1");
    await until(() => em.drops.no_route === 5, "five no_route drops");
    expect(seen).toHaveLength(0);
    expect(em.stats().peers).toBe(0);
  });

  it("holds at most maxPeers peers; the rest are dropped as peer_table_full, admitted peers keep flowing", async () => {
    const { em, front, seen } = await emulator(3);
    const peers = await Promise.all(Array.from({ length: 5 }, () => bind()));
    for (const p of peers) p.send(Buffer.from("hello"), front, "127.0.0.1");
    await until(() => seen.length === 3 && em.drops.peer_table_full === 2, "3 forwarded, 2 refused");
    peers[0]!.send(Buffer.from("again"), front, "127.0.0.1");
    await until(() => seen.length === 4, "an admitted peer's next datagram");
    expect(em.stats().peers).toBe(3);
  });

  it("carries any bytes unchanged, including empty and oversized-looking garbage", async () => {
    const { front, seen } = await emulator(4);
    const p = await bind();
    const junk = [Buffer.alloc(0), Buffer.from([0xff, 0x00, 0x17]), Buffer.alloc(1400, 0xaa)];
    for (const j of junk) p.send(j, front, "127.0.0.1");
    await until(() => seen.length === 3, "three datagrams");
    expect(seen.map((b) => b.length)).toEqual([0, 3, 1400]);
  });
});
