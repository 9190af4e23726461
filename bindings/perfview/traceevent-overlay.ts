// TraceEvent's view of the .NET runtime events (the PayloadNames, C# property types, enums and computed
// properties of its ClrTraceEventParser / ClrPrivateTraceEventParser classes), as data laid over the manifest
// schema of bindings/generated/clr-schema.ts. Names, order and types follow TraceEvent; values come from the
// manifest fields named in `field`, or from `compute`.

import type { FieldValue } from "../schema/clr-payload.js";
import { bytesText, hex8 } from "./dotnet-format.js";

/** TraceEvent releases whose payload names differ: "current" (PerfView HEAD) and "2020" (mid-2020). */
export type TraceEventEdition = "current" | "2020";

/** A C# enum: members (value, name) and whether it is [Flags]. */
export interface EnumDef {
  name: string;
  flags: boolean;
  members: ReadonlyArray<readonly [number, string]>;
}

/**
 * C# type of a property, which decides PayloadString: int/long -> "n0", Address (ulong) -> "0x" + x8,
 * double -> "n3", bool -> True/False, other integer types -> plain digits, enums -> names.
 */
export type ValueKind = "int" | "long" | "addr" | "double" | "bool" | "str" | "guid" | "plain" | EnumDef;

export interface FieldAccess {
  /** A decoded manifest field (undefined when the event's version lacks it). */
  get(name: string): FieldValue | undefined;
  version: number;
  payloadLength: number;
  pointerSize: number;
  payload: Uint8Array;
  pid: number;
}

export interface OverlayField {
  /** Printed name. */
  name: string;
  /** Manifest field holding the value (default: `name`). */
  field?: string;
  kind: ValueKind;
  /** PayloadValue is null (printed empty) below this event version. */
  nullBelow?: number;
  /** Computed value; null prints empty. */
  compute?: (f: FieldAccess, state: OverlayState) => FieldValue | null;
  /** Only printed by these editions. */
  editions?: readonly TraceEventEdition[];
}

/** Trace-wide state some computed properties need (TraceEvent keeps it in its parser state). */
export interface OverlayState {
  /** Type name from BulkType events: (process id, type id) -> name. */
  typeName(pid: number, typeId: bigint): string;
  /** The TraceEvent release being reproduced. */
  readonly edition: TraceEventEdition;
}

const E = (name: string, flags: boolean, members: [number, string][]): EnumDef => ({ name, flags, members });

