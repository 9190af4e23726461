// Classic kernel TcpIp and UdpIp events as TraceEvent's KernelTraceEventParser prints them: which template
// class each opcode gets, the payload names in that class's order, the fixed offsets its getters read (a
// few depend on Version or on the pointer size) and the process id its FixupData takes from the payload.
//
// A payload shorter than its template reads as payload-bytes.ts says: a field that does not wholly fit is 0.

import type { EventRow } from "../tables/event-table.js";
import { hex8, n0 } from "./dotnet-format.js";
import { fits, hostOffset, i16, i32, readPtr } from "./payload-bytes.js";

type Pairs = [string, string][];

/** A payload read at TraceEvent's fixed offsets (payload-bytes.ts: a field that does not wholly fit reads as 0). */
class At {
  constructor(
    readonly b: Uint8Array,
    readonly ptr: 4 | 8,
    readonly version: number,
  ) {}

  /** Byte `o` of a field of `n` bytes at `at` (0 when the field does not wholly fit). */
  private byte(o: number, at = o, n = 1): number {
    return fits(this.b, at, n) ? this.b[o] : 0;
  }
  host(o: number, pointers: number): number {
    return hostOffset(o, pointers, this.ptr);
  }
  i16(o: number): number {
    return i16(this.b, o);
  }
  i32(o: number): number {
    return i32(this.b, o);
  }
  addr(o: number): bigint {
    return readPtr(this.b, o, this.ptr);
  }
  /** ByteSwap16(GetInt16At(o)): a port stored in network byte order. */
  port(o: number): number {
    return (this.byte(o, o, 2) << 8) | this.byte(o + 1, o, 2);
  }
  /** new IPAddress((uint)GetInt32At(o)).ToString(): the four bytes in payload order. */
  ipv4(o: number): string {
    return `${this.byte(o, o, 4)}.${this.byte(o + 1, o, 4)}.${this.byte(o + 2, o, 4)}.${this.byte(o + 3, o, 4)}`;
  }
  /** GetIPAddrV6At(o).ToString(). */
  ipv6(o: number): string {
    const words: number[] = [];
    for (let i = 0; i < 16; i += 2) words.push((this.byte(o + i, o, 16) << 8) | this.byte(o + i + 1, o, 16));
    return ipv6Text(words);
  }
}

/**
 * IPAddress.ToString of an IPv6 address (no scope id): lowercase hex words without leading zeros, the first
 * longest run of two or more zero words as "::", and the last two words as dotted IPv4 for the
 * IPv4-compatible, IPv4-mapped, SIIT and ISATAP forms.
 */
export function ipv6Text(words: readonly number[]): string {
  const w = words;
  const embedded =
    (w[0] === 0 &&
      w[1] === 0 &&
      w[2] === 0 &&
      w[3] === 0 &&
      w[6] !== 0 &&
      ((w[4] === 0 && (w[5] === 0 || w[5] === 0xffff)) || (w[4] === 0xffff && w[5] === 0))) ||
    (w[4] === 0 && w[5] === 0x5efe);
  if (!embedded) return sections(w);
  const head = sections(w.slice(0, 6));
  const v4 = `${w[6] >> 8}.${w[6] & 0xff}.${w[7] >> 8}.${w[7] & 0xff}`;
  return head.endsWith(":") ? head + v4 : `${head}:${v4}`;
}

/** Hex words joined by ":", the first longest run of at least two zeros written "::". */
function sections(w: readonly number[]): string {
  let start = -1;
  let len = 0;
  for (let i = 0, run = 0; i < w.length; i++) {
    run = w[i] === 0 ? run + 1 : 0;
    if (run > len) {
      len = run;
      start = i - run + 1;
    }
  }
  const hex = (a: readonly number[]) => a.map((x) => x.toString(16)).join(":");
  if (len < 2) return hex(w);
  return `${hex(w.slice(0, start))}::${hex(w.slice(start + len))}`;
}

const int = (v: number) => n0(v | 0);
const addr = (v: bigint) => hex8(v);

// ------------------------------------------------------------------ the template classes

