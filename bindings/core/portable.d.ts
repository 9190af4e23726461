// AssemblyScript's value types as TypeScript sees them, for the sources both cores share
// (scripts/gen-core-twin.mjs): every integer width is a number.
type u8 = number;
type u16 = number;
type u32 = number;
type i32 = number;
type usize = number;
type f64 = number;
type bool = boolean;
