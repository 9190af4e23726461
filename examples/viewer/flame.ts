// The viewer's CPU panel: a flame graph (root at the bottom, callees above, widths by samples) of one
// process's CPU samples, and its top frames by samples spent in them (self). The profile comes from
// etw-wasm/analysis (cpuProfile), loaded with this chunk.

import type { Trace } from "etw-wasm/browser";
import { cpuProfile, type CpuProfile, type WeightedStacks } from "etw-wasm/analysis";

const ROW = 18;

interface Box {
  x: number;
  w: number;
  depth: number;
  name: string;
  count: number;
}

/**
 * Boxes narrower than this (canvas pixels) are left out, and what stands on them, as flamegraph.pl's
 * --minwidth (0.1 pixels) leaves them: a generated 1 GiB trace's profile has 1.25 M name stacks, most a
 * sample or two wide, each painted as a sliver and searched at every move of the mouse.
 */
const MIN_BOX = 0.1;

/**
 * Inclusive sample counts per node of the profile's name stacks, and self counts per frame name, for the
 * samples of `pid`: each sample counts to its leaf, then each node's count to its parent's, in one pass
 * from the last node to the first (a node is made after its parent: a greater number).
 */
function counts(profile: CpuProfile, pid: number): { total: Float64Array; self: Map<string, number>; samples: number } {
  const { parent, frame, names } = profile.stacks;
  const nodes = parent.length;
  const total = new Float64Array(nodes);
  let samples = 0;
  const { pid: pids, stack } = profile.samples;
  for (let i = 0; i < profile.samples.length; i++) {
    if (pids[i] !== pid) continue;
    samples++;
    if (stack[i] >= 0) total[stack[i]]++;
  }
  const selfOf = new Float64Array(names.length);
  for (let n = 0; n < nodes; n++) if (total[n]) selfOf[frame[n]] += total[n];
  for (let n = nodes - 1; n >= 0; n--) {
    const p = parent[n];
    if (p >= n) throw new Error(`the profile's stack ${n} comes before its parent ${p}`);
    if (p >= 0 && total[n]) total[p] += total[n];
  }
  const self = new Map<string, number>();
  for (let f = 0; f < selfOf.length; f++) if (selfOf[f]) self.set(names[f], (self.get(names[f]) ?? 0) + selfOf[f]);
  return { total, self, samples };
}

/** Boxes of the flame graph: each node as wide as its samples, its children side by side above it (widest first). */
function layout(profile: CpuProfile, total: Float64Array, width: number, samples: number): Box[] {
  const { parent, frame, names } = profile.stacks;
  const nodes = parent.length;
  const scale = samples ? width / samples : 0;
  // the nodes drawn (wide enough, on a node drawn), as lists of children by parent (parent -1 at 0)
  const drawn = new Uint8Array(nodes);
  const first = new Int32Array(nodes + 2);
  for (let n = 0; n < nodes; n++) {
    const p = parent[n];
    if (total[n] * scale < MIN_BOX || (p >= 0 && !drawn[p])) continue;
    drawn[n] = 1;
    first[p + 2]++;
  }
  for (let k = 1; k < first.length; k++) first[k] += first[k - 1];
  const list = new Int32Array(first[nodes + 1]);
  const at = first.slice();
  for (let n = 0; n < nodes; n++) if (drawn[n]) list[at[parent[n] + 1]++] = n;
  const children = (p: number) => list.subarray(first[p + 1], first[p + 2]);
  const boxes: Box[] = [];
  const place = (n: number, x: number, depth: number) => {
    boxes.push({ x, w: total[n] * scale, depth, name: names[frame[n]], count: total[n] });
    let cx = x;
    for (const c of Array.from(children(n)).sort((a, b) => total[b] - total[a])) {
      place(c, cx, depth + 1);
      cx += total[c] * scale;
    }
  };
  let x = 0;
  for (const root of children(-1)) {
    place(root, x, 0);
    x += total[root] * scale;
  }
  return boxes;
}

type CpuElements = { select: HTMLSelectElement; canvas: HTMLCanvasElement; tip: HTMLElement; top: HTMLTableSectionElement; note: HTMLElement };

/** Fills the CPU panel for a held trace. */
export function showTraceCpu(t: Trace, el: CpuElements): void {
  showCpu(cpuProfile(t), (pid) => t.processes.processName(pid, t.events.timestamp[0] ?? 0n), el);
}

