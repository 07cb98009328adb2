import { deepStrictEqual } from "node:assert/strict";
import type { Expires } from "../../src/engine/mod.ts";
import { expiresFields } from "../../src/response/mod.ts";

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