const ENUMS = {
  GCReason: E("GCReason", false, [
    [0, "AllocSmall"],
    [1, "Induced"],
    [2, "LowMemory"],
    [3, "Empty"],
    [4, "AllocLarge"],
    [5, "OutOfSpaceSOH"],
    [6, "OutOfSpaceLOH"],
    [7, "InducedNotForced"],
    [8, "Internal"],
    [9, "InducedLowMemory"],
    [10, "InducedCompacting"],
    [11, "LowMemoryHost"],
    [12, "PMFullGC"],
    [13, "LowMemoryHostBlocking"],
  ]),
  GCType: E("GCType", false, [
    [0, "NonConcurrentGC"],
    [1, "BackgroundGC"],
    [2, "ForegroundGC"],
  ]),
  GCSegmentType: E("GCSegmentType", false, [
    [0, "SmallObjectHeap"],
    [1, "LargeObjectHeap"],
    [2, "ReadOnlyHeap"],
    [3, "PinnedObjectHeap"],
  ]),
  GCAllocationKind: E("GCAllocationKind", false, [
    [0, "Small"],
    [1, "Large"],
    [2, "Pinned"],
  ]),
  GCSuspendEEReason: E("GCSuspendEEReason", false, [
    [0, "SuspendOther"],
    [1, "SuspendForGC"],
    [2, "SuspendForAppDomainShutdown"],
    [3, "SuspendForCodePitching"],
    [4, "SuspendForShutdown"],
    [5, "SuspendForDebugger"],
    [6, "SuspendForGCPrep"],
    [7, "SuspendForDebuggerSweep"],
  ]),
  GCGlobalMechanisms: E("GCGlobalMechanisms", true, [
    [0, "None"],
    [1, "Concurrent"],
    [2, "Compaction"],
    [4, "Promotion"],
    [8, "Demotion"],
    [16, "CardBundles"],
    [32, "Elevation"],
  ]),
  GCPauseMode: E("GCPauseMode", false, [
    [-1, "Invalid"],
    [0, "Batch"],
    [1, "Interactive"],
    [2, "LowLatency"],
    [3, "SustainedLowLatency"],
    [4, "NoGC"],
  ]),
  GCBucketKind: E("GCBucketKind", false, [
    [0, "FreeListItems"],
    [1, "PlugsInCondemned"],
  ]),
  GCHandleKind: E("GCHandleKind", false, [
    [0, "WeakShort"],
    [1, "WeakLong"],
    [2, "Strong"],
    [3, "Pinned"],
    [4, "Variable"],
    [5, "RefCounted"],
    [6, "Dependent"],
    [7, "AsyncPinned"],
    [8, "SizedRef"],
    [-1, "DependendAsyncPinned"],
  ]),
  GCRootKind: E("GCRootKind", false, [
    [0, "Stack"],
    [1, "Finalizer"],
    [2, "Handle"],
    [3, "Older"],
    [4, "SizedRef"],
    [5, "Overflow"],
    [6, "DependentHandle"],
    [7, "NewFQ"],
    [8, "Steal"],
    [9, "BGC"],
  ]),
  gc_heap_compact_reason: E("gc_heap_compact_reason", false, [
    [0, "compact_low_ephemeral"],
    [1, "compact_high_frag"],
    [2, "compact_no_gaps"],
    [3, "compact_loh_forced"],
    [4, "compact_last_gc"],
    [5, "compact_induced_compacting"],
    [6, "compact_fragmented_gen0"],
    [7, "compact_high_mem_load"],
    [8, "compact_high_mem_frag"],
    [9, "compact_vhigh_mem_frag"],
    [10, "compact_no_gc_mode"],
    [11, "max_compact_reasons_count"],
    [1024, "not_specified"],
  ]),
  gc_heap_expand_mechanism: E("gc_heap_expand_mechanism", false, [
    [0, "expand_reuse_normal"],
    [1, "expand_reuse_bestfit"],
    [2, "expand_new_seg_ep"],
    [3, "expand_new_seg"],
    [4, "expand_no_memory"],
    [5, "expand_next_full_gc"],
    [6, "max_expand_mechanisms_count"],
    [1024, "not_specified"],
  ]),
  gc_concurrent_compact_reason: E("gc_concurrent_compact_reason", false, [
    [0, "concurrent_compact_high_frag"],
    [1, "concurrent_compact_c_mark"],
    [2, "max_concurrent_compat_reason"],
    [1024, "not_specified"],
  ]),
  StartupFlags: E("StartupFlags", true, [
    [0, "None"],
    [0x1, "CONCURRENT_GC"],
    [0x2, "LOADER_OPTIMIZATION_SINGLE_DOMAIN"],
    [0x4, "LOADER_OPTIMIZATION_MULTI_DOMAIN"],
    [0x10, "LOADER_SAFEMODE"],
    [0x100, "LOADER_SETPREFERENCE"],
    [0x1000, "SERVER_GC"],
    [0x2000, "HOARD_GC_VM"],
    [0x4000, "SINGLE_VERSION_HOSTING_INTERFACE"],
    [0x10000, "LEGACY_IMPERSONATION"],
    [0x20000, "DISABLE_COMMITTHREADSTACK"],
    [0x40000, "ALWAYSFLOW_IMPERSONATION"],
    [0x80000, "TRIM_GC_COMMIT"],
    [0x100000, "ETW"],
    [0x200000, "SERVER_BUILD"],
    [0x400000, "ARM"],
  ]),
  StartupMode: E("StartupMode", true, [
    [0, "None"],
    [1, "ManagedExe"],
    [2, "HostedCLR"],
    [4, "IJW"],
    [8, "COMActivated"],
    [16, "Other"],
  ]),
  RuntimeSku: E("RuntimeSku", true, [
    [0, "None"],
    [1, "DesktopClr"],
    [2, "CoreClr"],
  ]),
  AppDomainFlags: E("AppDomainFlags", true, [
    [0, "None"],
    [1, "Default"],
    [2, "Executable"],
    [4, "Shared"],
  ]),
  AssemblyFlags: E("AssemblyFlags", true, [
    [0, "None"],
    [1, "DomainNeutral"],
    [2, "Dynamic"],
    [4, "Native"],
    [8, "Collectible"],
    [16, "ReadyToRun"],
  ]),
  ModuleFlags: E("ModuleFlags", true, [
    [0, "None"],
    [1, "DomainNeutral"],
    [2, "Native"],
    [4, "Dynamic"],
    [8, "Manifest"],
    [16, "IbcOptimized"],
    [32, "ReadyToRunModule"],
    [64, "PartialReadyToRunModule"],
  ]),
  MethodFlags: E("MethodFlags", true, [
    [0, "None"],
    [1, "Dynamic"],
    [2, "Generic"],
    [4, "HasSharedGenericCode"],
    [8, "Jitted"],
    [16, "JitHelper"],
    [32, "ProfilerRejectedPrecompiledCode"],
    [64, "ReadyToRunRejectedPrecompiledCode"],
  ]),
  GcJoinTime: E("GcJoinTime", false, [
    [0, "Start"],
    [1, "End"],
  ]),
  GcJoinType: E("GcJoinType", false, [
    [0, "LastJoin"],
    [1, "Join"],
    [2, "Restart"],
    [3, "FirstJoin"],
  ]),
  OptimizationTier: E("OptimizationTier", false, [
    [0, "Unknown"],
    [1, "MinOptJitted"],
    [2, "Optimized"],
    [3, "QuickJitted"],
    [4, "OptimizedTier1"],
    [5, "ReadyToRun"],
    [6, "PreJIT"],
    [7, "OptimizedTier1OSR"],
    [8, "QuickJittedInstrumented"],
    [9, "OptimizedTier1Instrumented"],
  ]),
  ExceptionThrownFlags: E("ExceptionThrownFlags", true, [
    [0, "None"],
    [1, "HasInnerException"],
    [2, "Nested"],
    [4, "ReThrown"],
    [8, "CorruptedState"],
    [16, "CLSCompliant"],
  ]),
  TieredCompilationSettingsFlags: E("TieredCompilationSettingsFlags", true, [
    [0, "None"],
    [1, "QuickJit"],
    [2, "QuickJitForLoops"],
    [4, "TieredPGO"],
    [8, "ReadyToRun"],
  ]),
  GCSettingsFlags: E("GCSettingsFlags", true, [
    [0, "None"],
    [1, "GCSettingsConcurrent"],
    [2, "GCSettingsLargePages"],
    [4, "GCSettingsFrozenSegs"],
    [8, "GCSettingsHardLimitConfig"],
    [16, "GCSettingsNoAffinitize"],
  ]),
  NgenBindReason: E("NgenBindReason", false, [
    [0, "START_BIND"],
    [1, "NO_INDEX"],
    [2, "SYSTEM_ASSEMBLY_NOT_AVAILABLE"],
    [3, "NO_NATIVE_IMAGE"],
    [4, "REJECT_CONFIG_MASK"],
    [5, "FAIL"],
    [6, "INDEX_CORRUPTION"],
    [7, "REJECT_TIMESTAMP"],
    [8, "REJECT_NATIVEIMAGE_NOT_FOUND"],
    [9, "REJECT_IL_SIG"],
    [10, "REJECT_LOADER_EVAL_FAIL"],
    [11, "MISSING_FOUND"],
    [12, "REJECT_HOSTASM"],
    [13, "REJECT_IL_NOT_FOUND"],
    [14, "REJECT_APPBASE_NOT_FILE"],
    [15, "BIND_DEPEND_REJECT_REF_DEF_MISMATCH"],
    [16, "BIND_DEPEND_REJECT_NGEN_SIG"],
    [17, "APPLY_EXTERNAL_RELOCS_FAILED"],
    [18, "SYSTEM_ASSEMBLY_NATIVEIMAGE_NOT_AVAILABLE"],
    [19, "ASSEMBLY_HAS_DIFFERENT_GRANT"],
    [20, "ASSEMBLY_NOT_DOMAIN_NEUTRAL"],
    [21, "NATIVEIMAGE_VERSION_MISMATCH"],
    [22, "LOADFROM_NOT_ALLOWED"],
    [23, "DEPENDENCY_HAS_DIFFERENT_IDENTITY"],
  ]),
  ContentionFlags: E("ContentionFlags", false, [
    [0, "Managed"],
    [1, "Native"],
  ]),
  ThreadAdjustmentReason: E("ThreadAdjustmentReason", false, [
    [0, "Warmup"],
    [1, "Initializing"],
    [2, "RandomMove"],
    [3, "ClimbingMove"],
    [4, "ChangePoint"],
    [5, "Stabilizing"],
    [6, "Starvation"],
    [7, "ThreadTimedOut"],
    [8, "CooperativeBlocking"],
  ]),
  TypeFlags: E("TypeFlags", true, [
    [0, "None"],
    [1, "Delegate"],
    [2, "Finalizable"],
    [4, "ExternallyImplementedCOMObject"],
    [8, "Array"],
    [0x100, "ArrayRankBit0"],
    [0x200, "ArrayRankBit1"],
    [0x400, "ArrayRankBit2"],
    [0x800, "ArrayRankBit3"],
    [0x1000, "ArrayRankBit4"],
    [0x2000, "ArrayRankBit5"],
  ]),
  // TraceEvent's enum has no StructMarshal (0x40): that bit prints as a number
  ILStubGeneratedFlags: E("ILStubGeneratedFlags", true, [
    [0, "None"],
    [1, "ReverseInterop"],
    [2, "ComInterop"],
    [4, "NGenedStub"],
    [8, "Delegate"],
    [16, "VarArg"],
    [32, "UnmanagedCallee"],
  ]),
  TailCallType: E("TailCallType", false, [
    [-1, "Unknown"],
    [0, "OptimizedTailCall"],
    [1, "RecursiveLoop"],
    [2, "HelperAssistedTailCall"],
  ]),
  KnownPathSource: E("KnownPathSource", false, [
    [0, "ApplicationAssemblies"],
    [1, "AppNativeImagePaths"],
    [2, "AppPaths"],
    [3, "PlatformResourceRoots"],
    [4, "SatelliteSubdirectory"],
  ]),
  ModuleRangeType: E("ModuleRangeType", true, [
    [0, "None"],
    [1, "HotRange"],
    [2, "WarmRange"],
    [4, "ColdRange"],
    [8, "HotColdSortedRange"],
  ]),
  ModuleRangeIBCType: E("ModuleRangeIBCType", true, [
    [0, "None"],
    [1, "IBCUnprofiledSection"],
    [2, "IBCProfiledSection"],
  ]),
  ModuleRangeSectionType: E("ModuleRangeSectionType", false, [
    [1, "ModuleSection"],
    [2, "EETableSection"],
    [3, "WriteDataSection"],
    [4, "WriteableDataSection"],
    [5, "DataSection"],
    [6, "RVAStaticsSection"],
    [7, "EEDataSection"],
    [8, "DelayLoadInfoTableEagerSection"],
    [9, "DelayLoadInfoTableSection"],
    [10, "EEReadonlyData"],
    [11, "ReadonlyData"],
    [12, "ClassSection"],
    [13, "CrossDomainInfoSection"],
    [14, "MethodDescSection"],
    [15, "MethodDescWriteableSection"],
    [16, "ExceptionSection"],
    [17, "InstrumentSection"],
    [18, "VirtualImportThunkSection"],
    [19, "ExternalMethodThunkSection"],
    [20, "HelperTableSection"],
    [21, "MethodPrecodeWriteableSection"],
    [22, "MethodPrecodeWriteSection"],
    [23, "MethodPrecodeSection"],
    [24, "Win32ResourcesSection"],
    [25, "HeaderSection"],
    [26, "MetadataSection"],
    [27, "DelayLoadInfoSection"],
    [28, "ImportTableSection"],
    [29, "CodeSection"],
    [30, "CodeHeaderSection"],
    [31, "CodeManagerSection"],
    [32, "UnwindDataSection"],
    [33, "RuntimeFunctionSection"],
    [34, "StubsSection"],
    [35, "StubDispatchDataSection"],
    [36, "ExternalMethodDataSection"],
    [37, "DelayLoadInfoDelayListSection"],
    [38, "ReadonlySharedSection"],
    [39, "ReadonlySection"],
    [40, "ILSection"],
    [41, "GCInfoSection"],
    [42, "ILMetadataSection"],
    [43, "ResourcesSection"],
    [44, "CompressedMapsSection"],
    [45, "DebugSection"],
    [46, "BaseRelocsSection"],
  ]),
} as const;

