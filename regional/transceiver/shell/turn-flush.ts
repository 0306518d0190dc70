// Batches that leave once per event-loop turn: whatever a turn's datagrams produced for a backend
// is written at the end of that turn (setImmediate runs after the turn's I/O callbacks), so no
// frame waits for a later packet and a turn costs one write per connection, not one per frame.
export interface TurnFlushed {
  flushBatch(): void;
}

const dirty: TurnFlushed[] = [];
let scheduled = false;

function flushDirty(): void {
  scheduled = false;
  for (let i = 0; i < dirty.length; i++) dirty[i]!.flushBatch();
  dirty.length = 0;
}

/** Flushes `t` at the end of this turn; the caller marks it once per batch it starts. */
export function flushAtTurnEnd(t: TurnFlushed): void {
  dirty.push(t);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flushDirty);
  }
}
