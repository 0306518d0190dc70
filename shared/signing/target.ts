// Who a signed request is for: one cluster's gateway ("gateway:2") or one transceiver of one
// cluster ("transceiver:2/5"). The signer names it, the verifier requires its own identity, so a
// request signed for one place is refused everywhere else (docs/wire-formats.md §6).

export interface SignTarget {
  clusterId: number;
  /** Absent: the cluster's signalling gateway. */
  transceiverId?: number;
}

const TARGET = /^(?:gateway:(\d{1,5})|transceiver:(\d{1,5})\/(\d{1,5}))$/;

const inRange = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= 65535;

export function formatTarget(t: SignTarget): string {
  return t.transceiverId === undefined
    ? `gateway:${t.clusterId}`
    : `transceiver:${t.clusterId}/${t.transceiverId}`;
}

/** The target's text form back, or null when it is not exactly one of the two shapes. */
export function parseTarget(text: string): SignTarget | null {
  const m = TARGET.exec(text);
  if (!m) return null;
  if (m[1] !== undefined) {
    const clusterId = Number(m[1]);
    return inRange(clusterId) ? { clusterId } : null;
  }
  const clusterId = Number(m[2]);
  const transceiverId = Number(m[3]);
  return inRange(clusterId) && inRange(transceiverId) ? { clusterId, transceiverId } : null;
}
