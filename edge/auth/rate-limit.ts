// Rate limits per credential and per client address. In production the Workers Rate Limiting
// binding counts (per Cloudflare location, eventually consistent, cheap); where no binding is
// configured the edge falls back to an isolate-local fixed window (MemoryLimiter), which is exact
// for one isolate and is what plain local runs without bindings use.
import type { RateLimitBinding } from "../platform.ts";

export interface Limiter {
  limit(key: string, nowMs: number): Promise<{ ok: boolean; retryAfterS: number }>;
}

/** The binding does not say when the window ends; its period is the honest upper bound. */
export function bindingLimiter(binding: RateLimitBinding, periodS: number): Limiter {
  return {
    async limit(key) {
      const r = await binding.limit({ key });
      return { ok: r.success, retryAfterS: periodS };
    },
  };
}

/** Fixed window, bounded memory: the table is cleared when the window rolls over. */
export class MemoryLimiter implements Limiter {
  readonly #limit: number;
  readonly #periodMs: number;
  readonly #maxKeys: number;
  #window = -1;
  readonly #counts = new Map<string, number>();
  constructor(limit: number, periodS: number, maxKeys = 50_000) {
    this.#limit = limit;
    this.#periodMs = periodS * 1000;
    this.#maxKeys = maxKeys;
  }
  async limit(key: string, nowMs: number): Promise<{ ok: boolean; retryAfterS: number }> {
    const w = Math.floor(nowMs / this.#periodMs);
    if (w !== this.#window) {
      this.#window = w;
      this.#counts.clear();
    }
    const retryAfterS = Math.max(1, Math.ceil(((w + 1) * this.#periodMs - nowMs) / 1000));
    const n = (this.#counts.get(key) ?? 0) + 1;
    if (n > this.#limit) return { ok: false, retryAfterS };
    if (this.#counts.size < this.#maxKeys || this.#counts.has(key)) this.#counts.set(key, n);
    return { ok: true, retryAfterS };
  }
}
