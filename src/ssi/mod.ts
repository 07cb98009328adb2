/**
 * Server-side includes (`ngx_http_ssi_filter_module`): a response of a
 * type in `ssi_types` from a location with `ssi on` is parsed for
 * `<!--#command param="value" -->` as it streams, and `echo`, `set`,
 * `if`/`elif`/`else`/`endif`, `config`, `block`/`endblock` and `include`
 * run as in nginx 1.22, an include (`virtual=`, `file=`, `wait=`, `set=`,
 * `stub=` with a block's text) through the subrequest the engine hands the filter
 * (`SsiFilterInput.include`), nested 51 deep at most as in nginx. The head
 * changes are nginx's: chunked, no `Content-Length` or `Accept-Ranges`, no
 * `Last-Modified` or `ETag` unless `ssi_last_modified on`. The engine runs
 * {@linkcode ssiFilter} before gzip, as nginx orders its filters; a
 * location with `ssi off` has no `SsiConf` and costs nothing.
 *
 * @example Usage
 * ```ts
 * import { ssiFilter } from "./mod.ts";
 * import { Variables, type RequestVars } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const conf = {
 *   types: new Set(["text/html"]),
 *   silentErrors: false,
 *   lastModified: false,
 *   valueLength: 255,
 *   scope: new Variables(new Map(), new Set()),
 * };
 * const lines: string[] = [];
 * const page = new Response("a<!--# nope -->b", { headers: { "content-type": "text/html" } });
 * const out = ssiFilter(page, { conf, vars: {} as RequestVars, head: false, log: (m) => lines.push(m) });
 * strictEqual(await out.text(), "a[an error occurred while processing the directive]b");
 * strictEqual(lines[0], 'invalid SSI command: "nope"');
 * ```
 *
 * @module
 */

export type { SsiConf } from "./conf.ts";
export { FLUSH_BYTES, ssiFilter, type SsiFilterInput } from "./filter.ts";
export {
  COMMAND_LEN,
  MAX_PARAMS,
  PARAM_LEN,
  type ParserSink,
  type SsiCommand,
  type SsiParam,
  SsiParser,
} from "./parser.ts";
export { SsiContext, type SsiRequest } from "./context.ts";
export { MAX_STATE, SsiStore } from "./store.ts";
export { MAX_BLOCK_BYTES, SsiBlocks, stubAnswer } from "./blocks.ts";
export {
  evaluateIf,
  evaluateString,
  type RegexCaptures,
  type SsiLookup,
  type Verdict,
} from "./evaluate.ts";
export { escapeEntity, escapeUrl } from "./encode.ts";
export { type IncludeUri, includeUri } from "./include_uri.ts";
export { DEFAULT_TIMEFMT, formatDate } from "./timefmt.ts";
export { cachedRegexes, REGEX_CACHE_SIZE } from "./ssi_regex.ts";
