// The swap is pinned to werift 0.25.2: when werift's CipherAesCtr changes underneath (an
// upgrade, a reinstall of another version), installFastSrtp refuses and this test fails, so the
// swapped-in methods are re-checked against the new source before the fingerprint is updated.
// The same for the SRTP receive side (installPacketIndexEstimate: werift's
// Context.updateRolloverCount, SrtpContext.decryptRtp and SrtcpContext.decryptRTCP, and the code
// around them the swap relies on); its behaviour is tested in srtp-roc.test.ts and
// srtp-replay.test.ts.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ProtectionProfileAes128CmHmacSha1_80, RTCPeerConnection, SrtcpSession, SrtpSession } from "werift";
import {
  fingerprint,
  installFastSrtp,
  installPacketIndexEstimate,
  packetIndexFingerprint,
  WERIFT_CTR_FINGERPRINT,
  WERIFT_ROC_FINGERPRINT,
} from "../../regional/transceiver/srtp/install.ts";
import { decryptRTCP, decryptRtp } from "../../regional/transceiver/srtp/unprotect.ts";

const [k16, k14] = [Buffer.alloc(16, 1), Buffer.alloc(14, 2)];

// Two werift peers on loopback; resolves with the SRTP profile their DTLS handshake chose.
async function negotiatedProfile(): Promise<number | undefined> {
  const mk = () =>
    new RTCPeerConnection({
      iceUseIpv4: false,
      iceUseIpv6: false,
      iceAdditionalHostAddresses: ["127.0.0.1"],
    });
  const a = mk();
  const b = mk();
  try {
    a.addTransceiver("audio", { direction: "sendrecv" });
    const connected = new Promise<void>((resolve) => {
      a.connectionStateChange.subscribe((s) => {
        if (s === "connected") resolve();
      });
    });
    await a.setLocalDescription(await a.createOffer());
    await b.setRemoteDescription(a.localDescription!);
    await b.setLocalDescription(await b.createAnswer());
    await a.setRemoteDescription(b.localDescription!);
    await connected;
    const t = a.dtlsTransports[0] as unknown as { dtls: { srtp: { srtpProfile?: number } } };
    return t.dtls.srtp.srtpProfile;
  } finally {
    await a.close();
    await b.close();
  }
}

describe("installFastSrtp", () => {
  it("runs on werift 0.25.2 whose CipherAesCtr is the one the swap was checked against", () => {
    const entry = fileURLToPath(import.meta.resolve("werift"));
    const pkg = JSON.parse(readFileSync(entry.replace(/lib[\\/]index\.mjs$/, "package.json"), "utf8")) as {
      version: string;
    };
    expect(pkg.version).toBe("0.25.2");
    expect(fingerprint()).toBe(WERIFT_CTR_FINGERPRINT);
  });

  it("refuses to swap when the fingerprint differs, and names why", () => {
    const r = installFastSrtp("werift", "0".repeat(64));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/CipherAesCtr changed/);
  });

  it("leaves werift's AES-GCM preference until the swap", async () => {
    expect(await negotiatedProfile()).toBe(7);
  });

  it("swaps once, is idempotent, and then DTLS settles on AES_CM_128_HMAC_SHA1_80", async () => {
    expect(installFastSrtp("aes-cm-only")).toEqual({ ok: true, swapped: true });
    expect(installFastSrtp("aes-cm-only")).toEqual({ ok: true, swapped: true });
    expect(await negotiatedProfile()).toBe(1);
  });

  it("takes the profile order of the last call: back to werift's AES-GCM first", async () => {
    expect(installFastSrtp("werift")).toEqual({ ok: true, swapped: true });
    expect(await negotiatedProfile()).toBe(7);
    expect(installFastSrtp("aes-cm-first")).toEqual({ ok: true, swapped: true });
    expect(await negotiatedProfile()).toBe(1);
  });
});

describe("installPacketIndexEstimate", () => {
  it("refuses while werift's SRTP receive code is not the 0.25.2 one, then swaps once", () => {
    const keys = { localMasterKey: k16, localMasterSalt: k14, remoteMasterKey: k16, remoteMasterSalt: k14 };
    const profile = ProtectionProfileAes128CmHmacSha1_80;
    const srtp = Object.getPrototypeOf(new SrtpSession({ keys, profile }).remoteContext);
    const srtcp = Object.getPrototypeOf(new SrtcpSession({ keys, profile }).remoteContext);
    const werift = [srtp.decryptRtp, srtcp.decryptRTCP];
    expect(packetIndexFingerprint()).toBe(WERIFT_ROC_FINGERPRINT);
    const r = installPacketIndexEstimate("0".repeat(64));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/SRTP receive code changed .*no replay window/);
    expect([srtp.decryptRtp, srtcp.decryptRTCP]).toEqual(werift);
    expect(installPacketIndexEstimate()).toEqual({ ok: true, swapped: true });
    // The estimate, and unprotect with the replay window (srtp-replay.test.ts), are ours now.
    expect([srtp.decryptRtp, srtcp.decryptRTCP]).toEqual([decryptRtp, decryptRTCP]);
    // The fingerprint stays that of werift's own code after the swap.
    expect(packetIndexFingerprint()).toBe(WERIFT_ROC_FINGERPRINT);
  });
});
