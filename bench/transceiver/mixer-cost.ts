// `node bench/transceiver/mixer-cost.ts`: what the conference mixer costs on this machine. Per
// 20 ms frame: Opus decode, Opus PLC, Opus encode, PCMU decode (+ 8k->48k), PCMU encode (48k->8k +
// G.711); then whole MixEngine ticks (real Opus) for a listener hearing N Opus sources, as ms of
// CPU per tick and as a fraction of one core per listener (50 ticks/s). Single-threaded, no IO.
// Env: BENCH_FRAMES (2000 per measurement).
import { AudioCodec } from "../../regional/transceiver/backend-protocol.ts";
import { MIX_FRAME_SAMPLES } from "../../regional/transceiver/core/mix/codecs.ts";
import { MixEngine } from "../../regional/transceiver/core/mix/engine.ts";
import { muLawEncodeInto } from "../../regional/transceiver/core/mix/g711.ts";
import { MixCodecs } from "../../regional/transceiver/shell/opus-codecs.ts";
import { toneFrame } from "../../test/support/tone.ts";

const FRAMES = Number(process.env.BENCH_FRAMES ?? 2000);

function time(label: string, n: number, f: (i: number) => void): number {
  for (let i = 0; i < Math.min(200, n); i++) f(i); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f(i);
  const ms = (performance.now() - t0) / n;
  console.log(`${label.padEnd(42)} ${ms.toFixed(3)} ms/frame`);
  return ms;
}

const pcm = Array.from({ length: 50 }, (_, k) => toneFrame(440 + k, 48000, k * 960, 960, 6000));
const enc = new MixCodecs(AudioCodec.opus);
const packets = pcm.map((p) => {
  const out = new Uint8Array(1500);
  return out.slice(0, enc.encode(p, out));
});
const dec = new MixCodecs(AudioCodec.opus);
const out48 = new Int16Array(5760);
const scratch = new Uint8Array(1500);
time("opus encode (mono 48k VOIP, 20 ms)", FRAMES, (i) => enc.encode(pcm[i % 50]!, scratch));
time("opus decode", FRAMES, (i) => dec.decode(1, 1, packets[i % 50]!, packets[i % 50]!.length, out48));
time("opus PLC (decode null)", FRAMES, () => dec.decode(1, 1, null, 0, out48));
const mu = new Uint8Array(160);
muLawEncodeInto(toneFrame(440, 8000, 0, 160), mu);
time("pcmu decode + 8k->48k", FRAMES, () => dec.decode(2, 2, mu, 160, out48));
const pcmuOut = new MixCodecs(AudioCodec.pcmu);
time("48k->8k + pcmu encode", FRAMES, (i) => pcmuOut.encode(pcm[i % 50]!, scratch));

for (const n of [1, 2, 4, 7]) {
  const codecs = new MixCodecs(AudioCodec.opus);
  const engine = new MixEngine({ outCodec: AudioCodec.opus, codecs });
  const h = { codec: 1, flags: 0, sequenceNumber: 0, timestamp: 0 };
  let t = 0;
  const ms = time(`engine tick, ${n} opus source(s) -> opus`, FRAMES, (i) => {
    for (let s = 0; s < n; s++) {
      h.sequenceNumber = i & 0xffff;
      h.timestamp = (i * MIX_FRAME_SAMPLES) >>> 0;
      const p = packets[(i + s) % 50]!;
      engine.push(s + 1, h, p, t);
    }
    t += 20;
    engine.tick(t);
  });
  console.log(`${"".padEnd(42)} = ${((ms / 20) * 100).toFixed(2)} % of one core per listener`);
  codecs.close();
}
