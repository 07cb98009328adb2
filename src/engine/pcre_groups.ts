/**
 * Where PCRE2 and JavaScript differ on groups, found while a pattern is
 * read, so the gateway refuses the pattern rather than run it otherwise:
 *
 * - a backreference to a group that did not take part: PCRE2 fails it,
 *   JavaScript matches the empty string;
 * - a repeated group: JavaScript empties the captures inside it at each
 *   turn, PCRE2 keeps what an earlier turn captured, so a capture that may
 *   sit out a later turn (in one branch, optional) differs; and a turn that
 *   matches nothing is kept by PCRE2 and undone by JavaScript;
 * - a lookbehind: PCRE2 takes only fixed lengths (each branch its own),
 *   JavaScript any.
 *
 * @module
 */

import { PcreError, type PcreNode } from "./pcre_tree.ts";

/** An open or closed group (or the whole pattern) while a pattern is read. */
export interface Frame {
  parent: Frame | null;
  /** The branch of the parent this group sits in. */
  branchInParent: number;
  /** The branch being read (the last one once closed). */
  branch: number;
  /** It has more than one branch. */
  alternates: boolean;
  /** Repeated with a minimum of zero. */
  optional: boolean;
  /** A negative lookaround: its captures are never kept. */
  negative: boolean;
  /** Its capture number, or `null`. */
  capture: number | null;
  /** The frames of the captures inside it (itself too). */
  captures: Frame[];
  closed: boolean;
}

/** The least number of chars a node matches. */
export function minWidth(node: PcreNode): number {
  switch (node.kind) {
    case "set":
    case "text":
      return 1;
    case "raw":
      return node.min;
    case "seq":
      return node.items.reduce((n, x) => n + minWidth(x), 0);
    case "alt": {
      // A loop, not `Math.min(...)`: a branch list may pass the argument limit.
      let least = Infinity;
      for (const branch of node.branches) {
        least = Math.min(least, minWidth(branch));
      }
      return least;
    }
    case "group":
      return minWidth(node.body);
    case "repeat":
      return node.min * minWidth(node.body);
    default:
      return 0;
  }
}

/**
 * The one number of chars a node matches, or `null` when it varies.
 *
 * @param node A parsed node.
 * @returns Its width, or `null`.
 */
export function fixedWidth(node: PcreNode): number | null {
  switch (node.kind) {
    case "set":
    case "text":
      return 1;
    case "raw":
    case "backref":
      return null;
    case "anchor":
    case "look":
      return 0;
    case "seq": {
      let n = 0;
      for (const x of node.items) {
        const w = fixedWidth(x);
        if (w === null) return null;
        n += w;
      }
      return n;
    }
    case "alt": {
      const widths = node.branches.map(fixedWidth);
      return widths.every((w) => w !== null && w === widths[0])
        ? widths[0]!
        : null;
    }
    case "group":
      return fixedWidth(node.body);
    case "repeat": {
      const w = fixedWidth(node.body);
      return w === null || node.min !== node.max ? null : w * node.min;
    }
  }
}

function hasBackref(node: PcreNode): boolean {
  switch (node.kind) {
    case "backref":
      return true;
    case "seq":
      return node.items.some(hasBackref);
    case "alt":
      return node.branches.some(hasBackref);
    case "group":
    case "look":
    case "repeat":
      return hasBackref(node.body);
    default:
      return false;
  }
}

/** The group bookkeeping of one pattern. */
export class GroupChecks {
  /** Captures opened so far. */
  count = 0;
  readonly #byNumber: Frame[] = [];
  readonly #frames = new WeakMap<PcreNode, Frame>();
  /**
   * The first group or backreference the gateway refuses, reported once
   * PCRE2 has read the whole pattern.
   */
  deferred: PcreError | null = null;
  /** PCRE2's first lookbehind refusal, made once it has read the whole pattern. */
  lookbehindError: PcreError | null = null;

  /** The whole pattern's frame. */
  root(): Frame {
    return this.#frame(null, null, false);
  }

