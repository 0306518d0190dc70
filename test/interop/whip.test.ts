// GStreamer's WHIP client (simple-whip-client: webrtcbin + libnice, a stack we do not control)
// publishes to the edge's WHIP endpoint from inside a private network namespace, through the whole
// local system: edge → cluster → transceiver; media POP → backbone → transceiver → echo agent.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callStatus, type NamespacedSystem, startNamespacedSystem } from "../support/namespaced-system.ts";
import { waitFor } from "../support/wait.ts";
import { OPUS_PIPELINE, prepareWhipEnv, runWhipClient, VP8_PIPELINE, type WhipEnv } from "./whip-client.ts";

interface Status {
  state?: string;
  clientAddress?: string | null;
  packets?: { fromClient: number; toClient: number };
  backend?: { framesToBackend: number; framesFromBackend: number };
  endReason?: string | null;
}

/** The m-sections of an SDP: kind, port and direction. */
function sections(sdp: string): { kind: string; port: number; direction: string | undefined }[] {
  const out: { kind: string; port: number; direction: string | undefined }[] = [];
  for (const l of sdp.split(/\r?\n/)) {
    const m = /^m=(\S+) (\d+)/.exec(l);
    if (m) out.push({ kind: m[1]!, port: Number(m[2]), direction: undefined });
    const d = /^a=(sendrecv|sendonly|recvonly|inactive)$/.exec(l);
    if (d && out.length > 0) out[out.length - 1]!.direction = d[1];
  }
  return out;
}

describe("simple-whip-client (GStreamer webrtcbin) through the local system", () => {
  let i: NamespacedSystem;
  let w: WhipEnv;
  beforeAll(async () => {
    w = prepareWhipEnv();
    i = await startNamespacedSystem();
  }, 120_000);
  afterAll(async () => {
    await i?.close();
    w?.cleanup();
  });

  async function publish(video: boolean, noTrickle = false): Promise<void> {
    const run = runWhipClient({
      netns: i.ns.name,
      url: `${i.system.edgeUrl}/v1/realtime/calls`,
      token: i.system.apiKey,
      audio: OPUS_PIPELINE,
      ...(video ? { video: VP8_PIPELINE } : {}),
      env: w.env,
      noTrickle,
      maxMs: 30_000,
    });
    try {
      const resource = await run.resource;
      const callId = resource.slice(resource.lastIndexOf("/") + 1);
      expect(callId).toMatch(/^rtc_[A-Za-z0-9_-]{48}$/);
      expect(resource.startsWith(`${i.system.edgeUrl}/v1/realtime/calls/`)).toBe(true);

      await run.answered;
      // The answer: audio accepted (recvonly: a WHIP client only sends); video, if offered, never
      // carries media: inactive while it is the BUNDLE tag, else rejected with port 0.
      const m = sections(run.answer());
      const audio = m.find((s) => s.kind === "audio");
      expect(audio).toEqual({ kind: "audio", port: 9, direction: "recvonly" });
      const v = m.find((s) => s.kind === "video");
      if (video) expect(v?.port === 0 || v?.direction === "inactive").toBe(true);
      else expect(v).toBeUndefined();

      await run.connected;
      const probe = async (): Promise<Status> => (await callStatus(i, callId)).body as Status;
      const s1 = await waitFor(
        probe,
        (s) => s.state === "connected" && (s.backend?.framesToBackend ?? 0) > 50,
        "connected with audio at the echo agent",
      );
      expect(String(s1.clientAddress).startsWith(`${i.ns.nsIp}:`)).toBe(true);
      // The echo agent answers every frame; the transceiver does not send it to a client that
      // only sends (recvonly answer), so only ICE/DTLS/RTCP goes back: far fewer datagrams.
      const s2 = await waitFor(
        probe,
        (s) =>
          (s.backend?.framesFromBackend ?? 0) > 100 &&
          (s.packets?.fromClient ?? 0) > s1.packets!.fromClient + 100 &&
          (s.packets?.toClient ?? 0) > s1.packets!.toClient,
        "audio from the client, echo frames from the backend, RTCP and consent to the client",
      );
      const from = s2.packets!.fromClient - s1.packets!.fromClient;
      const to = s2.packets!.toClient - s1.packets!.toClient;
      expect(to).toBeGreaterThan(0);
      expect(to * 4).toBeLessThan(from);

      // The 201 carried an ETag (the client warns without one) and its Location resolved (above).
      expect(run.lines.filter((l) => l.includes("No ETag"))).toEqual([]);
      // Its trickled candidates went by PATCH with If-Match (204); a refusal would be logged.
      expect(run.lines.filter((l) => l.includes("[trickle]"))).toEqual([]);
      expect(run.lines.some((l) => l.includes("Sending candidates"))).toBe(!noTrickle);

      // SIGINT: the client sends DELETE to the resource URL and exits; the session ends.
      await run.stop();
      expect(run.lines.some((l) => l.includes("Disconnecting from server"))).toBe(true);
      const ended = await waitFor(
        () => callStatus(i, callId),
        (r) => r.status === 404 || (r.body as Status).state === "ended",
        "the session ended by DELETE",
      );
      if (ended.status === 200) expect((ended.body as Status).endReason).toBe("hangup");
    } catch (e) {
      (e as Error).message +=
        `\n--- whip-client ---\n${run.lines.slice(-60).join("\n")}\n--- system ---\n${i.logs.slice(-30).join("\n")}`;
      throw e;
    } finally {
      await run.stop();
    }
  }

  it("publishes audio only: connects, audio reaches the echo agent, DELETE ends it", async () => {
    await publish(false);
  }, 40_000);

  it("publishes audio only without trickle (candidates and end-of-candidates in the offer)", async () => {
    await publish(false, true);
  }, 40_000);

  it("publishes audio + video (video tags BUNDLE, audio is bundle-only): video inactive, audio connects", async () => {
    await publish(true);
  }, 40_000);
});