/** TcpIpTraceData (Recv, Disconnect, Retransmit, Reconnect, TCPCopy, ARPCopy, FullACK, PartACK, DupACK). */
function tcpIp(a: At): Pairs {
  if (a.version >= 1) {
    // connid and seqnum: TraceEvent's offsets, as its getters have them
    return [
      ["daddr", a.ipv4(8)],
      ["saddr", a.ipv4(12)],
      ["dport", int(a.port(16))],
      ["sport", int(a.port(18))],
      ["size", int(a.i32(4))],
      ["connid", addr(a.addr(a.host(20, 1)))],
      ["seqnum", int(a.i32(a.host(24, 1)))],
    ];
  }
  return [
    ["daddr", a.ipv4(0)],
    ["saddr", a.ipv4(4)],
    ["dport", int(a.port(8))],
    ["sport", int(a.port(10))],
    ["size", int(a.i32(12))],
    ["connid", addr(0n)],
    ["seqnum", int(0)],
  ];
}

/** TcpIpSendTraceData (the same offsets for every version). */
function tcpIpSend(a: At): Pairs {
  return [
    ["size", int(a.i32(4))],
    ["daddr", a.ipv4(8)],
    ["saddr", a.ipv4(12)],
    ["dport", int(a.port(16))],
    ["sport", int(a.port(18))],
    ["startime", int(a.i32(20))],
    ["endtime", int(a.i32(24))],
    ["seqnum", int(a.i32(28))],
    ["connid", addr(a.addr(32))],
  ];
}

/** TcpIpConnectTraceData (Connect, Accept). */
function tcpIpConnect(a: At): Pairs {
  return [
    ["size", int(a.i32(4))],
    ["daddr", a.ipv4(8)],
    ["saddr", a.ipv4(12)],
    ["dport", int(a.port(16))],
    ["sport", int(a.port(18))],
    ["mss", int(a.i16(20))],
    ["sackopt", int(a.i16(22))],
    ["tsopt", int(a.i16(24))],
    ["wsopt", int(a.i16(26))],
    ["rcvwin", int(a.i32(28))],
    ["rcvwinscale", int(a.i16(32))],
    ["sndwinscale", int(a.i16(34))],
    ["seqnum", int(a.i32(36))],
    ["connid", addr(a.addr(40))],
  ];
}

/** TcpIpFailTraceData: two 16-bit fields from version 2, one 32-bit Proto before. */
function tcpIpFail(a: At): Pairs {
  if (a.version >= 2)
    return [
      ["Proto", int(a.i16(0))],
      ["FailureCode", int(a.i16(2))],
    ];
  return [
    ["Proto", int(a.i32(0))],
    ["FailureCode", int(0)],
  ];
}

/** TcpIpV6TraceData (RecvIPV6, DisconnectIPV6, RetransmitIPV6, ReconnectIPV6, TCPCopyIPV6). */
function tcpIpV6(a: At): Pairs {
  return [
    ["size", int(a.i32(4))],
    ["daddr", a.ipv6(8)],
    ["saddr", a.ipv6(24)],
    ["dport", int(a.port(40))],
    ["sport", int(a.port(42))],
    ["connid", addr(a.addr(44))],
    ["seqnum", int(a.i32(a.host(48, 1)))],
  ];
}

/** TcpIpV6SendTraceData. */
function tcpIpV6Send(a: At): Pairs {
  return [
    ["size", int(a.i32(4))],
    ["daddr", a.ipv6(8)],
    ["saddr", a.ipv6(24)],
    ["dport", int(a.port(40))],
    ["sport", int(a.port(42))],
    ["startime", int(a.i32(44))],
    ["endtime", int(a.i32(48))],
    ["seqnum", int(a.i32(52))],
    ["connid", addr(a.addr(56))],
  ];
}

/** TcpIpV6ConnectTraceData (ConnectIPV6, AcceptIPV6): its PayloadNames leave out daddr and saddr. */
function tcpIpV6Connect(a: At): Pairs {
  return [
    ["size", int(a.i32(4))],
    ["dport", int(a.port(40))],
    ["sport", int(a.port(42))],
    ["mss", int(a.i16(44))],
    ["sackopt", int(a.i16(46))],
    ["tsopt", int(a.i16(48))],
    ["wsopt", int(a.i16(50))],
    ["rcvwin", int(a.i32(52))],
    ["rcvwinscale", int(a.i16(56))],
    ["sndwinscale", int(a.i16(58))],
    ["seqnum", int(a.i32(60))],
    ["connid", addr(a.addr(64))],
  ];
}

/**
 * UdpIpTraceData (Send, Recv): the layout of version 0, with a pointer-sized context at 0 (over PID and size
 * from version 1) and dsize at a fixed place whatever the version.
 */
