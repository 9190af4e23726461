// The export libraries are optional peer dependencies: the decoder installs without them, and
// etw-wasm/export loads them when it is first imported (Arrow) or first writes Parquet. Where one is
// not installed, the error names the package and the command that installs it.

/** A package etw-wasm/export needs that is not installed (apache-arrow; parquet-wasm for Parquet). */
export class MissingPackageError extends Error {
  override readonly name = "MissingPackageError";
  constructor(
    readonly packageName: string,
    readonly purpose: string,
    options?: { cause?: unknown },
  ) {
    super(
      `etw-wasm: ${purpose} needs the package "${packageName}", which is not installed (an optional peer dependency of etw-wasm): npm install ${packageName}`,
      options,
    );
  }
}

/** Whether `error` says that `name` itself (not something it imports) could not be found. */
function notFound(error: unknown, name: string): boolean {
  const e = error as { code?: string; message?: string } | undefined;
  if (!e || typeof e.message !== "string") return false;
  const named = e.message.includes(`'${name}'`) || e.message.includes(`"${name}"`) || e.message.includes(`'${name}/`) || e.message.includes(`"${name}/`);
  return named && (e.code === "ERR_MODULE_NOT_FOUND" || e.code === "MODULE_NOT_FOUND" || /cannot find (package|module)|failed to resolve/i.test(e.message));
}

/** `load()`'s module, or MissingPackageError when the package `name` is not installed. */
export async function optionalPackage<T>(name: string, purpose: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (notFound(error, name)) throw new MissingPackageError(name, purpose, { cause: error });
    throw error;
  }
}
