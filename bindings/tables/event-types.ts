// The event type table: one entry per distinct (provider, event id, version, opcode, header type,
// keywords, task, level, channel) in the trace, numbered in order of first sight, with the number of
// rows of each. The event table's eventType column holds each row's type. Names are attached by the
// layers above.

import * as C from "../../assembly/codes.js";
import { metaOf, typeFieldValues, type TraceData } from "../decode/result/trace-data.js";

export class EventTypeTable {
  readonly length: number;
  /** Index into the provider table. */
  readonly provider: Uint16Array;
  readonly eventId: Uint16Array;
  readonly version: Uint16Array;
  readonly opcode: Uint8Array;
  readonly headerType: Uint8Array;
  readonly keywords: BigUint64Array;
  readonly task: Uint16Array;
  readonly level: Uint8Array;
  readonly channel: Uint8Array;
  /** Rows of each type. */
  readonly count: Uint32Array;
  private readonly column: Uint16Array;
  private first?: Uint32Array;

  constructor(data: TraceData) {
    const n = data.typeCount;
    this.length = n;
    this.column = data.events.eventType;
    ({
      provider: this.provider,
      eventId: this.eventId,
      version: this.version,
      opcode: this.opcode,
      headerType: this.headerType,
      keywords: this.keywords,
      task: this.task,
      level: this.level,
      channel: this.channel,
    } = typeFieldValues(data));
    this.count = new Uint32Array(n);
    const m = metaOf(data);
    const v = new DataView(m.buffer, m.byteOffset);
    for (let t = 0; t < n; t++) {
      const at = data.typesOffset + t * C.TYPE_STRIDE;
      this.count[t] = v.getUint32(at + C.TYPE_ROWS, true);
    }
  }

  /**
   * The first row of a type (0xffffffff: none), found by a pass over the eventType column that goes
   * only as far as the types asked for need: a batch of a stream has the types of the windows before
   * it in its table, so a pass until every type is found would read the whole column each batch.
   */
  firstRow(type: number): number {
    // (filled with -1: 0xffffffff as a u32, none found)
    const first = (this.first ??= new Uint32Array(this.length).fill(-1));
    const col = this.column;
    let i = this.scanned;
    // (a row of no type, past the table, reads undefined there and is passed over)
    for (; first[type] === 0xffffffff && i < col.length; i++) if (first[col[i]] === 0xffffffff) first[col[i]] = i;
    this.scanned = i;
    return first[type];
  }

  /** Rows of the eventType column firstRow has looked at. */
  private scanned = 0;

  /**
   * Type of an event row, or -1 for a row beyond the table's MAX_EVENT_TYPES types (its own
   * columns then say what it is).
   */
  typeOf(row: number): number {
    const t = this.column[row];
    if (t === undefined) throw new RangeError(`row ${row} out of range 0..${this.column.length - 1}`);
    return t === C.EVENT_TYPE_NONE ? -1 : t;
  }
}
