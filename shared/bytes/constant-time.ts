/** Compares `a[aOff..aOff+len]` with `b[bOff..bOff+len]` in time independent of where they differ. */
export function constantTimeEqual(
  a: Uint8Array,
  aOff: number,
  b: Uint8Array,
  bOff: number,
  len: number,
): boolean {
  if (aOff < 0 || bOff < 0 || aOff + len > a.length || bOff + len > b.length) return false;
  let diff = 0;
  for (let i = 0; i < len; i++) diff |= a[aOff + i]! ^ b[bOff + i]!;
  return diff === 0;
}
