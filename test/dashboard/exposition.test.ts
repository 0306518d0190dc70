import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Registry } from "../../regional/common/metrics.ts";
import { parseExposition, parseValue, sampleKind } from "../../regional/dashboard/core/exposition.ts";

describe("Prometheus text parser", () => {
  it("reads back what the real Registry renders, label escapes included", () => {
    const reg = new Registry();
    reg.counter("gr_x_total", "a counter", ["reason"]).with({ reason: 'quote"back\\slash\nnl' }).inc(7);
    reg.gauge("gr_g", "a gauge").with().set(-2.5);
    const h = reg.histogram("gr_h_seconds", "a histogram", ["pop"], [0.01, 0.1, 1]).with({ pop: "1" });
    for (const v of [0.005, 0.05, 0.05, 0.5, 3]) h.observe(v);
    const e = parseExposition(reg.render());
    expect(e.issues).toEqual([]);
    expect(e.types.get("gr_x_total")).toBe("counter");
    expect(e.types.get("gr_h_seconds")).toBe("histogram");
    expect(e.help.get("gr_g")).toBe("a gauge");
    const by = (name: string) => e.samples.filter((s) => s.name === name);
    expect(by("gr_x_total")).toEqual([
      { name: "gr_x_total", labels: { reason: 'quote"back\\slash\nnl' }, value: 7 },
    ]);
    expect(by("gr_g")[0]!.value).toBe(-2.5);
    expect(by("gr_h_seconds_bucket").map((s) => [s.labels.le, s.labels.pop, s.value])).toEqual([
      ["0.01", "1", 1],
      ["0.1", "1", 3],
      ["1", "1", 4],
      ["+Inf", "1", 5],
    ]);
    expect(by("gr_h_seconds_count")[0]!.value).toBe(5);
    expect(by("gr_h_seconds_sum")[0]!.value).toBeCloseTo(3.605, 10);
  });

  it("accepts the format's optional parts: spacing, trailing comma, timestamps, special values, CRLF", () => {
    const text = [
      "# some comment",
      "# HELP a_total help with \\\\ and \\n escapes",
      "# TYPE a_total counter",
      'a_total{ x = "1" , y="2", } 3 1700000000000',
      "b NaN",
      "c +Inf\r",
      "d -Inf",
      "e 1.5e-3",
      "f\t42",
      'g_total 7 # {trace_id="abc"} 1.0 1700000000.1',
      "# TYPE h untyped",
      'h{x="a # not an exemplar"} 5',
      'i{x="a"} 6 # {span="x"} 2',
      "",
      "# EOF",
      "after_eof 1",
    ].join("\n");
    const e = parseExposition(text);
    expect(e.issues).toEqual([]);
    expect(e.help.get("a_total")).toBe("help with \\ and \n escapes");
    expect(e.samples[0]).toEqual({
      name: "a_total",
      labels: { x: "1", y: "2" },
      value: 3,
      timestamp: 1700000000000,
    });
    expect(e.samples.map((s) => s.name)).toEqual(["a_total", "b", "c", "d", "e", "f", "g_total", "h", "i"]);
    expect(e.samples.slice(6).map((s) => [s.labels.x ?? "", s.value])).toEqual([
      ["", 7],
      ["a # not an exemplar", 5],
      ["a", 6],
    ]);
    expect(Number.isNaN(e.samples[1]!.value)).toBe(true);
    expect(e.samples[2]!.value).toBe(Number.POSITIVE_INFINITY);
    expect(e.samples[3]!.value).toBe(Number.NEGATIVE_INFINITY);
    expect(e.samples[4]!.value).toBe(0.0015);
    expect(e.samples[5]!.value).toBe(42);
  });

  it("skips malformed lines with their line number and keeps the rest", () => {
    const text = [
      "good 1",
      "bad{x=1} 2",
      'bad{x="unterminated} 2',
      "bad_value abc",
      "bad_ts 1 notatime",
      'dup{x="1",x="2"} 1',
      "9starts_with_digit 1",
      "too many fields 1 2",
      "# TYPE weird flux",
      'esc{x="\\q"} 1',
      "no_value",
      "also_good 2",
    ].join("\n");
    const e = parseExposition(text);
    expect(e.samples.map((s) => s.name)).toEqual(["good", "also_good"]);
    expect(e.issues.map((i) => i.line)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(e.issues[0]!.reason).toMatch(/expected '"'/);
    expect(e.issues[3]!.reason).toMatch(/bad timestamp/);
    expect(e.issues[4]!.reason).toMatch(/duplicate label x/);
  });

  it("parses values like Go's ParseFloat and rejects the rest", () => {
    expect(parseValue("1")).toBe(1);
    expect(parseValue("-0.25")).toBe(-0.25);
    expect(parseValue(".5")).toBe(0.5);
    expect(parseValue("1E3")).toBe(1000);
    expect(parseValue("inf")).toBe(Number.POSITIVE_INFINITY);
    for (const bad of ["", "1,0", "0x10", "1e", "--1", "one"]) expect(parseValue(bad)).toBeNull();
  });

  it("knows which samples only grow", () => {
    const types = new Map([
      ["h", "histogram"],
      ["c_total", "counter"],
      ["g", "gauge"],
    ] as const);
    expect(sampleKind("h_bucket", types)).toEqual({ family: "h", monotonic: true });
    expect(sampleKind("h_sum", types)).toEqual({ family: "h", monotonic: true });
    expect(sampleKind("c_total", types)).toEqual({ family: "c_total", monotonic: true });
    expect(sampleKind("g", types)).toEqual({ family: "g", monotonic: false });
    expect(sampleKind("untyped_total", new Map()).monotonic).toBe(true);
    expect(sampleKind("untyped_level", new Map()).monotonic).toBe(false);
  });

  it("never throws, whatever the input (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (s) => {
        const e = parseExposition(s);
        expect(Array.isArray(e.samples)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    const alphabet = fc.constantFrom(...'a_{}=",\\ \n#1.+-eInfNaTYPEHELP'.split(""));
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 200 }), (chars) => {
        parseExposition(chars.join(""));
      }),
      { numRuns: 2000 },
    );
  });

  it("round-trips any label value through the Registry (property)", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.integer({ min: 0, max: 1e9 }), (label, n) => {
        const reg = new Registry();
        reg.counter("rt_total", "x", ["v"]).with({ v: label }).inc(n);
        const e = parseExposition(reg.render());
        expect(e.issues).toEqual([]);
        expect(e.samples).toEqual([{ name: "rt_total", labels: { v: label }, value: n }]);
      }),
      { numRuns: 500 },
    );
  });
});
