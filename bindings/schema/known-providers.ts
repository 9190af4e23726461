// Names of providers a trace does not name itself: the .NET runtime, the kernel groups (classic
// events without a GUID on disk, presented under their conventional GUIDs) and trace bookkeeping.

export interface KnownProvider {
  name: string;
  /** Kernel group name (the task name TraceEvent shows), for kernel groups. */
  group?: string;
}

const KERNEL = "Windows Kernel";

/** The .NET runtime provider's GUID (Microsoft-Windows-DotNETRuntime): the one place it is written by hand. */
export const DOTNET_RUNTIME_GUID = "e13c0d23-ccbc-4e12-931b-d9cc2eee27e4";

export const KNOWN_PROVIDERS: Readonly<Record<string, KnownProvider>> = {
  [DOTNET_RUNTIME_GUID]: { name: "Microsoft-Windows-DotNETRuntime" },
  "a669021c-c450-4609-a035-5af59af4df18": { name: "Microsoft-Windows-DotNETRuntimeRundown" },
  "cc2bcbba-16b6-4cf3-8990-d74c2e8af500": { name: "Microsoft-Windows-DotNETRuntimeStress" },
  "763fd754-7086-4dfe-95eb-c01a46faf4ca": { name: "Microsoft-Windows-DotNETRuntimePrivate" },
  "7f442d82-0f1d-5155-4b8c-1529eb2e31c2": { name: "Microsoft-DotNETRuntimeMonoProfiler" },
  "68fdd900-4a3e-11d1-84f4-0000f80464e3": { name: KERNEL, group: "EventTrace" },
  "3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c": { name: KERNEL, group: "DiskIO" },
  "3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c": { name: KERNEL, group: "PageFault" },
  "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c": { name: KERNEL, group: "Process" },
  "90cbdc39-4a3e-11d1-84f4-0000f80464e3": { name: KERNEL, group: "FileIO" },
  "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c": { name: KERNEL, group: "Thread" },
  "9a280ac0-c8e0-11d1-84e2-00c04fb998a2": { name: KERNEL, group: "TcpIp" },
  "3282fc76-feed-498e-8aa7-e70f459d430e": { name: KERNEL, group: "Job" },
  "bf3a50c5-a9c9-4988-a005-2df0b7c80f80": { name: KERNEL, group: "UdpIp" },
  "ae53722e-c863-11d2-8659-00c04fa321a1": { name: KERNEL, group: "Registry" },
  "13976d09-a327-438c-950b-7f03192815c7": { name: KERNEL, group: "DbgPrint" },
  "01853a65-418f-4f36-aefc-dc0f1d2fd235": { name: KERNEL, group: "SystemConfig" },
  "99134383-5248-43fc-834b-529454e75df3": { name: KERNEL, group: "LBR" },
  "42695762-ea50-497a-9068-5cbbb35e0b95": { name: KERNEL, group: "Wnf" },
  "0268a8b6-74fd-4302-9dd0-6e8f1795c0cf": { name: KERNEL, group: "Pool" },
  "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc": { name: KERNEL, group: "PerfInfo" },
  "222962ab-6180-4b88-a825-346b75f2a24a": { name: KERNEL, group: "Heap" },
  "89497f50-effe-4440-8cf2-ce6b1cdcaca7": { name: KERNEL, group: "Object" },
  "e43445e0-0903-48c3-b878-ff0fccebdd04": { name: KERNEL, group: "Power" },
  "a9152f00-3f58-4bee-92a1-70c7d079d5dd": { name: KERNEL, group: "ModBound" },
  "2cb15d1d-5fc1-11d2-abe1-00a0c911f518": { name: KERNEL, group: "Image" },
  "b2d14872-7c5b-463d-8419-ee9bf7d23e04": { name: KERNEL, group: "Dpc" },
  "7687a439-f752-45b8-b741-321aec0f8df9": { name: KERNEL, group: "Cc" },
  "3ac66736-cc59-4cff-8115-8df50e39816b": { name: KERNEL, group: "CritSec" },
  "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3": { name: KERNEL, group: "StackWalk" },
  "9aec974b-5b8e-4118-9b92-3186d8002ce5": { name: KERNEL, group: "Ums" },
  "45d8cccd-539f-4b72-a8b7-5c683142609a": { name: KERNEL, group: "ALPC" },
  "d837ca92-12b9-44a5-ad6a-3a65b3578aa8": { name: KERNEL, group: "SplitIO" },
  "c861d0e2-a2c1-4d36-9f9c-970bab943a12": { name: KERNEL, group: "ThreadPool" },
  "7f2a405c-69b5-4bf9-a1f5-30e8f1afab5e": { name: KERNEL, group: "Hypervisor" },
  "2ce9a149-effe-42f0-a635-a1d39e26c8f2": { name: KERNEL, group: "HypervisorX" },
  "6a399ae0-4bc6-4de9-870b-3657f8947e7e": { name: KERNEL, group: "Lost_Event" },
  "b675ec37-bdb6-4648-bc92-f3fdc74d3ca2": { name: "Microsoft-Windows-Kernel-EventTracing" },
  "28ad2447-105b-4fe2-9599-e59b2aa9a634": { name: "KernelTraceControl" },
  "b3e675d7-2554-4f18-830b-2762732560de": { name: "KernelTraceControl", group: "ImageID" },
  "bbccf6c1-6cd1-48c4-80ff-839482e37671": { name: "KernelTraceControl", group: "MetaData" },
  "9b79ee91-b5fd-41c0-a243-4248e266e9d0": { name: "KernelTraceControl", group: "SysConfig" },
  "ed54dff8-c409-4cf6-bf83-05e1e61a09c4": { name: "KernelTraceControl", group: "WinSat" },
  "bf6ef1cb-89b5-0490-80ac-b180cfbcff0f": { name: "KernelTraceControl", group: "PerfTrack" },
  "9e814aad-3204-11d2-9a82-006008a86939": { name: KERNEL },
};
