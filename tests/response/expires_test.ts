import { deepStrictEqual } from "node:assert/strict";
import type { Expires } from "../../src/engine/mod.ts";
import { expiresFields, parseExpires } from "../../src/response/mod.ts";
import { nginxTestOutput } from "../_nginx.ts";
import { suiteNeeds } from "../_prerequisites.ts";
import { freePort } from "../_utils.ts";

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0, 750); // .750: nginx counts whole seconds
const MODIFIED = Date.UTC(2026, 10, 20, 8, 0, 0);

Deno.test("expiresFields() computes every form as ngx_http_set_expires does", async (t) => {
  const cases: {
    name: string;
    setting: Expires;
    lastModified?: number;
    want: { expires: string; cacheControl: string } | null;
  }[] = [
    { name: "off", setting: { kind: "off" }, want: null },
    {
      name: "epoch",
      setting: { kind: "epoch" },
      want: {
        expires: "Thu, 01 Jan 1970 00:00:01 GMT",
        cacheControl: "no-cache",
      },
    },
    {
      name: "max",
      setting: { kind: "max" },
      want: {
        expires: "Thu, 31 Dec 2037 23:55:55 GMT",
        cacheControl: "max-age=315360000",
      },
    },
    {
      name: "1h",
      setting: { kind: "after", seconds: 3600, modified: false },
      want: {
        expires: "Wed, 25 Nov 2026 13:00:00 GMT",
        cacheControl: "max-age=3600",
      },
    },
    {
      name: "7d",
      setting: { kind: "after", seconds: 7 * 86400, modified: false },
      want: {
        expires: "Wed, 02 Dec 2026 12:00:00 GMT",
        cacheControl: "max-age=604800",
      },
    },
    {
      name: "0 is now and max-age=0",
      setting: { kind: "after", seconds: 0, modified: false },
      want: {
        expires: "Wed, 25 Nov 2026 12:00:00 GMT",
        cacheControl: "max-age=0",
      },
    },
    {
      name: "modified 0 is now too",
      setting: { kind: "after", seconds: 0, modified: true },
      lastModified: MODIFIED,
      want: {
        expires: "Wed, 25 Nov 2026 12:00:00 GMT",
        cacheControl: "max-age=0",
      },
    },
    {
      name: "-1 is a second ago and no-cache",
      setting: { kind: "after", seconds: -1, modified: false },
      want: {
        expires: "Wed, 25 Nov 2026 11:59:59 GMT",
        cacheControl: "no-cache",
      },
    },
    {
      name: "-1h",
      setting: { kind: "after", seconds: -3600, modified: false },
      want: {
        expires: "Wed, 25 Nov 2026 11:00:00 GMT",
        cacheControl: "no-cache",
      },
    },
    {
      name: "modified +10d counts from Last-Modified",
      setting: { kind: "after", seconds: 10 * 86400, modified: true },
      lastModified: MODIFIED,
      want: {
        expires: "Mon, 30 Nov 2026 08:00:00 GMT",
        cacheControl: `max-age=${
          (Date.UTC(2026, 10, 30, 8) - NOW + 750) / 1000
        }`,
      },
    },
    {
      name: "modified +1h already past is no-cache",
      setting: { kind: "after", seconds: 3600, modified: true },
      lastModified: MODIFIED,
      want: {
        expires: "Fri, 20 Nov 2026 09:00:00 GMT",
        cacheControl: "no-cache",
      },
    },
    {
      name: "a time past year 9999 is held at its end",
      setting: { kind: "after", seconds: 9223372036854775807, modified: false },
      want: {
        expires: "Fri, 31 Dec 9999 23:59:59 GMT",
        cacheControl: "max-age=9223372036854775808", // the nearest double
      },
    },
    {
      name: "modified without Last-Modified counts from now",
      setting: { kind: "after", seconds: 3600, modified: true },
      want: {
        expires: "Wed, 25 Nov 2026 13:00:00 GMT",
        cacheControl: "max-age=3600",
      },
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      deepStrictEqual(
        expiresFields(c.setting, {
          now: NOW,
          lastModified: c.lastModified ?? null,
        }),
        c.want,
      );
    });
  }
});

Deno.test("expiresFields() @time is the next such local time of day", async (t) => {
  const now = new Date(2026, 10, 25, 12, 0, 0).getTime(); // local time
  const cases: { name: string; at: number; want: Date }[] = [
    {
      name: "later today",
      at: 15 * 3600 + 30 * 60,
      want: new Date(2026, 10, 25, 15, 30, 0),
    },
    {
      name: "passed today: tomorrow",
      at: 3 * 3600,
      want: new Date(2026, 10, 26, 3, 0, 0),
    },
    {
      name: "now exactly: tomorrow",
      at: 12 * 3600,
      want: new Date(2026, 10, 26, 12, 0, 0),
    },
    {
      name: "end of month rolls over",
      at: 0,
      want: new Date(2026, 10, 26, 0, 0, 0),
    },
  ];
  for (const c of cases) {
    await t.step(c.name, () => {
      const seconds = (c.want.getTime() - now) / 1000;
      deepStrictEqual(
        expiresFields({ kind: "daily", secondsOfDay: c.at }, {
          now,
          lastModified: null,
        }),
        { expires: c.want.toUTCString(), cacheControl: `max-age=${seconds}` },
      );
    });
  }
  await t.step("the 30th at 23:00 after 23:00 is the 1st", () => {
    const late = new Date(2026, 10, 30, 23, 30, 0).getTime();
    const want = new Date(2026, 11, 1, 23, 0, 0);
    deepStrictEqual(
      expiresFields({ kind: "daily", secondsOfDay: 23 * 3600 }, {
        now: late,
        lastModified: null,
      }),
      {
        expires: want.toUTCString(),
        cacheControl: `max-age=${(want.getTime() - late) / 1000}`,
      },
    );
  });
});

