/**
 * The requests sent to both servers for one file: the client app's
 * (navigation, a deep SPA route, assets, a missing file, a dot-file, a
 * folder without an index), one for every location, a POST (and a chunked
 * POST) to every proxied location, an upstream redirect, a CORS preflight,
 * and a WebSocket where a location asks for the upgrade.
 *
 * @module
 */

import type { Probe } from "./client.ts";
import { type Directive, walk } from "./conf_tree.ts";

/** Paths tried against a regex location, in order. */
const REGEX_SAMPLES = [
  "/assets/app.js",
  "/corpus.css",
  "/corpus.png",
  "/.ht",
  "/.env",
  "/corpus.sql",
  "/index.html",
  "/actuator/health",
  "/prod-api/actuator",
  "/js/corpus.js",
  "/core/corpus",
  "/sms/corpus",
  "/oss/corpus",
  "/corpus",
];

/**
 * A location's modifier and name, split as `ngx_http_core_location` does: a
 * modifier may be glued to a one-argument name (`location ^~/api`).
 */
export function locationParts(location: Directive): [string, string] {
  const [first = "", second] = location.args;
  if (second !== undefined) return [first, second];
  for (const m of ["=", "~*", "^~", "~"]) {
    if (first.startsWith(m) && first.length > m.length) {
      return [m, first.slice(m.length)];
    }
  }
  return ["", first];
}

/** A path that a regex location matches, built from its literal parts. */
function regexSample(pattern: string, caseless: boolean): string | null {
  let re: RegExp;
  try {
    re = new RegExp(pattern, caseless ? "i" : "");
  } catch {
    return null;
  }
  const literal = "/" + pattern
    .replace(/^\^/, "")
    .replace(/\$$/, "")
    .replace(/\(\?[!=][^)]*\)/g, "")
    .replace(/\(([^|)]*)(\|[^)]*)?\)\??/g, "$1")
    .replace(/\[([^\]])[^\]]*\]/g, "$1")
    .replace(/\.\*|\.\+/g, "corpus")
    .replace(/\\(.)/g, "$1")
    .replace(/[?*+]/g, "")
    .replace(/^\/+/, "");
  for (const sample of [...REGEX_SAMPLES, literal, `${literal}corpus`]) {
    if (re.test(sample)) return sample;
  }
  return null;
}

/** A request path the location matches, or null (`@named`, odd regex). */
export function sampleFor(location: Directive): string | null {
  const [modifier, path] = locationParts(location);
  if (path.startsWith("@")) return null;
  if (modifier === "~" || modifier === "~*") {
    return regexSample(path, modifier === "~*");
  }
  if (modifier === "=") return path;
  if (path.endsWith("/")) return `${path}corpus`;
  if (/\.[a-z0-9]+$/i.test(path)) return path;
  return `${path}/corpus`;
}

function proxies(location: Directive): boolean {
  for (const { directive, parents } of walk(location.block ?? [])) {
    // A nested location is its own.
    if (parents.some((p) => p.name === "location")) continue;
    if (directive.name === "proxy_pass") return true;
  }
  return false;
}

function upgrades(location: Directive): boolean {
  return (location.block ?? []).some((d) =>
    d.name === "proxy_set_header" && /^upgrade$/i.test(d.args[0] ?? "")
  );
}

/** The `server` blocks of a tree listening on the first listen port. */
export function firstServers(tree: Directive[], port: number): Directive[] {
  const servers = [...walk(tree)].filter(({ directive, parents }) =>
    directive.name === "server" && parents.at(-1)?.name === "http"
  ).map(({ directive }) => directive);
  return servers.filter((s) =>
    (s.block ?? []).some((d) =>
      d.name === "listen" && (d.args[0] ?? "").endsWith(`:${port}`)
    )
  );
}

const JSON_FIELDS: [string, string][] = [["Content-Type", "application/json"]];

/**
 * The probes for the servers on one port.
 *
 * @param servers The `server` blocks listening there.
 * @returns The requests, in the order they are sent.
 */
export function probesFor(servers: Directive[]): Probe[] {
  const probes: Probe[] = [
    { label: "navigation", method: "GET", target: "/" },
    { label: "deep SPA route", method: "GET", target: "/station/orders/42" },
    { label: "asset", method: "GET", target: "/assets/app.js" },
    { label: "favicon", method: "GET", target: "/favicon.ico" },
    { label: "missing file", method: "GET", target: "/assets/missing.js" },
    { label: "dot-file", method: "GET", target: "/.env" },
    { label: "folder without index", method: "GET", target: "/docs/" },
    { label: "folder without slash", method: "GET", target: "/docs" },
    { label: "HEAD", method: "HEAD", target: "/index.html" },
  ];
  const key = (p: Probe) =>
    `${p.host ?? ""} ${p.method} ${p.target} ${p.websocket ?? ""}`;
  const seen = new Set(probes.map(key));
  const addOne = (probe: Probe) => {
    if (seen.has(key(probe))) return;
    seen.add(key(probe));
    probes.push(probe);
  };
  let firstProxied = true;
  for (const [i, server] of servers.entries()) {
    // The first server is the port's default; each other one is reached by
    // its first plain name.
    const named = (server.block ?? []).find((d) => d.name === "server_name")
      ?.args.find((n) => /^[\w.-]+$/.test(n) && n !== "_");
    const host = i === 0 || named === undefined ? {} : { host: named };
    const add = (probe: Probe) => addOne({ ...probe, ...host });
    if (i > 0 && named !== undefined) {
      add({ label: `navigation to ${named}`, method: "GET", target: "/" });
    }
    for (const { directive } of walk(server.block ?? [])) {
      if (directive.name !== "location") continue;
      const sample = sampleFor(directive);
      if (sample === null) continue;
      const where = `location ${directive.args.join(" ")}${
        "host" in host ? ` of ${named}` : ""
      }`;
      add({ label: where, method: "GET", target: sample });
      if (!proxies(directive)) continue;
      add({
        label: `POST to ${where}`,
        method: "POST",
        target: `${sample}?from=corpus`,
        fields: JSON_FIELDS,
        body: '{"user":"station"}',
      });
      if (firstProxied) {
        firstProxied = false;
        add({
          label: `chunked POST to ${where}`,
          method: "POST",
          target: sample,
          fields: JSON_FIELDS,
          body: '{"chunked":true}',
          chunked: true,
        });
        add({
          label: `CORS preflight to ${where}`,
          method: "OPTIONS",
          target: sample,
          fields: [
            ["Origin", "http://station.local"],
            ["Access-Control-Request-Method", "POST"],
          ],
        });
      }
      const modifier = locationParts(directive)[0];
      if (modifier !== "=" && !modifier.startsWith("~")) {
        add({
          label: `upstream redirect via ${where}`,
          method: "GET",
          target: `${sample.replace(/\/$/, "")}/redirect`,
        });
      }
      if (upgrades(directive)) {
        add({
          label: `WebSocket via ${where}`,
          method: "GET",
          target: sample,
          websocket: true,
        });
      }
    }
  }
  return probes;
}
