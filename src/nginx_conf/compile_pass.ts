/**
 * Where a location passes its requests: a `proxy_pass` URL (with or
 * without a URI part, with variables in its URI or in its host) or a
 * `fastcgi_pass` address, each resolved to an upstream group, one made
 * when the address names no `upstream {}` (ngx_http_upstream_add).
 *
 * @module
 */

import type { ProxyPass } from "../engine/mod.ts";
import { parseUpstreamAddress } from "../upstream/mod.ts";
import type { CompileContext } from "./compile_context.ts";
import { fastcgiTargetRefusal } from "./compile_fastcgi.ts";
import {
  implicitGroup,
  splitHostPort,
  type Upstreams,
} from "./compile_upstream.ts";
import type { Directive } from "./parser.ts";

/** What resolving a pass needs from the compiler. */
export interface PassContext extends Pick<CompileContext, "fail" | "value"> {
  /** The configuration's upstream groups. */
  readonly upstreams: Upstreams;
}

/**
 * The model of a `proxy_pass` URL, its group registered (an address that
 * names no `upstream {}` gets a group of its own).
 *
 * @param d The `proxy_pass` directive.
 * @param ctx Where refusals go, the value compiler and the groups.
 * @returns The model; `null` when refused.
 */
export function proxyPass(d: Directive, ctx: PassContext): ProxyPass | null {
  const url = d.args[0]!;
  // With variables nginx evaluates the whole URL per request and parses
  // it then (ngx_http_proxy_eval). Variables after a literal host leave
  // the upstream known now, so only the URI part is evaluated; with
  // variables in the host or port the whole URL is, and the group found
  // per request.
  const dollar = url.indexOf("$");
  const m = /^([a-z]+):\/\/([^/?#]+)(.*)$/i.exec(
    dollar < 0 ? url : url.slice(0, dollar),
  );
  if (dollar >= 0 && (m === null || !uriFollows(m[3]!, url.slice(dollar)))) {
    const scheme = /^([a-z]+):\/\//i.exec(url.slice(0, dollar))?.[1];
    if (scheme !== undefined && scheme.toLowerCase() !== "http") {
      ctx.fail(
        d,
        `"proxy_pass ${url}" is not supported: the gateway forwards over http:// only`,
      );
      return null;
    }
    return {
      scheme: "http",
      group: "",
      proxyHost: "",
      uri: null,
      dynamic: null,
      url: ctx.value(d, url),
      text: url,
    };
  }
  // ngx_http_proxy_pass: a scheme but http:// or https:// is `invalid URL
  // prefix`; what follows is read as any upstream's address (ngx_parse_url
  // with a URI part), its refusal quoting it.
  const scheme = /^https?:\/\//i.exec(url)?.[0];
  const rest = scheme === undefined ? "" : url.slice(scheme.length);
  const read = scheme !== undefined && dollar < 0 && !/^unix:/i.test(rest)
    ? parseUpstreamAddress(rest, true)
    : null;
  if (read !== null && !read.ok) {
    ctx.fail(d, `${read.error} in upstream "${rest}"`);
    return null;
  }
  if (m === null || scheme === undefined) {
    ctx.fail(d, "invalid URL prefix");
    return null;
  }
  if (m[1]!.toLowerCase() !== "http") {
    ctx.fail(
      d,
      `"proxy_pass ${url}" is not supported: the gateway forwards over http:// only`,
    );
    return null;
  }
  const host = m[2]!;
  const dynamic = dollar < 0
    ? null
    : ctx.value(d, url.slice(`${m[1]}://${host}`.length));
  const uri = m[3] === "" || dynamic !== null ? null : m[3]!;
  let group = ctx.upstreams.named(host) ?? host;
  if (group === host && !ctx.upstreams.groups.get(host)?.explicit) {
    const hostPort = splitHostPort(host, dollar < 0 ? rest : host);
    if (!hostPort.ok) {
      ctx.fail(d, hostPort.error);
      return null;
    }
    group = `${host}${/:\d+$/.test(host) ? "" : ":80"}`;
    if (!ctx.upstreams.groups.has(group)) {
      ctx.upstreams.groups.set(group, implicitGroup(group, hostPort.value));
    }
  }
  return {
    scheme: "http",
    group,
    // ngx_http_proxy_set_vars: the default port is left out of Host.
    proxyHost: host.replace(/:80$/, ""),
    uri,
    dynamic,
    url: null,
    // With variables nginx's default `proxy_redirect` reads the URL as
    // written (ngx_http_proxy_merge_loc_conf).
    text: dynamic === null ? `http://${host}` : url,
  };
}

/**
 * The group a `fastcgi_pass` names, registered.
 *
 * @param d The `fastcgi_pass` directive.
 * @param ctx Where refusals go and the groups.
 * @returns The group's key; `null` when refused.
 */
export function fastcgiPass(d: Directive, ctx: PassContext): string | null {
  const target = d.args[0]!;
  const refused = fastcgiTargetRefusal(target);
  if (refused !== null) {
    ctx.fail(d, refused);
    return null;
  }
  const key = ctx.upstreams.named(target);
  if (key !== null) {
    ctx.upstreams.fastcgiGroups.set(key, ctx.upstreams.groups.get(key)!);
    return key;
  }
  const hostPort = splitHostPort(target);
  if (!hostPort.ok) {
    ctx.fail(d, hostPort.error);
    return null;
  }
  if (!/:\d+$/.test(target)) {
    // nginx resolves a name without an upstream{} at start and needs a
    // port for FastCGI (ngx_http_upstream_add, `no port in upstream`).
    ctx.fail(d, `no port in upstream "${target}"`);
    return null;
  }
  if (!ctx.upstreams.fastcgiGroups.has(target)) {
    ctx.upstreams.fastcgiGroups.set(
      target,
      implicitGroup(target, hostPort.value),
    );
  }
  return target;
}

/**
 * Whether the variables of a `proxy_pass` URL start within its URI part:
 * after a `/` or `?` the host has ended, and `$request_uri`, `$uri` and
 * `$document_uri` always start with `/`.
 */
function uriFollows(beforeVariable: string, fromVariable: string): boolean {
  if (beforeVariable !== "") return /^[/?]/.test(beforeVariable);
  return /^\$(?:request_uri|uri|document_uri|\{(?:request_uri|uri|document_uri)\})(?![A-Za-z0-9_])/i
    .test(fromVariable);
}
