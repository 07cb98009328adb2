/**
 * The page served at `/` when the client-app folder does not exist, so that
 * starting the gateway on a fresh machine shows something useful: where the
 * logs are, whether the upstream answers and since when, and the last error
 * line. It reloads itself every few seconds; the probe behind it is shared
 * and rate-limited (see `upstream/health.ts`). It is a module constant, so
 * `deno compile` embeds it with no `--include`.
 *
 * @module
 */

import { formatErrorLogTime } from "../log/mod.ts";
import type { HealthReport } from "../upstream/mod.ts";

/** Seconds between the page's own reloads. */
export const DEFAULT_PAGE_REFRESH_SECONDS = 5;

/** What the page shows. */
export interface DefaultPageInfo {
  /** The gateway's version. */
  version: string;
  /** The upstream origin `/api/` forwards to. */
  upstream: string;
  /** The port the gateway listens on (the station's own address). */
  port?: number;
  /** The client-app folder that is missing. */
  root: string;
  /** The upstream's state. */
  health: HealthReport;
  /** How long the probe waits for an answer. */
  probeTimeoutMs: number;
  /**
   * Show the log paths and the last error line: for a loopback client only,
   * since the line holds other clients' addresses and requests.
   */
  diagnostics: boolean;
  /** The log files; absent when not known. */
  logFiles?: { error: string; access: string | null };
  /** The last line written at `error` or worse; `null` when none yet. */
  lastError: string | null;
  /** The time now, for "for N s". */
  now: number;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * A duration in words, coarse enough to read at a glance.
 *
 * @param ms The duration.
 * @returns e.g. `42 s`, `3 min`, `5 h 12 min`, `2 d 3 h`.
 */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
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
 *   health: {
 *     answers: false,
 *     detail: "connect() failed (111: Connection refused)",
 *     since: 0,
 *     checkedAt: 0,
 *   },
 *   probeTimeoutMs: 3000,
 *   diagnostics: true,
 *   lastError: null,
 *   now: 0,
 * });
 * match(html, /Connection refused/);
 * ```
 */
export function renderDefaultPage(info: DefaultPageInfo): string {
  const { health } = info;
  const since = `since ${formatErrorLogTime(new Date(health.since))} (${
    formatDuration(info.now - health.since)
  })`;
  const state = health.answers
    ? `<p id="upstream-state" class="ok">The upstream answers (${
      escapeHtml(health.detail)
    }), ${since}.</p>`
    : `<p id="upstream-state" class="bad">The upstream does not answer: ${
      escapeHtml(health.detail)
    }. Requests under <code>/api/</code> get 502 or 504 until it does. This has been so ${since}.</p>
<p id="remedy">To fix it, on the machine of <code>${
      escapeHtml(info.upstream)
    }</code>: start the application (its service or program) and check it listens on that address and port; from the station, <code>curl ${
      escapeHtml(info.upstream)
    }/</code> should print any HTTP answer. This page shows the change within ${DEFAULT_PAGE_REFRESH_SECONDS} s.</p>`;
  const host = info.upstream.replace(/^http:\/\//, "");
  const local = `http://localhost${
    info.port === undefined || info.port === 80 ? "" : `:${info.port}`
  }/`;
  const logs = !info.diagnostics
    ? `<p id="log-files">The log files and the last error line are shown on the station itself: open <code>${local}</code> there.</p>`
    : info.logFiles
    ? `<ul id="log-files">
<li>Error log: <code>${escapeHtml(info.logFiles.error)}</code></li>
<li>Access log: ${
      info.logFiles.access === null
        ? "off"
        : `<code>${escapeHtml(info.logFiles.access)}</code>`
    }</li>
</ul>`
    : `<p id="log-files">The log files were not given to this page.</p>`;
  const lastError = !info.diagnostics
    ? ""
    : info.lastError === null
    ? `<p id="last-error">None since the gateway started.</p>`
    : `<pre id="last-error">${escapeHtml(info.lastError)}</pre>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${DEFAULT_PAGE_REFRESH_SECONDS}">
<title>station-gateway</title>
<style>
body { font: 16px/1.5 system-ui, sans-serif; max-width: 48rem; margin: 3rem auto; padding: 0 1rem; color: #222; }
code, pre { background: #f2f2f2; padding: 0 .25rem; }
pre { white-space: pre-wrap; word-break: break-all; padding: .5rem; }
.ok { color: #176f2c; } .bad { color: #a11; } .note { color: #555; font-size: .9rem; }
</style>
</head>
<body>
<h1>station-gateway ${escapeHtml(info.version)}</h1>
<p>This gateway serves the station's client app at <code>/</code> and forwards
every request under <code>/api/</code> to
<code>${escapeHtml(info.upstream)}/</code> with <code>/api</code> removed.</p>
<h2>Upstream</h2>
${state}
<p class="note">"Answers" means: a <code>GET /</code> sent to
<code>${
    escapeHtml(host)
  }</code> got an HTTP status line back (any status) within ${info.probeTimeoutMs} ms.
A server that accepts the connection but sends nothing does not answer. It is
asked at most once a second, however many pages are open; this page reloads
itself every ${DEFAULT_PAGE_REFRESH_SECONDS} s.</p>
<h2>Logs</h2>
${logs}
${
    info.diagnostics
      ? `<p>Last line at <code>[error]</code> or worse:</p>\n${lastError}`
      : ""
  }
<h2>Client app</h2>
<p>No client app is installed: the folder <code>${
    escapeHtml(info.root)
  }</code> does not exist. Copy the app there (or start with
<code>--root DIR</code>) and reload.</p>
</body>
</html>
`;
}
