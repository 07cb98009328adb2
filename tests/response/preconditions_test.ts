import { strictEqual } from "node:assert/strict";
import {
  type ConditionalFields,
  NO_VALIDATORS,
  preconditionStatus,
} from "../../src/response/mod.ts";

const NONE: ConditionalFields = {
  ifNoneMatch: null,
  ifModifiedSince: null,
  ifMatch: null,
  ifUnmodifiedSince: null,
};
const LM = "Thu, 01 Jan 2026 00:00:00 GMT";
const FILE = { etag: '"6955b900-1a"', lastModifiedMs: Date.parse(LM) };

/** nginx 1.22's not-modified filter (ngx_http_not_modified_header_filter). */
const CASES: [
  string,
  Partial<ConditionalFields>,
  typeof FILE | null,
  number,
][] = [
  ["nothing asked", {}, FILE, 200],
  ["If-None-Match: * without validators", { ifNoneMatch: "*" }, null, 304],
  [
    "If-None-Match naming no tag without one",
    { ifNoneMatch: '"a"' },
    null,
    200,
  ],
  ["If-None-Match: * in a list is a tag", { ifNoneMatch: '"a", *' }, null, 200],
  ["If-None-Match: the tag", { ifNoneMatch: FILE.etag }, FILE, 304],
  ["If-None-Match: the tag weak", { ifNoneMatch: `W/${FILE.etag}` }, FILE, 304],
  [
    "If-None-Match: the tag second in a list",
    {
      ifNoneMatch: `"x" ,\t${FILE.etag} `,
    },
    FILE,
    304,
  ],
  [
    "If-None-Match: a tag it begins",
    { ifNoneMatch: `${FILE.etag}x` },
    FILE,
    200,
  ],
  ["If-Match: * without validators", { ifMatch: "*" }, null, 200],
  ["If-Match: a tag without one", { ifMatch: '"a"' }, null, 412],
  ["If-Match: another tag", { ifMatch: '"a"' }, FILE, 412],
  ["If-Match: the tag", { ifMatch: FILE.etag }, FILE, 200],
  [
    "If-Match: the tag weak (strict comparison)",
    {
      ifMatch: `W/${FILE.etag}`,
    },
    FILE,
    412,
  ],
  [
    "If-Unmodified-Since without Last-Modified",
    {
      ifUnmodifiedSince: LM,
    },
    null,
    412,
  ],
  ["If-Unmodified-Since the same second", { ifUnmodifiedSince: LM }, FILE, 200],
  [
    "If-Unmodified-Since later",
    {
      ifUnmodifiedSince: "Fri, 01 Jan 2100 00:00:00 GMT",
    },
    FILE,
    200,
  ],
  [
    "If-Unmodified-Since earlier",
    {
      ifUnmodifiedSince: "Thu, 01 Jan 1970 00:00:01 GMT",
    },
    FILE,
    412,
  ],
  ["If-Unmodified-Since no date", { ifUnmodifiedSince: "0" }, FILE, 412],
  [
    "If-Modified-Since without Last-Modified",
    {
      ifModifiedSince: LM,
    },
    null,
    200,
  ],
  ["If-Modified-Since the same second", { ifModifiedSince: LM }, FILE, 304],
  [
    "If-Modified-Since in another form",
    {
      ifModifiedSince: "Thursday, 01-Jan-26 00:00:00 GMT",
    },
    FILE,
    304,
  ],
  [
    "If-Modified-Since later (exact)",
    {
      ifModifiedSince: "Fri, 01 Jan 2100 00:00:00 GMT",
    },
    FILE,
    200,
  ],
  ["both match", { ifModifiedSince: LM, ifNoneMatch: FILE.etag }, FILE, 304],
  [
    "the date matches, the tag not",
    {
      ifModifiedSince: LM,
      ifNoneMatch: '"a"',
    },
    FILE,
    200,
  ],
  [
    "the tag matches, the date not",
    {
      ifModifiedSince: "Fri, 01 Jan 2100 00:00:00 GMT",
      ifNoneMatch: FILE.etag,
    },
    FILE,
    200,
  ],
  [
    "If-Match fails before If-None-Match",
    {
      ifMatch: '"a"',
      ifNoneMatch: "*",
    },
    FILE,
    412,
  ],
];

Deno.test("preconditionStatus() answers as nginx's not-modified filter", () => {
  for (const [name, asked, validators, status] of CASES) {
    strictEqual(
      preconditionStatus({ ...NONE, ...asked }, validators ?? NO_VALIDATORS),
      status,
      name,
    );
  }
});
