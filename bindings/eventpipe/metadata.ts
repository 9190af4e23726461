// Metadata (§7): the V1 records of .netperf version 2 files, the V3–V5 records (with V5 tags) of
// metadata blocks, the V6 metadata block, and the field lists each of them describes its payload with.

import {
  NE_TRUNCATED,
  NW_BAD_METADATA,
  NW_METADATA_FIELDS,
  NW_METADATA_REDEFINED,
  NW_UNKNOWN_METADATA,
  TC_OBJECT,
  TC_BOOLEAN,
  TC_STRING,
  TC_ARRAY,
  TC_VARINT,
  TC_VARUINT,
  TC_FIXED_ARRAY,
  TC_UTF8_CODE_UNIT,
  TC_RELLOC,
  TC_DATALOC,
  TC_BOOLEAN8,
  NettraceFormatError,
  type NettraceField,
  type NettraceType,
  type NettraceMetadata,
} from "./format.js";
import { METADATA_DIRECT, type ReaderState } from "./reader-state.js";

const MAX_FIELD_DEPTH = 32; // nesting of Object / array element descriptions

export function lookupMetadata(r: ReaderState, id: number, at: number): number {
  const row = r.metadataById.get(id);
  if (row !== undefined) return row;
  r.warn(NW_UNKNOWN_METADATA, at, `event references undefined metadata id ${id}`);
  return -1;
}

/**
 * A metadata record's payload at [p, p + n), read by `read` and defined; damage gives a warning naming
 * the record at `record`, never aborts the block, and the read position and end are as they were.
 */
function guardedRecord(r: ReaderState, record: number, p: number, n: number, read: () => NettraceMetadata): void {
  const savePos = r.pos,
    saveEnd = r.end;
  r.pos = p;
  r.end = p + n;
  try {
    defineMetadata(r, read(), p);
  } catch (e) {
    if (!(e instanceof NettraceFormatError)) throw e;
    r.warn(NW_BAD_METADATA, e.offset - r.base, `metadata record at ${r.base + record} unreadable: ${e.reason}`);
  } finally {
    r.pos = savePos;
    r.end = saveEnd;
  }
}

/**
 * A version 2 metadata record (EventPipeEventMetaDataHeader.ReadObsoleteEventMetaData): its id is the stream
 * offset of the record, then provider name, event id, version and the length of the rest, which when
 * not 0 repeats the event id and gives name, keywords, version and level (ReadMetadataCommon), then fields.
 */
export function metadataRecordV2(r: ReaderState, record: number, p: number, n: number): void {
  guardedRecord(r, record, p, n, () => {
    const id = r.base + record;
    const providerName = r.utf16z("provider name");
    let eventId = r.i32("event id") & 0xffff;
    let version = r.i32("version") & 0xff;
    const rest = r.i32("metadata length");
    let eventName = "",
      keywords = 0n,
      level = 0;
    if (rest > 0) {
      eventId = r.i32("event id") & 0xffff;
      eventName = r.utf16z("event name");
      keywords = BigInt.asUintN(64, r.i64("keywords"));
      version = r.i32("version") & 0xff;
      level = r.i32("level") & 0xff;
    }
    const md = v1Metadata(r, id, providerName, eventId, eventName, keywords, version, level, p, n);
    if (rest > 0 && r.pos < r.end) v1Fields(r, md);
    return md;
  });
}

/** A V1-layout record's metadata, its fields not read yet; the record's payload at [p, p + n). */
function v1Metadata(
  r: ReaderState,
  id: number,
  providerName: string,
  eventId: number,
  eventName: string,
  keywords: bigint,
  version: number,
  level: number,
  p: number,
  n: number,
): NettraceMetadata {
  return {
    metadataId: id,
    providerName,
    eventId,
    eventName,
    keywords,
    version,
    level,
    fields: [],
    fieldLayout: "v1",
    fieldsUnparsable: false,
    offset: r.base + p,
    length: n,
  };
}

/** The V1 field list at the read position, into `md`; false, with a warning, when it cannot be read (kept without fields). */
function v1Fields(r: ReaderState, md: NettraceMetadata): boolean {
  const at = r.pos;
  try {
    md.fields = fieldList(r, 1, 0);
    return true;
  } catch (e) {
    if (!(e instanceof NettraceFormatError)) throw e;
    md.fields = [];
    md.fieldsUnparsable = true;
    r.warn(NW_METADATA_FIELDS, at, `metadata ${md.metadataId} (${md.providerName}/${md.eventId}): field list unparsable, kept without fields`);
    return false;
  }
}

