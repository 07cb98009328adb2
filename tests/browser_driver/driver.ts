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
 * One browser and one tab serve the whole suite: a launch (and loading
 * playwright-core) costs more than a page, and a browser context with its
 * first page about five times a page's load in a tab already open (a
 * renderer process of its own). Each line on stdin is a JSON array
 * `[scenario, BASE_URL, …]` with scenario one of
 * live|down|assets|default|refresh|tls|subprotocol|text, browsed in that
 * tab with its cache and cookies emptied first (as a fresh browser) and
 * left on `about:blank` after (the page's connections closed, as a closed
 * browser); each answer is one line of JSON on stdout (`{ "error": … }`
 * when the scenario failed). The browser closes when stdin ends.
 *
 * `default` answers once the built-in page is shown and Chromium has
 * scheduled its refresh, then waits for the line `["refresh"]` (the test has
 * brought the upstream up) and answers again once the page, refreshing
 * itself, shows the upstream answering: see `defaultPage`. It has a browser
 * context of its own (a renderer process of its own), since its clock is
 * Chromium's virtual time, which is the process's.
 *
 * `tls` is `live` through the common pair: BASE_URL is the plain port that
 * redirects to `https://`, whose self-signed certificate the browser is
 * told to accept.
 *
 * `text` loads each BASE_URL in turn and reports each page's rendered text
 * and the character set Chromium chose for it (`texts`).
 *
 * @module
 */

import {
  type Browser,
  type BrowserContext,
  type CDPSession,
  chromium,
  type Page,
  type Response,
} from "npm:playwright-core@1.65.1";

/**
 * Every context accepts the TLS check's self-signed certificate (the other
 * pages are plain http), in a small viewport: less for the GPU process to
 * raster and composite (the checks read text, not pixels).
 */
const CONTEXT_OPTIONS = {
  ignoreHTTPSErrors: true,
  viewport: { width: 400, height: 300 },
};

/** The lines a scenario exchanges with the test before its report. */
interface Talk {
  /** Writes a line of JSON for the test. */
  answer(report: Record<string, unknown>): void;
  /** The test's next line; `undefined` when stdin ended. */
  next(): Promise<string | undefined>;
}

/**
 * An element's text once it is no longer `not`. It waits in the page on the
 * DOM's own changes (a MutationObserver), not on polling; the timer only
 * bounds a page that never changes.
 */
async function text(page: Page, id: string, not = "pending"): Promise<string> {
  // Runs in the page (a string: Deno's types have no DOM).
  return await page.evaluate(`new Promise((resolve) => {
    const read = () => document.getElementById(${JSON.stringify(id)})
      ?.textContent ?? null;
    const settle = (value) => {
      observer.disconnect();
      clearTimeout(bound);
      resolve(value);
    };
    const changed = () => {
      const now = read();
      if (now !== null && now !== ${JSON.stringify(not)}) settle(now);
    };
    const observer = new MutationObserver(changed);
    const bound = setTimeout(() => settle("timed out; last: " + read()), 10000);
    observer.observe(document, {
      subtree: true,
      childList: true,
      characterData: true,
    });
    changed();
  })`);
}

/** Each response's status and `Content-Encoding` by path, until stopped. */
function watchResponses(page: Page) {
  const statuses: Record<string, number[]> = {};
  const encodings: Record<string, string | null> = {};
  const reads: Promise<void>[] = [];
  const listener = (res: Response) => {
    const path = new URL(res.url()).pathname;
    (statuses[path] ??= []).push(res.status());
    reads.push(
      res.allHeaders().then(
        (headers) => {
          encodings[path] = headers["content-encoding"] ?? null;
        },
        () => {},
      ),
    );
  };
  page.on("response", listener);
  return {
    async stop() {
      page.off("response", listener);
      await Promise.all(reads);
      return { statuses, encodings };
    },
  };
}

