// Waiting in tests: on a condition or an event, never on a fixed sleep that decides the outcome.
// The bound only turns a hang into a failure that names what never happened; it is generous
// because a loaded 2-core machine runs many times slower than an idle one, and a passing test
// returns as soon as the condition holds. It is never a timing assertion (those live in bench/).

/** Upper bound of every wait unless a test needs longer. */
export const WAIT_MS = 20_000;

/** Options for `expect.poll` (its own default bound is 1 s: too short under load). */
export const POLL = { timeout: WAIT_MS, interval: 50 } as const;

/**
 * Polls `f` until it returns a truthy value, and returns that value. The error names `what` (and,
 * when `what` is a function, whatever it reports, e.g. the last value seen).
 */
export async function until<T>(
  f: () => T | Promise<T>,
  what: string | (() => string),
  timeoutMs = WAIT_MS,
  intervalMs = 25,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === "string" ? what : what()}`,
      );
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Polls `probe` until `pred` holds of its value; the error shows the last value. */
export async function waitFor<T>(
  probe: () => Promise<T>,
  pred: (v: T) => boolean,
  what: string,
  timeoutMs = WAIT_MS,
  intervalMs = 100,
): Promise<T> {
  let last: T | undefined;
  await until(
    async () => {
      last = await probe();
      return pred(last);
    },
    () => `${what}; last: ${JSON.stringify(last)}`,
    timeoutMs,
    intervalMs,
  );
  return last as T;
}