function udpIp(a: At): Pairs {
  const v1 = a.version >= 1;
  return [
    ["context", addr(a.addr(0))],
    ["saddr", a.ipv4(v1 ? 12 : a.host(4, 1))],
    ["sport", int(a.port(v1 ? 18 : a.host(8, 1)))],
    ["size", int(v1 ? a.i32(4) : a.i16(a.host(10, 1)))],
    ["daddr", a.ipv4(v1 ? 8 : a.host(12, 1))],
    ["dport", int(a.port(v1 ? 16 : a.host(16, 1)))],
    ["dsize", int(a.i16(a.host(18, 1)))],
  ];
}

/** UdpIpFailTraceData. */
function udpIpFail(a: At): Pairs {
  return [
    ["Proto", int(a.i16(0))],
    ["FailureCode", int(a.i16(2))],
  ];
}

/** UpdIpV6TraceData (SendIPV6, RecvIPV6): no addresses among its PayloadNames. */
function udpIpV6(a: At): Pairs {
  return [
    ["size", int(a.i32(4))],
    ["dport", int(a.port(40))],
    ["sport", int(a.port(42))],
    ["seqnum", int(a.i32(44))],
    ["connid", addr(a.addr(48))],
  ];
}

/**
 * A template: its payload, and where its FixupData finds the process id (null: it keeps the header's;
 * a function of the version for the classes whose fix-up depends on it).
 */
interface Template {
  pairs(a: At): Pairs;
  pidAt: number | null | ((version: number) => number | null);
}

const TCP_IP: Template = { pairs: tcpIp, pidAt: (v) => (v >= 1 ? 0 : 16) };
const TCP_IP_SEND: Template = { pairs: tcpIpSend, pidAt: 0 };
const TCP_IP_CONNECT: Template = { pairs: tcpIpConnect, pidAt: 0 };
const TCP_IP_FAIL: Template = { pairs: tcpIpFail, pidAt: null };
const TCP_IP_V6: Template = { pairs: tcpIpV6, pidAt: 0 };
const TCP_IP_V6_SEND: Template = { pairs: tcpIpV6Send, pidAt: 0 };
const TCP_IP_V6_CONNECT: Template = { pairs: tcpIpV6Connect, pidAt: 0 };
const UDP_IP: Template = { pairs: udpIp, pidAt: (v) => (v >= 1 ? 0 : null) };
const UDP_IP_FAIL: Template = { pairs: udpIpFail, pidAt: null };
const UDP_IP_V6: Template = { pairs: udpIpV6, pidAt: 0 };

/** The template class TraceEvent registers for each opcode (the names are in naming/event-names.ts). */
const TEMPLATES: Readonly<Record<string, Readonly<Record<number, Template>>>> = {
  TcpIp: {
    10: TCP_IP_SEND,
    11: TCP_IP,
    12: TCP_IP_CONNECT,
    13: TCP_IP,
    14: TCP_IP,
    15: TCP_IP_CONNECT,
    16: TCP_IP,
    17: TCP_IP_FAIL,
    18: TCP_IP,
    19: TCP_IP,
    20: TCP_IP,
    21: TCP_IP,
    22: TCP_IP,
    26: TCP_IP_V6_SEND,
    27: TCP_IP_V6,
    28: TCP_IP_V6_CONNECT,
    29: TCP_IP_V6,
    30: TCP_IP_V6,
    31: TCP_IP_V6_CONNECT,
    32: TCP_IP_V6,
    34: TCP_IP_V6,
  },
  UdpIp: { 10: UDP_IP, 11: UDP_IP, 17: UDP_IP_FAIL, 26: UDP_IP_V6, 27: UDP_IP_V6 },
};

function templateOf(row: EventRow): Template | undefined {
  const group = row.table.providers.get(row.providerIndex).group;
  return group ? TEMPLATES[group]?.[row.opcode] : undefined;
}

/** Payload pairs of a kernel TcpIp or UdpIp event; null when TraceEvent has no template for its opcode. */
export function netPayload(row: EventRow): Pairs | null {
  const t = templateOf(row);
  return t ? t.pairs(new At(row.payload, row.pointerSize, row.version)) : null;
}

/**
 * TraceEvent's ProcessID / ThreadID of a kernel TcpIp or UdpIp event: the process id from the payload
 * where the template's FixupData takes it, the header's thread id; null when the header's apply.
 */
export function netProcessThread(row: EventRow): { pid: number; tid: number } | null {
  const t = templateOf(row);
  if (!t) return null;
  const at = typeof t.pidAt === "function" ? t.pidAt(row.version) : t.pidAt;
  if (at === null) return null;
  return { pid: new At(row.payload, row.pointerSize, row.version).i32(at), tid: row.tid === null ? -1 : row.tid | 0 };
}
