// The conference scenario's figures, pure: each client sends its tone in bursts (TONE_ON_MS of
// every TONE_PERIOD_MS, wall-clock send time of each burst's first frame recorded) and records
// the level of the other's tone in every frame it receives (Goertzel on the decoded 20 ms). A
// burst's onset at the receiver, matched to the latest onset sent before it, gives one one-way
// delay sample: mouth to ear minus capture and playout (it includes the mixers' jitter buffers
// and the 20 ms frame). Both clients run on one host, so their wall clocks are the same clock.

export const TONE_PERIOD_MS = 1_000;
export const TONE_ON_MS = 400;
/** Tones are sent at amplitude 8000; a frame holding the far tone reads about that (Goertzel). */
export const TONE_AMPLITUDE = 8_000;
export const HEARD_LEVEL = 1_500;
/** An onset needs this many frames below the level before it (a burst is 20 frames, a gap 30). */
const QUIET_FRAMES = 5;

/** One 20 ms frame of `freq` or of silence, by where `atMs` falls in the burst pattern. */
export const toneOn = (atMs: number, originMs: number): boolean =>
  (((atMs - originMs) % TONE_PERIOD_MS) + TONE_PERIOD_MS) % TONE_PERIOD_MS < TONE_ON_MS;

/** The amplitude of `freq` in `samples` (Goertzel, one DFT bin). */
export function goertzel(samples: ArrayLike<number>, freq: number, rate: number, n = samples.length): number {
  if (n <= 0) return 0;
  const coeff = 2 * Math.cos((2 * Math.PI * freq) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < n; i++) {
    const s0 = samples[i]! + coeff * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (2 * Math.sqrt(Math.max(0, s1 * s1 + s2 * s2 - coeff * s1 * s2))) / n;
}

/** Arrival times of the frames where the level rises to HEARD_LEVEL after QUIET_FRAMES below it. */
export function onsets(times: readonly number[], levels: readonly number[]): number[] {
  const out: number[] = [];
  let quiet = 0;
  for (let i = 0; i < levels.length; i++) {
    if (levels[i]! >= HEARD_LEVEL) {
      if (quiet >= QUIET_FRAMES) out.push(times[i]!);
      quiet = 0;
    } else quiet++;
  }
  return out;
}

/**
 * Each burst sent against the first onset heard within one period after it: one sample per burst
 * at most (a burst a loss splits in two at the receiver still counts once).
 */
export function delaySamples(sent: readonly number[], received: readonly number[]): number[] {
  const r = [...received].sort((a, b) => a - b);
  const out: number[] = [];
  for (const s of sent) {
    const first = r.find((t) => t >= s);
    if (first !== undefined && first - s < TONE_PERIOD_MS) out.push(first - s);
  }
  return out;
}

export const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export interface StreamRepair {
  received: number;
  lost: number;
  repaired: number;
  duplicates: number;
}

/** Share of a stream's frames never received (nor repaired), %. */
export const lossPct = (r: StreamRepair | undefined): number | null =>
  r === undefined || r.received + r.lost === 0
    ? null
    : Math.round((10_000 * r.lost) / (r.received + r.lost)) / 100;

export interface DirectionReport {
  /** Whose tone, heard by whom. */
  from: string;
  to: string;
  freq: number;
  /** Bursts sent while both were connected, and onsets heard of them. */
  bursts: number;
  heard: number;
  oneWayMs: number | null;
  /** What the emulated links add up to one way (access, POP backbone, inter-cluster). */
  expectedOneWayMs: number;
  /** The far end's conference receiver of this stream (the hub for the joiner's, the leg for the owner's). */
  repair: StreamRepair | null;
  lossPct: number | null;
}

/** One direction's figures from the sender's onsets and the receiver's frame levels. */
export function direction(
  from: string,
  to: string,
  freq: number,
  sent: readonly number[],
  window: { fromMs: number; toMs: number },
  rx: { times: readonly number[]; levels: readonly number[] },
  expectedOneWayMs: number,
  repair: StreamRepair | undefined,
): DirectionReport {
  const inWindow = sent.filter((t) => t >= window.fromMs && t <= window.toMs);
  const heardAt = onsets(rx.times, rx.levels).filter((t) => t >= window.fromMs);
  const samples = delaySamples(inWindow, heardAt);
  const m = median(samples);
  return {
    from,
    to,
    freq,
    bursts: inWindow.length,
    heard: samples.length,
    oneWayMs: m === null ? null : Math.round(m * 10) / 10,
    expectedOneWayMs: Math.round(expectedOneWayMs * 10) / 10,
    repair: repair ?? null,
    lossPct: lossPct(repair),
  };
}

export interface ConferencePass {
  nack: boolean;
  owner: { site: string; cluster: string | null };
  joiner: { site: string; cluster: string | null; joinMs: number | null };
  /** The joiner's leg-hub round trip as the hub measured it (participant record `rttMs`). */
  hubRttMs: number | null;
  /** The emulated inter-cluster backbone RTT. */
  backboneRttMs: number | null;
  directions: DirectionReport[];
  error?: string;
  /** The first attempt's error, when these figures are the second attempt's. */
  retried?: string;
}

export interface ConferenceReport {
  backboneLossPct: number | null;
  passes: ConferencePass[];
}

/** One pass as one line of the run's summary. */
export function conferenceLine(p: ConferencePass): string {
  const d = p.directions
    .map(
      (x) =>
        `${x.from}->${x.to} ${x.oneWayMs ?? "-"} ms (exp ${x.expectedOneWayMs}), heard ${x.heard}/${x.bursts}, loss ${x.lossPct ?? "-"}% repaired ${x.repair?.repaired ?? "-"}`,
    )
    .join("; ");
  return `${p.retried ? "(retried) " : ""}owner ${p.owner.site}@${p.owner.cluster}, joiner ${p.joiner.site}@${p.joiner.cluster} joined in ${p.joiner.joinMs} ms, hub rtt ${p.hubRttMs ?? "-"} ms (backbone ${p.backboneRttMs ?? "-"}); ${d}`;
}
