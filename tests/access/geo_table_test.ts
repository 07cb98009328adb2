/**
 * `GeoTable`: a `geo` block's entries as nginx 1.22 reads them (values,
 * warnings, errors, observed with `nginx -t` and requests), and lookups.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { type GeoEntryResult, GeoTable } from "../../src/access/mod.ts";

/** Builds a table from `[kind, key, value]` entries; returns what each said. */
function build(
  ranges: boolean,
  entries: [string, string, string?][],
): { table: GeoTable; said: string[] } {
  const table = new GeoTable(ranges);
  const said: string[] = [];
  const note = (r: GeoEntryResult) => {
    if (!r.ok) said.push(`emerg: ${r.error}`);
    else if (r.warning !== null) said.push(`warn: ${r.warning}`);
  };
  for (const [kind, key, value] of entries) {
    if (kind === "proxy") note(table.addProxy(key));
    else if (kind === "delete") note(table.delete(key));
    else note(table.add(key, value!));
  }
  return { table, said };
}

Deno.test("GeoTable looks networks up by the longest match, IPv4 and IPv6", () => {
  const { table, said } = build(false, [
    ["add", "default", "def"],
    ["add", "127.0.0.1", "one"],
    ["add", "10.0.0.0/8", "ten"],
    ["add", "10.1.0.0/16", "tenone"],
    ["add", "192.168.0.0/16", "v$host"],
    ["add", "::1", "six"],
    ["add", "2001:db8::/32", "doc"],
    ["add", "255.0.0.0/8", "high"],
  ]);
  deepStrictEqual(said, []);
  const cases: [string, string][] = [
    ["127.0.0.1", "one"],
    ["127.0.0.2", "def"],
    ["10.9.9.9", "ten"],
    ["10.1.2.3", "tenone"],
    ["192.168.1.1", "v$host"],
    ["::ffff:10.1.0.1", "tenone"],
    ["::1", "six"],
    ["2001:db8::5", "doc"],
    ["2001:db9::5", "def"],
    ["8.8.8.8", "def"],
    // Not an address: looked up as 255.255.255.255 (INADDR_NONE).
    ["junk", "high"],
    ["10.0.0.5:80", "high"],
    ["", "high"],
  ];
  for (const [address, want] of cases) {
    strictEqual(table.lookup(address), want, address);
  }
});

Deno.test("GeoTable says what nginx says about each entry", () => {
  const cases: [boolean, [string, string, string?][], string[]][] = [
    [false, [["add", "10.1.0.0/16", "a"], ["add", "10.1.0.0/16", "b"]], [
      'warn: duplicate network "10.1.0.0/16", value: "b", old value: "a"',
    ]],
    [false, [["delete", "10.9.0.0/16"]], [
      'warn: no network "10.9.0.0/16" to delete',
    ]],
    [false, [["add", "10.1.2.3/8", "x"]], [
      "warn: low address bits of 10.1.2.3/8 are meaningless",
    ]],
    [false, [["add", "junk", "x"]], ['emerg: invalid network "junk"']],
    [false, [["add", "10.0.0.0/33", "x"]], [
      'emerg: invalid network "10.0.0.0/33"',
    ]],
    [false, [["add", "10.0.0.1-10.0.0.2", "x"]], [
      'emerg: invalid network "10.0.0.1-10.0.0.2"',
    ]],
    [false, [["proxy", "junk"]], ['emerg: invalid network "junk"']],
    [false, [["proxy", "all"]], ['emerg: invalid network "all"']],
    [true, [["add", "255.255.255.0-255.255.255.255", "x"]], [
      'emerg: invalid range "255.255.255.0-255.255.255.255"',
    ]],
    [true, [["add", "10.4.0.0/16", "x"]], [
      'emerg: invalid range "10.4.0.0/16"',
    ]],
    [true, [["add", "10.0.0.9-10.0.0.1", "x"]], [
      'emerg: invalid range "10.0.0.9-10.0.0.1"',
    ]],
    [
      true,
      [["add", "10.0.0.50-10.0.0.60", "c"], [
        "add",
        "10.0.0.0-10.0.0.255",
        "a",
      ]],
      ['emerg: range "10.0.0.0-10.0.0.255" overlaps "10.0.0.50-10.0.0.60"'],
    ],
    [
      true,
      [["add", "10.0.0.0-10.0.0.255", "a"], [
        "add",
        "10.0.0.100-10.0.1.10",
        "b",
      ]],
      ['emerg: range "10.0.0.100-10.0.1.10" overlaps "10.0.0.0-10.0.0.255"'],
    ],
    [true, [["add", "10.0.3.0-10.0.3.255", "y"], [
      "delete",
      "10.0.3.10-10.0.3.20",
    ]], ['warn: no address range "10.0.3.10-10.0.3.20" to delete']],
  ];
  for (const [ranges, entries, want] of cases) {
    deepStrictEqual(build(ranges, entries).said, want, JSON.stringify(entries));
  }
});

