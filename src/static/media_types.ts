/**
 * `Content-Type` by file extension, for everything a web app ships.
 *
 * @module
 */

/** Extension (lower case, no dot) to media type. */
export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  htm: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  map: "application/json",
  webmanifest: "application/manifest+json",
  txt: "text/plain; charset=utf-8",
  xml: "text/xml",
  svg: "image/svg+xml",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  ico: "image/x-icon",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
  otf: "font/otf",
  wasm: "application/wasm",
  pdf: "application/pdf",
  mp3: "audio/mpeg",
  mp4: "video/mp4",
  webm: "video/webm",
  zip: "application/zip",
} as const;

/** nginx's `default_type` for unknown extensions. */
export const DEFAULT_CONTENT_TYPE = "application/octet-stream";

/**
 * The media type for a file name.
 *
 * @param name A file name or path.
 * @returns The media type.
 *
 * @example Usage
 * ```ts
 * import { contentTypeFor } from "./media_types.ts";
 * import { strictEqual } from "node:assert/strict";
 *
 * strictEqual(contentTypeFor("app.JS"), "text/javascript; charset=utf-8");
 * strictEqual(contentTypeFor("LICENSE"), "application/octet-stream");
 * ```
 */
export function contentTypeFor(name: string): string {
  const dot = name.lastIndexOf(".");
  const slash = Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\"));
  if (dot <= slash + 1) return DEFAULT_CONTENT_TYPE;
  return CONTENT_TYPES[name.slice(dot + 1).toLowerCase()] ??
    DEFAULT_CONTENT_TYPE;
}
