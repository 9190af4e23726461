// apache-arrow, loaded when etw-wasm/export is imported: a clear MissingPackageError where it is not
// installed (it is an optional peer dependency), instead of a failed module resolution.

import { optionalPackage } from "./optional-package.js";

const arrow: typeof import("apache-arrow") = await optionalPackage("apache-arrow", "etw-wasm/export (Arrow and Parquet output)", () => import("apache-arrow"));
export default arrow;
