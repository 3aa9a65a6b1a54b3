export {
  createInternalBinDecoder,
  DEFAULT_INTERNAL_BIN_LIMITS,
  type InternalBinDecoder,
  type InternalBinLimits,
  type InternalBinOptions,
} from './decode.ts';
export { encodeReport, encodeResult, RUN_STATUS, type RunInput } from './schema.ts';
