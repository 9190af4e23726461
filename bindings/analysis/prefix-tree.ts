// A prefix tree of numbers (call stacks by address, frame-name stacks by name): node `id` holds
// `value[id]` below node `parent[id]` (-1: a root). A node's children are a list (first, next): most
// nodes have few, and a scan of a few numbers beats hashing (map keys above 2^31 are slow); a node
// with many children gets an index, so that wide nodes do not make interning quadratic.

const WIDE = 16;

export class PrefixTree {
  readonly parent: number[] = [];
  readonly value: number[] = [];
  private readonly firstChild: number[] = [];
  private readonly nextSibling: number[] = [];
  private rootFirst = -1;
  private readonly childCount = new Map<number, number>();
  private readonly wide = new Map<number, Map<number, number>>();

  get size(): number { return this.parent.length; }

  /** The child of `parent` (-1: a root) holding `v`, made if missing. */
  child(parent: number, v: number): number {
    const wide = this.wide.get(parent);
    let id: number | undefined;
    if (wide) id = wide.get(v);
    else {
      id = parent < 0 ? this.rootFirst : this.firstChild[parent];
      while (id >= 0 && this.value[id] !== v) id = this.nextSibling[id];
    }
    if (id !== undefined && id >= 0) return id;
    id = this.value.push(v) - 1;
    this.parent.push(parent);
    this.firstChild.push(-1);
    if (parent < 0) {
      this.nextSibling.push(this.rootFirst);
      this.rootFirst = id;
    } else {
      this.nextSibling.push(this.firstChild[parent]);
      this.firstChild[parent] = id;
    }
    if (wide) wide.set(v, id);
    else {
      const count = (this.childCount.get(parent) ?? 0) + 1;
      this.childCount.set(parent, count);
      if (count >= WIDE) {
        const index = new Map<number, number>();
        for (let c = parent < 0 ? this.rootFirst : this.firstChild[parent]; c >= 0; c = this.nextSibling[c]) index.set(this.value[c], c);
        this.wide.set(parent, index);
        this.childCount.delete(parent);
      }
    }
    return id;
  }
}
