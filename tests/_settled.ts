/**
 * Waits until a freshly written client-app folder is settled: the gateway
 * proves a file inside its root only once the folders on its path have been
 * still for a moment (`src/static/settled_proof.ts`), and a configured error
 * page, which cannot wait, falls back to the built-in page until then.
 *
 * @module
 */
import { join } from "node:path";
import { openInsideRoot } from "../src/static/containment.ts";

/**
 * Resolves once `openInsideRoot` proves each file below `root`; throws
 * after 5 s.
 *
 * @param root The client-app folder.
 * @param files Paths below it, `/`-separated.
 */
export async function settledRoot(
  root: string,
  ...files: string[]
): Promise<void> {
  const end = Date.now() + 5000;
  for (const name of files) {
    const path = join(root, ...name.split("/"));
    for (;;) {
      const opened = openInsideRoot(root, path);
      if (opened.kind === "opened") {
        opened.file.close();
        break;
      }
      if (opened.kind !== "unsettled" || Date.now() > end) {
        throw new Error(`Cannot prove "${path}" inside: ${opened.kind}`);
      }
      await new Promise((r) => setTimeout(r, opened.retryInMs));
    }
  }
}
