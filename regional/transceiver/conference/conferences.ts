// The conferences of one transceiver process: its conference socket, the hub conference of each
// owner's call that has been joined, and the legs it creates (docs/cascade.md). The API reaches
// it through the ApiHost; calls are created through the function the transceiver gives it, so
// nothing here imports the transceiver or the API.
import type { BackendConnector } from "../backend-link.ts";
import { participantEvent } from "../backend-protocol.ts";
import type { CreateRequest, CreateResult } from "../calls.ts";
import type { ConferenceConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { Call } from "../shell/call.ts";
import { type Admission, type HubCall, HubConference } from "./hub.ts";
import { LegUplink } from "./leg.ts";
import { parseLegBody } from "./leg-request.ts";
import { ConferenceMetrics } from "./metrics.ts";
import { ConferenceSocket } from "./socket.ts";

export interface LegCreated {
  legId: string;
  sdp: string;
  etag: string;
  clusterId: number;
  transceiverId: number;
}

type Create = (req: CreateRequest, receivedAt: number) => Promise<CreateResult>;

function hubCallOf(call: Call): HubCall {
  return {
    callId: call.callId,
    get media() {
      return call.media;
    },
    sendToBackend: (h, payload) => call.sendToBackend(h, payload),
    playToClient: (h, payload, source) => call.playToClient(h, payload, source),
    sendEventToBackend: (text) => call.sendEventToBackend(text),
    announce: (type, participantId, slot, reason) => {
      const text = participantEvent(type, call.callId, participantId, slot, reason);
      call.sendEventToBackend(text);
      call.notifyClient(text);
    },
  };
}

export class Conferences {
  readonly socket: ConferenceSocket;
  readonly #ids: { clusterId: number; transceiverId: number };
  readonly #create: Create;
  readonly #hubs = new Map<string, HubConference>();

  private constructor(
    socket: ConferenceSocket,
    ids: { clusterId: number; transceiverId: number },
    create: Create,
  ) {
    this.socket = socket;
    this.#ids = ids;
    this.#create = create;
  }

  static async open(
    config: ConferenceConfig,
    metrics: TransceiverMetrics,
    ids: { clusterId: number; transceiverId: number },
    create: Create,
  ): Promise<Conferences> {
    const socket = await ConferenceSocket.open(config, new ConferenceMetrics(metrics));
    return new Conferences(socket, ids, create);
  }

  /** POST /v1/calls/{id}/participants: the call's conference begins at its first admission. */
  admit(call: Call): Admission {
    let hub = this.#hubs.get(call.callId);
    if (hub === undefined) {
      if (call.tap instanceof LegUplink)
        throw new ApiError("call_id_unknown", "this call is a leg of another call: join that call");
      const h = new HubConference(this.socket, hubCallOf(call), this.#ids, (c) => {
        this.socket.unregister(c);
        if (this.#hubs.get(call.callId) === c) this.#hubs.delete(call.callId);
      });
      if (!this.socket.register(h))
        throw new ApiError("conference_unavailable", "this transceiver holds all the conferences it can", 5);
      this.#hubs.set(call.callId, h);
      call.tap = h;
      hub = h;
    }
    return hub.admit(performance.now());
  }

  /** GET /v1/calls/{id}/participants: the owner and every joiner; undefined when nobody joined. */
  list(call: Call): Record<string, unknown>[] | undefined {
    if (call.tap instanceof LegUplink)
      throw new ApiError("call_id_unknown", "this call is a leg of another call: ask that call");
    return this.#hubs.get(call.callId)?.list(call.createdAt);
  }

  /** DELETE /v1/calls/{id}/participants/{pid}. */
  remove(call: Call, participantId: string): void {
    const hub = this.#hubs.get(call.callId);
    if (hub === undefined) throw new ApiError("participant_unknown", "no such participant in this call");
    hub.remove(participantId, performance.now());
  }

  /** POST /v1/legs: a call whose backend is the uplink to the hub the body names. */
  async createLeg(body: unknown, receivedAt: number): Promise<LegCreated> {
    const { create, spec } = parseLegBody(body, this.socket.config);
    let uplink: LegUplink | undefined;
    const backend: BackendConnector = {
      open: (call, h) => {
        uplink = new LegUplink(this.socket, spec, call, h, performance.now());
        return uplink;
      },
    };
    const r = await this.#create({ ...create, backend }, receivedAt);
    if (uplink !== undefined) r.session.tap = uplink;
    return {
      legId: r.callId,
      sdp: r.sdp,
      etag: r.etag,
      clusterId: r.clusterId,
      transceiverId: r.transceiverId,
    };
  }

  /** After every call ended (their byes are out): closes the socket. */
  async close(): Promise<void> {
    await this.socket.close();
  }
}
