/**
 * The JSON config file: keys are the flags' names in camelCase, each with
 * one JSON type; an unknown key or a wrong type is an error naming the key,
 * so a typo never passes unnoticed. Messages end in nginx's ` in FILE`
 * (`unknown directive "x" in /etc/nginx/nginx.conf:3`).
 *
 * @module
 */

import type { SettingsInput } from "./settings_input.ts";
import { closestWord } from "./did_you_mean.ts";

/**
 * What the config file may hold: the settings, plus `nginxConf` (a station's
 * nginx.conf whose settings this file's override).
 */
export interface FileInput extends SettingsInput {
  /** A station's nginx.conf to read first. */
  nginxConf?: string;
}

const FILE_KEYS: Readonly<
  Record<keyof FileInput, "string" | "boolean" | "number" | "strings">
> = {
  nginxConf: "string",
  listen: "string",
  upstream: "strings",
  upstreamGroup: "string",
  root: "string",
  serverName: "string",
  errorLog: "string",
  accessLog: "string",
  errorLogLevel: "string",
  addForwardedHeaders: "boolean",
  logMaxSize: "string",
  logKeep: "number",
  proxyConnectTimeout: "string",
  proxySendTimeout: "string",
  proxyReadTimeout: "string",
  proxyBufferSize: "string",
  clientMaxBodySize: "string",
  clientBodyTimeout: "string",
  clientBodyBufferSize: "string",
  clientBodyTempPath: "string",
  proxyRequestBuffering: "string",
  largeClientHeaderBuffers: "string",
  upstreamKeepalive: "number",
  spaFallback: "string",
  logNotFound: "string",
  underscoresInHeaders: "string",
  cacheHtml: "string",
  cacheFingerprinted: "string",
  cacheOther: "string",
  statusPath: "string",
  errorPage: "strings",
  apiPrefix: "string",
  keepApiPrefix: "boolean",
};

/**
 * Settings users write as numbers (the README shows `"listen": 21081`; nginx
 * writes `proxy_read_timeout 60` and `client_max_body_size 1048576`): a
 * whole number is read as its digits, which mean what they mean on the
 * command line (a port, seconds, bytes).
 */
const NUMBER_WRITTEN: ReadonlySet<string> = new Set([
  "listen",
  "logMaxSize",
  "proxyConnectTimeout",
  "proxySendTimeout",
  "proxyReadTimeout",
  "proxyBufferSize",
  "clientMaxBodySize",
]);

/** A whole number for a setting above as its digits; digits for a count. */
function wholeNumberAsWritten(
  key: string,
  type: string,
  value: unknown,
): unknown {
  if (
    type === "string" && NUMBER_WRITTEN.has(key) &&
    Number.isSafeInteger(value) && (value as number) >= 0
  ) return String(value);
  if (
    type === "number" && typeof value === "string" && /^\d{1,9}$/.test(value)
  ) {
    return Number(value);
  }
  return value;
}

/**
 * Parses the JSON config file. Keys are the flags' names in camelCase.
 *
 * @param text The file's text.
 * @param path The file's path, for messages.
 * @returns The settings it holds.
 * @throws {SyntaxError | TypeError} On invalid JSON, an unknown key or a
 * wrong type, naming the key.
 *
 * @example Usage
 * ```ts
 * import { parseConfigFile } from "./config_file.ts";
 * import { throws } from "node:assert/strict";
 *
 * throws(
 *   () => parseConfigFile('{"listn": "8081"}', "gw.json"),
 *   /^TypeError: unknown key "listn" in gw\.json; did you mean "listen"\?$/,
 * );
 * ```
 */
export function parseConfigFile(text: string, path: string): FileInput {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(
      `invalid JSON in ${path}: ${
        error instanceof Error ? error.message : error
      }`,
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new TypeError(`expected a JSON object in ${path}`);
  }
  const out: Record<string, unknown> = {};
  for (let [key, value] of Object.entries(data)) {
    if (key === "$schema" || key === "$comment") continue;
    // Own keys only: `toString` or `constructor` found on the prototype
    // were taken for keys, with a function's text for their type.
    const type = Object.hasOwn(FILE_KEYS, key)
      ? FILE_KEYS[key as keyof FileInput]
      : undefined;
    if (type === undefined) {
      const near = closestWord(key, Object.keys(FILE_KEYS));
      throw new TypeError(
        `unknown key "${key}" in ${path}${
          near === undefined ? "" : `; did you mean "${near}"?`
        }`,
      );
    }
    value = wholeNumberAsWritten(key, type, value);
    const actual: string = Array.isArray(value) &&
        value.every((v) => typeof v === "string")
      ? "strings"
      : typeof value;
    const fits = actual === type ||
      (type === "strings" && actual === "string");
    if (!fits) {
      throw new TypeError(
        `key "${key}" must be a ${
          type === "strings" ? "string or a list of strings" : type
        } in ${path}`,
      );
    }
    out[key] = value;
  }
  return out as FileInput;
}
