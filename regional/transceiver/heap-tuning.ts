// V8 sets the old generation's limit at about 1.5-1.7x the live heap after each mark-compact, and
// starts marking again as soon as the room left is below what a scavenge may promote (the young
// generation's capacity, 32 MB here). A transceiver's live heap (50-60 MB at 150 sessions) leaves
// less than that: one full mark-compact every second whatever the allocation rate, pauses of
// 10-25 ms (the event-loop delay's p99) and a fifth of the process's CPU in marking, measured
// (docs/performance.md, "Ninth run"). A larger growing factor leaves the room; the heap then
// grows to at most that factor times the live size before a mark-compact.
import { setFlagsFromString } from "node:v8";

/** V8's heap growing percent set for this process (0: V8's own factor), the last call's. */
let applied = 0;

/**
 * Sets V8's heap growing factor to 1 + percent/100 for this process (V8 reads it each time it
 * sizes the heap, so it holds from the next collection on). 0 leaves V8's own, dynamic factor.
 */
export function tuneHeapGrowing(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0 || percent > 1000) {
    throw new RangeError(`heap growing percent must be an integer in 0..1000, got ${percent}`);
  }
  if (percent === applied) return;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  applied = percent;
}
