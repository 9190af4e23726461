// Every test file runs with Node's entry point loaded, as `import "etw-wasm"` does in Node.
import "../../dist/bindings/node.js";
