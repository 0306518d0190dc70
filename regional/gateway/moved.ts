// Calls that live on another transceiver than the one their id names: resumed on a sibling after
// their transceiver failed (issue 18.3). Bounded; the oldest entry goes first. A gateway replica
// that does not know a move finds it by asking the live members (Gateway.findMoved).
export const MAX_MOVED = 100_000;

export class MovedCalls {
  readonly #where = new Map<string, number>();
  readonly #max: number;

  constructor(max = MAX_MOVED) {
    this.#max = max;
  }

  get size(): number {
    return this.#where.size;
  }

  get(callId: string): number | undefined {
    return this.#where.get(callId);
  }

  set(callId: string, transceiverId: number): void {
    this.#where.delete(callId);
    if (this.#where.size >= this.#max) {
      const oldest = this.#where.keys().next().value;
      if (oldest !== undefined) this.#where.delete(oldest);
    }
    this.#where.set(callId, transceiverId);
  }

  delete(callId: string): void {
    this.#where.delete(callId);
  }
}