/** A CDP event's payloads in order: the next one within a bound, or any yet. */
interface Events<T> {
  /** The next payload; rejects when none comes within 20 s. */
  next(what: string): Promise<T>;
  /** The next payload already received, if any. */
  take(): T | undefined;
}

function events<T>(
  cdp: CDPSession,
  name:
    | "Page.frameScheduledNavigation"
    | "Page.frameRequestedNavigation"
    | "Emulation.virtualTimeBudgetExpired",
): Events<T> {
  const queued: T[] = [];
  const waiting: ((event: T) => void)[] = [];
  cdp.on(name, (event) => {
    const next = waiting.shift();
    if (next === undefined) queued.push(event as T);
    else next(event as T);
  });
  return {
    take: () => queued.shift(),
    next(what) {
      const event = queued.shift();
      if (event !== undefined) return Promise.resolve(event);
      // The bound only ends a page that never does what is awaited.
      return new Promise((resolve, reject) => {
        const bound = setTimeout(
          () => reject(new Error(`no ${name} (${what}) within 20 s`)),
          20_000,
        );
        waiting.push((event) => {
          clearTimeout(bound);
          resolve(event);
        });
      });
    },
  };
}

/** A navigation Chromium scheduled or started by itself, as CDP reports it. */
interface Navigation {
  reason: string;
  url: string;
  delay?: number;
}

/**
 * The built-in page: what it shows, then its own refresh, on Chromium's
 * virtual time (`Emulation.setVirtualTimePolicy`), so its own timer fires
 * the refresh without the test waiting its 5 s.
 *
 * Chromium reports the refresh it scheduled from the page's
 * `<meta http-equiv="refresh">` (`Page.frameScheduledNavigation`: delay,
 * reason, URL), and the page's clock is paused there, so the refresh cannot
 * fire before the test has brought the upstream up (the next line on
 * stdin). Then each round grants the clock the delay (Chromium fires the
 * refresh, `Page.frameRequestedNavigation`), then a second at a time, held
 * while the page's requests are on the wire, until the refreshed page has
 * scheduled its own refresh (it has loaded; a second is less than its
 * delay, so it waits for the next round). Each grant is awaited to its end
 * (`Emulation.virtualTimeBudgetExpired`) before the next: an end that
 * arrived late would pause the next grant. The gateway probes the upstream
 * at most once a second, so a refresh within that second still shows the
 * old state: the rounds go on until the page shows the new one (bounded in
 * count and time).
 */
