// A lossy backbone hop between two UDP sockets (a hub's and a leaf's conference sockets): the
// link emulator (scripts/world/linkem) with one front per direction. Each side is told to send to
// the other's FRONT (a transceiver: TRANSCEIVER_CONFERENCE_ADDR = its own front, which the other
// side learns from the join), the front forwards to the real socket through a seeded loss and
// delay model. The emulator's tap (a RepairMeter) sees every datagram offered and delivered.
import { parseLinkemConfig } from "../../scripts/world/linkem/config.ts";
import { Linkem } from "../../scripts/world/linkem/forwarder.ts";
import { freeUdpPort } from "../support/ports.ts";
import { type RepairMeter, repairMeter } from "./repair-meter.ts";

export interface HopSpec {
  /** Loss per direction, percent (independent losses: bursts of 1). */
  lossPct: number;
  /** One-way delay per direction, ms. */
  delayMs: number;
  seed: number;
}

/** The routes' names in the emulator: towards the hub, towards the leaf. */
export const TO_HUB = "leaf->hub";
export const TO_LEAF = "hub->leaf";

export interface LossyHop {
  /** Where the leaf sends to reach the hub (the hub advertises it), and the reverse. */
  hubFront: number;
  leafFront: number;
  linkem: Linkem;
  meter: RepairMeter;
  close(): void;
}

/** Free ports for the two fronts, chosen before the sockets behind them exist. */
export async function hopFronts(): Promise<{ hubFront: number; leafFront: number }> {
  return { hubFront: await freeUdpPort(), leafFront: await freeUdpPort() };
}

export async function startLossyHop(
  hop: HopSpec,
  ports: { hub: number; leaf: number; hubFront: number; leafFront: number },
): Promise<LossyHop> {
  const link = { delayMs: hop.delayMs, lossPct: hop.lossPct, burst: 1 };
  // Per-peer upstream sockets bind 127.0.0.2: the peer's own port is free there, so the far side
  // sees each sender at one stable address.
  const route = (name: string) => ({ name, from: "127.0.0.0/8", bindIp: "127.0.0.2", up: link, down: link });
  const meter = repairMeter();
  const linkem = new Linkem(
    parseLinkemConfig({
      seed: hop.seed,
      maxPeers: 16,
      fronts: [
        { listen: `127.0.0.1:${ports.hubFront}`, target: `127.0.0.1:${ports.hub}`, routes: [route(TO_HUB)] },
        {
          listen: `127.0.0.1:${ports.leafFront}`,
          target: `127.0.0.1:${ports.leaf}`,
          routes: [route(TO_LEAF)],
        },
      ],
    }),
    meter,
  );
  await linkem.start();
  return { hubFront: ports.hubFront, leafFront: ports.leafFront, linkem, meter, close: () => linkem.close() };
}
