// Seeded randomness for the link model: sfc32 (small, fast, passes PractRand to 2^40). The model
// never reads Math.random, so a run with the same seed and the same packet order drops and delays
// exactly the same packets.

export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
}

export function seededRandom(seed: number): Random {
  let a = 0x9e3779b9;
  let b = 0x243f6a88;
  let c = 0xb7e15162;
  let d = seed >>> 0;
  const step = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) step(); // mix the seed in before the first draw
  return { next: step };
}
