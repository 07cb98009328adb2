/**
 * The JSON config file: keys are the flags' names in camelCase, each with
 * one JSON type; an unknown key or a wrong type is an error naming the key,
 * so a typo never passes unnoticed.
 *
 * @module
 */

import type { SettingsInput } from "./config.ts";

const FILE_KEYS: Readonly<
  Record<keyof SettingsInput, "string" | "boolean" | "number" | "strings">
> = {
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
  upstreamKeepalive: "number",
  spaFallback: "string",
  logNotFound: "string",
  cacheHtml: "string",
  cacheFingerprinted: "string",
  cacheOther: "string",
  statusPath: "string",
};

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
 * throws(() => parseConfigFile('{"listn": "8081"}', "gw.json"), /unknown key "listn"/);
 * ```
 */
export function parseConfigFile(text: string, path: string): SettingsInput {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SyntaxError(
      `Cannot parse config file "${path}": ${
        error instanceof Error ? error.message : error
      }`,
    );
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new TypeError(
      `Cannot parse config file "${path}": expected a JSON object`,
    );
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) {
    if (key === "$schema" || key === "$comment") continue;
    const type = FILE_KEYS[key as keyof SettingsInput];
    if (type === undefined) {
      throw new TypeError(
        `Cannot parse config file "${path}": unknown key "${key}"`,
      );
    }
    const actual: string = Array.isArray(value) &&
        value.every((v) => typeof v === "string")
      ? "strings"
      : typeof value;
    const fits = actual === type ||
      (type === "strings" && actual === "string");
    if (!fits) {
      throw new TypeError(
        `Cannot parse config file "${path}": key "${key}" must be a ${
          type === "strings" ? "string or a list of strings" : type
        }`,
      );
    }
    out[key] = value;
  }
  return out as SettingsInput;
}