  #frame(
    parent: Frame | null,
    capture: number | null,
    negative: boolean,
  ): Frame {
    return {
      parent,
      branchInParent: parent?.branch ?? 0,
      branch: 0,
      alternates: false,
      optional: false,
      negative,
      capture,
      captures: [],
      closed: false,
    };
  }

  /** A `|` in `frame`. */
  branch(frame: Frame): void {
    frame.branch++;
    frame.alternates = true;
  }

  /** Opens a group inside `parent`. */
  open(parent: Frame, capture: number | null, negative: boolean): Frame {
    const frame = this.#frame(parent, capture, negative);
    if (capture !== null) {
      this.count = capture;
      this.#byNumber[capture] = frame;
      for (let f: Frame | null = frame; f !== null; f = f.parent) {
        f.captures.push(frame);
      }
    }
    return frame;
  }

  /** Closes a group, known from here on as `node`. */
  close(frame: Frame, node: PcreNode): void {
    frame.closed = true;
    this.#frames.set(node, frame);
  }

  /** A quantifier on `atom` (PCRE2 keeps captures across turns, JavaScript does not). */
  repeated(atom: PcreNode, min: number, max: number, at: number): void {
    const frame = this.#frames.get(atom);
    if (frame === undefined) return;
    if (min === 0) frame.optional = true;
    if (max <= 1 || frame.captures.length === 0) return;
    const inner = frame.capture === null
      ? frame.captures
      : frame.captures.slice(1);
    if (atom.kind === "group" && minWidth(atom.body) === 0) {
      this.deferred ??= new PcreError(
        "a repeated group that can match the empty string holds a capture",
        at,
        true,
      );
    }
    for (const capture of inner) {
      if (!mandatoryWithin(capture, frame)) {
        this.deferred ??= new PcreError(
          "a repeated group holds a capture that may sit out a turn (PCRE2 keeps the earlier turn's)",
          at,
          true,
        );
      }
    }
  }

  /** A backreference to `group` read inside `from`. */
  backref(group: number, from: Frame, at: number): void {
    const target = this.#byNumber[group];
    if (target !== undefined && target.closed && setWhenReached(target, from)) {
      return;
    }
    this.deferred ??= new PcreError(
      "a reference to a group that may not have taken part (PCRE2 fails it, JavaScript matches empty)",
      at,
      true,
    );
  }

  /** A lookbehind's body: fixed length per branch, as PCRE2 10.42 takes. */
  lookbehind(body: PcreNode, start: number): void {
    if (hasBackref(body)) {
      this.deferred ??= new PcreError(
        "a backreference in a lookbehind",
        start,
        true,
      );
      return;
    }
    const branches = body.kind === "alt" ? body.branches : [body];
    const widths = branches.map(fixedWidth);
    if (widths.some((w) => w === null)) {
      this.lookbehindError ??= new PcreError(
        "lookbehind assertion is not fixed length",
        start,
      );
    } else if (widths.some((w) => w! > 65535)) {
      // PCRE2's LOOKBEHIND_MAX (get_branchlength()).
      this.lookbehindError ??= new PcreError(
        "lookbehind assertion is too long",
        start,
      );
    }
  }
}

/** A capture takes part in every turn of `outer`'s repetition. */
function mandatoryWithin(capture: Frame, outer: Frame): boolean {
  if (capture.optional) return false;
  let f = capture;
  while (f.parent !== outer) {
    f = f.parent!;
    if (f.alternates || f.optional || f.negative) return false;
  }
  return !outer.alternates;
}

/** A closed capture has always taken part where `from` is being read. */
function setWhenReached(capture: Frame, from: Frame): boolean {
  const chain = new Set<Frame>();
  for (let f: Frame | null = from; f !== null; f = f.parent) chain.add(f);
  if (capture.optional || capture.negative) return false;
  let f = capture;
  for (;;) {
    const p = f.parent!;
    if (chain.has(p)) return f.branchInParent === p.branch;
    if (p.alternates || p.optional || p.negative) return false;
    f = p;
  }
}
