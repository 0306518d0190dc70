// werift issue 438 ("Not connecting in Firefox", open since Jan 2025): werift's data-channel
// example, where werift OFFERS and Firefox answers a=setup:active (so werift is the DTLS server),
// reportedly reached "ICE connected" and nothing more. Global Relay never offers (the client does,
// and Firefox offers actpass, so werift answers active and is the DTLS client; firefox.test.ts),
// but the reported direction is checked here too, with the pinned werift and Debian's Firefox ESR:
// a plain werift peer on the namespace's host address, a bare page in headless Firefox.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RTCPeerConnection } from "werift";
import { disableStunFallback } from "../../regional/transceiver/shell/werift-glue.ts";
import { createNetns, type NetnsHandle } from "../support/netns.ts";
import { waitFor } from "../support/wait.ts";
import { type FirefoxRun, launchFirefox } from "./firefox.ts";

const PAGE = `<!doctype html><title>werift 438</title><script type="module">
const report = (o) => fetch("/report", { method: "POST", body: JSON.stringify(o) });
const pc = new RTCPeerConnection();
pc.onconnectionstatechange = () => report({ connection: pc.connectionState });
pc.ondatachannel = ({ channel }) => {
  channel.onopen = () => { report({ channel: "open" }); channel.send("hello from firefox"); };
  channel.onmessage = (m) => report({ message: m.data });
};
await pc.setRemoteDescription({ type: "offer", sdp: await (await fetch("/offer")).text() });
await pc.setLocalDescription(await pc.createAnswer());
await new Promise((res) => {
  if (pc.iceGatheringState === "complete") res();
  pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && res();
});
await fetch("/answer", { method: "POST", body: pc.localDescription.sdp });
</script>`;

describe("werift offers a data channel, Firefox ESR answers (werift issue 438)", () => {
  let ns: NetnsHandle;
  let server: Server;
  let ff: FirefoxRun | undefined;
  let pc: RTCPeerConnection | undefined;
  const reports: Record<string, string>[] = [];
  const got: string[] = [];
  let answer = "";
  beforeAll(async () => {
    ns = createNetns();
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        void route(req.url ?? "", body).then(
          (out) => res.writeHead(out === null ? 404 : 200, { "content-type": "text/html" }).end(out ?? ""),
          (e: Error) => res.writeHead(500).end(e.message),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, ns.hostIp, () => r()));
  });
  afterAll(async () => {
    await ff?.close();
    await pc?.close();
    await new Promise((r) => server?.close(r));
    ns?.destroy();
  });

  async function route(url: string, body: string): Promise<string | null> {
    if (url === "/") return PAGE;
    if (url === "/offer") {
      pc = new RTCPeerConnection({
        iceServers: [],
        iceUseIpv6: false,
        iceInterfaceAddresses: { udp4: ns.hostIp },
      });
      const dc = pc.createDataChannel("chat");
      disableStunFallback(pc); // no query to werift's default public STUN server
      dc.onMessage.subscribe((m) => {
        got.push(String(m));
        dc.send(`echo: ${m}`);
      });
      await pc.setLocalDescription(await pc.createOffer());
      await pc.iceGatheringStateChange.watch((s) => s === "complete", 5_000).catch(() => {});
      return pc.localDescription!.sdp;
    }
    if (url === "/answer") {
      answer = body;
      await pc!.setRemoteDescription({ type: "answer", sdp: body });
      return "ok";
    }
    if (url === "/report") {
      reports.push(JSON.parse(body) as Record<string, string>);
      return "ok";
    }
    return null;
  }

  it("connects, Firefox is the DTLS client, and messages cross both ways", async () => {
    const port = (server.address() as { port: number }).port;
    ff = launchFirefox({
      netns: ns.name,
      url: `http://${ns.hostIp}:${port}/`,
      secureHost: ns.hostIp,
      maxMs: 40_000,
    });
    try {
      await waitFor(
        async () => reports,
        (r) => r.some((x) => x.message !== undefined) || r.some((x) => x.connection === "failed"),
        "a message back in Firefox",
        25_000,
      );
      expect(answer).toMatch(/^a=setup:active\r?$/m);
      expect(reports).toContainEqual({ connection: "connected" });
      expect(reports).toContainEqual({ channel: "open" });
      expect(got).toEqual(["hello from firefox"]);
      expect(reports).toContainEqual({ message: "echo: hello from firefox" });
    } catch (e) {
      (e as Error).message +=
        `\n--- reports ---\n${JSON.stringify(reports)}\n--- firefox ---\n${ff.lines.slice(-30).join("\n")}`;
      throw e;
    }
  }, 40_000);
});
