// Provider names beyond KNOWN_PROVIDERS: the OS table generated from scripts/data (the generator's
// output is the committed file), names it gives, and the order of sources in `summary` (the trace's
// own manifest before the OS table).

import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { EtlWriter } from "../dist/bindings/generator/etl-writer.js";
import { OS_PROVIDERS, osProviderName } from "../dist/bindings/naming/os-names.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CLI = join(ROOT, "dist/bindings/cli/etw-wasm.js");
const HTTP = "dd5ef90a-6398-47a4-ad34-4dcecdef795f"; // Microsoft-Windows-HttpService in the listing
const WINRM = "a7975c8f-ac13-49f1-87da-5a984a4ab417"; // Microsoft-Windows-WinRM

function summaryOf(bytes: Uint8Array): string {
  const dir = mkdtempSync(join(tmpdir(), "etw-names-"));
  const file = join(dir, "t.etl");
  writeFileSync(file, bytes);
  const r = spawnSync(process.execPath, [CLI, "summary", file], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

function traceWith(records: { provider: string; id: number; payload: Uint8Array }[]): Uint8Array {
  const w = new EtlWriter({ perfFreq: 1_000_000n });
  records.forEach((r, k) =>
    w.event(0, {
      headerType: 0x13,
      provider: r.provider,
      id: r.id,
      version: 0,
      level: 4,
      opcode: 0,
      task: 0,
      keywords: 0n,
      pid: 100,
      tid: 200,
      ts: w.anchor + BigInt(1000 * (k + 1)),
      payload: r.payload,
    }),
  );
  return w.finish();
}

/** An EventSource ManifestData event (id 0xFFFE): format, versions, magic 0x5B, one chunk of XML. */
function manifestPayload(guid: string, name: string): Uint8Array {
  const xml =
    `<instrumentationManifest xmlns="http://schemas.microsoft.com/win/2004/08/events"><instrumentation><events>` +
    `<provider name="${name}" guid="{${guid}}" symbol="X"></provider></events></instrumentation></instrumentationManifest>`;
  const text = new TextEncoder().encode(xml);
  const out = new Uint8Array(8 + text.length);
  out.set([1, 1, 0, 0x5b, 1, 0, 0, 0]);
  out.set(text, 8);
  return out;
}

describe("OS provider table", () => {
  it("the generator's output is the committed bindings/schema/generated/os-providers.ts", () => {
    const dir = mkdtempSync(join(tmpdir(), "etw-gen-"));
    const out = join(dir, "os-providers.ts");
    const r = spawnSync(process.execPath, [join(ROOT, "scripts/gen-os-providers.mjs"), join(ROOT, "scripts/data/W10_1909_LogmanQueryProviders.txt"), out], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(readFileSync(join(ROOT, "bindings/schema/generated/os-providers.ts"), "utf8"));
  });

  it("GUIDs from the listing resolve to their names (lower-case, no braces; first name of a repeated GUID)", () => {
    expect(Object.keys(OS_PROVIDERS)).toHaveLength(1078);
    expect(osProviderName(HTTP)).toBe("Microsoft-Windows-HttpService");
    expect(osProviderName("{A7975C8F-AC13-49F1-87DA-5A984A4AB417}")).toBe("Microsoft-Windows-WinRM");
    expect(osProviderName("22fb2cd6-0e7b-422b-a0c7-2fad1fd0e716")).toBe("Microsoft-Windows-Kernel-Process");
    expect(osProviderName("54849625-5478-4994-a5ba-3e3b0328c30d")).toBe("Microsoft-Windows-Security-Auditing");
    expect(osProviderName("0888e5ef-9b98-4695-979d-e92ce4247224")).toBe("Microsoft-Windows-RestartManager");
    expect(osProviderName("485e7de9-0a80-11d8-ad15-505054503030")).toBe("UMDF - Framework Trace");
    expect(osProviderName("00000000-0000-0000-0000-000000000001")).toBeUndefined();
    expect(osProviderName("constructor")).toBeUndefined();
    for (const guid of Object.keys(OS_PROVIDERS)) expect(guid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });
});

describe("summary names providers", () => {
  it("an EVENT_HEADER record of a well-known OS provider shows its name, with the GUID", () => {
    const out = summaryOf(traceWith([{ provider: HTTP, id: 1, payload: new Uint8Array(4) }]));
    expect(out).toMatch(/^\s+1\s+Microsoft-Windows-HttpService\s+\{dd5ef90a-6398-47a4-ad34-4dcecdef795f\}$/m);
    expect(out).not.toMatch(/^\s+\d+\s+\{dd5ef90a-6398-47a4-ad34-4dcecdef795f\}$/m);
    expect(out).toContain("Microsoft-Windows-HttpService/EventID(1)");
  });

  it("a name from the trace's own EventSource manifest wins over the OS table", () => {
    const out = summaryOf(
      traceWith([
        { provider: WINRM, id: 0xfffe, payload: manifestPayload(WINRM, "My-Own-WinRM-Source") },
        { provider: WINRM, id: 1, payload: new Uint8Array(4) },
      ]),
    );
    expect(out).toMatch(/^\s+2\s+My-Own-WinRM-Source\s+\{a7975c8f-ac13-49f1-87da-5a984a4ab417\}$/m);
    expect(out).not.toContain("Microsoft-Windows-WinRM");
  });
});
