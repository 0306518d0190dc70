// Launches the Debian chromium headless through playwright-core with the flags this machine needs
// (docs/toolchain.md); playwright gives every launch a fresh, empty profile. Fails loudly when
// chromium is missing: tests never skip silently.
import { type Browser, chromium } from "playwright-core";
import { which } from "./system-deps.ts";

export interface BrowserHandle {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchChromium(extraArgs: string[] = [], wrapper?: string): Promise<BrowserHandle> {
  const executablePath = wrapper ?? which("chromium");
  if (!executablePath) throw new Error("chromium is not installed: run `npm run setup:system`");
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...extraArgs,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
    },
  };
}
