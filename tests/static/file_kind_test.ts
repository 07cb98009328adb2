import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  directoryIndexForbidden,
  fileKind,
  indexFailure,
  StaticCache,
} from "../../src/static/mod.ts";

Deno.test("fileKind() tells file, directory, other and missing without throwing", async (t) => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/a.txt`, "a");
    await Deno.mkdir(`${dir}/sub`);
    await Deno.symlink(`${dir}/a.txt`, `${dir}/link`);
    await Deno.symlink(`${dir}/none`, `${dir}/dangling`);
    const cases: [string, string][] = [
      [`${dir}/a.txt`, "file"],
      [`${dir}/sub`, "directory"],
      [`${dir}/sub/`, "directory"],
      [`${dir}/link`, "file"],
      [`${dir}/dangling`, "missing"],
      [`${dir}/none`, "missing"],
      [`${dir}/a.txt/x`, "missing"], // ENOTDIR, as nginx's try_files
      [`${dir}/${"x".repeat(300)}`, "missing"], // ENAMETOOLONG
      [`${dir}/a\0b`, "missing"],
      ["/dev/null", Deno.build.os === "windows" ? "missing" : "other"],
    ];
    const cache = new StaticCache();
    for (const [path, want] of cases) {
      await t.step(path.slice(dir.length) || path, () => {
        strictEqual(fileKind(path), want);
        strictEqual(fileKind(path, cache), want);
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("directoryIndexForbidden() is nginx's 403 and line", async () => {
  const { response, failure } = directoryIndexForbidden(
    "/srv/html/dir/",
    false,
  );
  strictEqual(response.status, 403);
  deepStrictEqual(failure, {
    level: "error",
    message: 'directory index of "/srv/html/dir/" is forbidden',
  });
  await response.body?.cancel();
});

Deno.test("indexFailure() is nginx's index module line: forbidden, or not found under log_not_found", () => {
  const notFound = new Deno.errors.NotFound("(os error 2)");
  const notDir = new Deno.errors.NotADirectory("(os error 20)");
  const denied = new Deno.errors.PermissionDenied("(os error 13)");
  const family = "linux" as const;
  deepStrictEqual(
    indexFailure("/h/a.txt/index.html", notDir, { logNotFound: true, family }),
    {
      status: 404,
      failure: {
        level: "error",
        message: '"/h/a.txt/index.html" is not found',
        osError: { code: 20, text: "Not a directory" },
      },
    },
  );
  deepStrictEqual(
    indexFailure("/h/x/index.html", notFound, { logNotFound: false, family }),
    { status: 404 },
  );
  deepStrictEqual(
    indexFailure("/h/x/index.html", denied, { logNotFound: false, family }),
    {
      status: 403,
      failure: {
        level: "error",
        message: '"/h/x/index.html" is forbidden',
        osError: { code: 13, text: "Permission denied" },
      },
    },
  );
});
