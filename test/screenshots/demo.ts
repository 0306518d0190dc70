// Saves docs/demo.png: the demo page mid-call, through the whole local system, in a real Chromium
// (inside a private network namespace, as the end-to-end tests run it). Needs root. It lives with
// the harness it drives (scripts/ never imports test/). Usage: npx node test/screenshots/demo.ts
import { join } from "node:path";
import { ROOT } from "../../scripts/lib/local-system.ts";
import { openDemo, startE2E, waitDemo } from "../e2e/harness.ts";

const e = await startE2E(false);
try {
  const page = await openDemo(e, { latitude: "50.1", longitude: "8.7", country: "DE", continent: "EU" });
  await page.setViewportSize({ width: 900, height: 860 });
  await page.click("#start");
  await waitDemo(
    page,
    (s) => s.state === "connected" && s.packetsReceived > 150 && s.rtt !== null,
    "call",
    30_000,
  );
  await page.evaluate(() =>
    (window as unknown as { grDemoSend(o: unknown): boolean }).grDemoSend({ type: "ping", id: "screenshot" }),
  );
  await waitDemo(page, (s) => s.events.some((x) => x.includes("pong")), "pong");
  const out = join(ROOT, "docs/demo.png");
  await page.screenshot({ path: out, fullPage: true });
  console.log(`saved ${out}`);
} finally {
  await e.close();
}
