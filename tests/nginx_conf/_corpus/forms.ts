/**
 * The argument form of a directive, for the corpus tally. A form keeps what
 * changes behaviour (a location's modifier, whether `proxy_pass` has a URI
 * part, a header's value) and drops what does not (a path's letters, a
 * number's value).
 *
 * @module
 */

import type { Directive } from "./conf_tree.ts";
import { locationParts } from "./probes.ts";

/** A `proxy_pass` URL's shape: upstream name or address, and its URI part. */
function proxyPassForm(url: string, names: Set<string>): string {
  const m = url.match(/^(https?):\/\/([^/]+)(\/.*)?$/);
  if (!m) return "proxy_pass VARIABLE-URL";
  const host = m[2]!;
  const target = names.has(host)
    ? "UPSTREAM_NAME"
    : host.startsWith("{{UPSTREAM")
    ? "HOST:PORT"
    : host.includes("$")
    ? "$VARIABLE"
    : "HOST";
  const uri = m[3] === undefined
    ? ""
    : m[3] === "/"
    ? "/"
    : m[3].endsWith("/")
    ? "/PATH/"
    : "/PATH";
  return `proxy_pass ${m[1]}://${target}${uri}`;
}

/**
 * A location's kind, read by the probes' splitter: nginx takes a modifier
 * glued to its name (`location ~^/api/`, `location ^~/cross/`) as one given
 * apart (`ngx_http_core_location`).
 */
function locationKind(d: Directive): string {
  const [modifier, name] = locationParts(d);
  if (name.startsWith("@")) return "@name";
  return modifier === "" ? "prefix" : modifier;
}

function serverNameForm(name: string): string {
  if (name === "_" || name === "" || name === "localhost") return name || '""';
  if (name.startsWith("~")) return "~REGEX";
  if (name.includes("*") || name.startsWith(".")) return "*.WILDCARD";
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return "IP";
  return "NAME";
}

function pathForm(path: string): string {
  const tail = path.endsWith("/") ? "/" : "";
  if (path.includes("$")) return `PATH-WITH-$VARIABLE${tail}`;
  if (path.startsWith("{{PREFIX}}")) return `ABSOLUTE${tail}`;
  if (path.startsWith("..")) return `../RELATIVE${tail}`;
  return `RELATIVE${tail}`;
}

const KEEP_ARGS = new Set([
  "try_files",
  "index",
  "if",
  "map",
  "expires",
  "charset",
  "proxy_http_version",
  "proxy_redirect",
  "proxy_buffering",
  "proxy_cache",
  "proxy_intercept_errors",
  "gzip",
  "gzip_static",
  "gzip_vary",
  "gzip_proxied",
  "gzip_http_version",
  "absolute_redirect",
  "autoindex",
  "chunked_transfer_encoding",
  "sendfile",
  "tcp_nopush",
  "tcp_nodelay",
  "server_tokens",
  "multi_accept",
  "default_type",
  "deny",
  "allow",
  "internal",
  "ssl_prefer_server_ciphers",
  "proxy_pass_request_headers",
  "proxy_next_upstream",
  "open_file_cache_errors",
  "fastcgi_intercept_errors",
  "ip_hash",
  "daemon",
  "master_process",
]);

/**
 * The form of one directive, e.g. `location ~*` or
 * `proxy_set_header Host $host`.
 *
 * @param d The directive.
 * @param parents Its enclosing directives.
 * @param names The file's `upstream{}` names.
 * @returns The form's text.
 */