/** One V3–V5 metadata payload at [p, p+n); damage gives a warning, never aborts the block. */
export function metadataRecord(r: ReaderState, p: number, n: number): void {
  guardedRecord(r, p, p, n, () => {
    const id = r.i32("metadata id");
    const providerName = r.utf16z("provider name");
    const eventId = r.i32("event id") & 0xffff;
    const eventName = r.utf16z("event name");
    const keywords = BigInt.asUintN(64, r.i64("keywords"));
    const version = r.i32("version") & 0xff;
    const level = r.i32("level") & 0xff;
    const md = v1Metadata(r, id, providerName, eventId, eventName, keywords, version, level, p, n);
    const tagsReadable = r.pos < r.end ? v1Fields(r, md) : true;
    // V5 tags (§7.2).
    while (tagsReadable && r.pos < r.end) {
      const tagAt = r.pos;
      const tagLen = r.i32("metadata tag length");
      const kind = r.u8("metadata tag kind");
      if (tagLen < 0) r.fail(NE_TRUNCATED, tagAt, `metadata tag length ${tagLen}`);
      const tp = r.need(tagLen, "metadata tag");
      const tagEnd = tp + tagLen;
      r.sawV5Tags = true;
      if (kind === 1) {
        if (tagLen >= 1) md.opcode = r.bytes[tp];
      } else if (kind === 2) {
        const outer = r.end;
        r.pos = tp;
        r.end = tagEnd;
        try {
          md.fields = fieldList(r, 2, 0);
          md.fieldLayout = "v2";
          md.fieldsUnparsable = false;
        } catch (e) {
          if (!(e instanceof NettraceFormatError)) throw e;
          md.fields = [];
          md.fieldLayout = "v2";
          md.fieldsUnparsable = true;
          r.warn(NW_METADATA_FIELDS, tp, `metadata ${id} (${providerName}/${eventId}): V2 field list unparsable, kept without fields`);
        }
        r.end = outer;
      }
      r.pos = tagEnd;
    }
    return md;
  });
}

function defineMetadata(r: ReaderState, md: NettraceMetadata, at: number): void {
  if (md.metadataId <= 0) {
    r.warn(NW_BAD_METADATA, at, `metadata id ${md.metadataId} is not positive; record skipped`);
    return;
  }
  if (r.metadataById.has(md.metadataId)) r.warn(NW_METADATA_REDEFINED, at, `metadata id ${md.metadataId} defined again; the new definition wins`);
  r.metadataById.set(md.metadataId, r.metadata.length);
  if (md.metadataId < METADATA_DIRECT) r.lk.view().metadataRow[md.metadataId] = r.metadata.length + 1;
  r.metadata.push(md);
}

/**
 * Field list. layout 1: V1 (i32 count; per field: type, UTF-16 name); 2: V5 V2Params (i32 count; per
 * field: i32 size incl. itself, UTF-16 name, type); 6: V6 (u16 count; per field: u16 size, UTF-8 name, type).
 */
function fieldList(r: ReaderState, layout: number, depth: number): NettraceField[] {
  if (depth > MAX_FIELD_DEPTH) r.fail(NE_TRUNCATED, r.pos, "field descriptions nested too deeply");
  const countAt = r.pos;
  const count = layout === 6 ? r.u16("field count") : r.i32("field count");
  if (count < 0 || count > 0x4000) r.fail(NE_TRUNCATED, countAt, `field count ${count}`);
  const fields: NettraceField[] = [];
  for (let f = 0; f < count; f++) {
    if (layout === 1) {
      const type = fieldType(r, layout, depth) as NettraceField;
      type.name = r.utf16z("field name");
      fields.push(type);
      continue;
    }
    const sizeAt = r.pos;
    const size = layout === 6 ? r.u16("field size") : r.i32("field size") - 4;
    if (size < 0) r.fail(NE_TRUNCATED, sizeAt, `field size ${size}`);
    const fp = r.need(size, "field description");
    const outer = r.end;
    r.pos = fp;
    r.end = fp + size;
    const name = layout === 6 ? r.utf8v("field name") : r.utf16z("field name");
    const type = fieldType(r, layout, depth) as NettraceField;
    type.name = name;
    fields.push(type);
    r.pos = fp + size; // rest of the description ignored
    r.end = outer;
  }
  return fields;
}