const num = (v: FieldValue | undefined): number =>
  typeof v === "number" ? v : typeof v === "bigint" ? Number(BigInt.asIntN(64, v)) : typeof v === "boolean" ? (v ? 1 : 0) : 0;
const big = (v: FieldValue | undefined): bigint => (typeof v === "bigint" ? v : typeof v === "number" ? BigInt(v) : 0n);

// ------------------------------------------------------------------ shared field lists

const CID: OverlayField = { name: "ClrInstanceID", kind: "int" };
const F = (name: string, kind: ValueKind, extra: Partial<OverlayField> = {}): OverlayField => ({ name, kind, ...extra });

const ONLY_CID: OverlayField[] = [CID];
const MARK: OverlayField[] = [F("HeapNum", "int"), CID];

/** File name of a path (TraceEvent's ModuleILFileName). */
function fileName(path: string): string {
  const i = Math.max(path.lastIndexOf("\\"), path.lastIndexOf("/"));
  return i >= 0 ? path.slice(i + 1) : path;
}

const MODULE_LOAD: OverlayField[] = [
  F("ModuleID", "long"),
  F("AssemblyID", "long"),
  F("ModuleFlags", ENUMS.ModuleFlags),
  F("ModuleILPath", "str"),
  F("ModuleNativePath", "str"),
  F("ManagedPdbSignature", "guid"),
  F("ManagedPdbAge", "int"),
  F("ManagedPdbBuildPath", "str"),
  F("NativePdbSignature", "guid"),
  F("NativePdbAge", "int"),
  F("NativePdbBuildPath", "str"),
  F("ModuleILFileName", "str", { compute: (f) => fileName(String(f.get("ModuleILPath") ?? "")) }),
];
const DOMAIN_MODULE: OverlayField[] = [
  F("ModuleID", "long"),
  F("AssemblyID", "long"),
  F("AppDomainID", "long"),
  F("ModuleFlags", ENUMS.ModuleFlags),
  F("ModuleILPath", "str"),
  F("ModuleNativePath", "str"),
  CID,
];
const ASSEMBLY: OverlayField[] = [
  F("AssemblyID", "long"),
  F("AppDomainID", "long"),
  F("AssemblyFlags", ENUMS.AssemblyFlags),
  F("FullyQualifiedAssemblyName", "str"),
  F("BindingID", "long"),
  CID,
];
const APPDOMAIN: OverlayField[] = [
  F("AppDomainID", "long"),
  F("AppDomainFlags", ENUMS.AppDomainFlags),
  F("AppDomainName", "str"),
  F("AppDomainIndex", "int"),
  CID,
];
/**
 * MethodLoadUnloadTraceDataBase: MethodFlags without the optimization tier (bits 7-9) and the extent (bits 28-31);
 * OptimizationTier is Unknown unless the method is Jitted. MethodLoadUnloadTraceData (Load, Unload, DCStartV2 ..)
 * has no ReJITID; the Verbose class reads ReJITID from version 2 (0 below).
 */