Deno.test("GeoTable in ranges mode: the innermost range wins, IPv4 only", () => {
  const { table, said } = build(true, [
    ["add", "default", "none"],
    ["add", "10.0.0.0-10.0.0.255", "a"],
    ["add", "10.0.0.50-10.0.0.60", "c"],
    ["add", "10.0.0.55-10.0.0.55", "d"],
    ["add", "10.0.2.0-10.0.2.255", "x"],
    ["delete", "10.0.2.0-10.0.2.255"],
    ["add", "10.0.3.0-10.0.3.255", "y"],
    ["add", "255.255.255.0-255.255.255.254", "top"],
  ]);
  deepStrictEqual(said, []);
  const cases: [string, string][] = [
    ["10.0.0.0", "a"],
    ["10.0.0.49", "a"],
    ["10.0.0.50", "c"],
    ["10.0.0.55", "d"],
    ["10.0.0.56", "c"],
    ["10.0.0.60", "c"],
    ["10.0.0.61", "a"],
    ["10.0.0.255", "a"],
    ["10.0.1.0", "none"],
    ["10.0.2.5", "none"],
    ["10.0.3.15", "y"],
    ["::ffff:10.0.0.7", "a"],
    ["255.255.255.254", "top"],
    // Not IPv4: 255.255.255.255, which no range can hold.
    ["::1", "none"],
    ["junk", "none"],
    ["9.255.255.255", "none"],
  ];
  for (const [address, want] of cases) {
    strictEqual(table.lookup(address), want, address);
  }
});

Deno.test("GeoTable reads X-Forwarded-For from a trusted proxy, as nginx does", () => {
  const plain = build(false, [["proxy", "127.0.0.0/8"]]).table;
  const recursive = build(false, [
    ["proxy", "127.0.0.0/8"],
    ["proxy", "10.0.0.0/8"],
  ]).table;
  recursive.proxyRecursive = true;
  const cases: [GeoTable, string, string, string][] = [
    [plain, "127.0.0.1", "10.1.2.3", "10.1.2.3"],
    [plain, "127.0.0.1", "8.8.8.8, 127.0.0.5", "127.0.0.5"],
    [plain, "127.0.0.1", "10.0.0.1,  10.2.0.3", "10.2.0.3"],
    [plain, "127.0.0.1", "10.0.0.1, 8.8.8.8 ,", "8.8.8.8"],
    [plain, "127.0.0.1", "junk", "127.0.0.1"],
    [plain, "127.0.0.1", "", "127.0.0.1"],
    [plain, "127.0.0.1", "1.2.3.4:8080", "1.2.3.4"],
    [plain, "127.0.0.1", "[2001:db8::1]:80", "2001:db8::1"],
    [plain, "8.8.8.8", "10.1.2.3", "8.8.8.8"],
    [recursive, "127.0.0.1", "8.8.8.8, 10.0.0.1", "8.8.8.8"],
    [recursive, "127.0.0.1", "10.0.0.2, 10.0.0.1", "10.0.0.2"],
    [recursive, "127.0.0.1", "8.8.4.4, 8.8.8.8, 10.0.0.1", "8.8.8.8"],
  ];
  for (const [table, address, xff, want] of cases) {
    strictEqual(table.realAddress(address, xff), want, `${address} ${xff}`);
  }
});

Deno.test("GeoTable reads a hostile X-Forwarded-For in one pass", () => {
  const recursive = build(false, [["proxy", "127.0.0.0/8"]]).table;
  recursive.proxyRecursive = true;
  // Runs of separators a client can send: trimming them with a regex per
  // step took time growing with the square of the run (64 KiB: seconds).
  const run = " ".repeat(64 * 1024);
  const trusted = "127.0.0.2, ".repeat(6000);
  const cases: [string, string][] = [
    [`8.8.8.8${run}x`, "127.0.0.1"],
    [`8.8.8.8${run}`, "8.8.8.8"],
    [`8.8.8.8,${run},127.0.0.3${run}`, "8.8.8.8"],
    [`9.9.9.9, ${trusted}`, "9.9.9.9"],
    [`${run}`, "127.0.0.1"],
  ];
  for (const [xff, want] of cases) {
    strictEqual(recursive.realAddress("127.0.0.1", xff), want);
  }
});