/** Each value as nginx 1.22's `nginx -t` judged it (`"expires" directive …`). */
const PARSE_CASES: [string[], Expires | string][] = [
  [["1h"], { kind: "after", seconds: 3600, modified: false }],
  [["1h30m"], { kind: "after", seconds: 5400, modified: false }],
  [["1h 30m"], { kind: "after", seconds: 5400, modified: false }],
  [["1h "], { kind: "after", seconds: 3600, modified: false }],
  [["1y 1M 1w 1d 1h 1m 1s"], {
    kind: "after",
    seconds: 31536000 + 2592000 + 604800 + 86400 + 3600 + 60 + 1,
    modified: false,
  }],
  [["1s 1"], { kind: "after", seconds: 2, modified: false }],
  [["1 1"], { kind: "after", seconds: 2, modified: false }],
  [["+7d"], { kind: "after", seconds: 604800, modified: false }],
  [["-1"], { kind: "after", seconds: -1, modified: false }],
  [["-0"], { kind: "after", seconds: 0, modified: false }],
  [["0"], { kind: "after", seconds: 0, modified: false }],
  [["1M"], { kind: "after", seconds: 2592000, modified: false }],
  [["9223372036854775807"], {
    kind: "after",
    seconds: 9223372036854775807,
    modified: false,
  }],
  [["modified", "+1h"], { kind: "after", seconds: 3600, modified: true }],
  [["modified", "-1h"], { kind: "after", seconds: -3600, modified: true }],
  [["modified", "0"], { kind: "after", seconds: 0, modified: true }],
  [["@15h30m"], { kind: "daily", secondsOfDay: 55800 }],
  [["@0"], { kind: "daily", secondsOfDay: 0 }],
  [["@24h"], { kind: "daily", secondsOfDay: 86400 }],
  [["max"], { kind: "max" }],
  [["off"], { kind: "off" }],
  [["epoch"], { kind: "epoch" }],
  [["30m 1h"], "invalid value"],
  [["1ms"], "invalid value"],
  [["1 1s"], "invalid value"],
  [[""], "invalid value"],
  [[" 1h"], "invalid value"],
  [["1d1d"], "invalid value"],
  [["0x10"], "invalid value"],
  [["1H"], "invalid value"],
  [["soon"], "invalid value"],
  [["9223372036854775808"], "invalid value"],
  [["@-1h"], "invalid value"],
  [["+@1h"], "invalid value"],
  [["@25h"], "daily time value must be less than 24 hours"],
  [["@86401"], "daily time value must be less than 24 hours"],
  [["modified", "@1h"], 'daily time cannot be used with "modified" parameter'],
  [["modified", "epoch"], "invalid value"],
  [["modified", "max"], "invalid value"],
  [["modified", "off"], "invalid value"],
  [["later", "1h"], "invalid value"],
  [["$expires"], "with variables is not supported"],
];

Deno.test("parseExpires() accepts and refuses what nginx 1.22 does", async (t) => {
  for (const [args, want] of PARSE_CASES) {
    await t.step(JSON.stringify(args), () => {
      deepStrictEqual(
        parseExpires(args),
        typeof want === "string" ? { error: want } : want,
      );
    });
  }
});

Deno.test({
  name: "parseExpires() agrees with nginx -t on every case",
  ...suiteNeeds("expires_test.ts", ["nginx"]),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "expires-t-" });
    try {
      await Deno.mkdir(`${dir}/logs`);
      for (const [args, want] of PARSE_CASES) {
        if (args.some((a) => a.includes("$"))) continue; // nginx takes those
        const quoted = args.map((a) => JSON.stringify(a)).join(" ");
        await Deno.writeTextFile(
          `${dir}/n.conf`,
          `events {}\nhttp { access_log off; server { listen 127.0.0.1:${freePort()}; location / { expires ${quoted}; } } }\n`,
        );
        const stderr = await nginxTestOutput({
          prefix: dir,
          conf: `${dir}/n.conf`,
        });
        const said = stderr.match(/"expires" directive (.*) in \//)?.[1];
        deepStrictEqual(
          { args, said: said ?? (stderr === "" ? "ok" : stderr) },
          { args, said: typeof want === "string" ? want : "ok" },
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
