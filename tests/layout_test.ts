import { deepStrictEqual } from "node:assert/strict";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = fileURLToPath(new URL("../src", import.meta.url));
const SPECIFIER = /(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gs;

function sourceFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((entry) =>
    entry.isDirectory
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith(".ts")
      ? [join(dir, entry.name)]
      : []
  );
}

/** The folder of `src/` a file belongs to; `""` for the top level. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  return parts.length > 1 ? parts[0]! : "";
}

Deno.test("src/ folders are entered only through their mod.ts", () => {
  const crossings: string[] = [];
  for (const file of sourceFiles(SRC)) {
    for (
      const [, specifier] of Deno.readTextFileSync(file).matchAll(SPECIFIER)
    ) {
      const target = resolve(dirname(file), specifier!);
      if (relative(SRC, target).startsWith("..")) continue; // deno.json
      const folder = folderOf(target);
      if (folder === "" || folder === folderOf(file)) continue;
      if (relative(join(SRC, folder), target) === "mod.ts") continue;
      crossings.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
    }
  }
  deepStrictEqual(crossings, []);
});

Deno.test("src/ has one mod.ts in every folder", () => {
  const folders = [...Deno.readDirSync(SRC)].filter((e) => e.isDirectory);
  const missing = folders
    .filter((e) => {
      try {
        return !Deno.statSync(join(SRC, e.name, "mod.ts")).isFile;
      } catch {
        return true;
      }
    })
    .map((e) => e.name);
  deepStrictEqual(missing, []);
});