const METHOD_FLAGS = F("MethodFlags", ENUMS.MethodFlags, { compute: (f) => num(f.get("MethodFlags")) & ~0xf0000380 });
const OPTIMIZATION_TIER = F("OptimizationTier", ENUMS.OptimizationTier, {
  compute: (f) => {
    const raw = num(f.get("MethodFlags"));
    return raw & 8 ? (raw >>> 7) & 7 : 0;
  },
});
const METHOD_VERBOSE: OverlayField[] = [
  F("MethodID", "long"),
  F("ModuleID", "long"),
  F("MethodStartAddress", "addr"),
  F("MethodSize", "int"),
  F("MethodToken", "int"),
  METHOD_FLAGS,
  F("MethodNamespace", "str"),
  F("MethodName", "str"),
  F("MethodSignature", "str"),
  CID,
  F("ReJITID", "long", { compute: (f) => f.get("ReJITID") ?? 0n }),
  OPTIMIZATION_TIER,
];
const METHOD_LOAD: OverlayField[] = [
  F("MethodID", "long"),
  F("ModuleID", "long"),
  F("MethodStartAddress", "addr"),
  F("MethodSize", "int"),
  F("MethodToken", "int"),
  METHOD_FLAGS,
  CID,
  OPTIMIZATION_TIER,
];
const RUNTIME_INFO: OverlayField[] = [
  CID,
  F("Sku", ENUMS.RuntimeSku),
  F("BclMajorVersion", "int"),
  F("BclMinorVersion", "int"),
  F("BclBuildNumber", "int"),
  F("BclQfeNumber", "int"),
  F("VMMajorVersion", "int"),
  F("VMMinorVersion", "int"),
  F("VMBuildNumber", "int"),
  F("VMQfeNumber", "int"),
  F("StartupFlags", ENUMS.StartupFlags),
  F("StartupMode", ENUMS.StartupMode),
  F("CommandLine", "str"),
  F("ComObjectGuid", "guid"),
  F("RuntimeDllPath", "str"),
];
const BINDING: OverlayField[] = [
  F("AppDomainID", "int"),
  F("LoadContextID", "int"),
  F("FromLoaderCache", "int"),
  F("DynamicLoad", "int"),
  F("AssemblyCodebase", "str"),
  F("AssemblyName", "str"),
  CID,
];
const JITTING_STARTED: OverlayField[] = [
  F("MethodID", "long"),
  F("ModuleID", "long"),
  F("MethodToken", "int"),
  F("MethodILSize", "int"),
  F("MethodNamespace", "str"),
  F("MethodName", "str"),
  F("MethodSignature", "str"),
  CID,
];

/** The GCPerHeapHistory class reads its payload by version and size (it predates the manifest's layouts). */
function perHeapHistory(): OverlayField[] {
  type Layout = { v: number; minor: number; ptr: number; gen: number; dv: DataView; len: number };
  const layout = (f: FieldAccess): Layout => {
    const p = f.payload;
    const dv = new DataView(p.buffer, p.byteOffset, p.length);
    const ptr = f.pointerSize;
    const gen = 10 * ptr;
    let minor = 0;
    if (f.version === 0) {
      const size = gen * 5 + 25;
      minor = f.payloadLength === size - 4 ? 1 : f.payloadLength === size ? 2 : 0;
    } else if (f.version === 2) {
      const size = gen * 5 + 4 * 6 + 1 + 8;
      minor = f.payloadLength === size - 8 ? 1 : f.payloadLength === size ? 2 : 0;
    }
    return { v: f.version, minor, ptr, gen, dv, len: p.length };
  };
  const i32 = (l: Layout, o: number) => (o >= 0 && o + 4 <= l.len ? l.dv.getInt32(o, true) : 0);
  const ptrAt = (l: Layout, o: number) => (o >= 0 && o + l.ptr <= l.len ? (l.ptr === 8 ? l.dv.getBigInt64(o, true) : BigInt(l.dv.getUint32(o, true))) : 0n);
  const host = (l: Layout, o: number, n: number) => o + (l.ptr - 4) * n;
  const setBit = (raw: number, count: number): number => {
    if (raw === 0) return 1024;
    let i = 0;
    while ((raw & 1) !== 1) {
      raw >>= 1;
      i++;
    }
    return i < count ? i : 1024;
  };
  const v3 = (f: FieldAccess) => f.version >= 3;
  const v3ptr = (o: number, n: number) => (f: FieldAccess) => {
    if (!v3(f)) return null;
    const l = layout(f);
    return ptrAt(l, host(l, o, n));
  };
  return [
    F("ClrInstanceID", "int", {
      compute: (f) => {
        const l = layout(f);
        if (f.version === 0 || f.version === 2) return l.len ? f.payload[l.len - 1] : 0;
        return f.version >= 3 ? (l.len >= 2 ? l.dv.getInt16(0, true) : 0) : -1;
      },
    }),
    F("FreeListAllocated", "long", { compute: v3ptr(2, 0) }),
    F("FreeListRejected", "long", { compute: v3ptr(6, 1) }),
    F("EndOfSegAllocated", "long", { compute: v3ptr(10, 2) }),
    F("CondemnedAllocated", "long", { compute: v3ptr(14, 3) }),
    F("PinnedAllocated", "long", { compute: v3ptr(18, 4) }),
    F("PinnedAllocatedAdvance", "long", { compute: v3ptr(22, 5) }),
    F("RunningFreeListEfficiency", "int", { compute: (f) => (v3(f) ? i32(layout(f), host(layout(f), 26, 6)) : null) }),
    F("CondemnReasons0", "int", {
      compute: (f) => {
        const l = layout(f);
        if (l.v === 0) return i32(l, l.gen * 5 + 4 * (l.minor === 2 ? 4 : 3));
        if (l.v === 2) return i32(l, l.gen * 5);
        if (l.v >= 3) return i32(l, host(l, 30, 6));
        return -2147483648;
      },
    }),
    F("CondemnReasons1", "int", {
      compute: (f) => {
        const l = layout(f);
        if (l.v === 2) return i32(l, l.gen * 5 + 4);
        if (l.v >= 3) return i32(l, host(l, 34, 6));
        return null;
      },
    }),
    F("CompactMechanisms", ENUMS.gc_heap_compact_reason, {
      compute: (f) => {
        const l = layout(f);
        const raw = l.v === 0 ? i32(l, l.gen * 5 + 8) : l.v === 2 ? i32(l, l.gen * 5 + 16) : l.v >= 3 ? i32(l, host(l, 38, 6)) : 0;
        return setBit(raw, 11);
      },
    }),
    F("ExpandMechanisms", ENUMS.gc_heap_expand_mechanism, {
      compute: (f) => {
        const l = layout(f);
        const raw = l.v === 0 ? i32(l, l.gen * 5 + 4) : l.v === 2 ? i32(l, l.gen * 5 + 12) : l.v >= 3 ? i32(l, host(l, 42, 6)) : 0;
        return setBit(raw, 6);
      },
    }),
    F("ConcurrentCompactMechanisms", ENUMS.gc_concurrent_compact_reason, {
      compute: (f) => {
        const l = layout(f);
        return l.v === 0 && l.minor === 2 ? setBit(i32(l, l.gen * 5 + 12), 2) : null;
      },
    }),
    F("HeapIndex", "int", {
      compute: (f) => {
        const l = layout(f);
        let r = -2147483648;
        if (l.v === 0) r = i32(l, l.len - 5);
        else if (l.v === 2 && (l.minor === 0 || l.minor === 1)) r = i32(l, l.len - 6);
        else if (l.v === 2 && l.minor === 2) r = i32(l, l.len - 14);
        else if (l.v >= 3) r = i32(l, host(l, 46, 6));
        return r < 0 ? 0 : r;
      },
    }),
    F("ExtraGen0Commit", "long", {
      compute: (f) => {
        const l = layout(f);
        if (l.v === 2 && l.minor === 2) return i32(l, l.len - 10);
        if (l.v >= 3) return ptrAt(l, host(l, 50, 6));
        return null;
      },
    }),
    F("Count", "int", {
      compute: (f) => {
        if (!v3(f)) return null;
        const l = layout(f);
        const r = i32(l, host(l, 54, 7));
        return r < 0 ? 0 : r;
      },
    }),
    F("MemoryPressure", "int", {
      compute: (f) => {
        const l = layout(f);
        if (l.v === 0) return i32(l, l.gen * 5);
        if (l.v === 2) return i32(l, l.gen * 5 + 8);
        return null;
      },
    }),
  ];
}

