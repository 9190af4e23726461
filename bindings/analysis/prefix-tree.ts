// A prefix tree of numbers (call stacks by address, frame-name stacks by name): node `id` holds
// `value[id]` below node `parent[id]` (-1: a root). Children are found through one open-addressing
// hash of (parent, value) over typed arrays: no per-node maps or lists, so wide nodes (a thread's
// many callees) cost what narrow ones do, and large values (64-bit addresses as doubles) hash as
// cheaply as small ones. A slot holds the node and its parent side by side, so a probe that misses
// reads one cache line. Trees of millions of nodes are the norm (a stack per CPU sample).

export class PrefixTree {
  /** Node `id`'s parent, for id < size (the array has spare room beyond). */
  parent: Int32Array;
  /** Node `id`'s value, for id < size. */
  value: Float64Array;
  size = 0;
  /** Slot pairs: node + 1 (0: empty), and its parent. */
  private slots: Int32Array;
  private mask: number;

  /** `expected`: how many nodes to make room for at once (growing rehashes every node). */
  constructor(expected = 1024) {
    const nodes = Math.max(16, expected);
    this.parent = new Int32Array(nodes);
    this.value = new Float64Array(nodes);
    let slots = 32;
    while (slots < 2 * nodes) slots *= 2;
    this.slots = new Int32Array(2 * slots);
    this.mask = slots - 1;
  }

  /** The child of `parent` (-1: a root) holding `v` (an integer, |v| < 2^53), made if missing. */
  child(parent: number, v: number): number {
    const slots = this.slots;
    let h = hash(parent, v) & this.mask;
    for (;;) {
      const s = slots[2 * h];
      if (s === 0) break;
      if (slots[2 * h + 1] === parent && this.value[s - 1] === v) return s - 1;
      h = (h + 1) & this.mask;
    }
    const id = this.size++;
    if (id === this.parent.length) this.growNodes();
    this.parent[id] = parent;
    this.value[id] = v;
    slots[2 * h] = id + 1;
    slots[2 * h + 1] = parent;
    if (this.size * 2 > this.mask + 1) this.growSlots();
    return id;
  }

  private growNodes(): void {
    const parent = new Int32Array(this.parent.length * 2);
    parent.set(this.parent);
    const value = new Float64Array(this.value.length * 2);
    value.set(this.value);
    this.parent = parent;
    this.value = value;
  }

  private growSlots(): void {
    const mask = (this.mask + 1) * 2 - 1;
    const slots = new Int32Array(2 * (mask + 1));
    for (let id = 0; id < this.size; id++) {
      let h = hash(this.parent[id], this.value[id]) & mask;
      while (slots[2 * h] !== 0) h = (h + 1) & mask;
      slots[2 * h] = id + 1;
      slots[2 * h + 1] = this.parent[id];
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** A hash of (parent, v): v's low and high 32 bits mixed with the parent. */
function hash(parent: number, v: number): number {
  const lo = v >>> 0;
  const hi = (v / 4294967296) | 0;
  let h = Math.imul(lo ^ Math.imul(hi, 0x85ebca6b) ^ Math.imul(parent, 0xc2b2ae35), 0x9e3779b1);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 13);
}
