// The cascade's browser harness: the local system with its two clusters (as `npm start` runs it)
// on the host end of a private network namespace, a real Chromium inside it, and tone pages
// (test/cascade/page/tone-page.ts) each placed in a "city": every API request a page makes
// carries that city as request.cf, which the edge (real workerd under wrangler dev) steers by.
// The page is served on the edge's own origin by the browser's router, so its fetches are
// same-origin and reach the real edge; only the cf blob is added on the way.
import { join } from "node:path";
import { build } from "esbuild";
import type { Page } from "playwright-core";
import { type BrowserHandle, launchChromium } from "../support/chromium.ts";
import {
  type NamespacedSystem,
  type NamespacedSystemOptions,
  startNamespacedSystem,
} from "../support/namespaced-system.ts";
import { HEARD } from "../support/tone.ts";
import { waitFor } from "../support/wait.ts";
import type { ConnectOptions, ToneState } from "./page/tone-page.ts";

export type { ToneState } from "./page/tone-page.ts";

/** Where a page "is": what Cloudflare would put in request.cf for a client there. */
export const CITIES = {
  frankfurt: { latitude: "50.1", longitude: "8.7", country: "DE", continent: "EU", colo: "FRA" },
  newYork: { latitude: "40.7", longitude: "-74.0", country: "US", continent: "NA", colo: "EWR" },
} as const;
export type City = (typeof CITIES)[keyof typeof CITIES];

export interface CascadeBrowser extends NamespacedSystem {
  browser: BrowserHandle;
  close(): Promise<void>;
}

const PAGE_PATH = "/__cascade/tone";

let bundled: Promise<string> | null = null;
function bundle(): Promise<string> {
  bundled ??= build({
    entryPoints: [join(import.meta.dirname, "page", "tone-page.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "error",
  }).then((r) => r.outputFiles[0]!.text);
  return bundled;
}

export async function startCascadeBrowser(o: NamespacedSystemOptions = {}): Promise<CascadeBrowser> {
  const [sys] = await Promise.all([startNamespacedSystem({ apiKey: "cascade-key", ...o }), bundle()]);
  try {
    const browser = await launchChromium(
      [
        "--autoplay-policy=no-user-gesture-required",
        // GR_CHROMIUM_LOG=1 (with DEBUG=pw:browser): Chromium's own log, WebRTC warnings included.
        ...(process.env.GR_CHROMIUM_LOG ? ["--enable-logging=stderr", "--v=0"] : []),
        `--unsafely-treat-insecure-origin-as-secure=${sys.system.edgeUrl}`,
      ],
      sys.ns.chromiumWrapper,
    );
    return {
      ...sys,
      browser,
      async close() {
        await browser.close();
        await sys.close();
      },
    };
  } catch (e) {
    await sys.close();
    throw e;
  }
}

export interface TonePage {
  page: Page;
  /** Sends the offer to `path` (on the edge) and starts the tone; resolves when answered or failed. */
  connect(path: string, freq: number): Promise<ToneState>;
  state(): Promise<ToneState>;
  /** Polls the page's state until `pred` holds; the failure message shows the last state. */
  waitFor(pred: (s: ToneState) => boolean, what: string, timeoutMs?: number): Promise<ToneState>;
  /** A request from the page (with its key and city), e.g. DELETE on its Location. */
  request(method: string, path: string): Promise<number>;
  close(): Promise<void>;
}

/** Opens a tone page in `city`: every request it makes to the edge's /v1/ API carries that cf. */
export async function openTonePage(h: CascadeBrowser, city: City): Promise<TonePage> {
  const edge = h.system.edgeUrl;
  const js = await bundle();
  const page = await h.browser.browser.newPage();
  await page.route(`${edge}${PAGE_PATH}*`, (route) => {
    const isJs = route.request().url().endsWith(".js");
    return route.fulfill({
      status: 200,
      contentType: isJs ? "text/javascript" : "text/html",
      body: isJs
        ? js
        : `<!doctype html><html><head><meta charset="utf-8"><title>tone</title></head><body><script type="module" src="${PAGE_PATH}.js"></script></body></html>`,
    });
  });
  await page.route(`${edge}/v1/**`, (route) =>
    route.continue({
      headers: {
        ...route.request().headers(),
        // Miniflare's way to set request.cf for a request to wrangler dev (as the e2e tests do).
        "mf-cf-blob": JSON.stringify({ ...city, clientAcceptEncoding: "" }),
      },
    }),
  );
  await page.goto(`${edge}${PAGE_PATH}`);
  await page.waitForFunction(() => "grToneConnect" in window);
  const key = h.system.apiKey;
  const state = () => page.evaluate(() => (window as unknown as { grTone: ToneState }).grTone);
  return {
    page,
    connect: (path, freq) =>
      page.evaluate(
        (o) =>
          (window as unknown as { grToneConnect(o: ConnectOptions): Promise<ToneState> }).grToneConnect(o),
        { url: path, key, freq } satisfies ConnectOptions,
      ),
    state,
    waitFor: (pred, what, timeoutMs) => waitFor(state, pred, what, timeoutMs),
    request: (method, path) =>
      page.evaluate(
        ([m, p]) =>
          (window as unknown as { grToneRequest(m: string, p: string): Promise<number> }).grToneRequest(
            m!,
            p!,
          ),
        [method, path],
      ),
    async close() {
      await page.evaluate(() => (window as unknown as { grToneClose(): void }).grToneClose()).catch(() => {});
      await page.close();
    },
  };
}

/** A second of received audio analysed and `freq` in it at HEARD or more. */
export const heardTone = (s: ToneState, freq: number): boolean =>
  s.blocks >= 10 && (s.levels[freq] ?? 0) >= HEARD;

/** The call id in a Location (/v1/realtime/calls/{id}[/participants/{pid}]). */
export function callIdOf(location: string | null): string {
  const m = /\/v1\/realtime\/calls\/([^/]+)/.exec(location ?? "");
  if (!m) throw new Error(`no call id in Location ${location}`);
  return m[1]!;
}