export function formOf(
  d: Directive,
  parents: Directive[],
  names: Set<string>,
): string {
  const args = d.args;
  const inLocation = parents.some((p) => p.name === "location");
  const where = parents.at(-1)?.name ?? "main";
  switch (d.name) {
    case "location": {
      const kind = locationKind(d);
      const what = kind === "=" && locationParts(d)[1] === "/50x.html"
        ? "= /50x.html"
        : kind;
      return `location ${what}${inLocation ? " (nested)" : ""}`;
    }
    case "proxy_pass": {
      const loc = [...parents].reverse().find((p) => p.name === "location");
      const kind = loc ? locationKind(loc) : "";
      const prefix = loc ? locationParts(loc)[1] : "";
      const shape = kind === "~" || kind === "~*"
        ? "a regex location"
        : kind === "@name"
        ? "a named location"
        : prefix === "/"
        ? "location /"
        : prefix.endsWith("/")
        ? `location ${kind === "prefix" ? "" : kind + " "}/x/`
        : `location ${kind === "prefix" ? "" : kind + " "}/x`;
      const inIf = where === "if" ? ", in if" : "";
      return `${proxyPassForm(args[0] ?? "", names)} (in ${shape}${inIf})`;
    }
    case "proxy_set_header": {
      const value = args[1] ?? "";
      const shown = /^\$[a-z_]+$/i.test(value) || value.length <= 12
        ? JSON.stringify(value).slice(1, -1)
        : "TEXT";
      return `proxy_set_header ${args[0]} ${value === "" ? '""' : shown}`;
    }
    case "add_header": {
      const always = args.includes("always") ? " always" : "";
      return `add_header NAME VALUE${always}` +
        (where === "if" ? " (in if)" : "");
    }
    case "listen": {
      const rest = args.slice(1).map((a) => a.replace(/=.*/, "=…"));
      const addr = (args[0] ?? "").startsWith("[") ? "[IPv6]:PORT" : "PORT";
      return ["listen", addr, ...rest].join(" ");
    }
    case "server_name":
      return `server_name ${args.map(serverNameForm).join(" ")}`;
    case "root":
    case "alias":
      return `${d.name} ${pathForm(args[0] ?? "")}`;
    case "rewrite": {
      const flag = args[2] ?? "(no flag)";
      const target = /^https?:\/\//.test(args[1] ?? "")
        ? "URL"
        : /\$\d/.test(args[1] ?? "")
        ? "/PATH-WITH-CAPTURES"
        : "/PATH";
      return `rewrite REGEX ${target} ${flag}`;
    }
    case "return": {
      const code = args[0] ?? "";
      if (args.length === 1) {
        return /^\d+$/.test(code) ? `return ${code}` : "return URL";
      }
      const second = args[1] ?? "";
      return `return ${code} ${
        /^(https?:\/\/|\$scheme)/.test(second) ? "URL" : "TEXT"
      }` +
        (where === "if" ? " (in if)" : "");
    }
    case "error_page": {
      const codes = args.filter((a) => /^\d+$/.test(a));
      const change = args.find((a) => a.startsWith("="));
      const target = args.at(-1) ?? "";
      const kind = target.startsWith("@")
        ? "@name"
        : /^https?:/.test(target)
        ? "URL"
        : "/URI";
      return `error_page ${codes.join(" ")}${
        change ? ` ${change}` : ""
      } ${kind}`;
    }
    case "server":
      if (where === "upstream") {
        const params = args.slice(1).map((a) => a.replace(/=.*/, "=N"));
        return ["server (in upstream) HOST:PORT", ...params].join(" ");
      }
      return `server${where === "http" ? "" : ` (in ${where})`}`;
    case "include":
      return /mime\.types$/.test(args[0] ?? "")
        ? "include mime.types"
        : /\*/.test(args[0] ?? "")
        ? "include GLOB"
        : "include FILE";
    case "log_format":
      return `log_format NAME FORMAT`;
    case "access_log":
    case "error_log":
      return `${d.name} ${args[0] === "off" ? "off" : "FILE"}${
        args[1] ? ` ${/^\w+$/.test(args[1]) ? args[1] : "…"}` : ""
      }${where === "http" || where === "main" ? "" : ` (in ${where})`}`;
    case "user":
      return "user NAME";
    case "pid":
      return "pid FILE";
    default:
      if (KEEP_ARGS.has(d.name)) return [d.name, ...args].join(" ");
      return [
        d.name,
        ...args.map((a) =>
          /^\d+[a-z]*$/i.test(a) ? a.replace(/^\d+/, "N") : "…"
        ).slice(0, 1),
      ].join(" ");
  }
}