/** Fills the CPU panel with a profile (a held trace's, or a streamed one's): a process choice, the flame graph, the top frames. */
export function showCpu(profile: CpuProfile, processName: (pid: number) => string, el: CpuElements): void {
  const byPid = new Map<number, number>();
  for (const samplePid of profile.samples.pid) byPid.set(samplePid, (byPid.get(samplePid) ?? 0) + 1);
  el.select.replaceChildren();
  if (!profile.samples.length) {
    el.note.textContent = "No CPU samples in this trace (collect with the kernel's Profile flag, with stacks).";
    el.canvas.hidden = true;
    return;
  }
  const pids = [...byPid].sort((a, b) => b[1] - a[1]);
  for (const [pid, n] of pids) {
    const o = document.createElement("option");
    o.value = String(pid);
    o.textContent = `${processName(pid)} (${pid}): ${n.toLocaleString("en-US")} samples`;
    el.select.append(o);
  }
  const draw = () => {
    const pid = Number(el.select.value);
    const { total, self, samples } = counts(profile, pid);
    el.canvas.hidden = false;
    const width = el.canvas.clientWidth || 900;
    const boxes = layout(profile, total, width, samples);
    el.canvas.dataset.samples = String(samples);
    paintFlame(el, boxes, samples, (n) => `${n.toLocaleString("en-US")} samples`);
    el.top.replaceChildren();
    for (const [name, n] of [...self].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 15)) {
      const tr = document.createElement("tr");
      const a = document.createElement("td");
      a.textContent = name;
      const c = document.createElement("td");
      c.textContent = n.toLocaleString("en-US");
      tr.append(a, c);
      el.top.append(tr);
    }
    // (an EventPipe profile: each sample weighs its thread's time to its next sample, not one interval)
    const each = profile.samples.weightMSec ? "weighted by thread time" : `of ${profile.intervalMSec} ms`;
    el.note.textContent = `${samples.toLocaleString("en-US")} samples ${each}; ${profile.samplesWithStacks.toLocaleString("en-US")} of all ${profile.samples.length.toLocaleString("en-US")} with stacks. Hover a frame for its samples.`;
  };
  el.select.onchange = draw;
  draw();
}

/**
 * Paints boxes as a flame graph on `el.canvas` (root at the bottom), each named where it is wide
 * enough, managed frames (module!method) in orange; hovering one names it in `el.tip` with `what(count)`
 * and its share of `total`.
 */
function paintFlame(el: { canvas: HTMLCanvasElement; tip: HTMLElement }, boxes: Box[], total: number, what: (count: number) => string): void {
  el.canvas.hidden = false;
  const width = el.canvas.clientWidth || 900;
  const depth = boxes.reduce((d, b) => Math.max(d, b.depth + 1), 1);
  el.canvas.width = width;
  el.canvas.height = depth * ROW;
  const g = el.canvas.getContext("2d")!;
  g.font = "11px system-ui, sans-serif";
  g.textBaseline = "middle";
  for (const b of boxes) {
    const y = (depth - 1 - b.depth) * ROW; // root at the bottom
    const managed = b.name.includes("!") && !b.name.endsWith("!?");
    g.fillStyle = managed ? "#f2a65a" : b.depth < 2 ? "#b9c7d8" : "#e8d27a";
    g.fillRect(b.x, y, Math.max(b.w - 0.5, 0.5), ROW - 1);
    if (b.w > 40) {
      g.fillStyle = "#222";
      g.save();
      g.beginPath();
      g.rect(b.x, y, b.w - 2, ROW);
      g.clip();
      g.fillText(b.name, b.x + 3, y + ROW / 2);
      g.restore();
    }
  }
  el.canvas.onmousemove = (e) => {
    const r = el.canvas.getBoundingClientRect();
    // (in canvas pixels: the page may show the canvas scaled)
    const x = ((e.clientX - r.left) * el.canvas.width) / r.width;
    const row = Math.floor(((e.clientY - r.top) * el.canvas.height) / r.height / ROW);
    const hit = boxes.find((b) => depth - 1 - b.depth === row && x >= b.x && x < b.x + b.w);
    el.tip.textContent = hit ? `${hit.name}: ${what(hit.count)} (${((hit.count * 100) / total).toFixed(1)}%)` : "";
  };
}

/** Events' stacks, weighted (weightedStacks), as a flame graph: boxes as wide as the weight of the stacks through them. */
export function showWeightedStacks(w: WeightedStacks, unit: string, el: { canvas: HTMLCanvasElement; tip: HTMLElement; note: HTMLElement }): void {
  // the collapsed stacks as a tree of frames, each node with the weight of the stacks through it
  interface Node {
    name: string;
    count: number;
    children: Map<string, Node>;
  }
  const root: Node = { name: "", count: 0, children: new Map() };
  for (const [stack, weight] of w.stacks) {
    let n = root;
    n.count += weight;
    for (const frame of stack.split(";")) {
      let c = n.children.get(frame);
      if (!c) n.children.set(frame, (c = { name: frame, count: 0, children: new Map() }));
      c.count += weight;
      n = c;
    }
  }
  el.canvas.hidden = false;
  const width = el.canvas.clientWidth || 900;
  const boxes: Box[] = [];
  const place = (n: Node, x: number, depth: number) => {
    const bw = root.count ? (n.count / root.count) * width : 0;
    boxes.push({ x, w: bw, depth, name: n.name, count: n.count });
    let cx = x;
    for (const c of [...n.children.values()].sort((a, b) => b.count - a.count)) {
      if ((c.count / root.count) * width < MIN_BOX) break; // (and the narrower ones after it)
      place(c, cx, depth + 1);
      cx += (c.count / root.count) * width;
    }
  };
  let x = 0;
  for (const c of [...root.children.values()].sort((a, b) => b.count - a.count)) {
    place(c, x, 0);
    x += (c.count / root.count) * width;
  }
  el.canvas.dataset.total = String(w.total);
  el.canvas.dataset.events = String(w.withStacks);
  if (!w.withStacks) {
    el.canvas.hidden = true;
    el.note.textContent = `None of the ${w.events.toLocaleString("en-US")} events shown has a stack.`;
    return;
  }
  paintFlame(el, boxes, root.count, (n) => `${n.toLocaleString("en-US")} ${unit}`);
  el.note.textContent = `${w.withStacks.toLocaleString("en-US")} of ${w.events.toLocaleString("en-US")} events shown have stacks: ${w.total.toLocaleString("en-US")} ${unit} in all. Hover a frame for its share.`;
}
