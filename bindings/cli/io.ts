// Where the CLI writes its output and its messages: the process's streams, or what a caller of runCli
// collects (the tests run the CLI in their own process, where spawning one adds nothing to check).

export interface CliOutput {
  /** Output text; resolves when the stream can take more. */
  stdout(text: string): Promise<void> | void;
  /** Output as UTF-8 bytes, where the output takes them (else the text goes to `stdout`); the bytes are the output's from then on. */
  stdoutBytes?(bytes: Uint8Array): Promise<void> | void;
  /** Messages: warnings, what was written, why a decode stopped. */
  stderr(text: string): void;
}

/** The process's standard streams. */
export const processOutput: CliOutput = {
  stdout: (text) => (process.stdout.write(text) ? undefined : new Promise<void>((r) => process.stdout.once("drain", () => r()))),
  stdoutBytes: (bytes) => (process.stdout.write(bytes) ? undefined : new Promise<void>((r) => process.stdout.once("drain", () => r()))),
  stderr: (text) => {
    process.stderr.write(text);
  },
};

let current: CliOutput = processOutput;

/** Where the running command writes. */
export function output(): CliOutput {
  return current;
}

/** Makes `to` where commands write (one command at a time); returns what it replaced. */
export function setOutput(to: CliOutput): CliOutput {
  const before = current;
  current = to;
  return before;
}

/** A message line on the command's stderr. */
export function say(line: string): void {
  current.stderr(`${line}\n`);
}

/** A progress bar on stderr, for a terminal only. */
export function progressBar(total: number): ((done: number) => void) & { end(): void } {
  const t0 = performance.now();
  let last = 0;
  const draw = (done: number) => {
    const now = performance.now();
    if (now - last < 100 && done < total) return;
    last = now;
    const f = Math.min(1, done / Math.max(1, total));
    const width = 30;
    const mbps = done / 1e6 / Math.max(1e-3, (now - t0) / 1000);
    process.stderr.write(
      `\r[${"#".repeat(Math.round(f * width)).padEnd(width, ".")}] ${(f * 100).toFixed(0).padStart(3)}%  ${(done / 1e6).toFixed(1)} MB  ${mbps.toFixed(0)} MB/s`,
    );
  };
  return Object.assign(draw, { end: () => process.stderr.write("\r" + " ".repeat(70) + "\r") });
}