function fieldType(r: ReaderState, layout: number, depth: number): NettraceType {
  if (depth > MAX_FIELD_DEPTH) r.fail(NE_TRUNCATED, r.pos, "field descriptions nested too deeply");
  const at = r.pos;
  const code = layout === 6 ? r.u8("type code") : r.i32("type code");
  const t: NettraceType = { typeCode: code };
  if (code === TC_OBJECT) {
    t.fields = fieldList(r, layout, depth + 1);
  } else if (code >= TC_BOOLEAN && code <= TC_STRING) {
    // primitive
  } else if (code === TC_ARRAY && layout !== 1) {
    t.elementType = fieldType(r, layout, depth + 1);
  } else if (layout === 6 && (code === TC_VARINT || code === TC_VARUINT || code === TC_UTF8_CODE_UNIT || code === TC_BOOLEAN8)) {
    // primitive
  } else if (layout === 6 && code === TC_FIXED_ARRAY) {
    t.elementType = fieldType(r, layout, depth + 1);
    t.elementCount = r.u16("fixed array length");
  } else if (layout === 6 && (code === TC_RELLOC || code === TC_DATALOC)) {
    t.elementType = fieldType(r, layout, depth + 1);
    if (!fixedSize(t.elementType)) r.fail(NE_TRUNCATED, at, `type ${code} needs a fixed-size element type`);
  } else {
    r.fail(NE_TRUNCATED, at, `type code ${code} not valid in this field layout`);
  }
  return t;
}

/** V6 metadata block (§7.3). */
export function v6MetadataBlock(r: ReaderState): void {
  const headerSize = r.u16("metadata block header size");
  r.need(headerSize, "metadata block header");
  while (r.pos < r.end) {
    const rowAt = r.pos;
    const size = r.u16("metadata row size");
    const p = r.need(size, "metadata row");
    const rowEnd = p + size;
    const outer = r.end;
    r.pos = p;
    r.end = rowEnd;
    try {
      const id = r.varU32("metadata id");
      const md: NettraceMetadata = {
        metadataId: id,
        providerName: r.utf8v("provider name"),
        eventId: r.varU32("event id") & 0xffff,
        eventName: r.utf8v("event name"),
        keywords: 0n,
        version: 0,
        level: 0,
        fields: [],
        fieldLayout: "v6",
        fieldsUnparsable: false,
        offset: r.base + p,
        length: size,
      };
      const fieldsAt = r.pos;
      try {
        md.fields = fieldList(r, 6, 0);
      } catch (e) {
        if (!(e instanceof NettraceFormatError)) throw e;
        md.fieldsUnparsable = true;
        r.warn(NW_METADATA_FIELDS, fieldsAt, `metadata ${id}: V6 field list unparsable, kept without fields`);
      }
      if (!md.fieldsUnparsable) {
        const optSize = r.u16("optional metadata size");
        const op = r.need(optSize, "optional metadata");
        r.pos = op;
        r.end = op + optSize;
        while (r.pos < r.end) {
          const kindAt = r.pos;
          const kind = r.u8("optional metadata kind");
          if (kind === 1) md.opcode = r.u8("opcode");
          else if (kind === 3) md.keywords = r.u64("keywords");
          else if (kind === 4) md.messageTemplate = r.utf8v("message template");
          else if (kind === 5) md.description = r.utf8v("description");
          else if (kind === 6) (md.keyValues ??= []).push([r.utf8v("key"), r.utf8v("value")]);
          else if (kind === 7) {
            const g = r.need(16, "provider guid");
            md.providerGuid = r.bytes.slice(g, g + 16);
          } else if (kind === 8) md.level = r.u8("level");
          else if (kind === 9) md.version = r.u8("version");
          else r.fail(NE_TRUNCATED, kindAt, `unknown optional metadata kind ${kind}`);
        }
      }
      defineMetadata(r, md, rowAt);
    } catch (e) {
      if (!(e instanceof NettraceFormatError)) throw e;
      r.warn(NW_BAD_METADATA, e.offset - r.base, `V6 metadata row at ${r.base + rowAt} unreadable: ${e.reason}`);
    }
    r.pos = rowEnd;
    r.end = outer;
  }
}

/** True when a value of this type always takes the same number of bytes (RelLoc/DataLoc elements). */
function fixedSize(t: NettraceType): boolean {
  const c = t.typeCode;
  if (c === TC_OBJECT) return (t.fields ?? []).every(fixedSize);
  if (c === TC_FIXED_ARRAY) return t.elementType !== undefined && fixedSize(t.elementType);
  return c !== TC_STRING && c !== TC_ARRAY && c !== TC_VARINT && c !== TC_VARUINT && c !== TC_RELLOC && c !== TC_DATALOC;
}
