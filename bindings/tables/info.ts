// The logfile header as a plain object, and the trace clock: raw timestamps to FILETIME, Date and
// PerfView's relative milliseconds.

import * as C from "../../assembly/codes.js";
import { metaOf, type TraceData } from "../decode/result/trace-data.js";

export interface TimeZoneInfo {
  /** Minutes; UTC = local time + bias. */
  bias: number;
  standardName: string;
  standardBias: number;
  daylightName: string;
  daylightBias: number;
}

export interface TraceInfo {
  /** Session buffer size in bytes. */
  bufferSize: number;
  /** Major.minor of the OS that wrote the file, plus the log format sub-version. */
  version: string;
  /** OS build number (ProviderVersion). */
  osBuild: number;
  numberOfProcessors: number;
  cpuSpeedMHz: number;
  /** PointerSize as stored in the header. */
  pointerSize: number;
  /** Pointer size of the header layout actually decoded (4 for SYSTEM32, 8 for SYSTEM64). */
  headerPointerSize: number;
  /** Clock type (ReservedFlags): 1 QPC, 2 system time, 3 CPU cycle counter. */
  clockType: number;
  clockName: string;
  /** Ticks per second of the raw timestamps (PerfFreq for QPC). */
  perfFreq: bigint;
  timerResolution: number;
  startTime: Date;
  /** Null when the session was not stopped cleanly. */
  endTime: Date | null;
  bootTime: Date;
  startFiletime: bigint;
  endFiletime: bigint;
  bootFiletime: bigint;
  /** Raw timestamp of the logfile header record: the anchor of every time conversion. */
  headerTimestamp: bigint;
  logFileMode: number;
  maximumFileSizeMB: number;
  buffersWritten: number;
  startBuffers: number;
  buffersLost: number;
  eventsLost: number;
  loggerName: string;
  logFileName: string;
  timeZone: TimeZoneInfo | null;
  /** Records decoded and buffers read. */
  eventCount: number;
  bufferCount: number;
  compressedBuffers: number;
  /** Bytes of input given: the file's size. */
  fileSize: number;
  /** Bytes of input decoded: `fileSize` unless decoding stopped early (see `Trace.incomplete`). */
  decodedBytes: number;
}

const FILETIME_UNIX_EPOCH = 116444736000000000n;
const CLOCKS: Record<number, string> = { 1: "QPC", 2: "SystemTime", 3: "CPUCycleCounter" };

export function filetimeToDate(ft: bigint): Date {
  return new Date(Number((ft - FILETIME_UNIX_EPOCH) / 10000n));
}

function utf16(bytes: Uint8Array, offset: number, chars: number): string {
  let s = "";
  for (let i = 0; i < chars; i++) s += String.fromCharCode(bytes[offset + 2 * i] | (bytes[offset + 2 * i + 1] << 8));
  return s;
}

function utf16z(bytes: Uint8Array, offset: number, maxChars: number): string {
  let n = 0;
  while (n < maxChars && (bytes[offset + 2 * n] | bytes[offset + 2 * n + 1]) !== 0) n++;
  return utf16(bytes, offset, n);
}

/**
 * Converts raw timestamps. Follows the logfile header: FILETIME = StartTime + (ts - T0) * 10^7 / freq,
 * with T0 the raw timestamp of the header record.
 */
export class TraceClock {
  /** Ticks per second used for conversions. */
  readonly frequency: bigint;
  /** Frequency PerfView uses for relative milliseconds (10^7 for system-time clocks). */
  readonly relativeFrequency: number;
  private readonly hi0: number;
  private readonly lo0: number;

  constructor(
    readonly startFiletime: bigint,
    readonly anchor: bigint,
    clockType: number,
    perfFreq: bigint,
    cpuSpeedMHz: number,
  ) {
    let freq: bigint;
    if (clockType === 2) freq = 10_000_000n;
    else if (clockType === 3 && cpuSpeedMHz > 0) freq = BigInt(cpuSpeedMHz) * 1_000_000n;
    else if (perfFreq > 0n) freq = perfFreq;
    else freq = 10_000_000n; // no frequency: treat as system time
    this.frequency = freq;
    this.relativeFrequency = clockType === 2 ? 1e7 : Number(perfFreq > 0n ? perfFreq : freq);
    this.hi0 = Number(BigInt.asIntN(64, anchor) >> 32n); // signed, as a raw timestamp is
    this.lo0 = Number(BigInt.asUintN(32, anchor));
  }

  toFiletime(raw: bigint): bigint {
    return this.startFiletime + ((raw - this.anchor) * 10_000_000n) / this.frequency;
  }

  toDate(raw: bigint): Date {
    return filetimeToDate(this.toFiletime(raw));
  }

  /** Milliseconds since the session start as PerfView computes them (never negative). */
  relativeMSec(raw: bigint): number {
    const ms = (Number(raw - this.anchor) * 1000) / this.relativeFrequency;
    return ms > 0 ? ms : 0;
  }

