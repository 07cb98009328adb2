/**
 * kernelName(): a file name with `.` or `..` components or a trailing
 * slash read as POSIX `open()` reads it, not as Deno's granular
 * permissions normalise it (lexically, before the system call).
 */
import { deepStrictEqual } from "node:assert/strict";
import { kernelName } from "../../src/static/os_names.ts";

Deno.test("kernelName() reads `..`, `.` and a trailing slash as open() does", () => {
  const dir = Deno.makeTempDirSync({ prefix: "os-names-" });
  try {
    Deno.mkdirSync(`${dir}/html/d`, { recursive: true });
    Deno.mkdirSync(`${dir}/outer/in`, { recursive: true });
    Deno.writeTextFileSync(`${dir}/html/r.txt`, "r");
    Deno.writeTextFileSync(`${dir}/outer/o.txt`, "o");
    Deno.symlinkSync(`${dir}/outer/in`, `${dir}/html/l`);
    Deno.symlinkSync(`${dir}/html/r.txt`, `${dir}/html/f`);
    const real = Deno.realPathSync(dir);
    const rows: [string, string][] = [
      ["html/r.txt", `${dir}/html/r.txt`],
      ["html/.hidden/r.txt", `${dir}/html/.hidden/r.txt`],
      ["html/d/../r.txt", `${dir}/html/r.txt`],
      ["html/./r.txt", `${dir}/html/r.txt`],
      ["html/d/", `${dir}/html/d`],
      ["html/d/.", `${dir}/html/d`],
      ["html//d/", `${dir}/html/d`],
      // A link's `..` is the parent of the folder it leads to.
      ["html/l/../o.txt", `${real}/outer/o.txt`],
      ["html/none/../r.txt", "NotFound"],
      ["html/r.txt/", "NotADirectory"],
      ["html/r.txt/.", "NotADirectory"],
      ["html/r.txt/../r.txt", "NotADirectory"],
      ["html/f/../r.txt", "NotADirectory"],
      ["html/none/", "NotFound"],
    ];
    const got = rows.map(([name]) => {
      const named = kernelName(`${dir}/${name}`, "linux");
      return [name, typeof named === "string" ? named : named.name];
    });
    deepStrictEqual(got, rows);
    // Windows resolves dot components itself, as Deno does.
    deepStrictEqual(
      kernelName(`${dir}/html/none/../r.txt`, "windows"),
      `${dir}/html/none/../r.txt`,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
