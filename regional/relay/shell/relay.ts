// A whole relay: N workers (threads, or in this thread for tests), the admin server, drain and stop.
import type { Server } from "node:http";
import type { Logger } from "../../common/log.ts";
import { chooseIoMode } from "../../common/native/index.ts";
import type { RelayConfig } from "../config.ts";
import { startAdmin } from "./admin.ts";
import { InProcessHandle, ThreadHandle, type WorkerHandle } from "./handles.ts";
import { RelayWorker, type WorkerAddresses } from "./worker.ts";

export interface RelayOptions {
  /** Run workers 1..N-1 as worker threads (the program) or all in this thread (tests). */
  threads: boolean;
  log: Logger;
}

export class Relay {
  readonly cfg: RelayConfig;
  readonly handles: WorkerHandle[] = [];
  admin: Server | null = null;
  #draining = false;
  #stopped = false;
  readonly #log: Logger;
  readonly #threads: boolean;

  private constructor(cfg: RelayConfig, o: RelayOptions) {
    this.cfg = cfg;
    this.#log = o.log;
    this.#threads = o.threads;
  }

  static async start(cfg: RelayConfig, o: RelayOptions): Promise<Relay> {
    const r = new Relay(cfg, o);
    // Once per relay, before any socket: a forced GR_RELAY_IO=batch without the addon stops here.
    const io = chooseIoMode(process.env.GR_RELAY_IO);
    if (io.mode === "batch")
      o.log.info("datagram io: batched (recvmmsg/sendmmsg)", { io: io.mode, reason: io.reason });
    else o.log.warn("datagram io: dgram (one syscall per datagram)", { io: io.mode, reason: io.reason });
    try {
      for (let i = 0; i < cfg.workers; i++) r.handles.push(await r.#startWorker(i));
      r.admin = await startAdmin(
        {
          role: cfg.role,
          id: cfg.id,
          handles: () => r.handles,
          draining: () => r.#draining,
          ready: () => !r.#stopped,
        },
        cfg.adminHost,
        cfg.adminPort,
      );
    } catch (e) {
      await r.stop();
      throw e;
    }
    return r;
  }

  async #startWorker(i: number): Promise<WorkerHandle> {
    if (!this.#threads)
      return new InProcessHandle(i, await RelayWorker.start(this.cfg, this.#log.child({ worker: i })));
    const h = await ThreadHandle.start(i, this.cfg, this.#log);
    h.onUnexpectedExit = (code) => {
      if (this.#stopped) return;
      this.#log.error("relay worker exited; restarting", { worker: i, code });
      setTimeout(() => {
        if (this.#stopped) return;
        this.#startWorker(i).then(
          (nh) => {
            this.handles[i] = nh;
            if (this.#draining) nh.drain();
          },
          (e: Error) => this.#log.error("relay worker restart failed", { worker: i, error: e.message }),
        );
      }, 1_000);
    };
    return h;
  }

  get addresses(): WorkerAddresses & { admin: string } {
    const a = this.admin?.address();
    const admin = a && typeof a === "object" ? `${a.address}:${a.port}` : "";
    return { ...(this.handles[0]?.addresses ?? { backbone: "" }), admin };
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Stops taking new flows; resolves when no flow is left or after `drainMs`. */
  async drain(): Promise<void> {
    this.#draining = true;
    for (const h of this.handles) h.drain();
    const end = Date.now() + this.cfg.drainMs;
    while (Date.now() < end && !this.#stopped) {
      const counts = await Promise.all(
        this.handles.map((h) =>
          h.flows().then(
            (f) => f.active,
            () => 0,
          ),
        ),
      );
      if (counts.every((c) => c === 0)) return;
      await new Promise((r) => setTimeout(r, Math.min(250, Math.max(1, end - Date.now()))));
    }
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await Promise.all(this.handles.map((h) => h.stop().catch(() => {})));
    const admin = this.admin;
    if (admin) await new Promise<void>((r) => admin.close(() => r()));
  }
}