  /** Same as relativeMSec, from the two 32-bit halves of the raw value (no BigInt; `hi` read signed or unsigned). */
  relativeMSecParts(hi: number, lo: number): number {
    const ticks = ((hi | 0) - this.hi0) * 4294967296 + (lo - this.lo0);
    const ms = (ticks * 1000) / this.relativeFrequency;
    return ms > 0 ? ms : 0;
  }

  /** Raw timestamp at `ms` relative milliseconds. */
  fromRelativeMSec(ms: number): bigint {
    return this.anchor + BigInt(Math.round((ms * this.relativeFrequency) / 1000));
  }

  fromDate(date: Date): bigint {
    const ft = BigInt(date.getTime()) * 10000n + FILETIME_UNIX_EPOCH;
    return this.anchor + ((ft - this.startFiletime) * this.frequency) / 10_000_000n;
  }
}

export function readInfo(data: TraceData): { info: TraceInfo; clock: TraceClock } {
  const bytes = metaOf(data);
  const view = new DataView(bytes.buffer, bytes.byteOffset + data.logfileOffset, C.LH_SIZE);
  const u32 = (o: number) => view.getUint32(o, true);
  const i64 = (o: number) => view.getBigInt64(o, true);
  const v = u32(C.LH_VERSION);
  const tzAt = u32(C.LH_TIME_ZONE);
  const tzView = tzAt ? new DataView(bytes.buffer, bytes.byteOffset + tzAt, C.TIME_ZONE_BYTES) : null;
  const timeZone: TimeZoneInfo | null = tzView
    ? {
        bias: tzView.getInt32(0, true),
        standardName: utf16z(bytes, tzAt + 4, 32),
        standardBias: tzView.getInt32(0x54, true),
        daylightName: utf16z(bytes, tzAt + 0x58, 32),
        daylightBias: tzView.getInt32(0xa8, true),
      }
    : null;
  const startFiletime = i64(C.LH_START_TIME);
  const endFiletime = i64(C.LH_END_TIME);
  const bootFiletime = i64(C.LH_BOOT_TIME);
  const clockType = u32(C.LH_RESERVED_FLAGS);
  const perfFreq = i64(C.LH_PERF_FREQ);
  const cpuSpeedMHz = u32(C.LH_CPU_SPEED);
  const headerTimestamp = i64(C.LH_HEADER_TIMESTAMP);
  let compressedBuffers = 0;
  for (let i = 0; i < data.bufferCount; i++) {
    if (bytes[data.buffersOffset + i * C.BUF_STRIDE + C.B_STATUS] & C.BS_COMPRESSED) compressedBuffers++;
  }
  const info: TraceInfo = {
    bufferSize: u32(C.LH_BUFFER_SIZE),
    version: `${v & 0xff}.${(v >> 8) & 0xff}.${(v >> 16) & 0xff}.${v >>> 24}`,
    osBuild: u32(C.LH_PROVIDER_VERSION),
    numberOfProcessors: u32(C.LH_NUMBER_OF_PROCESSORS),
    cpuSpeedMHz,
    pointerSize: u32(C.LH_POINTER_SIZE),
    headerPointerSize: u32(C.LH_RECORD_POINTER_SIZE),
    clockType,
    clockName: CLOCKS[clockType] ?? `Unknown(${clockType})`,
    perfFreq,
    timerResolution: u32(C.LH_TIMER_RESOLUTION),
    startTime: filetimeToDate(startFiletime),
    endTime: endFiletime > 0n ? filetimeToDate(endFiletime) : null,
    bootTime: filetimeToDate(bootFiletime),
    startFiletime,
    endFiletime,
    bootFiletime,
    headerTimestamp,
    logFileMode: u32(C.LH_LOG_FILE_MODE),
    maximumFileSizeMB: u32(C.LH_MAXIMUM_FILE_SIZE),
    buffersWritten: u32(C.LH_BUFFERS_WRITTEN),
    startBuffers: u32(C.LH_START_BUFFERS),
    buffersLost: u32(C.LH_BUFFERS_LOST),
    eventsLost: u32(C.LH_EVENTS_LOST),
    loggerName: utf16(bytes, u32(C.LH_LOGGER_NAME), u32(C.LH_LOGGER_NAME_CHARS)),
    logFileName: utf16(bytes, u32(C.LH_LOG_FILE_NAME), u32(C.LH_LOG_FILE_NAME_CHARS)),
    timeZone,
    eventCount: data.eventCount,
    bufferCount: data.bufferCount,
    compressedBuffers,
    fileSize: data.inputBytes,
    decodedBytes: data.decodedBytes,
  };
  const clock = new TraceClock(startFiletime, headerTimestamp, clockType, perfFreq, cpuSpeedMHz);
  return { info, clock };
}
