// A lossy backbone hop between a hub's and a leaf's conference sockets: the link emulator
// (scripts/world/linkem) with one front before the hub. The leaf sends to the front (the hub
// advertises it: TRANSCEIVER_CONFERENCE_ADDR); the emulator forwards from a per-peer socket bound
// to LEAF_VIA with the leaf's own port, and that is the address the leaf advertises, so the hub
// sees every frame of the leaf come from the address its hello names (the hub takes a
// participant's frames from there only) and answers there; the answers come back out of the
// front, the hub's advertised address. Up = leaf → hub, down = hub → leaf, each through a seeded
// loss and delay model. The emulator's tap (a RepairMeter) sees every datagram offered and
// delivered.
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

/** The emulator's route between the two; "up" is towards the hub, "down" towards the leaf. */
export const HOP_ROUTE = "leaf<->hub";
/** Where the emulator's socket for the leaf binds (with the leaf's port): the leaf's advertised host. */
export const LEAF_VIA = "127.0.0.2";

export interface LossyHop {
  /** Where the leaf sends to reach the hub (the hub advertises it). */
  hubFront: number;
  linkem: Linkem;
  meter: RepairMeter;
  close(): void;
}

/** A free port for the front, chosen before the hub that advertises it exists. */
export const hopFront = (): Promise<number> => freeUdpPort();

export async function startLossyHop(
  hop: HopSpec,
  ports: { hub: number; hubFront: number },
): Promise<LossyHop> {
  const link = { delayMs: hop.delayMs, lossPct: hop.lossPct, burst: 1 };
  const meter = repairMeter();
  const linkem = new Linkem(
    parseLinkemConfig({
      seed: hop.seed,
      maxPeers: 16,
      fronts: [
        {
          listen: `127.0.0.1:${ports.hubFront}`,
          target: `127.0.0.1:${ports.hub}`,
          routes: [{ name: HOP_ROUTE, from: "127.0.0.0/8", bindIp: LEAF_VIA, up: link, down: link }],
        },
      ],
    }),
    meter,
  );
  await linkem.start();
  return { hubFront: ports.hubFront, linkem, meter, close: () => linkem.close() };
}
