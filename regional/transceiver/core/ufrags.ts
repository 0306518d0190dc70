// The local ice-ufrags a session answers to (pure): the current one, and after an ICE restart the
// old ones for a grace period, so checks in flight on the old credentials still land.

export const OLD_UFRAG_GRACE_MS = 30_000;

export class UfragSet {
  readonly #all: { ufrag: string; retireAt: number }[] = [];

  /** The current ufrag; older ones retire `graceMs` after `now`. */
  use(ufrag: string, now: number, graceMs = OLD_UFRAG_GRACE_MS): void {
    for (const u of this.#all) u.retireAt = Math.min(u.retireAt, now + graceMs);
    this.#all.push({ ufrag, retireAt: Number.POSITIVE_INFINITY });
  }

  /** Removes and returns the ufrags whose grace ended by `now`. */
  retire(now: number): string[] {
    const out: string[] = [];
    for (let i = this.#all.length - 1; i >= 0; i--) {
      const u = this.#all[i]!;
      if (u.retireAt <= now) {
        out.push(u.ufrag);
        this.#all.splice(i, 1);
      }
    }
    return out;
  }

  /** Every ufrag still held. */
  get all(): string[] {
    return this.#all.map((u) => u.ufrag);
  }
}
