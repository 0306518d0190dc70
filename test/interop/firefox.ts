// Headless Firefox ESR (Debian firefox-esr) inside a test's network namespace, with a fresh
// profile: fake microphone, no permission prompt, autoplay allowed, no first-run pages and no
// background service that would reach out (telemetry, updates, remote settings, safe browsing,
// captive-portal and connectivity checks, OpenH264 download). The namespace has no route beyond
// its own /30 anyway. Firefox cannot be driven by playwright without a patched build, so the demo
// page drives itself (?autostart=1) and reports its state to a small HTTP server the test runs
// (see `startReportServer`).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { which } from "../../scripts/lib/system-deps.ts";
import type { DemoState } from "../e2e/harness.ts";

export function firefoxPrefs(secureHost: string): Record<string, string | number | boolean> {
  return {
    // Media: a fake microphone, granted without a prompt; audio may play without a gesture.
    "media.navigator.streams.fake": true,
    "media.navigator.permission.disabled": true,
    "media.autoplay.default": 0,
    "media.autoplay.blocking_policy": 0,
    // The edge is plain http on the namespace's host address: treat it as a secure context.
    "dom.securecontext.allowlist": secureHost,
    "media.devices.insecure.enabled": true,
    "media.getusermedia.insecure.enabled": true,
    // Host candidates in the clear (no mDNS names): the namespace address is private anyway.
    "media.peerconnection.ice.obfuscate_host_addresses": false,
    // No first run, no default-browser check, no pages of our own.
    "browser.shell.checkDefaultBrowser": false,
    "browser.startup.homepage_override.mstone": "ignore",
    "browser.startup.page": 0,
    "startup.homepage_welcome_url": "",
    "startup.homepage_welcome_url.additional": "",
    "browser.aboutwelcome.enabled": false,
    "trailhead.firstrun.didSeeAboutWelcome": true,
    "datareporting.policy.firstRunURL": "",
    "browser.newtabpage.enabled": false,
    "browser.newtabpage.activity-stream.feeds.topsites": false,
    "browser.newtabpage.activity-stream.feeds.system.topsites": false,
    "browser.topsites.contile.enabled": false,
    "messaging-system.rsexperimentloader.enabled": false,
    "browser.backup.enabled": false,
    "browser.tabs.warnOnClose": false,
    // Nothing in the background.
    "datareporting.policy.dataSubmissionEnabled": false,
    "datareporting.healthreport.uploadEnabled": false,
    "toolkit.telemetry.enabled": false,
    "toolkit.telemetry.unified": false,
    "toolkit.telemetry.server": "",
    "toolkit.telemetry.archive.enabled": false,
    "browser.ping-centre.telemetry": false,
    "app.update.auto": false,
    "app.update.enabled": false,
    "app.normandy.enabled": false,
    "app.shield.optoutstudies.enabled": false,
    "extensions.update.enabled": false,
    "extensions.getAddons.cache.enabled": false,
    "extensions.systemAddon.update.enabled": false,
    "services.settings.server": "http://127.0.0.1:9/",
    "browser.safebrowsing.malware.enabled": false,
    "browser.safebrowsing.phishing.enabled": false,
    "browser.safebrowsing.downloads.enabled": false,
    "browser.safebrowsing.blockedURIs.enabled": false,
    "browser.safebrowsing.provider.mozilla.updateURL": "",
    "network.captive-portal-service.enabled": false,
    "network.connectivity-service.enabled": false,
    "network.dns.disablePrefetch": true,
    "network.prefetch-next": false,
    "network.http.speculative-parallel-limit": 0,
    "browser.search.update": false,
    "browser.region.network.url": "",
    "browser.region.update.enabled": false,
    "geo.enabled": false,
    "dom.push.enabled": false,
    "media.gmp-manager.updateEnabled": false,
    "media.gmp-gmpopenh264.enabled": false,
    "media.gmp-widevinecdm.enabled": false,
    "browser.contentblocking.report.lockwise.enabled": false,
    "privacy.trackingprotection.enabled": false,
    "signon.rememberSignons": false,
    // The page's console on stdout (failure diagnostics).
    "browser.dom.window.dump.enabled": true,
    "devtools.console.stdout.content": true,
  };
}

export function userJs(prefs: Record<string, string | number | boolean>): string {
  return Object.entries(prefs)
    .map(([k, v]) => `user_pref(${JSON.stringify(k)}, ${JSON.stringify(v)});`)
    .join("\n");
}

export interface FirefoxRun {
  child: ChildProcess;
  /** Everything Firefox printed (console.log of the page included). */
  lines: string[];
  exited: Promise<number | null>;
  close(): Promise<void>;
}

/** Starts headless Firefox in `netns` on `url` with a fresh profile. */
export function launchFirefox(o: {
  netns: string;
  url: string;
  secureHost: string;
  extraPrefs?: Record<string, string | number | boolean>;
  maxMs: number;
}): FirefoxRun {
  const bin = which("firefox-esr");
  if (!bin) throw new Error("firefox-esr is not installed: run `npm run setup:system`");
  const profile = mkdtempSync(join(tmpdir(), "gr-firefox-"));
  writeFileSync(join(profile, "user.js"), userJs({ ...firefoxPrefs(o.secureHost), ...o.extraPrefs }));
  const child = spawn(
    "ip",
    ["netns", "exec", o.netns, bin, "--headless", "--no-remote", "--profile", profile, o.url],
    {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, HOME: profile, MOZ_CRASHREPORTER_DISABLE: "1", MOZ_HEADLESS: "1" },
      detached: true,
    },
  );
  const lines: string[] = [];
  const push = (l: string): void => {
    lines.push(l);
    if (lines.length > 2000) lines.splice(0, 500);
  };
  createInterface({ input: child.stdout! }).on("line", push);
  createInterface({ input: child.stderr! }).on("line", push);
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const kill = setTimeout(() => killGroup(child, "SIGKILL"), o.maxMs);
  void exited.then(() => clearTimeout(kill));
  return {
    child,
    lines,
    exited,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        killGroup(child, "SIGTERM");
        const t = setTimeout(() => killGroup(child, "SIGKILL"), 5_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Firefox starts content processes: signal the whole process group we created. */
function killGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, sig);
  } catch {}
}

/** The demo page's state (as the e2e tests read it from Chromium), posted by Firefox. */
export interface Report extends DemoState {
  userAgent: string;
}

export interface ReportServer {
  url: string;
  /** Latest report, or null before the first. */
  latest: Report | null;
  count: number;
  /** The next reply carries this command (once). */
  command(cmd: Record<string, unknown>): void;
  close(): Promise<void>;
}

/** The HTTP server the demo page reports to (?report=), on `host` (the edge's host: the page checks). */
export async function startReportServer(host: string): Promise<ReportServer> {
  let pending: Record<string, unknown> | null = null;
  const rs: ReportServer = {
    url: "",
    latest: null,
    count: 0,
    command(cmd) {
      pending = cmd;
    },
    close: () => new Promise((res) => server.close(() => res())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      try {
        rs.latest = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Report;
        rs.count++;
      } catch {}
      const body = JSON.stringify(pending ?? {});
      pending = null;
      res.writeHead(200, { "content-type": "application/json", "access-control-allow-origin": "*" });
      res.end(body);
    });
  });
  await new Promise<void>((res) => server.listen(0, host, () => res()));
  const a = server.address();
  rs.url = `http://${host}:${typeof a === "object" && a ? a.port : 0}/report`;
  return rs;
}
