/**
 * What the gateway asks of the runtime and the OS: error codes and their
 * nginx texts, header byte strings, bounded config file reads, and the
 * memory pacers.
 *
 * @module
 */

export {
  byteStringFromBytes,
  byteStringToBytes,
  writeByteString,
} from "./byte_string.ts";
export { ConfigFileRefusal, readConfigText } from "./config_read.ts";
export {
  escapeControls,
  fieldBytes,
  fieldText,
  textBytes,
} from "./value_bytes.ts";
export { GcPacer } from "./gc_pacer.ts";
export { MONTH_NAMES } from "./month_names.ts";
export { HeapPacer } from "./heap_pacer.ts";
export {
  currentOsFamily,
  osErrorCode,
  osErrorKind,
  osErrorOf,
  osErrorText,
  parseOsErrorCode,
} from "./os_errors.ts";
export type { OsErrorText, OsFamily } from "./os_errors.ts";
export {
  isDosDeviceName,
  refusedRequestPath,
  refusedWindowsPath,
} from "./request_path.ts";
export {
  ignoredField,
  keepsUnderscores,
  NGINX_FIELD_NAMES,
  underscoredField,
} from "./field_names.ts";
export type { FieldNames } from "./field_names.ts";
export {
  carryFirstLines,
  copyFields,
  derivedRequest,
  fieldLines,
  firstLine,
  hasRepeatedLines,
  keepFirstLines,
} from "./field_lines.ts";
