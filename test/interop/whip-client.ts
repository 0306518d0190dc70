// Runs Meetecho's simple-whip-client (Debian package simple-whip-client, binary `whip-client`,
// GStreamer webrtcbin + libnice) inside a test's network namespace against the edge's WHIP
// endpoint, and collects what it prints.
//
// Debian 12's package aborts at start-up as shipped: whip-client links libsoup 2.4, and the nice
// plugin's libnice links libgupnp-igd → libgupnp-1.6 → libsoup 3, whose constructor refuses to run
// next to libsoup 2 ("libsoup2 symbols detected. Using libsoup2 and libsoup3 in the same process
// is not supported"). The UPnP port mapping that pulls libgupnp in is useless here, so the test
// puts a four-function stand-in for libgupnp-igd first on LD_LIBRARY_PATH (libnice checks for a
// NULL agent and skips UPnP). Nothing else of the client changes.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { which } from "../../scripts/lib/system-deps.ts";

const GUPNP_IGD_STUB = `typedef unsigned long GType;
GType gupnp_simple_igd_get_type(void) { return (GType)(20 << 2); } /* G_TYPE_OBJECT */
void *gupnp_simple_igd_thread_new(void) { return 0; }
void gupnp_simple_igd_add_port(void) {}
void gupnp_simple_igd_remove_port_local(void) {}
`;

export const OPUS_PIPELINE =
  "audiotestsrc is-live=true wave=sine freq=440 ! audioconvert ! audioresample ! queue ! opusenc ! " +
  "rtpopuspay pt=100 ssrc=1 ! queue ! application/x-rtp,media=audio,encoding-name=OPUS,payload=100";
export const VP8_PIPELINE =
  "videotestsrc is-live=true pattern=ball ! video/x-raw,width=320,height=240,framerate=15/1 ! videoconvert ! " +
  "queue ! vp8enc deadline=1 ! rtpvp8pay pt=96 ssrc=2 ! queue ! " +
  "application/x-rtp,media=video,encoding-name=VP8,payload=96";

export interface WhipEnv {
  /** Extra environment for whip-client (LD_LIBRARY_PATH when the libsoup clash needs the stub). */
  env: Record<string, string>;
  /** True when the stub was needed (the packaged client would abort). */
  stubbed: boolean;
  cleanup(): void;
}

function needed(path: string): string {
  try {
    return execFileSync("ldd", [path], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return "";
  }
}

/** Prepares the environment whip-client needs on this machine (see the header). */
export function prepareWhipEnv(): WhipEnv {
  const bin = which("whip-client");
  if (!bin)
    throw new Error(
      "whip-client is not installed: run `npm run setup:system` (it installs simple-whip-client)",
    );
  const nice = "/usr/lib/x86_64-linux-gnu/libnice.so.10";
  const clash = needed(bin).includes("libsoup-2.4") && needed(nice).includes("libsoup-3");
  if (!clash) return { env: {}, stubbed: false, cleanup() {} };
  const cc = which("cc") ?? which("gcc");
  if (!cc) throw new Error("whip-client needs a libgupnp-igd stand-in and no C compiler is installed (gcc)");
  const dir = mkdtempSync(join(tmpdir(), "gr-whip-"));
  writeFileSync(join(dir, "stub.c"), GUPNP_IGD_STUB);
  execFileSync(cc, [
    ...["-shared", "-fPIC", "-nostdlib", "-O2", "-Wl,-soname,libgupnp-igd-1.0.so.4"],
    ...["-o", join(dir, "libgupnp-igd-1.0.so.4"), join(dir, "stub.c")],
  ]);
  return {
    env: { LD_LIBRARY_PATH: dir },
    stubbed: true,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface WhipRun {
  child: ChildProcess;
  lines: string[];
  /** Resolves with the resource URL (from the client's log) once the edge answered 201. */
  resource: Promise<string>;
  /** Resolves once the client has printed the answer and applies it. */
  answered: Promise<void>;
  /** Resolves when the client logs "PeerConnection connected". */
  connected: Promise<void>;
  /** Settles when the process has exited. */
  exited: Promise<number | null>;
  /** The SDP answer as the client printed it. */
  answer(): string;
  /** SIGINT: the client sends DELETE to the resource and exits. */
  stop(): Promise<number | null>;
}

export interface WhipOptions {
  netns: string;
  url: string;
  token: string;
  audio?: string;
  video?: string;
  env: Record<string, string>;
  /** -n: candidates in the offer instead of trickled by PATCH. */
  noTrickle?: boolean;
  /** Hard limit on the client's life; it is killed after this. */
  maxMs: number;
}

export function runWhipClient(o: WhipOptions): WhipRun {
  const args = ["netns", "exec", o.netns, "env", ...Object.entries(o.env).map(([k, v]) => `${k}=${v}`)];
  args.push("whip-client", "-u", o.url, "-t", o.token, "-o", "-l", "5");
  if (o.noTrickle) args.push("-n");
  if (o.audio) args.push("-A", o.audio);
  if (o.video) args.push("-V", o.video);
  const child = spawn("ip", args, { stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: { test: (l: string) => boolean; done: (l: string) => void }[] = [];
  const onLine = (l: string): void => {
    lines.push(l);
    for (let i = waiters.length - 1; i >= 0; i--) {
      if (waiters[i]!.test(l)) waiters.splice(i, 1)[0]!.done(l);
    }
  };
  createInterface({ input: child.stdout! }).on("line", onLine);
  createInterface({ input: child.stderr! }).on("line", onLine);
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const kill = setTimeout(() => child.kill("SIGKILL"), o.maxMs);
  void exited.then(() => clearTimeout(kill));
  const waitLine = (test: (l: string) => boolean, what: string): Promise<string> => {
    const p = new Promise<string>((res, rej) => {
      const seen = lines.find(test);
      if (seen !== undefined) return res(seen);
      waiters.push({ test, done: res });
      void exited.then((code) =>
        rej(new Error(`whip-client exited (${code}) before ${what}:\n${lines.slice(-40).join("\n")}`)),
      );
    });
    p.catch(() => {}); // awaited by the test when it matters
    return p;
  };
  return {
    child,
    lines,
    resource: waitLine((l) => l.includes("Resource URL:"), "the 201").then((l) =>
      l.slice(l.indexOf("Resource URL:") + 13).trim(),
    ),
    answered: waitLine((l) => l.includes("Setting remote description"), "the answer").then(() => {}),
    connected: waitLine((l) => l.includes("PeerConnection connected"), "connecting").then(() => {}),
    exited,
    answer() {
      const start = lines.findIndex((l) => l.includes("Received SDP answer"));
      if (start < 0) return "";
      const out: string[] = [];
      for (const l of lines.slice(start + 1)) {
        if (l.trim() === "" && out.length > 0) break;
        if (/^[a-z]=/.test(l)) out.push(l);
      }
      return out.join("\r\n");
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGINT");
      return exited;
    },
  };
}