const GLOBAL_HEAP_HISTORY: OverlayField[] = [
  F("FinalYoungestDesired", "long"),
  F("NumHeaps", "int"),
  F("CondemnedGeneration", "int"),
  F("Gen0ReductionCount", "int"),
  F("Reason", ENUMS.GCReason),
  F("GlobalMechanisms", ENUMS.GCGlobalMechanisms),
  F("ClrInstanceID", "int", { nullBelow: 1 }),
  F("PauseMode", ENUMS.GCPauseMode, { nullBelow: 2 }),
  F("MemoryPressure", "int", { nullBelow: 2 }),
  F("CondemnReasons0", "int", { nullBelow: 3 }),
  F("CondemnReasons1", "int", { nullBelow: 3 }),
  F("Count", "int", { nullBelow: 4, editions: ["current"] }),
];

const HEAP_STATS: OverlayField[] = (() => {
  const sizes = ["GenerationSize0", "GenerationSize1", "GenerationSize2", "GenerationSize3", "GenerationSize4"];
  const promoted = ["TotalPromotedSize0", "TotalPromotedSize1", "TotalPromotedSize2", "TotalPromotedSize3", "TotalPromotedSize4"];
  const sum = (f: FieldAccess, names: string[]) => names.reduce((a, n) => a + BigInt.asIntN(64, big(f.get(n))), 0n);
  return [
    F("TotalHeapSize", "long", { compute: (f) => sum(f, sizes) }),
    F("TotalPromoted", "long", { compute: (f) => sum(f, promoted) }),
    F("Depth", "int", {
      compute: (f) => (big(f.get("TotalPromotedSize2")) !== 0n ? 2 : big(f.get("TotalPromotedSize1")) !== 0n ? 1 : 0),
    }),
    F("GenerationSize0", "long"),
    F("TotalPromotedSize0", "long"),
    F("GenerationSize1", "long"),
    F("TotalPromotedSize1", "long"),
    F("GenerationSize2", "long"),
    F("TotalPromotedSize2", "long"),
    F("GenerationSize3", "long"),
    F("TotalPromotedSize3", "long"),
    F("FinalizationPromotedSize", "long"),
    F("FinalizationPromotedCount", "long"),
    F("PinnedObjectCount", "int"),
    F("SinkBlockCount", "int"),
    F("GCHandleCount", "int"),
    CID,
    F("GenerationSize4", "long", { editions: ["current"] }),
    F("TotalPromotedSize4", "long", { editions: ["current"] }),
  ];
})();

const ALLOCATION_TICK: OverlayField[] = [
  F("AllocationAmount", "int"),
  F("AllocationKind", ENUMS.GCAllocationKind),
  CID,
  F("AllocationAmount64", "long"),
  F("TypeID", "addr"),
  F("TypeName", "str"),
  F("HeapIndex", "int"),
  F("Address", "addr"),
  F("ObjectSize", "long", { editions: ["current"] }),
];

/** Little-endian integer of `n` bytes at `o` (fixed-offset getters); bytes past the payload read as 0. */
function leAt(p: Uint8Array, o: number, n: number): bigint {
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(p[o + i] ?? 0);
  return v;
}

// ContentionStartTraceData: LockID, AssociatedObjectID and LockOwnerThreadID are Int64 reads at 3, 11 and 19
// (whatever the pointer size) from version 2 on, else 0; the first two fields are 0 below version 1.
const contentionV2 = (o: number) => (f: FieldAccess) => (f.version >= 2 ? BigInt.asIntN(64, leAt(f.payload, o, 8)) : 0n);
const CONTENTION_START: OverlayField[] = [
  F("ContentionFlags", ENUMS.ContentionFlags),
  CID,
  F("LockID", "addr", { compute: contentionV2(3), editions: ["current"] }),
  F("AssociatedObjectID", "addr", { compute: contentionV2(11), editions: ["current"] }),
  F("LockOwnerThreadID", "long", { compute: contentionV2(19), editions: ["current"] }),
];
// ContentionStopTraceData reads ContentionFlags and ClrInstanceID at every version and DurationNs from
// version 1 (0 before); the 2020 release's ContentionTraceData, shared with Start, read nothing below version 1.
const stopField = (name: string) => (f: FieldAccess, s: OverlayState) => (s.edition === "2020" && f.version < 1 ? 0 : (f.get(name) ?? 0));
const CONTENTION_STOP: OverlayField[] = [
  F("ContentionFlags", ENUMS.ContentionFlags, { compute: stopField("ContentionFlags") }),
  F("ClrInstanceID", "int", { compute: stopField("ClrInstanceID") }),
  F("DurationNs", "double", { editions: ["current"] }),
];

