// Entry of a bundle decoding thread: compiles the TypeScript sources on load, as bin/mainline.mjs does
// (a worker thread does not inherit the loader registered by its parent).
import { register } from 'tsx/esm/api';

register();
await import('./decode-worker.ts');