async function defaultPage(
  context: BrowserContext,
  page: Page,
  url: string,
  result: Record<string, unknown>,
  talk: Talk,
): Promise<void> {
  const cdp = await context.newCDPSession(page);
  await cdp.send("Page.enable");
  const scheduled = events<Navigation>(cdp, "Page.frameScheduledNavigation");
  const requested = events<Navigation>(cdp, "Page.frameRequestedNavigation");
  const expired = events<unknown>(cdp, "Emulation.virtualTimeBudgetExpired");
  const grant = async (
    policy: "advance" | "pauseIfNetworkFetchesPending",
    budget: number,
  ) => {
    await cdp.send("Emulation.setVirtualTimePolicy", { policy, budget });
    await expired.next(`${budget} ms granted`);
  };
  // Runs in the page (a string: Deno's types have no DOM). The page is
  // the gateway's own HTML, no script: its text is there once loaded.
  const read = (id: string): Promise<string> =>
    page.evaluate(
      `document.getElementById(${JSON.stringify(id)})?.textContent ?? ""`,
    );
  await page.goto(url);
  const first: Navigation = await scheduled.next("the first page's refresh");
  await cdp.send("Emulation.setVirtualTimePolicy", { policy: "pause" });
  talk.answer({
    state: await read("upstream-state"),
    logFiles: await read("log-files"),
    lastError: await read("last-error"),
    scheduled: { delay: first.delay, reason: first.reason, url: first.url },
  });
  // The test brings the upstream up, then says so.
  const go = await talk.next();
  if (go === undefined || JSON.parse(go)[0] !== "refresh") {
    throw new Error(`expected ["refresh"], got ${go}`);
  }
  const refreshes: Navigation[] = [];
  const end = Date.now() + 20_000;
  let state = "";
  for (let round = 0; round < 100 && Date.now() < end; round++) {
    await grant("advance", (first.delay ?? 0) * 1000);
    const fired = await requested.next("the page's own refresh");
    refreshes.push({ reason: fired.reason, url: fired.url });
    let next = scheduled.take();
    for (let step = 0; next === undefined && step < 20; step++) {
      await grant("pauseIfNetworkFetchesPending", 1000);
      next = scheduled.take();
    }
    if (next?.delay !== first.delay || next?.url !== first.url) {
      throw new Error(`the refreshed page scheduled ${JSON.stringify(next)}`);
    }
    state = await read("upstream-state");
    if (/answers \(/.test(state)) break;
  }
  result.laterState = state;
  result.refreshes = refreshes;
}

/** The tab every scenario shares, and its context. */
interface Tab {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** A CDP session of the tab's, to empty the browser's cache. */
  cdp: CDPSession;
}

/** Browses one scenario in the shared tab and returns the report. */
async function browse(
  tab: Tab,
  [scenario, base, ...moreBases]: string[],
  talk: Talk,
): Promise<Record<string, unknown>> {
  const result: Record<string, unknown> = {};
  // As a fresh browser: nothing cached, no cookies.
  await tab.cdp.send("Network.clearBrowserCache");
  await tab.context.clearCookies();
  // The built-in page's clock is Chromium's virtual time, which is the
  // renderer process's (Blink's main-thread scheduler): Chromium may give a
  // new tab a process of the same site and context, and no context shares
  // another's processes, so no later page shares the paused clock. With a
  // tab of the shared context, the next check's load on localhost once
  // never ended.
  const own = scenario === "default"
    ? await tab.browser.newContext(CONTEXT_OPTIONS)
    : undefined;
  const page = own === undefined ? tab.page : await own.newPage();
  const responses = watchResponses(page);
  try {
    if (scenario === "text") {
      const texts = [];
      for (const url of [base!, ...moreBases]) {
        await page.goto(url);
        // Runs in the page (strings: Deno's types have no DOM).
        texts.push({
          text: await page.evaluate("document.body.innerText"),
          charset: await page.evaluate("document.characterSet"),
        });
      }
      result.texts = texts;
    } else if (scenario === "default") {
      await defaultPage(own!, page, `${base}/`, result, talk);
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
      const revalidated = page.waitForResponse(
        (res) => new URL(res.url()).pathname === "/app.js",
        { timeout: 10_000 },
      );
      await page.reload();
      await revalidated;
      await text(page, "route", "");
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
  } finally {
    Object.assign(result, await responses.stop());
    // Leaving the page closes its connections (its WebSocket), as closing
    // the browser would, before the test stops its servers.
    if (own === undefined) await page.goto("about:blank");
    else await own.close();
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

// No GPU, no background networking or component updates. Not
// `--single-process`: with it a page load in the suite timed out (30 s);
// nor `--in-process-gpu`: the GPU process's CPU moved into the browser's.
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
const context = await browser.newContext(CONTEXT_OPTIONS);
const page = await context.newPage();
const tab: Tab = {
  browser,
  context,
  page,
  cdp: await context.newCDPSession(page),
};
const input = lines();
const talk: Talk = {
  answer(report) {
    // deno-lint-ignore no-console
    console.log(JSON.stringify(report));
  },
  async next() {
    return (await input.next()).value ?? undefined;
  },
};
try {
  for (
    let line = await talk.next();
    line !== undefined;
    line = await talk.next()
  ) {
    let answer: Record<string, unknown>;
    try {
      answer = await browse(tab, JSON.parse(line), talk);
    } catch (error) {
      answer = { error: error instanceof Error ? error.stack : String(error) };
    }
    talk.answer(answer);
  }
} finally {
  await browser.close();
}
