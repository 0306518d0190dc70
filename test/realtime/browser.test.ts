// The official browser SDKs, unchanged, in a real Chromium inside a network namespace, on a page
// served from another origin than the edge: `openai` mints a client secret (its x-stainless-*
// headers pass the preflight), `@openai/agents-realtime` connects a RealtimeSession over WebRTC
// through the whole local system (edge → POP at the VIP → cluster → transceiver → echo backend).
// connect() resolves without the SDK's "timed out waiting for session.updated" warning, the
// selected pair is the VIP, audio comes back, a full response sequence arrives, and the openai
// package's calls.hangup ends the call.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserHandle, launchChromium } from "../support/chromium.ts";
import { callStatus, type NamespacedSystem, startNamespacedSystem } from "../support/namespaced-system.ts";
import { waitFor } from "../support/wait.ts";

interface SdkState {
  step: string;
  error: string | null;
  warnings: string[];
  secretHasSession: boolean;
  connectMs: number | null;
  callId: string | null;
  events: string[];
  selectedRemote: string | null;
  packetsReceived: number;
  audioLevel: number;
  transcript: string | null;
  hungUp: boolean;
  connectionState: string | null;
}

let sys: NamespacedSystem;
let pageServer: Server;
let pageOrigin: string;
let browser: BrowserHandle;

async function bundle(): Promise<string> {
  const r = await build({
    entryPoints: [join(import.meta.dirname, "browser", "app.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "error",
  });
  return r.outputFiles[0]!.text;
}

beforeAll(async () => {
  const [s, js] = await Promise.all([startNamespacedSystem({ apiKey: "sdk-key" }), bundle()]);
  sys = s;
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><title>sdk</title></head><body><script type="module" src="/app.js"></script></body></html>';
  pageServer = createServer((req, res) => {
    if (req.url?.startsWith("/app.js")) res.writeHead(200, { "content-type": "text/javascript" }).end(js);
    else res.writeHead(200, { "content-type": "text/html" }).end(html);
  });
  await new Promise<void>((r) => pageServer.listen(0, sys.ns.hostIp, () => r()));
  pageOrigin = `http://${sys.ns.hostIp}:${(pageServer.address() as AddressInfo).port}`;
  browser = await launchChromium(
    [
      "--use-fake-device-for-media-stream",
      "--use-fake-ui-for-media-stream",
      "--autoplay-policy=no-user-gesture-required",
      `--unsafely-treat-insecure-origin-as-secure=${pageOrigin}`,
    ],
    sys.ns.chromiumWrapper,
  );
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (pageServer ? pageServer.close(() => r()) : r()));
  await sys?.close();
});

describe("official browser SDKs, unchanged, on another origin", () => {
  it("openai + @openai/agents-realtime: secret, connect via the VIP, events, audio, hang-up", async () => {
    const page = await browser.browser.newPage();
    const edge = sys.system.edgeUrl;
    expect(new URL(edge).origin).not.toBe(pageOrigin);
    await page.goto(
      `${pageOrigin}/?edge=${encodeURIComponent(edge)}&key=${encodeURIComponent(sys.system.apiKey)}`,
    );
    const read = () => page.evaluate(() => (window as unknown as { grSdk: SdkState }).grSdk);
    const s = await waitFor(read, (x) => x.step === "done" || x.error !== null, "the SDK run", 60_000).catch(
      async (e: Error) => {
        e.message += `\n--- component logs ---\n${sys.logs.slice(-40).join("\n")}`;
        throw e;
      },
    );
    expect(s.error, JSON.stringify(s)).toBeNull();
    expect(s.secretHasSession).toBe(true);
    // connect() waited for session.updated, which came: no timeout warning, nothing else warned.
    expect(s.warnings.filter((w) => /session\.updated|Timed out/i.test(w))).toEqual([]);
    expect(s.events[0]).toBe("session.created");
    expect(s.events).toContain("session.updated");
    // The only remote the browser ever used is the Global Relay VIP.
    expect(s.selectedRemote).toBe(sys.system.topology.globalVip);
    expect(s.packetsReceived).toBeGreaterThan(100);
    expect(s.audioLevel).toBeGreaterThan(0.001); // the fake microphone, echoed: not silence
    // sendMessage → the item and a whole response, in the order a Realtime client expects.
    const from = s.events.indexOf("conversation.item.added");
    const seq = s.events
      .slice(from)
      .filter((t) => t.startsWith("response.") || t.startsWith("conversation.item."));
    expect(seq).toEqual(
      expect.arrayContaining([
        "response.created",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_audio_transcript.delta",
        "response.output_audio_transcript.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.done",
      ]),
    );
    expect(seq.indexOf("response.created")).toBeLessThan(seq.indexOf("response.done"));
    expect(s.events).not.toContain("error");
    expect(s.transcript).toBe("hello relay");
    // calls.hangup from the page ended the call at the transceiver.
    expect(s.hungUp).toBe(true);
    const st = await callStatus(sys, s.callId!);
    expect(st.status === 404 || st.body.state === "ended", JSON.stringify(st)).toBe(true);
    await page.close();
  }, 90_000);
});
