// The join API of a cluster, faked for the edge's own logic tests (FakeCluster.extra): the
// owner's participants (admit, roster, remove) and POST /v1/legs, with the contract's shapes
// (shared/signalling/join.ts) and switchable failures. Not the transceiver: the real one is
// tested in test/transceiver.
import { randomBytes } from "node:crypto";
import { nodeMac } from "../../regional/common/hmac.ts";
import { mintCallId } from "../../shared/callid/callid.ts";
import type { Keyring } from "../../shared/keys.ts";
import type { FakeAnswer, FakeCluster } from "./fake-cluster.ts";

/** "bad-answer": a 201 the edge cannot read (the leg may exist there all the same). */
export type LegMode = "ok" | "full" | "error" | "bad-offer" | "bad-answer";

interface Participant {
  participantId: string;
  slot: number;
  /** As the hub's record: null until the leg's hello (here: its creation, unless held). */
  leg: { clusterId: number; transceiverId: number; legId: string } | null;
  /** As the hub's record: the leg transceiver's backbone address, from its hello. */
  address?: string;
}

const err = (status: number, type: string, code: string): FakeAnswer => ({
  status,
  body: { error: { type, code, message: code } },
});

export class FakeConference {
  legMode: LegMode = "ok";
  /** Max participants per call, the owner's client included (the transceiver's default). */
  limit = 8;
  /** Admits, but answers without the hub (a contract break the edge must survive). */
  admitWithoutHub = false;
  /** Refuses admits with 503 draining and a Retry-After (a hub on its way out). */
  admitDraining = false;
  readonly ended = new Set<string>();
  /** The leg's hello does not reach this hub: its participants' `leg` stays null. */
  holdHellos = false;
  /** The hub names a leg without its legId (the record before F1's hub change). */
  legWithoutId = false;
  readonly rosters = new Map<string, Participant[]>();
  readonly #f: FakeCluster;
  readonly #ring: Keyring;
  /** Every fake conference by cluster id: a leg created here tells its hub (the "hello"). */
  readonly #hubs: Map<number, FakeConference>;
  #nextSlot = new Map<string, number>();

  constructor(f: FakeCluster, callIdRing: Keyring, hubs = new Map<number, FakeConference>()) {
    this.#f = f;
    this.#ring = callIdRing;
    this.#hubs = hubs;
    hubs.set(f.id, this);
    f.extra = (method, path, body) => this.#route(method, path, body);
  }

  reset(): void {
    this.legMode = "ok";
    this.limit = 8;
    this.admitWithoutHub = false;
    this.admitDraining = false;
    this.holdHellos = false;
    this.legWithoutId = false;
  }

  /** The hello of a leg: the hub's record of the participant names it. */
  hello(callId: string, participantId: string, leg: NonNullable<Participant["leg"]>): void {
    if (this.holdHellos) return;
    const p = this.rosters.get(callId)?.find((x) => x.participantId === participantId);
    if (!p) return;
    p.address = "10.1.0.4:7400";
    p.leg = this.legWithoutId
      ? ({ clusterId: leg.clusterId, transceiverId: leg.transceiverId } as never)
      : leg;
  }

  #route(method: string, path: string, body: string): FakeAnswer | undefined {
    if (path === "/v1/legs" && method === "POST") return this.#leg(body);
    const m = /^\/v1\/calls\/([^/]+)\/participants(?:\/([^/]+))?$/.exec(path);
    if (!m) return undefined;
    const callId = m[1]!;
    if (this.ended.has(callId)) return err(404, "not_found_error", "call_ended");
    if (!this.#f.calls.has(callId)) return err(404, "not_found_error", "call_id_unknown");
    const roster = this.rosters.get(callId) ?? [];
    this.rosters.set(callId, roster);
    const pid = m[2];
    if (pid === undefined) {
      if (method === "GET") return { status: 200, body: { participants: roster } };
      if (method !== "POST") return err(405, "invalid_request_error", "method_not_allowed");
      if (this.admitDraining)
        return { ...err(503, "unavailable_error", "draining"), headers: { "retry-after": "7" } };
      if (roster.length + 1 >= this.limit) return err(409, "conflict_error", "participant_limit");
      const slot = this.#nextSlot.get(callId) ?? 2;
      this.#nextSlot.set(callId, slot + 1);
      const p: Participant = {
        participantId: `prt_${randomBytes(12).toString("base64url")}`,
        slot,
        leg: null,
      };
      roster.push(p);
      if (this.admitWithoutHub) return { status: 201, body: { participantId: p.participantId, slot } };
      return {
        status: 201,
        body: {
          participantId: p.participantId,
          slot,
          conferenceId: randomBytes(8).toString("hex"),
          hub: { address: "127.0.0.1:7400", clusterId: this.#f.id, transceiverId: 7 },
        },
      };
    }
    const i = roster.findIndex((p) => p.participantId === pid);
    if (i < 0) return err(404, "not_found_error", "participant_unknown");
    if (method === "GET") return { status: 200, body: roster[i] };
    if (method === "DELETE") {
      roster.splice(i, 1);
      return { status: 204 };
    }
    return err(405, "invalid_request_error", "method_not_allowed");
  }

  #leg(body: string): FakeAnswer {
    if (this.legMode === "full")
      return { ...err(503, "unavailable_error", "at_capacity"), headers: { "retry-after": "2" } };
    if (this.legMode === "error") return err(500, "server_error", "internal");
    if (this.legMode === "bad-offer") return err(422, "invalid_request_error", "no_acceptable_codec");
    if (this.legMode === "bad-answer") return { status: 201, body: { sdp: "v=0\r\n" } };
    const req = JSON.parse(body) as {
      sdp: string;
      conference: { callId: string; participantId: string; hub: { clusterId: number } };
    };
    const legId = mintCallId(this.#f.id, 7, randomBytes(15), nodeMac(this.#ring));
    const etag = randomBytes(6).toString("hex");
    this.#f.calls.set(legId, { etag });
    const { callId, participantId, hub } = req.conference;
    this.#hubs
      .get(hub.clusterId)
      ?.hello(callId, participantId, { clusterId: this.#f.id, transceiverId: 7, legId });
    return {
      status: 201,
      body: {
        legId,
        sdp: `v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=leg@${this.#f.name}\r\nt=0 0\r\n# answer to ${req.sdp.length} bytes\r\n`,
        etag,
        clusterId: this.#f.id,
        transceiverId: 7,
      },
      headers: { etag: `"${etag}"` },
    };
  }
}
