/**
 * `ngx_http_headers_filter_module`: `expires` and `add_header` applied to a
 * response's header fields, for static and proxied responses alike. As in
 * nginx, both act only on the statuses listed in
 * {@linkcode HEADERS_FILTER_STATUSES} (`add_header … always` on any), and
 * `expires` runs first.
 *
 * @module
 */

import type { AddHeader, Expires, RequestVars } from "../engine/mod.ts";
import { fieldBytes } from "../runtime/mod.ts";
import { escapeControls } from "./field_value.ts";
import { expiresFields, parseExpires } from "./expires.ts";
import type { HeaderFields } from "./field_list.ts";

/**
 * The statuses `expires` and `add_header` (without `always`) apply to
 * (`ngx_http_headers_filter`'s `safe_status`).
 */
export const HEADERS_FILTER_STATUSES: ReadonlySet<number> = new Set([
  200,
  201,
  204,
  206,
  301,
  302,
  303,
  304,
  307,
  308,
]);

/** The settings the filter reads (a location's, merged). */
export interface HeadersFilterConf {
  /** `add_header`, in order. */
  addHeaders: readonly AddHeader[];
  /** `expires`. */
  expires: Expires;
}

/**
 * Tells whether {@linkcode filterHeaders} can change anything for this
 * configuration, so a caller skips it (and the `Headers` it needs) when not.
 *
 * @param conf The settings.
 * @returns Whether the filter has work.
 */
export function hasHeadersFilter(conf: HeadersFilterConf): boolean {
  return conf.expires.kind !== "off" || conf.addHeaders.length > 0;
}

/** What {@linkcode filterHeaders} reads besides the fields. */
export interface HeadersFilterInput {
  /** The response's status. */
  status: number;
  /** The location's settings. */
  conf: HeadersFilterConf;
  /** The request, for the values' variables. */
  vars: RequestVars;
  /** The clock in ms, for `expires`. @default {Date.now()} */
  now?: number;
  /**
   * The response's last modification in ms for `expires modified`, when
   * its fields no longer say it (nginx's `last_modified_time` of a 416).
   * @default {the `Last-Modified` field}
   */
  lastModified?: number | null;
}

/**
 * Applies `expires` and `add_header` to a response's fields, in place.
 *
 * `expires` replaces `Expires` and `Cache-Control`. Each `add_header` value
 * is evaluated for the request; an empty value adds nothing. As nginx's
 * handlers for these names: `ETag` and `Last-Modified` replace the field (an
 * empty value removes it), every other name is added after what is there,
 * but `Content-Length`, which is left to the runtime's framing (README,
 * add-header-length).
 * A value nginx would send raw but a header cannot carry (NUL, CR, LF) is
 * left out rather than split the head; text beyond Latin-1 (a UTF-8 `$uri`)
 * goes as its UTF-8 bytes, as nginx sends it.
 *
 * @param headers The response's fields (a `Headers`, or the list a
 * `Response` is to be made from: `FieldList`); changed in place.
 * @param input The status, the settings, the request and the clock.
 *
 * @example Usage
 * ```ts
 * import { filterHeaders } from "./headers_filter.ts";
 * import { constantValue, type RequestVars } from "../engine/mod.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const headers = new Headers();
 * const conf = {
 *   expires: { kind: "epoch" } as const,
 *   addHeaders: [{ name: "X-Frame-Options", value: constantValue("DENY"), always: false }],
 * };
 * const vars = {} as RequestVars;
 * filterHeaders(headers, { status: 404, conf, vars });
 * strictEqual(headers.has("x-frame-options"), false);
 * filterHeaders(headers, { status: 200, conf, vars });
 * strictEqual(headers.get("x-frame-options"), "DENY");
 * strictEqual(headers.get("cache-control"), "no-cache");
 * ```
 */
export function filterHeaders(
  headers: HeaderFields,
  input: HeadersFilterInput,
): void {
  const { conf } = input;
  const safe = HEADERS_FILTER_STATUSES.has(input.status);
  const setting = safe && conf.expires.kind === "variable"
    ? expiresOfValue(conf.expires, headers, input.vars)
    : conf.expires;
  if (safe && setting.kind !== "off") {
    let lastModified = input.lastModified;
    if (lastModified === undefined) {
      const field = headers.get("last-modified");
      const parsed = field === null ? NaN : Date.parse(field);
      lastModified = Number.isNaN(parsed) ? null : parsed;
    }
    const fields = expiresFields(setting, {
      now: input.now ?? Date.now(),
      lastModified,
    });
    if (fields !== null) {
      headers.set("expires", fields.expires);
      headers.set("cache-control", fields.cacheControl);
    }
  }
  for (const add of conf.addHeaders) {
    if (!safe && !add.always) continue;
    addHeader(headers, add.name, headerText(add.value.evaluate(input.vars)));
  }
}

/**
 * `expires` with variables for this response (ngx_http_set_expires): the
 * value read with the response's fields as `$sent_http_NAME`, then parsed
 * as the directive's argument is (ngx_http_parse_expires); a value that
 * does not parse sets nothing, as `off` does.
 */
function expiresOfValue(
  setting: Extract<Expires, { kind: "variable" }>,
  headers: HeaderFields,
  vars: RequestVars,
): Expires {
  vars.sentFields = headers;
  let text: string;
  try {
    text = setting.value.evaluate(vars);
  } finally {
    vars.sentFields = undefined;
  }
  const parsed = parseExpires(setting.modified ? ["modified", text] : [text]);
  return "error" in parsed ? OFF : parsed;
}

/** `expires off`. */
const OFF: Expires = { kind: "off" };

/** `ngx_http_set_headers`: how each name is added. */
function addHeader(
  headers: HeaderFields,
  name: string,
  value: string | null,
): void {
  if (value === null) return;
  try {
    // Compared by length first: a lower-case copy of every name was garbage
    // per response.
    const lower = name.length === 4 || name.length === 13 ||
        name.length === 14
      ? name.toLowerCase()
      : "";
    // nginx sends the added line beside its own; the runtime frames every
    // body by its own size and sends one line, so an added one would only
    // make the field a list ("0, 0") that the access line counts as NaN.
    if (lower === "content-length") return;
    if (lower === "etag" || lower === "last-modified") {
      // ngx_http_set_response_header: replaces; an empty value removes.
      if (value === "") headers.delete(lower);
      else headers.set(lower, value);
    } else if (value !== "") {
      headers.append(name, value);
    }
  } catch {
    // A name that is no HTTP token (the compiler should have refused it):
    // left out, so a response is never lost to one field.
  }
}

/**
 * A value as a header can carry it: its bytes, as nginx sends them
 * (`fieldBytes`), control bytes escaped as in a `Location`
 * (`escapeControls`): nginx copies them, and a line break would split its
 * response; Deno's writer ends the process on any of them (a panic in
 * `http_h1/write.rs`, "invalid response header value").
 */
function headerText(value: string): string {
  return escapeControls(fieldBytes(value));
}
