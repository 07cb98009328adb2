/** Compiles nginx.conf text for the engine's tests, and runs its phases. */
import { parseNginxConf } from "../../src/nginx_conf/parser.ts";
import { compileHttp } from "../../src/nginx_conf/compile.ts";
import {
  type Content,
  type HttpConf,
  type RequestVars,
  runPhases,
} from "../../src/engine/mod.ts";
import { varsWith } from "../_location_conf.ts";

/**
 * Compiles `http { … }` text (an `events {}` is added) under a prefix
 * (`/n`, or a folder of the test's: relative paths land in it); throws
 * with every refusal when the engine refuses it.
 */
export function compileText(
  http: string,
  caseless = false,
  prefix = "/n",
): HttpConf {
  const text = `events {}\n${http}`;
  const directives = parseNginxConf("/n/conf/nginx.conf", {
    readTextFile: () => text,
    readDirFiles: () => [],
  });
  const result = compileHttp(directives, {
    file: "/n/conf/nginx.conf",
    prefix,
    caseless,
  });
  if (result.conf === null) throw new Error(result.errors.join("\n"));
  return result.conf;
}

/** The refusals of a text (empty when it compiles). */
export function refusals(http: string): string[] {
  const text = `events {}\n${http}`;
  const directives = parseNginxConf("/n/conf/nginx.conf", {
    readTextFile: () => text,
    readDirFiles: () => [],
  });
  return compileHttp(directives, {
    file: "/n/conf/nginx.conf",
    prefix: "/n",
    caseless: false,
  }).errors;
}

/** A request's variables, with the fields the engine's tests read. */
export function requestVars(target: string, init: {
  method?: string;
  headers?: HeadersInit;
} = {}): RequestVars {
  const q = target.indexOf("?");
  return varsWith({
    method: init.method ?? "GET",
    requestUri: target,
    uri: q < 0 ? target : target.slice(0, q),
    args: q < 0 ? "" : target.slice(q + 1),
    headers: new Headers(init.headers),
    remotePort: 50000,
    serverPort: 8081,
  });
}

/** Runs the phases of the first server for a target, with given files. */
export function phases(
  conf: HttpConf,
  target: string,
  options: {
    files?: Record<string, "file" | "dir">;
    method?: string;
    headers?: HeadersInit;
  } = {},
): { content: Content; vars: RequestVars } {
  const vars = requestVars(target, options);
  const files = options.files ?? {};
  let content = runPhases(conf.servers[0]!, vars, {
    state: { cycles: 0, internal: false, caseless: conf.caseless },
    io: {
      family: "linux",
      // A folder is asked for with or without its trailing slash.
      fileKind: (path) => files[path.replace(/(.)\/$/, "$1")] ?? null,
    },
  });
  // The access phases pass here: these tables are about the other phases.
  for (let i = 0; content.kind === "access" && i < 20; i++) {
    content = content.resume();
  }
  if (content.kind === "access") throw new Error("access steps without end");
  return { content, vars };
}

/** A short description of a decision, for tables. */
export function describe(content: Content): string {
  switch (content.kind) {
    case "return":
      return `return ${content.code}${
        content.text === null ? "" : ` ${content.text}`
      }`;
    case "static":
      return `static ${content.path}`;
    case "index-forbidden":
      return `403 ${content.path}`;
    case "proxy":
      return `proxy ${content.conf.name}${
        content.rewritten ? " rewritten" : ""
      }`;
    case "slash":
      return `301 ${content.conf.name}`;
    case "status":
      return `status ${content.code}${
        content.message ? ` ${content.message}` : ""
      }`;
    case "stub-status":
      return `stub_status ${content.conf.name}`;
  }
}
