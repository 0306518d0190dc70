// A relay worker as the control plane sees it, in this thread or in a worker thread: the admin
// server and the signal handling talk to either through the same small interface.
import { Worker } from "node:worker_threads";
import type { Logger } from "../../common/log.ts";
import type { RelayConfig } from "../config.ts";
import type { FlowsReply, RelayWorker, WorkerAddresses } from "./worker.ts";

export interface WorkerHandle {
  readonly index: number;
  readonly addresses: WorkerAddresses;
  metrics(): Promise<string>;
  flows(client?: string): Promise<FlowsReply>;
  drain(): void;
  stop(): Promise<void>;
}

export class InProcessHandle implements WorkerHandle {
  readonly index: number;
  readonly worker: RelayWorker;
  constructor(index: number, worker: RelayWorker) {
    this.index = index;
    this.worker = worker;
  }
  get addresses(): WorkerAddresses {
    return this.worker.addresses;
  }
  async metrics(): Promise<string> {
    return this.worker.metricsText();
  }
  async flows(client?: string): Promise<FlowsReply> {
    return this.worker.flows(client);
  }
  drain(): void {
    this.worker.drain();
  }
  stop(): Promise<void> {
    return this.worker.close();
  }
}

type FromWorker =
  | { op: "ready"; addresses: WorkerAddresses }
  | { op: "reply"; id: number; value: unknown }
  | { op: "fatal"; message: string };

const REPLY_TIMEOUT_MS = 2_000;

/** A worker thread running thread-entry.ts. */
export class ThreadHandle implements WorkerHandle {
  readonly index: number;
  addresses: WorkerAddresses = { backbone: "" };
  readonly #thread: Worker;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #nextId = 1;
  #stopping = false;
  /** Called when the thread ends without being asked to. */
  onUnexpectedExit: ((code: number) => void) | null = null;

  private constructor(index: number, thread: Worker) {
    this.index = index;
    this.#thread = thread;
  }

  static start(index: number, cfg: RelayConfig, log: Logger): Promise<ThreadHandle> {
    const thread = new Worker(new URL("./thread-entry.ts", import.meta.url), { workerData: { cfg, index } });
    const h = new ThreadHandle(index, thread);
    return new Promise((resolve, reject) => {
      let ready = false;
      thread.on("message", (m: FromWorker) => {
        if (m.op === "ready") {
          ready = true;
          h.addresses = m.addresses;
          resolve(h);
        } else if (m.op === "reply") {
          const p = h.#pending.get(m.id);
          h.#pending.delete(m.id);
          p?.resolve(m.value);
        } else if (m.op === "fatal") {
          log.error("relay worker failed", { worker: index, error: m.message });
          if (!ready) reject(new Error(m.message));
        }
      });
      thread.on("error", (e) => {
        log.error("relay worker crashed", { worker: index, error: e });
        if (!ready) reject(e);
      });
      thread.on("exit", (code) => {
        for (const p of h.#pending.values()) p.reject(new Error("worker exited"));
        h.#pending.clear();
        if (!ready) reject(new Error(`worker ${index} exited with ${code} before it was ready`));
        else if (!h.#stopping) h.onUnexpectedExit?.(code);
      });
    });
  }

  #ask<T>(msg: Record<string, unknown>): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`worker ${this.index} did not answer`));
      }, REPLY_TIMEOUT_MS);
      this.#pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.#thread.postMessage({ ...msg, id });
    });
  }

  metrics(): Promise<string> {
    return this.#ask<string>({ op: "metrics" });
  }
  flows(client?: string): Promise<FlowsReply> {
    return this.#ask<FlowsReply>({ op: "flows", client });
  }
  drain(): void {
    this.#thread.postMessage({ op: "drain" });
  }
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    try {
      await this.#ask({ op: "stop" });
    } catch {
      // Not answering: terminate below.
    }
    await this.#thread.terminate();
  }
}
