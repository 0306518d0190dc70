// Which transceivers each cluster's gateway has marked down and not yet up again, from the
// gateways' log lines ("transceiver down" / "transceiver up", info level). After transceivers
// restart, a call placed before the gateway's next /healthz poll (every 500 ms) finds no
// transceiver there: the gateway answers 503 and the edge, rightly, steers the call to the next
// cluster. A phase that means to exercise a given cluster waits for its gateway first. The
// world's gateways poll at the default interval.

import { DEFAULT_GATEWAY_POLL_MS } from "../../regional/gateway/config.ts";

export class GatewayWatch {
  /** "<gateway process name>/<transceiver id>" marked down and not up since. */
  readonly #down = new Set<string>();

  /** Every child's output line (the world's supervisor hands each one over). */
  line(name: string, line: string): void {
    if (!name.endsWith("-gateway")) return;
    const down = line.includes('"transceiver down"');
    if (!down && !line.includes('"transceiver up"')) return;
    let id: unknown;
    try {
      id = (JSON.parse(line) as { transceiverId?: unknown }).transceiverId;
    } catch {
      return;
    }
    const key = `${name}/${String(id)}`;
    if (down) this.#down.add(key);
    else this.#down.delete(key);
  }

  /**
   * Resolves once two of the gateways' polls have passed since now and no transceiver is marked
   * down: a gateway that noticed a restart has logged it by then, and logs "up" at its next poll
   * after the transceiver answers. Rejects after `timeoutMs`, naming who is still down.
   */
  async settled(timeoutMs = 15_000): Promise<void> {
    const start = Date.now();
    await new Promise((r) => setTimeout(r, 2 * DEFAULT_GATEWAY_POLL_MS + 200));
    while (this.#down.size > 0) {
      if (Date.now() - start > timeoutMs)
        throw new Error(`gateways still mark transceivers down: ${[...this.#down].join(", ")}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
