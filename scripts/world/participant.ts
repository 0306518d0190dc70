// A conference participant's client process (conference-client.ts) inside a site's namespace,
// driven by stdin lines, its JSON events read from stdout (the world runner's `participant`).
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { ROOT } from "./components.ts";
import type { CallEvent } from "./runner.ts";

/** A conference participant's client process (conference-client.ts), driven by stdin lines. */
export interface ParticipantClient {
  /** The next event of this name (an error event or the process's exit rejects). */
  next(event: string, ms: number): Promise<CallEvent>;
  send(line: string): void;
  exited: Promise<number | null>;
}

export function spawnParticipant(
  ns: string,
  siteName: string,
  cfg: Record<string, unknown>,
  clients: Set<ChildProcess>,
): ParticipantClient {
  const child = spawn(
    "ip",
    ["netns", "exec", ns, process.execPath, join(ROOT, "scripts/world/conference-client.ts")],
    { env: { ...process.env, WORLD_CLIENT: JSON.stringify(cfg) }, stdio: ["pipe", "pipe", "pipe"] },
  );
  clients.add(child);
  child.stdin!.on("error", () => {}); // a client that already exited
  const seen: CallEvent[] = [];
  const tail: string[] = [];
  let wake = (): void => {};
  createInterface({ input: child.stderr! }).on("line", (l) => {
    tail.push(l);
    if (tail.length > 20) tail.shift();
  });
  createInterface({ input: child.stdout! }).on("line", (l) => {
    try {
      const e = JSON.parse(l) as CallEvent;
      if (typeof e.event === "string") seen.push(e);
    } catch {}
    wake();
  });
  let code: number | null | undefined;
  const exited = new Promise<number | null>((r) =>
    child.once("exit", (c) => {
      clients.delete(child);
      code = c;
      wake();
      r(c);
    }),
  );
  const who = `participant at ${siteName}`;
  return {
    exited,
    send: (line) => void child.stdin!.write(`${line}\n`),
    async next(event, ms) {
      const end = Date.now() + ms;
      for (;;) {
        const i = seen.findIndex((e) => e.event === event || e.event === "error");
        if (i >= 0) {
          const e = seen.splice(i, 1)[0]!;
          if (e.event === "error") throw new Error(`${who}: ${JSON.stringify(e)}\n${tail.join("\n")}`);
          return e;
        }
        if (code !== undefined) throw new Error(`${who} exited ${code}\n${tail.join("\n")}`);
        if (Date.now() > end) throw new Error(`${who}: no ${event} in ${ms} ms`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 200);
        });
      }
    },
  };
}
