// CRC-32 (IEEE 802.3, reflected 0xEDB88320), as STUN FINGERPRINT uses (RFC 8489 §14.7).
const TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf: Uint8Array, off: number, len: number): number {
  let c = 0xffffffff;
  for (let i = off; i < off + len; i++) c = TABLE[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
