// A captured, authenticated SRTP (and SRTCP) packet of a real werift client, sent again from the
// client's own socket through the loopback relay to the real transceiver: the paths and the relay
// pass it (same address), SRTP's replay window (RFC 3711 3.3.2, srtp/unprotect.ts) drops it, so
// the backend gets the frame once and gr_transceiver_drops_total{reason="srtp_replay"} (or
// "srtcp_replay") moves. werift 0.25.2 alone delivered the copies again. Both profiles: AES-CM
// (the default, our cipher) and AES-GCM (TRANSCEIVER_SRTP_PROFILES=werift: werift's cipher).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProtectionProfileAeadAes128Gcm, ProtectionProfileAes128CmHmacSha1_80, RtcpRrPacket } from "werift";
import { callStatus, type Harness, sleep, startHarness, until } from "./helpers/harness.ts";

let h: Harness;

// RFC 5761 4: RTCP packet types 192..223 in the second byte; RTP otherwise (first byte 128..191).
const isMedia = (p: Buffer) => p.length > 12 && p[0]! >= 128 && p[0]! < 192;
const isRtcp = (p: Buffer) => isMedia(p) && p[1]! >= 192 && p[1]! <= 223;
const isRtp = (p: Buffer) => isMedia(p) && !isRtcp(p);

const REPORTER = 0x5eed5eed;
const framesAtBackend = (): number => Object.values(h.agent.framesBySlot()).reduce((a, b) => a + b, 0);
const dropped = (reason: "srtp_replay" | "srtcp_replay"): number => h.t.metrics.drops[reason]?.value ?? 0;

// The profile DTLS chose for the call (werift's DtlsSocket state).
const profileOf = (callId: string): number | undefined =>
  (h.t.calls.get(callId)!.pc.dtlsTransports[0] as unknown as { dtls: { srtp: { srtpProfile?: number } } })
    .dtls.srtp.srtpProfile;

describe.each([
  ["aes-cm-only", ProtectionProfileAes128CmHmacSha1_80],
  ["werift", ProtectionProfileAeadAes128Gcm],
] as const)(
  "SRTP/SRTCP replayed from the client's own address (TRANSCEIVER_SRTP_PROFILES=%s)",
  (order, profile) => {
    beforeAll(async () => {
      h = await startHarness({ srtpProfiles: order });
    });
    afterAll(async () => {
      await h?.close();
    });

    it("an SRTP packet sent again reaches the backend once, and srtp_replay counts the copies", async () => {
      const { client, callId } = await h.connectClient({ codecs: "opus" });
      expect(profileOf(callId)).toBe(profile);
      const captured: Buffer[] = [];
      h.relay.onFromClient = (p) => {
        if (isRtp(p)) captured.push(Buffer.from(p));
        return false;
      };
      const replays = dropped("srtp_replay");
      const atBackend = framesAtBackend();
      client.sendAudio(Buffer.from([0xfc, 0xff, 0xfe]), 4242, 480_000);
      await until(
        async () => (await callStatus(h, callId)).backend.framesToBackend === 1,
        "the frame at the backend",
      );
      h.relay.onFromClient = undefined;
      expect(captured.length).toBe(1);
      // The same bytes twice, from the client's socket to the VIP (the pair ICE selected).
      const conn = client.transceiver.dtlsTransport.iceTransport.connection;
      await conn.send(captured[0]!);
      await conn.send(captured[0]!);
      await until(
        async () =>
          dropped("srtp_replay") >= replays + 2 || (await callStatus(h, callId)).backend.framesToBackend > 1,
        "the copies handled",
      );
      await sleep(300); // anything still on its way to the backend
      const st = await callStatus(h, callId);
      expect(st.backend.framesToBackend).toBe(1);
      expect(framesAtBackend() - atBackend).toBe(1);
      expect(dropped("srtp_replay") - replays).toBe(2);
      expect(st.state).toBe("connected");
      // The call goes on: the next packet passes.
      client.sendAudio(Buffer.from([0xfc, 0xff, 0xfd]), 4243, 480_960);
      await until(async () => (await callStatus(h, callId)).backend.framesToBackend === 2, "the next frame");
      await client.close();
    });

    it("an SRTCP packet sent again is handled once, and srtcp_replay counts the copies", async () => {
      const { client, callId } = await h.connectClient({ codecs: "opus" });
      const call = h.t.calls.get(callId)!;
      let reports = 0;
      call.pc.dtlsTransports[0]!.onRtcp.subscribe((p) => {
        if (p instanceof RtcpRrPacket && p.ssrc === REPORTER) reports++;
      });
      const captured: Buffer[] = [];
      h.relay.onFromClient = (p) => {
        if (isRtcp(p) && p.readUInt32BE(4) === REPORTER) captured.push(Buffer.from(p));
        return false;
      };
      const replays = dropped("srtcp_replay");
      await client.transceiver.dtlsTransport.sendRtcp([new RtcpRrPacket({ ssrc: REPORTER })]);
      await until(() => reports === 1, "the report at the transceiver");
      h.relay.onFromClient = undefined;
      expect(captured.length).toBe(1);
      const conn = client.transceiver.dtlsTransport.iceTransport.connection;
      await conn.send(captured[0]!);
      await conn.send(captured[0]!);
      await until(() => dropped("srtcp_replay") >= replays + 2 || reports > 1, "the copies handled");
      await sleep(300);
      expect(reports).toBe(1);
      expect(dropped("srtcp_replay") - replays).toBe(2);
      // A new report (the next SRTCP index) passes.
      await client.transceiver.dtlsTransport.sendRtcp([new RtcpRrPacket({ ssrc: REPORTER })]);
      await until(() => reports === 2, "the next report");
      await client.close();
    });
  },
);
