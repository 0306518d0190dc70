// End-to-end harness: the same local system `npm start` runs, on free ports on the host end of a
// private network namespace, and a real Chromium inside that namespace with a fake microphone.
import type { Page } from "playwright-core";
import { type BrowserHandle, launchChromium } from "../support/chromium.ts";
import { type NamespacedSystem, startNamespacedSystem } from "../support/namespaced-system.ts";
import { waitFor } from "../support/wait.ts";

export { callStatus } from "../support/namespaced-system.ts";

export interface E2E extends NamespacedSystem {
  browser: BrowserHandle;
}

export async function startE2E(redis: boolean): Promise<E2E> {
  const sys = await startNamespacedSystem({ redis, apiKey: "e2e-key" });
  try {
    const browser = await launchChromium(
      [
        "--use-fake-device-for-media-stream",
        "--use-fake-ui-for-media-stream",
        "--autoplay-policy=no-user-gesture-required",
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

export interface DemoState {
  state: string;
  callId: string | null;
  cluster: string | null;
  pop: string | null;
  rtt: number | null;
  packetsSent: number;
  packetsReceived: number;
  audioEnergy: number;
  events: string[];
  error: string | null;
  /** The oai-events channel: null before the call, then "connecting" and "open". */
  dataChannel: string | null;
  /** Times the page resumed the call (its transceiver failed, or drained). */
  resumes: number;
}

export const demoState = (page: Page): Promise<DemoState> =>
  page.evaluate(() => (window as unknown as { grDemo: DemoState }).grDemo);

/** Polls the page's state until `pred` holds; the failure message shows the last state. */
export const waitDemo = (
  page: Page,
  pred: (s: DemoState) => boolean,
  what: string,
  timeoutMs?: number,
): Promise<DemoState> => waitFor(() => demoState(page), pred, what, timeoutMs);

/** Opens the demo page; `cf` (if given) is what the edge sees as request.cf for the call. */
export async function openDemo(e: E2E, cf?: Record<string, unknown>): Promise<Page> {
  const page = await e.browser.browser.newPage();
  if (cf) {
    // New calls and joins (POST .../calls/{id}/participants) are the steered requests.
    await page.route(/\/v1\/realtime\/calls(\/[^/]+\/participants)?$/, (route) =>
      route.continue({
        headers: {
          ...route.request().headers(),
          "mf-cf-blob": JSON.stringify({ ...cf, clientAcceptEncoding: "" }),
        },
      }),
    );
  }
  await page.goto(`${e.system.edgeUrl}/`);
  await page.fill("#key", e.system.apiKey);
  return page;
}

export async function popFlow(
  e: E2E,
  client: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`http://${e.system.plan.host}:${e.system.plan.popAdminPort}/flows?client=${client}`);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}
