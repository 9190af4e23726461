// The script a Web Worker started by worker-factory.ts runs (beside it): the package's worker entry.
import "../../worker.js";
