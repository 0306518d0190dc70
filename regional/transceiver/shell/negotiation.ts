// Offer/answer and ICE credentials of one session: the answer to the offer (werift, then the
// pure edits of core/answer.ts), the local ufrag minted as a hint, and WHIP ICE restarts (new
// remote credentials in, sdpfrag and new ETag out; old local ufrags retire after a grace).
import { randomBytes } from "node:crypto";
import type { RTCPeerConnection } from "werift";
import { type MacSync, mintHint } from "../../../shared/hint/codec.ts";
import type { OfferInfo } from "../../../shared/sdp/offer.ts";
import type { HostPort } from "../../../shared/topology/address.ts";
import type { Logger } from "../../common/log.ts";
import type { TransceiverConfig } from "../config.ts";
import { finishAnswer, replaceIceCredentials, restartAnswerFrag } from "../core/answer.ts";
import type { Mux } from "../core/mux.ts";
import { UfragSet } from "../core/ufrags.ts";
import { ApiError } from "../errors.ts";
import type { TransceiverMetrics } from "../metrics.ts";
import type { CallAudio } from "./audio.ts";
import type { CallPaths } from "./call-paths.ts";
import { guardDtlsClientRole } from "./dtls-client-guard.ts";
import { guardRecordSequence } from "./dtls-sequence.ts";
import { guardDtlsServerRole } from "./dtls-server-guard.ts";
import { leanRoute } from "./lean-route.ts";
import { applyOffer } from "./peer.ts";
import { guardSrtpReplay } from "./srtp-replay.ts";
import { attachSharedSocket, type IceAttachment, iceTransportCount } from "./werift-glue.ts";

const enc = new TextEncoder();
const noop = (): void => {};

/** 128+ random bits as ice-chars: 24 bytes → 32 base64 characters (no padding). */
export function newIcePwd(): string {
  return randomBytes(24).toString("base64");
}

export function newEtag(): string {
  return randomBytes(12).toString("base64url");
}

export interface NegotiationDeps {
  config: TransceiverConfig;
  mux: Mux;
  hintMac: MacSync;
  pc: RTCPeerConnection;
  audio: CallAudio;
  paths: CallPaths;
  log: Logger;
  metrics: TransceiverMetrics;
}

export class Negotiation {
  readonly #d: NegotiationDeps;
  readonly #offer: OfferInfo;
  readonly #vip: HostPort;
  #att: IceAttachment | undefined;
  #offerSdp: string;
  remoteUfrag: string;
  ufrag = "";
  readonly #ufrags = new UfragSet();
  etag = newEtag();
  restarting = false;

  constructor(d: NegotiationDeps, offer: OfferInfo, ingressVip: HostPort) {
    this.#d = d;
    this.#offer = offer;
    this.#vip = ingressVip;
    this.#offerSdp = offer.sdp;
    this.remoteUfrag = offer.iceUfrag;
  }

  get attachment(): IceAttachment | undefined {
    return this.#att;
  }

  #mintCredentials(): { ufrag: string; pwd: string } {
    const { clusterId, transceiverId } = this.#d.config;
    const ufrag = mintHint({ clusterId, transceiverId, random: randomBytes(4) }, this.#d.hintMac);
    return { ufrag, pwd: newIcePwd() };
  }

  #useCredentials(ufrag: string, pwd: string): void {
    this.ufrag = ufrag;
    this.#ufrags.use(ufrag, this.#d.mux.clock.now);
    this.#d.mux.addUfrag(ufrag, enc.encode(pwd), this.#d.paths);
  }

  /** The answer to the offer; throws ApiError on an offer werift cannot take. */
  async answer(): Promise<string> {
    const { pc, paths } = this.#d;
    try {
      await pc.setRemoteDescription({ type: "offer", sdp: this.#offer.sdp });
    } catch (e) {
      throw new ApiError("offer_rejected", `the offer was not accepted: ${(e as Error).message}`);
    }
    if (iceTransportCount(pc) !== 1) {
      throw new ApiError("bundle_required", "every m-line must share one transport (a=group:BUNDLE)");
    }
    guardRecordSequence(pc);
    guardSrtpReplay(pc, this.#d.metrics.drops);
    applyOffer(pc, this.#offer);
    // After the role is set (a=setup:active makes us the DTLS server), before DTLS starts.
    guardDtlsServerRole(pc, this.#d.log);
    guardDtlsClientRole(pc, this.#d.log);
    const { ufrag, pwd } = this.#mintCredentials();
    this.#att = attachSharedSocket(pc, {
      ufrag,
      pwd,
      candidateHost: this.#vip.host,
      candidatePort: this.#vip.port,
      send: (data, addr) => paths.sendTo(data, addr),
      onClose: noop,
    });
    paths.attach(this.#att);
    leanRoute(pc);
    this.#useCredentials(ufrag, pwd);
    await pc.setLocalDescription(await pc.createAnswer());
    if (!this.#d.audio.negotiated()) {
      throw new ApiError("no_acceptable_codec", "no audio codec in common (opus/48000/2 or PCMU/8000)");
    }
    return this.#finish(pc.localDescription!.sdp);
  }

  #finish(localSdp: string): string {
    const cv = this.#d.config.clusterVip;
    const vip = this.#vip;
    const second =
      cv && !(cv.host === vip.host && cv.port === vip.port) ? { host: cv.host, port: cv.port } : undefined;
    const tcpPort = this.#d.config.vipTcpPort;
    return finishAnswer(localSdp, {
      opusFec: this.#offer.opusFec,
      ...(second ? { secondCandidate: second } : {}),
      ...(tcpPort !== undefined ? { tcpCandidate: { host: vip.host, port: tcpPort } } : {}),
    });
  }

  /** WHIP ICE restart; throws ApiError. */
  async restart(remoteUfrag: string, remotePwd: string): Promise<{ frag: string; etag: string }> {
    if (this.restarting) throw new ApiError("unsupported_patch", "an ICE restart is already in progress");
    const { pc } = this.#d;
    const att = this.#att!;
    this.restarting = true;
    try {
      const offer = replaceIceCredentials(this.#offerSdp, remoteUfrag, remotePwd);
      await pc.setRemoteDescription({ type: "offer", sdp: offer });
      this.#offerSdp = offer;
      this.remoteUfrag = remoteUfrag;
      const { ufrag, pwd } = this.#mintCredentials();
      att.setLocalCredentials(ufrag, pwd);
      this.#useCredentials(ufrag, pwd);
      await pc.setLocalDescription(await pc.createAnswer());
      att.restartChecks().catch(noop);
      this.etag = newEtag();
      return { frag: restartAnswerFrag(this.#finish(pc.localDescription!.sdp)), etag: this.etag };
    } catch (e) {
      if (e instanceof ApiError) throw e;
      throw new ApiError("unsupported_patch", `ICE restart failed: ${(e as Error).message}`);
    } finally {
      this.restarting = false;
    }
  }

  /** Drops the local ufrags whose grace ended. */
  retireUfrags(now: number): void {
    for (const u of this.#ufrags.retire(now)) this.#d.mux.removeUfrag(u, this.#d.paths);
  }

  /** Forgets every local ufrag (the session ends). */
  release(): void {
    for (const u of this.#ufrags.all) this.#d.mux.removeUfrag(u, this.#d.paths);
  }
}
