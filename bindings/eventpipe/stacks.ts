// Stack blocks (§8) and sequence points (§9): the stack cache a window's events refer to, and the
// point where it, the label lists and (by its flags) the thread and metadata tables are cleared.

import { NE_TRUNCATED, NW_BLOCK_TRAILING } from "./format.js";
import { bigThreadKey, type ReaderState } from "./reader-state.js";

export function stackBlock(r: ReaderState): void {
  const firstId = r.u32("stack block first id");
  const count = r.u32("stack block count");
  // (the lookups' views and epoch once a block: nothing below allocates in the core)
  const lk = r.lk.view();
  const epoch = lk.epoch;
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const size = r.i32("stack size");
    if (size < 0) r.fail(NE_TRUNCATED, at, `stack size ${size}`);
    const p = r.need(size, "stack");
    const ptr = r.header.pointerSize;
    const id = (firstId + i) >>> 0;
    r.setStack(id, r.stacks.add(id, p, size - (size % ptr)), lk, epoch);
  }
  if (r.pos < r.end) r.warn(NW_BLOCK_TRAILING, r.pos, `${r.end - r.pos} bytes after the last stack of the block`);
}

/** §9: counts the events lost since each capture thread's last sighting, then clears the caches. */
export function sequencePointBlock(r: ReaderState): void {
  const at = r.blockStart;
  const v6 = r.version === 6;
  const timestamp = r.i64("sequence point timestamp");
  const flags = v6 ? r.u32("sequence point flags") : 0;
  const count = v6 ? r.u32("sequence point thread count") : r.i32("sequence point thread count");
  if (count < 0) r.fail(NE_TRUNCATED, r.pos - 4, `thread count ${count}`);
  const sp = r.sequencePoints.add(timestamp, flags, at);
  for (let i = 0; i < count; i++) {
    const tAt = r.pos;
    const id = v6 ? BigInt.asIntN(64, r.varU64("thread index")) : r.i64("capture thread id");
    const seq = v6 ? r.varU32("sequence number") : r.u32("sequence number");
    r.sequencePoints.addThread(sp, id, seq);
    r.checkSequence(bigThreadKey(id), seq, tAt, true);
  }
  if (r.pos < r.end) r.warn(NW_BLOCK_TRAILING, r.pos, `${r.end - r.pos} bytes after the sequence point's thread list`);
  r.clearStacks();
  r.labelListByIndex.clear();
  if (flags & 1) r.threadByIndex.clear();
  if (flags & 2) {
    r.metadataById.clear();
    r.lk.view().metadataRow.fill(0);
  }
}
