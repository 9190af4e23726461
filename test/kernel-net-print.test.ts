// Classic kernel TcpIp / UdpIp events printed as TraceEvent's KernelTraceEventParser prints them, on a
// synthetic trace: for each template class (TcpIpTraceData, TcpIpSendTraceData, TcpIpConnectTraceData,
// TcpIpFailTraceData, the three TcpIpV6 classes, UdpIpTraceData, UdpIpFailTraceData, UpdIpV6TraceData) and
// its versions, 32- and 64-bit payloads, full and cut short. The expected text is worked out by hand from
// the getters' offsets in KernelTraceEventParser.cs (noted next to each case), not from our code.

import { describe, expect, it } from "vitest";
import { PayloadBuilder } from "../dist/bindings/generator/etl-writer.js";
import { HEADER_PID, HEADER_TID, expectEventLine, expectKernelCases, kernelCaseTrace, type KernelCase } from "./helpers/kernel-cases.js";
import { PayloadContext, payloadPairs, perfViewLines } from "../dist/bindings/perfview/index.js";
import { ipv6Text } from "../dist/bindings/perfview/traceevent-net.js";

const TCP = 0x06; // kernel group bytes of the SYSTEM header's HookId
const UDP = 0x08;

/** Payload bytes in the kernel's layout; ports and IPv6 words in network byte order. */
class P extends PayloadBuilder {
  ip4(a: number, b: number, c: number, d: number): this {
    return this.u8(a).u8(b).u8(c).u8(d);
  }
  port(p: number): this {
    return this.u8(p >> 8).u8(p & 0xff);
  }
  ip6(...words: number[]): this {
    for (const w of words) this.u8(w >> 8).u8(w & 0xff);
    return this;
  }
  cut(n: number): Uint8Array {
    return this.build().slice(0, n);
  }
}
const p = () => new P();
const D4 = [10, 1, 2, 3] as const; // daddr
const S4 = [192, 168, 0, 200] as const; // saddr
const D6 = [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]; // 2001:db8::1
const S6 = [0xfe80, 0, 0, 0, 1, 0, 0, 5]; // the first, longer zero run is the one written "::"
const CONNID = 0xffffa00012345678n;

type Case = KernelCase;