/** MethodILToNativeMapTraceData: the map arrays (and the newer ILVersionID) are not payload fields. */
const IL_TO_NATIVE_MAP: OverlayField[] = [F("MethodID", "long"), F("ReJITID", "long"), F("MethodExtent", "int"), F("CountOfMapEntries", "int"), CID];

/**
 * GCBulkTypeTraceData: TypeID_0 (an Address) and TypeName_0 of the first element; with Count 0 both are the
 * int 0 (PayloadValue returns 0), which prints "0".
 */
const firstType = (f: FieldAccess): Record<string, FieldValue> | undefined => {
  const v = f.get("Values");
  return Array.isArray(v) && v.length ? (v[0] as Record<string, FieldValue>) : undefined;
};
const BULK_TYPE: OverlayField[] = [
  F("Count", "int"),
  CID,
  F("TypeID_0", "plain", {
    compute: (f) => (num(f.get("Count")) === 0 ? "0" : hex8(big(firstType(f)?.TypeID))),
  }),
  F("TypeName_0", "plain", {
    compute: (f) => (num(f.get("Count")) === 0 ? "0" : String(firstType(f)?.Name ?? "")),
  }),
];

/** GCSampledObjectAllocationTraceData (High 20, Low 32). */
const SAMPLED_OBJECT_ALLOCATION: OverlayField[] = [
  F("Address", "addr"),
  F("TypeID", "addr"),
  F("ObjectCountForTypeSample", "int"),
  F("TotalSizeForTypeSample", "long"),
  CID,
];
const BULK_COM_COUNT: OverlayField[] = [
  F("Count", "int", {
    compute: (f) => {
      const n = num(f.get("Count"));
      return f.payloadLength < n * 40 + 6 ? 0 : n;
    },
  }),
  CID,
];
/** GCJoinTraceData: ClrInstanceID 0 below version 1; ID (the JoinID) is GcJoinID.Invalid (~0xff) below version 2. */
const GC_JOIN: OverlayField[] = [
  F("Heap", "int"),
  F("JoinTime", ENUMS.GcJoinTime),
  F("JoinType", ENUMS.GcJoinType),
  F("ClrInstanceID", "int", { compute: (f) => (f.version >= 1 ? (f.get("ClrInstanceID") ?? 0) : 0) }),
  F("ID", "int", { compute: (f) => (f.version >= 2 ? (f.get("JoinID") ?? 0) : -256) }),
];

/** A NUL-terminated UTF-16 string at byte `o` as GetUnicodeStringAt reads it, and the offset after it. */
function utf16At(p: Uint8Array, o: number): { text: string; end: number } {
  let text = "";
  for (let i = o; i + 1 < p.length; i += 2) {
    const c = p[i] | (p[i + 1] << 8);
    if (c === 0) return { text, end: i + 2 };
    text += String.fromCharCode(c);
  }
  return { text, end: p.length };
}

/** ClrStackWalkTraceData names ClrInstanceID and FrameCount only (not the manifest's Reserved1/Reserved2). */
const CLR_STACK_WALK: OverlayField[] = [CID, F("FrameCount", "int")];

/** ThreadCreatedTraceData (AppDomainResourceManagement/ThreadCreated, rundown ThreadDCStop): Flags is an int. */
const THREAD_CREATED: OverlayField[] = [
  F("ManagedThreadID", "long"),
  F("AppDomainID", "long"),
  F("Flags", "int"),
  F("ManagedThreadIndex", "int"),
  F("OSThreadID", "int"),
  CID,
];

const SET_GC_HANDLE: OverlayField[] = [
  F("HandleID", "addr"),
  F("ObjectID", "addr"),
  F("Kind", ENUMS.GCHandleKind),
  F("Generation", "int"),
  F("AppDomainID", "long"),
  CID,
];

const TIERED_COMPILATION_SETTINGS: OverlayField[] = [CID, F("Flags", ENUMS.TieredCompilationSettingsFlags)];

/**
 * MethodDetailsTraceData: PayloadValue has no case 3, so TypeParameterCount is null (empty), index 4
 * (LoaderModuleID) returns TypeParameterCount and index 5 (TypeParameters) returns LoaderModuleID.
 */
const METHOD_DETAILS: OverlayField[] = [
  F("MethodID", "long"),
  F("TypeID", "long"),
  F("MethodToken", "int"),
  F("TypeParameterCount", "int", { compute: () => null }),
  F("LoaderModuleID", "int", { field: "TypeParameterCount" }),
  F("TypeParameters", "long", { field: "LoaderModuleID" }),
];

/** TypeLoadStopTraceData: PayloadValue answers indexes 0 and 1 only; the other three names print empty. */
const TYPE_LOAD_STOP: OverlayField[] = [
  F("TypeLoadStartID", "int"),
  CID,
  F("LoadLevel", "int", { compute: () => null }),
  F("TypeID", "long", { compute: () => null }),
  F("TypeName", "str", { compute: () => null }),
];

/**
 * ContentionLockCreatedTraceData reads LockID and AssociatedObjectID as Int64 at 0 and 8, and ClrInstanceID
 * at 16, whatever the pointer size.
 */
const LOCK_CREATED: OverlayField[] = [
  F("LockID", "addr", { compute: (f) => leAt(f.payload, 0, 8) }),
  F("AssociatedObjectID", "addr", { compute: (f) => leAt(f.payload, 8, 8) }),
  F("ClrInstanceID", "int", { compute: (f) => Number(BigInt.asIntN(16, leAt(f.payload, 16, 2))) }),
];

/** CodeSymbolsTraceData prints the Chunk bytes (byte[]) as well. */
const CODE_SYMBOLS: OverlayField[] = [
  F("ModuleId", "long"),
  F("TotalChunks", "int"),
  F("ChunkNumber", "int"),
  F("ChunkLength", "int"),
  F("Chunk", "str", {
    compute: (f) => {
      const v = f.get("Chunk");
      return v instanceof Uint8Array ? bytesText(v) : "";
    },
  }),
  CID,
];

