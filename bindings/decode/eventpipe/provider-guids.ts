// The GUID an EventPipe file's provider has, as TraceEvent gives it from the provider's name: fixed for
// the .NET runtime's providers and a few others, else the EventSource name hash.

import { DOTNET_RUNTIME_GUID } from "../../schema/known-providers.js";

/** The fixed GUIDs TraceEvent gives providers by name (EventPipeMetadata.GetProviderGuidFromProviderName). */
const FIXED_GUIDS: Record<string, string> = {
  "Microsoft-Windows-DotNETRuntime": DOTNET_RUNTIME_GUID,
  "Microsoft-Windows-DotNETRuntimeRundown": "a669021c-c450-4609-a035-5af59af4df18",
  "Microsoft-Windows-DotNETRuntimePrivate": "763fd754-7086-4dfe-95eb-c01a46faf4ca",
  "Microsoft-Windows-DotNETRuntimeStress": "cc2bcbba-16b6-4cf3-8990-d74c2e8af500",
  "System.Threading.Tasks.TplEventSource": "2e5dba47-a3d2-4d16-8ee0-6671ffdcd7b5",
  FrameworkEventSource: "8e9f5090-2d75-4d03-8a81-e5afbf85daf1",
  "Microsoft-Windows-Application Server-Applications": "c651f5f6-1c0d-492e-8ae1-b4efd7c9d503",
  "Microsoft-DotNETCore-SampleProfiler": "3c530d44-97ae-513a-1e6d-783e8f8e03a9",
};

/** The namespace an EventSource's GUID is hashed in, before its name. */
const EVENTSOURCE_NAMESPACE = [0x48, 0x2c, 0x2d, 0xb2, 0xc3, 0x90, 0x47, 0xc8, 0x87, 0xf8, 0x1a, 0x15, 0xbf, 0xc1, 0x30, 0xfb];

/** The fixed GUID of a provider by name (lower case, dashed), or undefined when its GUID is the name hash. */
export function fixedProviderGuid(name: string): string | undefined {
  return Object.hasOwn(FIXED_GUIDS, name) ? FIXED_GUIDS[name] : undefined;
}

/** A provider's GUID in memory (.NET) byte order, from its name: fixed, or the EventSource name hash. */
export async function providerGuidBytes(name: string): Promise<Uint8Array> {
  const fixed = fixedProviderGuid(name);
  if (fixed) return guidBytes(fixed);
  const upper = (name.startsWith("*") ? name.slice(1) : name).toUpperCase();
  const input = new Uint8Array(16 + upper.length * 2);
  input.set(EVENTSOURCE_NAMESPACE);
  for (let i = 0; i < upper.length; i++) {
    input[16 + 2 * i] = upper.charCodeAt(i) >> 8; // UTF-16 big-endian
    input[17 + 2 * i] = upper.charCodeAt(i) & 0xff;
  }
  const h = new Uint8Array(await crypto.subtle.digest("SHA-1", input)).slice(0, 16);
  h[7] = (h[7] & 0x0f) | 0x50;
  return h;
}

function guidBytes(guid: string): Uint8Array {
  const hex = guid.replace(/-/g, "");
  const b = Uint8Array.from({ length: 16 }, (_, i) => parseInt(hex.slice(2 * i, 2 * i + 2), 16));
  // Data1, Data2, Data3 are little-endian in memory
  return Uint8Array.from([b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], ...b.subarray(8)]);
}
