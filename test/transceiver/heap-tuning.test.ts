// tuneHeapGrowing (regional/transceiver/heap-tuning.ts) changes how far V8 lets the old generation
// grow past its live size, set at run time as the transceiver sets it: a child process keeps
// 60 MB live, collects three times, and V8's own trace (--trace-gc-nvp) gives the old generation's limit
// after that mark-compact, with two factors set.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tuneHeapGrowing } from "../../regional/transceiver/heap-tuning.ts";

const module = fileURLToPath(new URL("../../regional/transceiver/heap-tuning.ts", import.meta.url));

/** old_gen_allocation_limit / live size after the third full collection with 60 MB live. */
function limitOverLive(percent: number): number {
  const script = `
    const { tuneHeapGrowing } = await import(${JSON.stringify(module)});
    globalThis.keep = Array.from({ length: 40 }, () => Array.from({ length: 1 << 15 }, (_, i) => ({ i })));
    tuneHeapGrowing(${percent});
    // The first collection sizes the heap from its start-up limits; the ones after from the factor.
    for (let i = 0; i < 3; i++) globalThis.gc();
  `;
  const out = execFileSync(
    process.execPath,
    ["--expose-gc", "--trace-gc-nvp", "--input-type=module", "-e", script],
    {
      encoding: "utf8",
    },
  );
  const last = out
    .split("\n")
    .filter((l) => l.includes('"gc":"mc"'))
    .at(-1);
  if (last === undefined) throw new Error(`no mark-compact in the trace:\n${out.slice(0, 2000)}`);
  const gc = JSON.parse(last.slice(last.indexOf("{"))) as {
    old_gen_allocation_limit: number;
    end_object_size: number;
  };
  return gc.old_gen_allocation_limit / gc.end_object_size;
}

describe("tuneHeapGrowing", () => {
  it("lets the old generation grow to the factor times the live size, set at run time", () => {
    // Measured: 1.78 and 4.28-4.55 (the limit also counts what V8 adds for the young generation).
    expect(limitOverLive(50)).toBeLessThan(2.5); // 1 + 50/100 = 1.5x the old generation
    expect(limitOverLive(300)).toBeGreaterThan(3.5); // 1 + 300/100 = 4x
  });

  it("refuses what is not a percent in 0..1000", () => {
    for (const bad of [-1, 1001, 1.5, Number.NaN]) expect(() => tuneHeapGrowing(bad)).toThrow(RangeError);
  });
});
