// The world's conference (`npm run world -- --conference`): an owner at one site creates a call
// through the edge, a participant at a site steered to the other cluster joins it through the
// edge, both send tone bursts; then the same again with the transceivers' NACK repair off.
// Figures per pass: join time, each direction's one-way delay (tone onsets), far-end loss of each
// stream at its conference receiver with the frames repaired, the backbone RTT the hub measured.

import { randomBytes } from "node:crypto";
import { parseClusterKeys } from "../../shared/signing/keys.ts";
import { importSigningKeys, signRequest } from "../../shared/signing/request.ts";
import { formatTarget } from "../../shared/signing/target.ts";
import {
  type ConferencePass,
  type ConferenceReport,
  conferenceLine,
  direction,
  type StreamRepair,
} from "./core/conference.ts";
import { nsExec } from "./netns.ts";
import type { RunningWorld } from "./runner.ts";

const wall = (): number => performance.timeOrigin + performance.now();

/** The first object inside `v` (depth first) for which `test` holds. */
function find(
  v: unknown,
  test: (o: Record<string, unknown>) => boolean,
  depth = 0,
): Record<string, unknown> | null {
  if (depth > 6 || typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  if (!Array.isArray(v) && test(o)) return o;
  for (const x of Object.values(o)) {
    const r = find(x, test, depth + 1);
    if (r) return r;
  }
  return null;
}

const streamOf = (o: Record<string, unknown> | null, slot: number): StreamRepair | undefined =>
  ((o?.repair ?? {}) as Record<string, StreamRepair>)[String(slot)];

/**
 * The leg's own call status, read at its transceiver (signed as the edge signs): the edge shows a
 * joiner only a few fields of it, not the leg's repair counters of the hub's streams.
 */
async function legStatus(w: RunningWorld, record: Record<string, unknown> | null): Promise<unknown> {
  const leg = record?.leg as { clusterId?: number; transceiverId?: number; legId?: string } | null;
  const c = w.plan.clusters.find((x) => x.spec.id === leg?.clusterId);
  const t = c?.transceivers.find((x) => x.id === leg?.transceiverId);
  if (!c || !t || typeof leg?.legId !== "string") return null;
  const path = `/v1/calls/${leg.legId}`;
  const keys = await importSigningKeys(parseClusterKeys(w.world.secrets.clusterSecret));
  const h = await signRequest(
    keys,
    {
      method: "GET",
      pathAndQuery: path,
      body: new Uint8Array(0),
      target: formatTarget({ clusterId: c.spec.id, transceiverId: t.id }),
      caller: "",
    },
    Date.now(),
    randomBytes(16).toString("base64url"),
  );
  try {
    const args = Object.entries(h).flatMap(([k, v]) => ["-H", `${k}: ${v}`]);
    return JSON.parse(
      nsExec(c.ns, ["curl", "-sS", "--max-time", "3", ...args, `http://${c.ip}:${t.httpPort}${path}`]),
    );
  } catch {
    return null;
  }
}

/** One way from a site to its cluster as emulated: half its access RTT and half its POP's backbone. */
function siteOneWay(w: RunningWorld, site: number, cluster: string | null): number {
  const s = w.plan.sites[site]!;
  const pop = w.route[site]!;
  const c = w.plan.clusters.find((x) => x.spec.name === cluster);
  return (s.popRttMs[pop]! + (c ? c.backboneRttMs[pop]! : Number.NaN)) / 2;
}

export async function conferencePass(
  w: RunningWorld,
  ownerSite: number,
  joinerSite: number,
  mediaMs: number,
  nack: boolean,
): Promise<ConferencePass> {
  const name = (i: number): string => w.plan.sites[i]!.site.name;
  const pass: ConferencePass = {
    nack,
    owner: { site: name(ownerSite), cluster: null },
    joiner: { site: name(joinerSite), cluster: null, joinMs: null },
    hubRttMs: null,
    backboneRttMs: null,
    directions: [],
  };
  const owner = w.participant(ownerSite, { freq: 440, farFreq: 880 });
  let joiner: ReturnType<RunningWorld["participant"]> | null = null;
  try {
    const oc = await owner.next("connected", 45_000);
    pass.owner.cluster = (oc.cluster as string | null) ?? null;
    joiner = w.participant(joinerSite, { freq: 880, farFreq: 440, callId: oc.callId });
    const jc = await joiner.next("connected", 45_000);
    pass.joiner.cluster = (jc.cluster as string | null) ?? null;
    pass.joiner.joinMs = Math.round(jc.joinMs as number);
    // From a second after the join (the hub's first hello answered, the mixers started).
    const window = { fromMs: wall() + 1_000, toMs: 0 };
    await new Promise((r) => setTimeout(r, mediaMs));
    window.toMs = wall();
    owner.send("stop");
    joiner.send("stop");
    const [or, jr] = await Promise.all([owner.next("result", 20_000), joiner.next("result", 20_000)]);
    const record = find(or.status, (o) => typeof o.slot === "number" && o.slot > 1 && "rttMs" in o);
    const leg = find(await legStatus(w, record), (o) => o.role === "leg" && "repair" in o);
    const slot = typeof record?.slot === "number" ? record.slot : 2;
    pass.hubRttMs = typeof record?.rttMs === "number" ? Math.round(record.rttMs * 10) / 10 : null;
    const oc2 = w.plan.clusters.find((c) => c.spec.name === pass.owner.cluster);
    const jc2 = w.plan.clusters.find((c) => c.spec.name === pass.joiner.cluster);
    pass.backboneRttMs = oc2?.conference && jc2 ? oc2.conference.rttMs[jc2.index]! : null;
    const oneWay =
      siteOneWay(w, ownerSite, pass.owner.cluster) +
      (pass.backboneRttMs ?? Number.NaN) / 2 +
      siteOneWay(w, joinerSite, pass.joiner.cluster);
    const rx = (r: typeof or) => r.rx as { times: number[]; levels: number[] };
    pass.directions = [
      direction(
        pass.owner.site,
        pass.joiner.site,
        440,
        or.sentOnsets as number[],
        window,
        rx(jr),
        oneWay,
        streamOf(leg, 1),
      ),
      direction(
        pass.joiner.site,
        pass.owner.site,
        880,
        jr.sentOnsets as number[],
        window,
        rx(or),
        oneWay,
        streamOf(record, slot),
      ),
    ];
    joiner.send("end");
    await Promise.race([joiner.exited, new Promise((r) => setTimeout(r, 5_000))]);
    owner.send("end");
    await Promise.race([owner.exited, new Promise((r) => setTimeout(r, 5_000))]);
  } catch (e) {
    pass.error = (e as Error).message.split("\n")[0] ?? "failed";
    joiner?.send("end");
    owner.send("end");
  }
  return pass;
}

/** Both passes: NACK on (as started), then every transceiver restarted with CONFERENCE_NACK=0. */
export async function conferenceScenario(
  w: RunningWorld,
  ownerSite: number,
  joinerSite: number,
  mediaMs: number,
  log: (l: string) => void,
): Promise<ConferenceReport> {
  const passes: ConferencePass[] = [];
  for (const nack of [true, false]) {
    if (!nack) await w.restartTransceivers(false);
    let p = await conferencePass(w, ownerSite, joinerSite, mediaMs, nack);
    // As for the site calls: a setup that fails (docs/world.md, "Reading a run") is made once more.
    if (p.error) {
      const first = p.error;
      p = { ...(await conferencePass(w, ownerSite, joinerSite, mediaMs, nack)), retried: first };
    }
    log(`  NACK ${nack ? "on" : "off"}: ${p.error ?? conferenceLine(p)}`);
    passes.push(p);
  }
  await w.restartTransceivers(true);
  const c = w.plan.clusters[0]?.conference;
  return { backboneLossPct: c ? (c.lossPct ?? w.plan.links.backbone.lossPct) : null, passes };
}