const CASES: Case[] = [
  // ---------------------------------------------------------------- TcpIpSendTraceData (opcode 10)
  {
    // size 4, daddr 8, saddr 12, dport 16, sport 18, startime 20, endtime 24, seqnum 28, connid GetAddressAt(32)
    what: "Send, 64-bit",
    group: TCP,
    opcode: 10,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Send",
    payload: p()
      .u32(1234)
      .u32(1460)
      .ip4(...D4)
      .ip4(...S4)
      .port(443)
      .port(50000)
      .u32(100)
      .u32(200)
      .u32(7)
      .u64(CONNID)
      .build(),
    text: "size=1,460; daddr=10.1.2.3; saddr=192.168.0.200; dport=443; sport=50,000; startime=100; endtime=200; seqnum=7; connid=0xffffa00012345678",
    pid: 1234,
    tid: HEADER_TID,
  },
  {
    what: "Send, 32-bit",
    group: TCP,
    opcode: 10,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/TcpIp/Send",
    payload: p()
      .u32(1234)
      .u32(0x80000000)
      .ip4(...D4)
      .ip4(...S4)
      .port(80)
      .port(1)
      .u32(1)
      .u32(2)
      .u32(0xffffffff)
      .u32(0x87654321)
      .build(),
    text: "size=-2,147,483,648; daddr=10.1.2.3; saddr=192.168.0.200; dport=80; sport=1; startime=1; endtime=2; seqnum=-1; connid=0x87654321",
    pid: 1234,
    tid: HEADER_TID,
  },
  {
    // 22 bytes: startime does not wholly fit, so it reads as zero, as everything after it
    what: "Send, cut inside startime",
    group: TCP,
    opcode: 10,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Send",
    payload: p()
      .u32(1234)
      .u32(1460)
      .ip4(...D4)
      .ip4(...S4)
      .port(443)
      .port(50000)
      .u32(0x01020304)
      .u32(200)
      .u32(7)
      .u64(CONNID)
      .cut(22),
    text: "size=1,460; daddr=10.1.2.3; saddr=192.168.0.200; dport=443; sport=50,000; startime=0; endtime=0; seqnum=0; connid=0x00000000",
    pid: 1234,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- TcpIpTraceData (11, 13, 14, 16, 18-22)
  {
    // V1+: names daddr saddr dport sport size connid seqnum; connid GetAddressAt(HostOffset(20, 1)) = 24,
    // seqnum GetInt32At(HostOffset(24, 1)) = 28: the high half of the connid the kernel wrote at 24
    what: "Recv, 64-bit",
    group: TCP,
    opcode: 11,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Recv",
    payload: p()
      .u32(1234)
      .u32(512)
      .ip4(...D4)
      .ip4(...S4)
      .port(443)
      .port(50000)
      .u32(0x11223344)
      .u64(CONNID)
      .build(),
    text: "daddr=10.1.2.3; saddr=192.168.0.200; dport=443; sport=50,000; size=512; connid=0xffffa00012345678; seqnum=-24,576",
    pid: 1234,
    tid: HEADER_TID,
  },
  {
    // 32-bit: connid at 20 (where the kernel put seqnum), seqnum at 24 (the kernel's connid)
    what: "Disconnect, 32-bit",
    group: TCP,
    opcode: 13,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/TcpIp/Disconnect",
    payload: p()
      .u32(1234)
      .u32(0)
      .ip4(...D4)
      .ip4(...S4)
      .port(443)
      .port(50000)
      .u32(0x11223344)
      .u32(0x87654321)
      .build(),
    text: "daddr=10.1.2.3; saddr=192.168.0.200; dport=443; sport=50,000; size=0; connid=0x11223344; seqnum=-2,023,406,815",
    pid: 1234,
    tid: HEADER_TID,
  },
  {
    // V0: daddr 0, saddr 4, dport 8, sport 10, size 12, PID 16; connid and seqnum 0
    what: "Retransmit, version 0",
    group: TCP,
    opcode: 14,
    version: 0,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Retransmit",
    payload: p()
      .ip4(...D4)
      .ip4(...S4)
      .port(21)
      .port(4000)
      .u32(99)
      .u32(4321)
      .build(),
    text: "daddr=10.1.2.3; saddr=192.168.0.200; dport=21; sport=4,000; size=99; connid=0x00000000; seqnum=0",
    pid: 4321,
    tid: HEADER_TID,
  },
  ...(
    [
      [16, "Reconnect"],
      [18, "TCPCopy"],
      [19, "ARPCopy"],
      [20, "FullACK"],
      [21, "PartACK"],
      [22, "DupACK"],
    ] as const
  ).map(
    ([opcode, op]): Case => ({
      what: op,
      group: TCP,
      opcode,
      version: 1,
      ptr: 8,
      name: `Windows Kernel/TcpIp/${op}`,
      payload: p()
        .u32(1234)
        .u32(opcode)
        .ip4(...D4)
        .ip4(...S4)
        .port(443)
        .port(50000)
        .u32(0)
        .u64(0x5n)
        .build(),
      text: `daddr=10.1.2.3; saddr=192.168.0.200; dport=443; sport=50,000; size=${opcode}; connid=0x00000005; seqnum=0`,
      pid: 1234,
      tid: HEADER_TID,
    }),
  ),
  {
    // 14 bytes: saddr does not wholly fit: 0.0.0.0
    what: "Recv, cut inside saddr",
    group: TCP,
    opcode: 11,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Recv",
    payload: p()
      .u32(1234)
      .u32(512)
      .ip4(...D4)
      .ip4(...S4)
      .port(443)
      .port(50000)
      .u32(1)
      .u64(CONNID)
      .cut(14),
    text: "daddr=10.1.2.3; saddr=0.0.0.0; dport=0; sport=0; size=512; connid=0x00000000; seqnum=0",
    pid: 1234,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- TcpIpConnectTraceData (12, 15)
  {
    // mss 20, sackopt 22, tsopt 24, wsopt 26 (Int16, signed), rcvwin 28, rcvwinscale 32, sndwinscale 34,
    // seqnum 36, connid GetAddressAt(40)
    what: "Connect, 64-bit",
    group: TCP,
    opcode: 12,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Connect",
    payload: p()
      .u32(1234)
      .u32(0)
      .ip4(...D4)
      .ip4(...S4)
      .port(443)
      .port(50000)
      .u16(1460)
      .u16(1)
      .u16(0)
      .u16(1)
      .u32(65535)
      .u16(8)
      .u16(0xffff)
      .u32(3)
      .u64(CONNID)
      .build(),
    text: "size=0; daddr=10.1.2.3; saddr=192.168.0.200; dport=443; sport=50,000; mss=1,460; sackopt=1; tsopt=0; wsopt=1; rcvwin=65,535; rcvwinscale=8; sndwinscale=-1; seqnum=3; connid=0xffffa00012345678",
    pid: 1234,
    tid: HEADER_TID,
  },
  {
    what: "Accept, 32-bit",
    group: TCP,
    opcode: 15,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/TcpIp/Accept",
    payload: p()
      .u32(4)
      .u32(0)
      .ip4(...D4)
      .ip4(...S4)
      .port(3389)
      .port(65535)
      .u16(0x9000)
      .u16(0)
      .u16(1)
      .u16(0)
      .u32(0x7fffffff)
      .u16(2)
      .u16(2)
      .u32(0)
      .u32(0xfffff000)
      .build(),
    text: "size=0; daddr=10.1.2.3; saddr=192.168.0.200; dport=3,389; sport=65,535; mss=-28,672; sackopt=0; tsopt=1; wsopt=0; rcvwin=2,147,483,647; rcvwinscale=2; sndwinscale=2; seqnum=0; connid=0xfffff000",
    pid: 4,
    tid: HEADER_TID,
  },
  {
    // an empty payload: every field (and the PID) reads as zero
    what: "Accept, empty",
    group: TCP,
    opcode: 15,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Accept",
    payload: new Uint8Array(0),
    text: "size=0; daddr=0.0.0.0; saddr=0.0.0.0; dport=0; sport=0; mss=0; sackopt=0; tsopt=0; wsopt=0; rcvwin=0; rcvwinscale=0; sndwinscale=0; seqnum=0; connid=0x00000000",
    pid: 0,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- TcpIpFailTraceData (17): no PID fix-up
  {
    what: "Fail, version 2",
    group: TCP,
    opcode: 17,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Fail",
    payload: p().u16(6).u16(0xfffe).build(),
    text: "Proto=6; FailureCode=-2",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  {
    // before version 2: Proto is GetInt32At(0), FailureCode 0
    what: "Fail, version 1",
    group: TCP,
    opcode: 17,
    version: 1,
    ptr: 8,
    name: "Windows Kernel/TcpIp/Fail",
    payload: p().u16(6).u16(2).build(),
    text: "Proto=131,078; FailureCode=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- TcpIpV6SendTraceData (26)
  {
    // size 4, daddr 8, saddr 24, dport 40, sport 42, startime 44, endtime 48, seqnum 52, connid GetAddressAt(56)
    what: "SendIPV6",
    group: TCP,
    opcode: 26,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/SendIPV6",
    payload: p()
      .u32(4)
      .u32(65652)
      .ip6(...D6)
      .ip6(...S6)
      .port(445)
      .port(64025)
      .u32(1942)
      .u32(1943)
      .u32(9)
      .u64(CONNID)
      .build(),
    text: "size=65,652; daddr=2001:db8::1; saddr=fe80::1:0:0:5; dport=445; sport=64,025; startime=1,942; endtime=1,943; seqnum=9; connid=0xffffa00012345678",
    pid: 4,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- TcpIpV6TraceData (27, 29, 30, 32, 34)
  {
    // connid GetAddressAt(44) spans the kernel's seqnum and the low half of its connid; seqnum
    // GetInt32At(HostOffset(48, 1)) = 52 is the connid's high half
    what: "RecvIPV6, 64-bit",
    group: TCP,
    opcode: 27,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/RecvIPV6",
    payload: p()
      .u32(4)
      .u32(84)
      .ip6(...D6)
      .ip6(...S6)
      .port(445)
      .port(64025)
      .u32(5)
      .u64(CONNID)
      .build(),
    text: "size=84; daddr=2001:db8::1; saddr=fe80::1:0:0:5; dport=445; sport=64,025; connid=0x1234567800000005; seqnum=-24,576",
    pid: 4,
    tid: HEADER_TID,
  },
  {
    // 32-bit: connid at 44, seqnum at 48
    what: "DisconnectIPV6, 32-bit, IPv4-mapped and unspecified addresses",
    group: TCP,
    opcode: 29,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/TcpIp/DisconnectIPV6",
    payload: p().u32(816).u32(0).ip6(0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0001).ip6(0, 0, 0, 0, 0, 0, 0, 0).port(2869).port(50271).u32(0xaabbccdd).u32(12).build(),
    text: "size=0; daddr=::ffff:10.0.0.1; saddr=::; dport=2,869; sport=50,271; connid=0xaabbccdd; seqnum=12",
    pid: 816,
    tid: HEADER_TID,
  },
  ...(
    [
      [30, "RetransmitIPV6"],
      [32, "ReconnectIPV6"],
      [34, "TCPCopyIPV6"],
    ] as const
  ).map(
    ([opcode, op]): Case => ({
      what: op,
      group: TCP,
      opcode,
      version: 2,
      ptr: 8,
      name: `Windows Kernel/TcpIp/${op}`,
      payload: p().u32(816).u32(opcode).ip6(0, 0, 0, 0, 0, 0, 0, 1).ip6(0xfe80, 0, 0, 0, 0, 0x5efe, 0xc0a8, 0x0102).port(1).port(2).u32(0).u64(0n).build(),
      text: `size=${opcode}; daddr=::1; saddr=fe80::5efe:192.168.1.2; dport=1; sport=2; connid=0x00000000; seqnum=0`,
      pid: 816,
      tid: HEADER_TID,
    }),
  ),
  {
    // 30 bytes: saddr does not wholly fit: ::
    what: "RecvIPV6, cut inside saddr",
    group: TCP,
    opcode: 27,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/TcpIp/RecvIPV6",
    payload: p()
      .u32(4)
      .u32(84)
      .ip6(...D6)
      .ip6(0xfe80, 0, 0x1234, 0, 0, 0, 0, 5)
      .port(445)
      .port(64025)
      .u32(5)
      .u64(CONNID)
      .cut(30),
    text: "size=84; daddr=2001:db8::1; saddr=::; dport=0; sport=0; connid=0x00000000; seqnum=0",
    pid: 4,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- TcpIpV6ConnectTraceData (28, 31): no addresses printed
  ...(
    [
      [28, "ConnectIPV6"],
      [31, "AcceptIPV6"],
    ] as const
  ).map(
    ([opcode, op]): Case => ({
      // mss 44, sackopt 46, tsopt 48, wsopt 50, rcvwin 52, rcvwinscale 56, sndwinscale 58, seqnum 60, connid 64
      what: op,
      group: TCP,
      opcode,
      version: 2,
      ptr: 8,
      name: `Windows Kernel/TcpIp/${op}`,
      payload: p()
        .u32(816)
        .u32(0)
        .ip6(...D6)
        .ip6(...S6)
        .port(2869)
        .port(50271)
        .u16(1440)
        .u16(1)
        .u16(0)
        .u16(1)
        .u32(132480)
        .u16(8)
        .u16(0x8000)
        .u32(77)
        .u64(CONNID)
        .build(),
      text: "size=0; dport=2,869; sport=50,271; mss=1,440; sackopt=1; tsopt=0; wsopt=1; rcvwin=132,480; rcvwinscale=8; sndwinscale=-32,768; seqnum=77; connid=0xffffa00012345678",
      pid: 816,
      tid: HEADER_TID,
    }),
  ),
  // ---------------------------------------------------------------- UdpIpTraceData (UdpIp 10, 11)
  {
    // V1+: context GetAddressAt(0) (PID and size), saddr 12, sport 18, size 4, daddr 8, dport 16,
    // dsize GetInt16At(HostOffset(18, 1)) = 22: the high half of the kernel's seqnum
    what: "UDP Send, 64-bit",
    group: UDP,
    opcode: 10,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/UdpIp/Send",
    payload: p()
      .u32(2108)
      .u32(173)
      .ip4(...D4)
      .ip4(...S4)
      .port(1900)
      .port(60441)
      .u32(0x80010000)
      .u64(0n)
      .build(),
    text: "context=0xad0000083c; saddr=192.168.0.200; sport=60,441; size=173; daddr=10.1.2.3; dport=1,900; dsize=-32,767",
    pid: 2108,
    tid: HEADER_TID,
  },
  {
    // 32-bit: context is the PID alone; dsize at 18 is sport's bytes read little-endian (0xC350 -> 0x50C3)
    what: "UDP Recv, 32-bit",
    group: UDP,
    opcode: 11,
    version: 2,
    ptr: 4,
    name: "Windows Kernel/UdpIp/Recv",
    payload: p()
      .u32(2108)
      .u32(173)
      .ip4(...D4)
      .ip4(...S4)
      .port(1900)
      .port(50000)
      .u32(0)
      .u32(0)
      .build(),
    text: "context=0x0000083c; saddr=192.168.0.200; sport=50,000; size=173; daddr=10.1.2.3; dport=1,900; dsize=20,675",
    pid: 2108,
    tid: HEADER_TID,
  },
  {
    // V0 (64-bit): context 0, saddr HostOffset(4, 1) = 8, sport 12, size Int16 at 14, daddr 16, dport 20,
    // dsize 22; no PID fix-up
    what: "UDP Recv, version 0",
    group: UDP,
    opcode: 11,
    version: 0,
    ptr: 8,
    name: "Windows Kernel/UdpIp/Recv",
    payload: p()
      .u64(0xfffffa8001234560n)
      .ip4(...S4)
      .port(53)
      .u16(0xfff0)
      .ip4(...D4)
      .port(5353)
      .u16(12)
      .build(),
    text: "context=0xfffffa8001234560; saddr=192.168.0.200; sport=53; size=-16; daddr=10.1.2.3; dport=5,353; dsize=12",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- UdpIpFailTraceData (UdpIp 17): no PID fix-up
  {
    what: "UDP Fail",
    group: UDP,
    opcode: 17,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/UdpIp/Fail",
    payload: p().u16(17).u16(3).build(),
    text: "Proto=17; FailureCode=3",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  {
    // one byte: Proto (a short) does not wholly fit
    what: "UDP Fail, one byte",
    group: UDP,
    opcode: 17,
    version: 2,
    ptr: 8,
    name: "Windows Kernel/UdpIp/Fail",
    payload: p().u8(17).build(),
    text: "Proto=0; FailureCode=0",
    pid: HEADER_PID,
    tid: HEADER_TID,
  },
  // ---------------------------------------------------------------- UpdIpV6TraceData (UdpIp 26, 27)
  ...(
    [
      [26, "SendIPV6"],
      [27, "RecvIPV6"],
    ] as const
  ).map(
    ([opcode, op]): Case => ({
      // size 4, dport 40, sport 42, seqnum 44, connid GetAddressAt(48)
      what: `UDP ${op}`,
      group: UDP,
      opcode,
      version: 2,
      ptr: 8,
      name: `Windows Kernel/UdpIp/${op}`,
      payload: p()
        .u32(2108)
        .u32(146)
        .ip6(...D6)
        .ip6(...S6)
        .port(1900)
        .port(53190)
        .u32(4)
        .u64(CONNID)
        .build(),
      text: "size=146; dport=1,900; sport=53,190; seqnum=4; connid=0xffffa00012345678",
      pid: 2108,
      tid: HEADER_TID,
    }),
  ),
];

describe("kernel TcpIp and UdpIp payloads as TraceEvent prints them", () => {
  it("every template, version and pointer size; a field cut short reads as zero", async () => {
    await expectKernelCases(CASES);
  });

  it("the perfview lines: TraceEvent's event names, PID and TID, and the payload", async () => {
    const { t } = await kernelCaseTrace(CASES);
    const lines = [...perfViewLines(t, { maxEventsPerName: 100 })].filter((l) => /^EVENT .*?\/(TcpIp|UdpIp)\//.test(l));
    expect(lines).toHaveLength(CASES.length);
    for (const [k, c] of CASES.entries()) {
      expectEventLine(lines[k], c);
    }
    t.dispose();
  });

  it("opcodes TraceEvent has no template for: not named as its kernel events, no payload, the header's PID and TID", async () => {
    const odd: Case[] = [33, 35, 36, 37, 38].map((opcode) => ({
      what: `TcpIp ${opcode}`,
      group: TCP,
      opcode,
      version: 2,
      ptr: 8,
      name: `MSNT_SystemTrace/TcpIp/Opcode(${opcode})`,
      payload: p().u32(1234).u32(1).build(),
      text: "",
      pid: HEADER_PID,
      tid: HEADER_TID,
    }));
    odd.push({
      what: "UdpIp 28",
      group: UDP,
      opcode: 28,
      version: 2,
      ptr: 8,
      name: "MSNT_SystemTrace/UdpIp/Opcode(28)",
      payload: p().u32(1234).build(),
      text: "",
      pid: HEADER_PID,
      tid: HEADER_TID,
    });
    const { t, rowOf } = await kernelCaseTrace(odd);
    const ctx = new PayloadContext(t, t.processes, "current");
    for (const [k, c] of odd.entries()) {
      const row = rowOf(k);
      // (the MOF name itself is the naming module's fallback, not checked here)
      expect(t.names.ofRow(row.index).startsWith(`MSNT_SystemTrace/${c.group === TCP ? "TcpIp" : "UdpIp"}/`), c.what).toBe(true);
      expect(payloadPairs(row, ctx), c.what).toEqual([]);
      expect(ctx.processThread(row), c.what).toEqual({ pid: c.pid, tid: c.tid });
    }
    t.dispose();
  });
});

describe("IPv6 address text (IPAddress.ToString)", () => {
  it("compresses the first longest run of two or more zero words; embeds IPv4 in the mapped, compatible, SIIT and ISATAP forms", () => {
    expect(ipv6Text([0x2001, 0x4898, 0xe0, 0x81, 0x7cb9, 0, 0, 1])).toBe("2001:4898:e0:81:7cb9::1");
    expect(ipv6Text([1, 0, 0, 2, 0, 0, 3, 4])).toBe("1::2:0:0:3:4");
    expect(ipv6Text([1, 0, 2, 3, 4, 5, 6, 7])).toBe("1:0:2:3:4:5:6:7");
    expect(ipv6Text([0, 0, 0, 0, 0, 0, 0, 0])).toBe("::");
    expect(ipv6Text([0, 0, 0, 0, 0, 0, 0, 1])).toBe("::1");
    expect(ipv6Text([0xfe80, 0, 0, 0, 0, 0, 0, 0])).toBe("fe80::");
    expect(ipv6Text([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1])).toBe("::ffff:127.0.0.1");
    expect(ipv6Text([0, 0, 0, 0, 0, 0, 0x0a00, 1])).toBe("::10.0.0.1");
    expect(ipv6Text([0, 0, 0, 0, 0xffff, 0, 0x0a00, 1])).toBe("::ffff:0:10.0.0.1");
    expect(ipv6Text([0x2001, 0xdb8, 0, 0, 0, 0x5efe, 0xc0a8, 0x0102])).toBe("2001:db8::5efe:192.168.1.2");
    // the last two words are not an IPv4 address when the 7th is zero
    expect(ipv6Text([0, 0, 0, 0, 0, 0xffff, 0, 1])).toBe("::ffff:0:1");
  });
});
