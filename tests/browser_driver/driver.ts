/**
 * Drives headless Chromium with playwright-core for tests/browser_test.ts
 * and prints what the page showed as JSON. It runs as its own process with
 * --allow-all because playwright-core reads /proc at load (a WSL check),
 * which Deno allows only under --allow-all; the suite itself keeps explicit
 * permissions.
 *
 * It has its own deno.json and deno.lock beside it, so the project's lock
 * holds nothing the gateway does not use: `deno task` installs every npm
 * package of the lock before any task (denoland/deno#28999), and
 * `deno task start` must not need the network.
 *
 * Usage: deno run -A --config tests/browser_driver/deno.json
 *   tests/browser_driver/driver.ts
 *
 * One browser serves the whole suite, since a launch (and loading
 * playwright-core) costs more than a page: each line on stdin is a JSON
 * array `[scenario, BASE_URL, …]` with scenario one of
 * live|down|assets|default|tls|text, browsed in a browser context of its own
 * (its own cache and cookies, as a fresh browser); each answer is one line
 * of JSON on stdout (`{ "error": … }` when the scenario failed). The browser
 * closes when stdin ends.
 *
 * `tls` is `live` through the common pair: BASE_URL is the plain port that
 * redirects to `https://`, whose self-signed certificate the browser is
 * told to accept.
 *
 * `text` loads each BASE_URL itself, each in a page of its own, and reports
 * each page's rendered text and the character set Chromium chose for it
 * (`texts`).
 *
 * @module
 */

import { type Browser, chromium, type Page } from "npm:playwright-core@1.65.1";

async function text(page: Page, id: string, not = "pending"): Promise<string> {
  // Runs in the page (a string: Deno's types have no DOM).
  await page.waitForFunction(
    `document.getElementById(${JSON.stringify(id)})?.textContent !== ${
      JSON.stringify(not)
    }`,
    undefined,
    { timeout: 10_000 },
  );
  return (await page.textContent(`#${id}`)) ?? "";
}

/**
 * Polls an element's text until it matches, across the page's own reloads
 * (a read during a navigation throws and is retried).
 */
async function textMatching(
  page: Page,
  id: string,
  pattern: RegExp,
  timeoutMs: number,
): Promise<string> {
  const end = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < end) {
    try {
      last = (await page.textContent(`#${id}`, { timeout: 1000 })) ?? "";
      if (pattern.test(last)) return last;
    } catch { /* reloading */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return `timed out; last: ${last}`;
}

/** Browses one scenario in a context of its own and returns the report. */
async function browse(
  browser: Browser,
  [scenario, base, ...moreBases]: string[],
): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  const context = await browser.newContext(
    scenario === "tls" ? { ignoreHTTPSErrors: true } : {},
  );
  try {
    const page = await context.newPage();
    const statuses: Record<string, number[]> = {};
    const encodings: Record<string, string | null> = {};
    page.on("response", async (res) => {
      const path = new URL(res.url()).pathname;
      (statuses[path] ??= []).push(res.status());
      encodings[path] = (await res.allHeaders())["content-encoding"] ?? null;
    });
    if (scenario === "text") {
      const texts = [];
      for (const [i, url] of [base!, ...moreBases].entries()) {
        const each = i === 0 ? page : await context.newPage();
        await each.goto(url);
        // Runs in the page (strings: Deno's types have no DOM).
        texts.push({
          text: await each.evaluate("document.body.innerText"),
          charset: await each.evaluate("document.characterSet"),
        });
      }
      result.texts = texts;
    } else if (scenario === "default") {
      await page.goto(`${base}/`);
      result.state = await text(page, "upstream-state", "");
      result.logFiles = await text(page, "log-files", "");
      result.lastError = await text(page, "last-error", "");
      // The test brings the upstream up once it sees this load; the page
      // must notice by itself.
      result.laterState = await textMatching(
        page,
        "upstream-state",
        /answers \(/,
        20_000,
      );
    } else if (scenario === "subprotocol") {
      // The page offers "chat"; the upstream picks the path's last part.
      await page.goto(`${base}/`);
      const picks = [];
      for (const pick of ["chat", "other"]) {
        // A string: Deno's types have no DOM. The timer only bounds a page
        // that would never settle.
        picks.push(
          await page.evaluate(`new Promise((resolve) => {
            const ws = new WebSocket(location.origin.replace("http", "ws") +
              "/api/pick/${pick}", ["chat"]);
            const bound = setTimeout(() => resolve("no answer"), 20000);
            ws.onopen = () => {
              clearTimeout(bound);
              resolve("open: " + ws.protocol);
              ws.close();
            };
            ws.onerror = () => {
              clearTimeout(bound);
              resolve("failed");
            };
          })`),
        );
      }
      result.picks = picks;
    } else if (scenario === "assets") {
      const deep = await page.goto(`${base}/orders/42`);
      result.deepStatus = deep?.status();
      result.route = await text(page, "route", "");
      await page.reload();
      await text(page, "route", "");
      const end = Date.now() + 5000;
      while ((statuses["/app.js"] ?? []).length < 2 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 20));
      }
      result.lib = await text(page, "lib", "not loaded");
    } else {
      await page.goto(`${base}/`);
      if (scenario === "tls") {
        result.url = page.url();
        // A string: Deno's types have no DOM.
        result.protocol = await page.evaluate(
          `performance.getEntriesByType("navigation")[0].nextHopProtocol`,
        );
      }
      result.login = await text(page, "login");
      result.title = await text(page, "title");
      result.ws = await text(page, "ws");
      result.lib = await text(page, "lib", "not loaded");
    }
    result.statuses = statuses;
    result.encodings = encodings;
  } finally {
    await context.close();
  }
  return result;
}
/** The lines of stdin, one at a time. */
async function* lines(): AsyncGenerator<string> {
  let pending = "";
  for await (
    const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())
  ) {
    pending += chunk;
    let end;
    while ((end = pending.indexOf("\n")) >= 0) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 1);
    }
  }
}

const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
  ],
});
try {
  for await (const line of lines()) {
    let answer: Record<string, unknown>;
    try {
      answer = await browse(browser, JSON.parse(line));
    } catch (error) {
      answer = { error: error instanceof Error ? error.stack : String(error) };
    }
    // deno-lint-ignore no-console
    console.log(JSON.stringify(answer));
  }
} finally {
  await browser.close();
}
