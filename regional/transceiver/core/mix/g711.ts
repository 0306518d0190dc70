// G.711 mu-law (PCMU), table based: decoding is one lookup, encoding one lookup on the top 14 bits
// of the sample (mu-law keeps 14 bits of magnitude, so dropping the 2 low bits loses nothing).
// Tables are built once at load (256 x i16 + 16384 x u8 = 16.9 KB).

const BIAS = 0x84;
const CLIP = 32635;

function encodeOne(sample: number): number {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  if (s > CLIP) s = CLIP;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function decodeOne(byte: number): number {
  const u = ~byte & 0xff;
  const exponent = (u >> 4) & 0x07;
  const mantissa = u & 0x0f;
  const magnitude = (((mantissa << 3) + BIAS) << exponent) - BIAS;
  return (u & 0x80) !== 0 ? -magnitude : magnitude;
}

const DECODE = new Int16Array(256);
for (let i = 0; i < 256; i++) DECODE[i] = decodeOne(i);

// Index: (sample >> 2) + 8192 for sample in [-32768, 32767].
const ENCODE = new Uint8Array(16384);
for (let i = 0; i < 16384; i++) ENCODE[i] = encodeOne((i - 8192) << 2);

export function muLawDecode(byte: number): number {
  return DECODE[byte & 0xff]!;
}

export function muLawEncode(sample: number): number {
  return ENCODE[(sample >> 2) + 8192]!;
}

/** Decodes n mu-law bytes into 8 kHz samples. */
export function muLawDecodeInto(src: Uint8Array, out: Int16Array, n = src.length): void {
  for (let i = 0; i < n; i++) out[i] = DECODE[src[i]!]!;
}

/** Encodes n 8 kHz samples into mu-law bytes. */
export function muLawEncodeInto(src: Int16Array, out: Uint8Array, n = src.length): void {
  for (let i = 0; i < n; i++) out[i] = ENCODE[(src[i]! >> 2) + 8192]!;
}