/**
 * JitInstrumentationDataVerboseTraceData reads MethodToken as Int32 at 24 (inside ModuleID, which ends at 26)
 * and the three strings from 28 (the manifest's start at 30), and names no Data.
 */
const JIT_INSTRUMENTATION_VERBOSE: OverlayField[] = (() => {
  const str = (k: number) => (f: FieldAccess) => {
    let at = { text: "", end: 28 };
    for (let i = 0; i <= k; i++) at = utf16At(f.payload, at.end);
    return at.text;
  };
  return [
    CID,
    F("MethodFlags", "int"),
    F("DataSize", "int"),
    F("MethodID", "long"),
    F("ModuleID", "long"),
    F("MethodToken", "int", { compute: (f) => Number(BigInt.asIntN(32, leAt(f.payload, 24, 4))) }),
    F("MethodNamespace", "str", { compute: str(0) }),
    F("MethodName", "str", { compute: str(1) }),
    F("MethodSignature", "str", { compute: str(2) }),
  ];
})();

/** ModuleRangePrivateTraceData: RangeBegin and RangeSize are the manifest's one-element arrays. */
const first = (name: string) => (f: FieldAccess) => {
  const v = f.get(name);
  return Array.isArray(v) ? ((v[0] as FieldValue) ?? 0) : (v ?? 0);
};
const MODULE_RANGE_PRIVATE: OverlayField[] = [
  CID,
  F("ModuleID", "long"),
  F("RangeBegin", "int", { compute: first("RangeBegin") }),
  F("RangeSize", "int", { compute: first("RangeSize") }),
  F("RangeType", ENUMS.ModuleRangeType),
  F("IBCType", ENUMS.ModuleRangeIBCType),
  F("SectionType", ENUMS.ModuleRangeSectionType),
];

