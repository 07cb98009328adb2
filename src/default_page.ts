/**
 * The page served at `/` when the client-app folder does not exist, so that
 * starting the gateway on a fresh machine shows something useful. It is a
 * module constant, so `deno compile` embeds it with no `--include`.
 *
 * @module
 */

import { osErrorOf } from "./upstream_error.ts";

/** The upstream's state as the page reports it. */
export type ProbeResult = { ok: true } | { ok: false; reason: string };

/** What the page shows. */
export interface DefaultPageInfo {
  /** The gateway's version. */
  version: string;
  /** The upstream origin `/api/` forwards to. */
  upstream: string;
  /** The client-app folder that is missing. */
  root: string;
  /** Whether the upstream accepted a TCP connection just now. */
  probe: ProbeResult;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Renders the default page.
 *
 * @param info What to show.
 * @returns The HTML.
 *
 * @example Usage
 * ```ts
 * import { renderDefaultPage } from "./default_page.ts";
 * import { match } from "node:assert/strict";
 *
 * const html = renderDefaultPage({
 *   version: "1.0.0",
 *   upstream: "http://127.0.0.1:8080",
 *   root: "/srv/html",
 *   probe: { ok: false, reason: "connect() failed (111: Connection refused)" },
 * });
 * match(html, /Connection refused/);
 * ```
 */
export function renderDefaultPage(info: DefaultPageInfo): string {
  const state = info.probe.ok
    ? `<p class="ok">The upstream answers: it accepted a connection just now.</p>`
    : `<p class="bad">The upstream does not answer: ${
      escapeHtml(info.probe.reason)
    }. Requests under <code>/api/</code> get 502 until it does.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>station-gateway</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 44rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
code { background: #f2f2f2; padding: 0 .25rem; }
.ok { color: #176f2c; } .bad { color: #a11; }
</style>
</head>
<body>
<h1>station-gateway ${escapeHtml(info.version)}</h1>
<p>This gateway serves the station's client app at <code>/</code> and forwards
every request under <code>/api/</code> to
<code>${escapeHtml(info.upstream)}/</code> with <code>/api</code> removed.</p>
${state}
<p>No client app is installed: the folder <code>${
    escapeHtml(info.root)
  }</code> does not exist. Copy the app there (or start with
<code>--root DIR</code>) and reload.</p>
</body>
</html>
`;
}

/**
 * Tries one TCP connection to the upstream.
 *
 * @param hostname The upstream host.
 * @param port The upstream port.
 * @param timeoutMs Give up after this long.
 * @returns Whether it connected, and the OS reason if not.
 */
export async function probeUpstream(
  hostname: string,
  port: number,
  timeoutMs: number,
): Promise<ProbeResult> {
  try {
    const conn = await Deno.connect({
      hostname,
      port,
      signal: AbortSignal.timeout(timeoutMs),
    });
    conn.close();
    return { ok: true };
  } catch (error) {
    if (error instanceof DOMException) {
      return { ok: false, reason: `no answer within ${timeoutMs} ms` };
    }
    const os = osErrorOf(error);
    const reason = os === undefined
      ? (error instanceof Error ? error.message : String(error))
      : `connect() failed (${os.code}: ${os.text})`;
    return { ok: false, reason };
  }
}
