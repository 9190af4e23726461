// Shapes of the .NET runtime schema: CLR_EVENTS and CLR_PROVIDERS, unpacked by clr-payload.ts from the
// generated bindings/schema/generated/clr-schema.ts.

export interface ClrFieldSchema {
  name: string;
  /** T_* code of assembly/codes.ts. */
  type: number;
  /** Declared hexadecimal (outType HexInt32/HexInt64). */
  hex?: 1;
  /** Name of a value map or bit map of the provider. */
  map?: string;
  /** Array: name of the earlier field holding the element count. */
  count?: string;
  /** Binary: name of the earlier field holding the byte length. */
  length?: string;
  /** Struct array: the fields of one element. */
  fields?: ClrFieldSchema[];
  /** Struct arrays written as padded C structs: the real element layout. */
  elementSize32?: number;
  elementSize64?: number;
  elementOffsets32?: number[];
  elementOffsets64?: number[];
}

export interface ClrEventSchema {
  /** Index into CLR_PROVIDERS. */
  provider: number;
  id: number;
  version: number;
  symbol: string;
  /** Name as TraceEvent prints it: Provider/Task[/Opcode]. */
  name: string;
  task: number;
  opcode: number;
  level: number;
  keywords: string;
  fields: ClrFieldSchema[];
}

export interface ClrProviderSchema {
  name: string;
  guid: string;
  valueMaps: Record<string, Record<number, string>>;
  bitMaps: Record<string, [number, string][]>;
}
