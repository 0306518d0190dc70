// Prometheus text exposition format 0.0.4 (and the OpenMetrics subset our exporters emit), parsed
// without throwing: a malformed line is skipped and reported with its line number and a reason, so
// one bad exporter line never hides the rest of a scrape. Pure: no I/O, no clocks.

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  /** Full sample name as written (`x_bucket`, `x_sum`, `x_total`, ...). */
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch when the exporter gave one. */
  timestamp?: number;
}

export interface ParseIssue {
  line: number;
  reason: string;
}

export interface Exposition {
  samples: Sample[];
  /** Family name → declared type (from `# TYPE`). */
  types: Map<string, MetricType>;
  /** Family name → help text (from `# HELP`, unescaped). */
  help: Map<string, string>;
  issues: ParseIssue[];
}

const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);
const NAME_START = /[a-zA-Z_:]/;
const NAME_CHAR = /[a-zA-Z0-9_:]/;
const LABEL_START = /[a-zA-Z_]/;
const LABEL_CHAR = /[a-zA-Z0-9_]/;

/** Parses a float the way Go's strconv.ParseFloat does for exposition values. */
export function parseValue(text: string): number | null {
  switch (text.toLowerCase()) {
    case "nan":
      return Number.NaN;
    case "+inf":
    case "inf":
      return Number.POSITIVE_INFINITY;
    case "-inf":
      return Number.NEGATIVE_INFINITY;
  }
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return null;
  return Number(text);
}

function unescapeHelp(s: string): string {
  return s.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"));
}

interface Cursor {
  s: string;
  i: number;
}

function skipSpace(c: Cursor): void {
  while (c.i < c.s.length && (c.s[c.i] === " " || c.s[c.i] === "\t")) c.i++;
}

function readName(c: Cursor, start: RegExp, rest: RegExp): string {
  const from = c.i;
  if (c.i < c.s.length && start.test(c.s[c.i]!)) {
    c.i++;
    while (c.i < c.s.length && rest.test(c.s[c.i]!)) c.i++;
  }
  return c.s.slice(from, c.i);
}

/** Reads `{a="x",b="y"}` at the cursor; returns an error reason or the labels. */
function readLabels(c: Cursor, into: Record<string, string>): string | null {
  c.i++; // '{'
  for (;;) {
    skipSpace(c);
    if (c.s[c.i] === "}") {
      c.i++;
      return null;
    }
    const name = readName(c, LABEL_START, LABEL_CHAR);
    if (name === "") return "bad label name";
    skipSpace(c);
    if (c.s[c.i] !== "=") return `expected '=' after label ${name}`;
    c.i++;
    skipSpace(c);
    if (c.s[c.i] !== '"') return `expected '"' for label ${name}`;
    c.i++;
    let value = "";
    let closed = false;
    while (c.i < c.s.length) {
      const ch = c.s[c.i++]!;
      if (ch === '"') {
        closed = true;
        break;
      }
      if (ch === "\\") {
        const next = c.s[c.i++];
        if (next === "n") value += "\n";
        else if (next === "\\" || next === '"') value += next;
        else return `bad escape in label ${name}`;
      } else value += ch;
    }
    if (!closed) return `unterminated value for label ${name}`;
    if (Object.hasOwn(into, name)) return `duplicate label ${name}`;
    into[name] = value;
    skipSpace(c);
    if (c.s[c.i] === ",") c.i++;
    else if (c.s[c.i] !== "}") return "expected ',' or '}'";
  }
}

function parseSampleLine(line: string): Sample | string {
  const c: Cursor = { s: line, i: 0 };
  const name = readName(c, NAME_START, NAME_CHAR);
  if (name === "") return "bad metric name";
  const labels: Record<string, string> = {};
  skipSpace(c);
  if (c.s[c.i] === "{") {
    const err = readLabels(c, labels);
    if (err !== null) return err;
  }
  let tail = line.slice(c.i);
  // OpenMetrics exemplar (`value [ts] # {trace_id="..."} 1.0`): not needed here, ignored.
  const hash = tail.indexOf("#");
  if (hash >= 0) tail = tail.slice(0, hash);
  const rest = tail.trim().split(/[ \t]+/);
  if (rest.length === 0 || rest[0] === "") return "missing value";
  if (rest.length > 2) return "trailing characters";
  const value = parseValue(rest[0]!);
  if (value === null) return `bad value ${JSON.stringify(rest[0]!.slice(0, 32))}`;
  const sample: Sample = { name, labels, value };
  if (rest[1] !== undefined) {
    const ts = Number(rest[1]);
    if (!/^-?\d+(\.\d+)?$/.test(rest[1]) || !Number.isFinite(ts)) return "bad timestamp";
    sample.timestamp = ts;
  }
  return sample;
}

/** Parses a whole scrape body. Never throws on any input. */
export function parseExposition(text: string): Exposition {
  const out: Exposition = { samples: [], types: new Map(), help: new Map(), issues: [] };
  const lines = text.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.endsWith("\r") ? lines[n]!.slice(0, -1) : lines[n]!;
    if (line.trim() === "") continue;
    if (line[0] === "#") {
      const m = /^#[ \t]+(HELP|TYPE|EOF)(?:[ \t]+([^ \t]+))?(?:[ \t]+(.*))?$/.exec(line);
      if (m === null) continue; // an ordinary comment
      if (m[1] === "EOF") break;
      const family = m[2];
      if (family === undefined) {
        out.issues.push({ line: n + 1, reason: `# ${m[1]} without a metric name` });
        continue;
      }
      if (m[1] === "HELP") out.help.set(family, unescapeHelp(m[3] ?? ""));
      else {
        const t = (m[3] ?? "").trim() as MetricType;
        if (TYPES.has(t)) out.types.set(family, t);
        else out.issues.push({ line: n + 1, reason: `unknown type ${JSON.stringify(t.slice(0, 32))}` });
      }
      continue;
    }
    const r = parseSampleLine(line);
    if (typeof r === "string") out.issues.push({ line: n + 1, reason: r });
    else out.samples.push(r);
  }
  return out;
}

/**
 * The family a sample belongs to and whether it only ever grows (counter, histogram bucket, count
 * or sum): decided by `# TYPE`, falling back on the naming conventions for untyped exporters.
 */
export function sampleKind(
  name: string,
  types: ReadonlyMap<string, MetricType>,
): { family: string; monotonic: boolean } {
  const direct = types.get(name);
  if (direct !== undefined) return { family: name, monotonic: direct === "counter" };
  for (const suffix of ["_bucket", "_count", "_sum"]) {
    if (!name.endsWith(suffix)) continue;
    const family = name.slice(0, -suffix.length);
    const t = types.get(family);
    if (t === "histogram") return { family, monotonic: true };
    if (t === "summary") return { family, monotonic: suffix !== "_bucket" };
  }
  if (name.endsWith("_total")) {
    const family = name.slice(0, -"_total".length);
    if (types.get(family) === "counter") return { family, monotonic: true };
    return { family: name, monotonic: true };
  }
  return { family: name, monotonic: /_(bucket|count|sum)$/.test(name) };
}
