// The repair measurement's rig (test/cascade/repair.test.ts, bench/cascade/run.ts): two embedded
// transceivers, the hub (cluster 1, the owner's werift client) and a leaf (cluster 2, the
// joiner's werift client, joined the way the edge does it), and a lossy hop between their
// conference sockets (lossy-hop.ts: the link emulator in front of the hub; the hub advertises the
// front, the leaf the emulator's socket for it, as TRANSCEIVER_CONFERENCE_ADDR), so every
// conference frame crosses a seeded loss and delay model both ways. Two views of the joiner's stream: the emulator's tap (what came
// out of the link, and when) and the hub's own repair counters (GET /v1/calls/{id}/participants).
import { conferenceWithDefaults } from "../../regional/transceiver/config.ts";
import { freeUdpPort } from "../support/ports.ts";
import type { TestClient } from "../transceiver/helpers/client.ts";
import { type Admission, backboneKeys, eventsOf, join, sendTone } from "../transceiver/helpers/conference.ts";
import { type Harness, startHarness, until } from "../transceiver/helpers/harness.ts";
import { HOP_ROUTE, type HopSpec, hopFront, LEAF_VIA, type LossyHop, startLossyHop } from "./lossy-hop.ts";
import type { RepairFigures } from "./repair-meter.ts";

export type { HopSpec } from "./lossy-hop.ts";

/** The hub's repair counters for one source stream (its participants list, `repair[slot]`). */
export interface HubRepair {
  received: number;
  lost: number;
  repaired: number;
}

export interface RepairRig {
  hub: Harness;
  leaf: Harness;
  hop: LossyHop;
  owner: TestClient;
  joiner: TestClient;
  callId: string;
  admission: Admission;
  /** Sends `n` 20 ms Opus frames of an 880 Hz tone from the joiner, in real time. */
  sendFromJoiner(n: number): Promise<void>;
  /** What the emulator saw of the joiner's stream towards the hub, and of the hub's towards the leaf. */
  toHub(): RepairFigures;
  toLeaf(): RepairFigures;
  /** The hub's counters for the joiner's stream. */
  hubRepair(): Promise<HubRepair | undefined>;
  /** Frames of the joiner's stream the backend (the hub's echo agent) received. */
  atBackend(): number;
  close(): Promise<void>;
}

export async function startRepairRig(spec: HopSpec, nack: boolean): Promise<RepairRig> {
  const keys = backboneKeys();
  const cleanups: (() => Promise<void> | void)[] = [];
  const close = async () => {
    for (const c of cleanups.splice(0).reverse()) await Promise.resolve(c()).catch(() => {});
  };
  try {
    // Bound ports chosen here: a conference socket's `address` is the advertised one. The hub
    // advertises the emulator's front; the leaf, the emulator's socket for it (lossy-hop.ts).
    const [hubPort, leafPort, hubFront] = [await freeUdpPort(), await freeUdpPort(), await hopFront()];
    const at = (port: number, host = "127.0.0.1") => ({ host, port, ipv6: false });
    const conference = (bind: number, advertise: { host: string; port: number; ipv6: boolean }) =>
      conferenceWithDefaults(keys, { bind: at(bind), advertise, nack });
    const hub = await startHarness({
      clusterId: 1,
      transceiverId: 1,
      conference: conference(hubPort, at(hubFront)),
    });
    cleanups.push(() => hub.close());
    const leaf = await startHarness({
      clusterId: 2,
      transceiverId: 1,
      conference: conference(leafPort, at(leafPort, LEAF_VIA)),
    });
    cleanups.push(() => leaf.close());
    const hop = await startLossyHop(spec, { hub: hubPort, hubFront });
    cleanups.push(() => hop.close());

    const { client: owner, callId } = await hub.connectClient({ codecs: "opus" });
    const { client: joiner, admission } = await join(hub, leaf, callId);
    cleanups.push(() => joiner.close());
    await until(() => eventsOf(owner, "participant.joined").length === 1, "participant.joined at the owner");
    const slot = String(admission.slot);
    return {
      hub,
      leaf,
      hop,
      owner,
      joiner,
      callId,
      admission,
      sendFromJoiner: (n) => sendTone(joiner, 880, n, 1),
      toHub: () => hop.meter.figures(HOP_ROUTE, "up", spec.delayMs),
      toLeaf: () => hop.meter.figures(HOP_ROUTE, "down", spec.delayMs),
      async hubRepair() {
        const r = await hub.call("GET", `/v1/calls/${callId}/participants`);
        const l = (await r.json()) as {
          participants: { slot: number; repair?: Record<string, HubRepair> }[];
        };
        return l.participants.find((p) => p.slot === admission.slot)?.repair?.[slot];
      },
      atBackend: () => hub.agent.framesBySlot()[slot] ?? 0,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
