/**
 * A small XML reader for tests: elements, attributes, text and the five
 * predefined entities (enough to read the task XML back). Throws on
 * malformed input, so a broken document fails the test.
 *
 * @module
 */

/** An element. */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function unescape(text: string): string {
  return text.replace(
    /&(lt|gt|amp|quot|apos);/g,
    (_, e) =>
      ({ lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" })[e as "lt"]!,
  );
}

/** Parses a document and returns its root element. */
export function parseXml(source: string): XmlElement {
  const text = source.replace(/^\uFEFF?<\?xml[^?]*\?>\s*/, "");
  const tokens = text.match(/<[^>]+>|[^<]+/g) ?? [];
  const root: XmlElement = {
    name: "#root",
    attributes: {},
    children: [],
    text: "",
  };
  const stack = [root];
  for (const token of tokens) {
    const top = stack.at(-1)!;
    if (!token.startsWith("<")) {
      if (/[<>]/.test(token)) throw new SyntaxError(`Bad text: ${token}`);
      top.text += unescape(token);
      continue;
    }
    if (token.startsWith("</")) {
      const name = token.slice(2, -1).trim();
      if (stack.pop()?.name !== name) {
        throw new SyntaxError(`Unexpected </${name}>`);
      }
      continue;
    }
    const m = token.match(/^<([\w:.-]+)((?:\s+[\w:.-]+="[^"]*")*)\s*(\/?)>$/);
    if (!m) throw new SyntaxError(`Bad tag: ${token}`);
    const attributes: Record<string, string> = {};
    for (const a of m[2]!.matchAll(/([\w:.-]+)="([^"]*)"/g)) {
      attributes[a[1]!] = unescape(a[2]!);
    }
    const element: XmlElement = {
      name: m[1]!,
      attributes,
      children: [],
      text: "",
    };
    top.children.push(element);
    if (m[3] !== "/") stack.push(element);
  }
  if (stack.length !== 1 || root.children.length !== 1) {
    throw new SyntaxError("Unbalanced document");
  }
  return root.children[0]!;
}

/** The element at a slash-separated path below `element`. */
export function at(element: XmlElement, path: string): XmlElement {
  let current = element;
  for (const name of path.split("/")) {
    const next = current.children.find((c) => c.name === name);
    if (!next) throw new Error(`No <${name}> in <${current.name}>`);
    current = next;
  }
  return current;
}