/** Overlays by "providerIndex:eventId" (0 runtime, 1 rundown, 2 stress, 3 private). */
const CLR_OVERLAYS: Readonly<Record<string, readonly OverlayField[]>> = {
  // ---- runtime: GC
  "0:1": [F("Count", "int"), F("Reason", ENUMS.GCReason), F("Depth", "int"), F("Type", ENUMS.GCType), CID, F("ClientSequenceNumber", "long")],
  "0:2": [F("Count", "int"), F("Depth", "int"), CID],
  "0:3": ONLY_CID,
  "0:7": ONLY_CID,
  "0:8": ONLY_CID,
  "0:11": ONLY_CID,
  "0:12": ONLY_CID,
  "0:14": ONLY_CID,
  "0:4": HEAP_STATS,
  "0:5": [F("Address", "addr"), F("Size", "addr"), F("Type", ENUMS.GCSegmentType), CID],
  "0:6": [F("Address", "long"), CID],
  "0:9": [F("Reason", ENUMS.GCSuspendEEReason), F("Count", "int"), CID],
  "0:10": ALLOCATION_TICK,
  "0:13": [F("Count", "int"), CID],
  "0:15": BULK_TYPE,
  "0:16": [F("Index", "int"), F("Count", "int"), CID],
  "0:17": [F("Index", "int"), F("Count", "int"), CID],
  "0:18": [F("Index", "int"), F("Count", "int"), CID],
  "0:19": [F("Index", "int"), F("Count", "int"), CID],
  "0:20": SAMPLED_OBJECT_ALLOCATION,
  "0:21": [F("Index", "int"), F("Count", "int"), CID],
  "0:22": [F("Index", "int"), F("Count", "int"), CID],
  "0:23": [F("Generation", "int"), F("RangeStart", "addr"), F("RangeUsedLength", "addr"), F("RangeReservedLength", "addr"), CID],
  "0:25": MARK,
  "0:26": MARK,
  "0:27": MARK,
  "0:28": MARK,
  "0:29": [F("TypeName", "str", { compute: (f, s) => s.typeName(f.pid, big(f.get("TypeID"))) }), F("ObjectID", "addr"), F("TypeID", "addr"), CID],
  "0:30": SET_GC_HANDLE,
  "0:31": [F("HandleID", "addr"), CID],
  "0:32": SAMPLED_OBJECT_ALLOCATION,
  "0:33": [F("HandleID", "addr"), F("ObjectID", "addr"), F("ObjectSize", "long"), F("TypeName", "str"), CID],
  "0:35": [F("Reason", ENUMS.GCReason), CID],
  // GCBulkRootCCWTraceData / GCBulkRCWTraceData: Count is 0 when the payload is shorter than Count * 40 + 6
  "0:36": BULK_COM_COUNT,
  "0:37": BULK_COM_COUNT,
  "0:38": [F("Count", "int"), F("AppDomainID", "long"), CID],
  "0:202": [F("HeapNum", "int"), CID, F("Type", "int"), F("Promoted", "long", { field: "Bytes" })],
  "0:203": GC_JOIN,
  "0:204": perHeapHistory(),
  "0:205": GLOBAL_HEAP_HISTORY,
  "0:208": [CID, F("Count", "int")],
  "0:209": [CID, F("BucketKind", ENUMS.GCBucketKind), F("TotalSize", "long"), F("Count", "int")],
  // ---- runtime: threads, thread pool
  "0:50": [F("ActiveWorkerThreadCount", "int"), F("RetiredWorkerThreadCount", "int"), CID],
  "0:51": [F("ActiveWorkerThreadCount", "int"), F("RetiredWorkerThreadCount", "int"), CID],
  "0:52": [F("ActiveWorkerThreadCount", "int"), F("RetiredWorkerThreadCount", "int"), CID],
  "0:53": [F("ActiveWorkerThreadCount", "int"), F("RetiredWorkerThreadCount", "int"), CID],
  "0:54": [F("Throughput", "double"), CID],
  "0:55": [F("AverageThroughput", "double"), F("NewWorkerThreadCount", "int"), F("Reason", ENUMS.ThreadAdjustmentReason), CID],
  "0:85": THREAD_CREATED,
  "0:86": [F("ManagedThreadID", "long"), F("AppDomainID", "long"), CID],
  "0:87": [F("ManagedThreadID", "long"), F("AppDomainID", "long"), CID],
  // ---- runtime: exceptions, contention
  "0:80": [
    F("ExceptionType", "str"),
    F("ExceptionMessage", "str"),
    F("ExceptionEIP", "addr"),
    F("ExceptionHRESULT", "int"),
    F("ExceptionFlags", ENUMS.ExceptionThrownFlags),
    CID,
  ],
  "0:81": CONTENTION_START,
  "0:90": LOCK_CREATED,
  "0:91": CONTENTION_STOP,
  // ---- runtime: method (the V2 rundown-style events share the Load classes, and print their newest fields)
  "0:137": METHOD_LOAD,
  "0:138": METHOD_LOAD,
  "0:139": METHOD_VERBOSE,
  "0:140": METHOD_VERBOSE,
  "0:141": METHOD_LOAD,
  "0:142": METHOD_LOAD,
  "0:143": METHOD_VERBOSE,
  "0:144": METHOD_VERBOSE,
  "0:145": JITTING_STARTED,
  "0:72": METHOD_DETAILS,
  "0:74": TYPE_LOAD_STOP,
  "0:88": [
    CID,
    F("ModuleID", "long"),
    F("StubMethodID", "long"),
    F("StubFlags", ENUMS.ILStubGeneratedFlags),
    F("ManagedInteropMethodToken", "int"),
    F("ManagedInteropMethodNamespace", "str"),
    F("ManagedInteropMethodName", "str"),
    F("ManagedInteropMethodSignature", "str"),
    F("NativeMethodSignature", "str"),
    F("StubMethodSignature", "str"),
    F("StubMethodILCode", "str"),
  ],
  "0:188": [
    F("MethodBeingCompiledNamespace", "str"),
    F("MethodBeingCompiledName", "str"),
    F("MethodBeingCompiledNameSignature", "str"),
    F("CallerNamespace", "str"),
    F("CallerName", "str"),
    F("CallerNameSignature", "str"),
    F("CalleeNamespace", "str"),
    F("CalleeName", "str"),
    F("CalleeNameSignature", "str"),
    F("TailPrefix", "bool"),
    F("TailCallType", ENUMS.TailCallType, { compute: (f) => num(f.get("TailCallType")) | 0 }),
    CID,
  ],
  "0:298": JIT_INSTRUMENTATION_VERBOSE,
  // R2RGetEntryPointTraceData stops at ClrInstanceID (no MethodSize of version 1)
  "0:159": [F("MethodID", "long"), F("MethodNamespace", "str"), F("MethodName", "str"), F("MethodSignature", "str"), F("EntryPoint", "long"), CID],
  "0:190": IL_TO_NATIVE_MAP,
  // ---- runtime: loader
  "0:149": MODULE_LOAD,
  "0:150": MODULE_LOAD,
  "0:151": DOMAIN_MODULE,
  "0:152": MODULE_LOAD,
  "0:153": MODULE_LOAD,
  "0:154": ASSEMBLY,
  "0:155": ASSEMBLY,
  "0:156": APPDOMAIN,
  "0:157": APPDOMAIN,
  // ---- runtime: startup
  "0:187": RUNTIME_INFO,
  // ---- runtime: stacks, code symbols, EventSource, tiered compilation, assembly loader
  "0:82": CLR_STACK_WALK,
  "0:260": CODE_SYMBOLS,
  "0:270": [F("EventID", "int"), F("Name", "str", { field: "EventName" }), F("EventSourceName", "str"), F("Payload", "str")],
  "0:280": TIERED_COMPILATION_SETTINGS,
  "0:296": [CID, F("FilePath", "str"), F("Source", ENUMS.KnownPathSource), F("Result", "int")],
  // ---- rundown
  "1:10": [
    F("HardLimit", "long"),
    F("LOHThreshold", "long"),
    F("PhysicalMemoryConfig", "long"),
    F("Gen0MinBudgetConfig", "long"),
    F("Gen0MaxBudgetConfig", "long"),
    F("HighMemPercentConfig", "int"),
    F("BitSettings", ENUMS.GCSettingsFlags),
    CID,
  ],
  "1:141": METHOD_LOAD,
  "1:142": METHOD_LOAD,
  "1:143": METHOD_VERBOSE,
  "1:144": METHOD_VERBOSE,
  "1:145": ONLY_CID,
  "1:146": ONLY_CID,
  "1:147": ONLY_CID,
  "1:148": ONLY_CID,
  "1:149": IL_TO_NATIVE_MAP,
  "1:150": IL_TO_NATIVE_MAP,
  "1:151": DOMAIN_MODULE,
  "1:152": DOMAIN_MODULE,
  "1:153": MODULE_LOAD,
  "1:154": MODULE_LOAD,
  "1:155": ASSEMBLY,
  "1:156": ASSEMBLY,
  "1:157": APPDOMAIN,
  "1:158": APPDOMAIN,
  "1:187": RUNTIME_INFO,
  "1:0": CLR_STACK_WALK,
  "1:159": THREAD_CREATED,
  "1:280": TIERED_COMPILATION_SETTINGS,
  // ---- stress
  "2:1": CLR_STACK_WALK,
  // ---- private
  // GCDecisionTraceData: DoCompact (bool), ClrInstanceID (0 below version 1)
  "3:1": [F("DoCompact", "bool"), CID],
  "3:2": [F("SegmentSize", "long"), F("LargeObjectSegmentSize", "long"), F("ServerGC", "bool"), CID],
  "3:4": perHeapHistory(),
  "3:5": GLOBAL_HEAP_HISTORY,
  // the private GCJoin (event 6) is registered with the public GCJoinTraceData
  "3:6": GC_JOIN,
  "3:7": MARK,
  "3:8": MARK,
  "3:9": MARK,
  "3:10": MARK,
  // BGCOverflowTraceData has no GenNumber (the manifest's version 1)
  "3:22": [F("Min", "long"), F("Max", "long"), F("Objects", "long"), F("IsLarge", "int"), CID],
  ...Object.fromEntries(Array.from({ length: 18 }, (_, k) => [`3:${159 + k}`, BINDING])),
  "3:151": CLR_STACK_WALK,
  "3:158": MODULE_RANGE_PRIVATE,
  "3:194": SET_GC_HANDLE,
  // LoaderHeapAllocRequestTraceData skips the manifest's Unused1 and Unused2
  "3:310": [F("LoaderHeapPtr", "addr"), F("MemoryAddress", "addr"), F("RequestSize", "int"), CID],
  "3:188": [CID, F("BindingID", "long"), F("ReasonCode", ENUMS.NgenBindReason), F("AssemblyName", "str")],
  "3:196": [CID, F("Prepend", "bool"), F("Message", "str")],
};

/** The overlay of a .NET runtime event, if TraceEvent's parser defines its payload names. */
export function clrOverlay(provider: number, id: number): readonly OverlayField[] | undefined {
  return CLR_OVERLAYS[`${provider}:${id}`];
}
