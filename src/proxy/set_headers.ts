/**
 * The header fields a proxied location sends upstream, after nginx's
 * `ngx_http_proxy_init_headers` and `ngx_http_proxy_create_request`: first
 * the location's `proxy_set_header` list with nginx's defaults merged in
 * (`Host: $proxy_host`, `Connection: close`), each evaluated for the request
 * and left out when empty; then every field of the client's whose name is
 * not in that list nor in nginx's other defaults (`Content-Length` and
 * `Transfer-Encoding`, which the body's framing replaces, and `TE`,
 * `Keep-Alive`, `Expect`, `Upgrade`, which are sent empty, that is not at
 * all). Fields the client listed in `Connection` and `Proxy-Connection`
 * pass, as with nginx.
 *
 * @module
 */

import type { ComplexValue, LocationConf, RequestVars } from "../engine/mod.ts";
import { fieldBytes, ignoredField } from "../runtime/mod.ts";
import { perObject } from "./location_memo.ts";
import { listElements } from "../routing/mod.ts";

/**
 * nginx's defaults after the two the configuration model carries
 * (`ngx_http_proxy_headers[]`): their client fields are never passed.
 */
const ALWAYS_SET = ["content-length", "transfer-encoding", "te", "keep-alive"]
  .concat(["expect", "upgrade", "host", "connection"]);

/** A location's fields, compiled once. */
export interface FieldPlan {
  /** The fields set by the location, in nginx's order (framing fields left out: the body's framing is written by the upstream client). */
  readonly set: readonly (readonly [string, ComplexValue])[];
  /** Lower-case names whose client field is not passed. */
  readonly dropped: ReadonlySet<string>;
  /** Where `Upgrade` and `Connection` are in `set` (-1 when not). */
  readonly upgradeAt: number;
  /** See `upgradeAt`. */
  readonly connectionAt: number;
  /**
   * The bytes of each `set` value without variables, made once with the
   * plan on the location's first request (`null` for a value evaluated per
   * request); absent: every value is evaluated.
   */
  readonly fixed?: readonly (string | null)[];
}

/**
 * The field plan of a location, made on first use and kept with it.
 *
 * @param conf The location's merged settings.
 * @returns The plan.
 */
export const fieldPlan: (conf: LocationConf) => FieldPlan = perObject(
  compilePlan,
);

function compilePlan(conf: LocationConf): FieldPlan {
  const dropped = new Set(ALWAYS_SET);
  const set: (readonly [string, ComplexValue])[] = [];
  const fixed: (string | null)[] = [];
  let upgradeAt = -1;
  let connectionAt = -1;
  for (const entry of conf.proxySetHeaders) {
    const lower = entry[0].toLowerCase();
    dropped.add(lower);
    // The body's framing is written by the upstream client, which knows
    // what it sends; a configured one would contradict it.
    if (lower === "content-length" || lower === "transfer-encoding") continue;
    if (lower === "upgrade" && upgradeAt < 0) upgradeAt = set.length;
    if (lower === "connection" && connectionAt < 0) connectionAt = set.length;
    set.push(entry);
    // A value without variables is the same for every request: its bytes
    // are made here. An unsafe one is left to the request, whose error
    // line says so each time, as before.
    const constant = entry[1].constant;
    const text = constant === null ? null : fieldBytes(constant);
    fixed.push(text !== null && !UNSAFE_VALUE.test(text) ? text : null);
  }
  return {
    set,
    dropped,
    upgradeAt,
    connectionAt,
    fixed,
  };
}

/** The fields for one request. */
export interface UpstreamFields {
  /** The location's fields, evaluated, empty ones left out. */
  set: [string, string][];
  /** The client's fields that pass. */
  passed: [string, string][];
  /**
   * The `Connection` value sent (none at all included) does not say
   * `close`: the connection may be kept, when the group keeps any.
   */
  keepalive: boolean;
  /**
   * A non-empty `Upgrade` and a `Connection` listing `upgrade`: the
   * upstream may switch protocols. nginx tunnels whenever the upstream
   * answers 101 to a client's `Upgrade`, with `proxy_http_version 1.0`
   * too (`ngx_http_proxy_process_header`), and an upstream answers 101 only
   * to these fields.
   */
  upgrade: boolean;
  /** Set fields left out because their value held a line break or NUL. */
  unsafe: readonly string[];
}

/** Line breaks and NUL would end the field early: a request smuggled upstream. */
const UNSAFE_VALUE = /[\r\n\0]/;

/**
 * Evaluates a plan for a request.
 *
 * @param plan The location's plan.
 * @param vars The request's variables.
 * @param client The client's fields: its `Headers`, or the same fields as
 * walked before (flat: name, value…, in `forEach`'s order).
 * @returns The fields to send and what they say about the connection.
 *
 * @example Usage
 * ```ts
 * import { upstreamFields } from "./set_headers.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * const close = { text: "close", constant: "close", usesCaptures: false, evaluate: () => "close" };
 * const plan = {
 *   set: [["Connection", close] as const],
 *   dropped: new Set(["connection", "host"]),
 *   upgradeAt: -1,
 *   connectionAt: 0,
 * };
 * const out = upstreamFields(plan, {} as never, new Headers({ accept: "*\/*", host: "x" }));
 * strictEqual(JSON.stringify([out.set, out.passed]), '[[["Connection","close"]],[["accept","*\/*"]]]');
 * strictEqual(out.keepalive, false);
 * ```
 */
export function upstreamFields(
  plan: FieldPlan,
  vars: RequestVars,
  client: Headers | readonly string[],
): UpstreamFields {
  const set: [string, string][] = [];
  let unsafe: string[] | null = null;
  let upgrade = "";
  let connection = "";
  const entries = plan.set;
  const fixed = plan.fixed;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    let text = fixed?.[i] ?? null;
    if (text === null) {
      const value = entry[1];
      // The value's bytes, as nginx sends them (runtime/value_bytes.ts).
      text = fieldBytes(value.constant ?? value.evaluate(vars));
      if (UNSAFE_VALUE.test(text)) {
        (unsafe ??= []).push(entry[0]);
        continue;
      }
    }
    if (text === "") continue;
    if (i === plan.upgradeAt) upgrade = text;
    else if (i === plan.connectionAt) connection = text;
    set.push([entry[0], text]);
  }
  const passed: [string, string][] = [];
  const { dropped } = plan;
  // Walked by index where it can be, no callback per field: this runs for
  // every proxied request.
  if (client instanceof Headers) {
    // The walked list holds only the fields nginx keeps; `Headers` holds
    // all, so those nginx drops by their names are dropped here
    // (`underscores_in_headers`, `ignore_invalid_headers`).
    const names = vars.fieldNames;
    // forEach, not for..of: Deno's iterator sorts the list again per field.
    client.forEach((value, name) => {
      if (!ignoredField(name, names) && !dropped.has(name)) {
        passed.push([name, value]);
      }
    });
  } else {
    for (let i = 0; i + 1 < client.length; i += 2) {
      const name = client[i]!;
      if (!dropped.has(name)) passed.push([name, client[i + 1]!]);
    }
  }
  // No Connection sent (the usual case): nothing to split per request.
  const tokens = connection === ""
    ? NO_TOKENS
    : listElements(connection.toLowerCase());
  return {
    set,
    passed,
    keepalive: !tokens.includes("close"),
    upgrade: upgrade !== "" && tokens.includes("upgrade"),
    unsafe: unsafe ?? NO_NAMES,
  };
}

const NO_TOKENS: readonly string[] = [];
const NO_NAMES: readonly string[] = [];
