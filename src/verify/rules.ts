/**
 * The rules `capstan verify` checks, each named after the spec section it comes from, and the
 * error a broken rule throws.
 */

/** Every rule: name → spec section and one sentence. */
export const RULES = {
  'write-status': [
    'Modifying',
    'create 201, update and delete 200; 404 for a missing object, 409 for an existing name',
  ],
  'update-conflict': ['Modifying', 'an update carrying a stale resourceVersion is refused with 409 Conflict'],
  'rv-monotonic': [
    'Resource version semantics',
    'each write gets a resourceVersion above every one shown before',
  ],
  'read-not-from-future': [
    'Resource version semantics',
    'a read never shows a revision newer than a later write',
  ],
  'list-most-recent': [
    'Resource version semantics',
    'resourceVersion unset: consistent data at the latest version',
  ],
  'list-any': [
    'Resource version semantics',
    'resourceVersion 0 (Any): the items of one revision, the one the list names',
  ],
  'list-not-older-than': [
    'Resource version semantics',
    'Not older than: list revision ≥ the request, items of that revision',
  ],
  'list-exact': [
    'Resource version semantics',
    'Exact: the list revision equals the request and shows its items (or 410)',
  ],
  'list-order': ['Reading', 'items in key (name) order, each once, of the queried kind'],
  'list-selector': ['Reading', 'label and field selectors keep exactly the matching items'],
  'page-size': ['Chunked lists', 'at most limit items per chunk; continue present iff more remain'],
  'page-consistent': ['Chunked lists', 'every chunk of one list carries the first chunk’s resourceVersion'],
  'remaining-count': ['List metadata', 'remainingItemCount, when present, counts the items still to come'],
  'continue-rv-zero': [
    'Resource version semantics',
    'continue with resourceVersion=0 is served as the token’s continuation',
  ],
  'continue-rv-400': ['Errors', 'continue with a resourceVersion other than 0 is 400'],
  'invalid-combination': ['Errors', 'the list table’s Invalid cells are rejected (400 or 422)'],
  'too-large-rv': ['Errors', 'a list at a too-large resourceVersion is 504 “Too large resource version”'],
  'gone-410': ['Errors', 'an unavailable Exact version or too-old watch is 410 Gone'],
  'watch-status': ['Watch stream', 'a watch answers 200 with a stream of events'],
  'watch-start-state': [
    'Resource version semantics',
    'unset or 0: synthetic ADDED events for the state at the start, then later changes',
  ],
  'watch-exact-start': [
    'Resource version semantics',
    'Start at Exact: only changes after the version, no synthetic events',
  ],
  'watch-order': ['Watch events', 'change events in strictly increasing resourceVersion'],
  'watch-no-loss-no-dup': [
    'Watch stream',
    'every create, update and delete after the start, once, none invented',
  ],
  'watch-event-type': [
    'Watch events',
    'ADDED, MODIFIED, DELETED as the change (selection entered, kept, left)',
  ],
  'watch-bookmark': [
    'Watch events',
    'bookmarks only when asked, object with only resourceVersion, never ahead of events',
  ],
  'watch-initial-events-end': [
    'Watch events',
    'sendInitialEvents ends the initial events with a k8s.io/initial-events-end bookmark',
  ],
  'watch-delivery': ['Watch stream', 'the end marker written last arrives within the timeout'],
} as const satisfies Record<string, readonly [string, string]>;

/** A rule's name. */
export type RuleName = keyof typeof RULES;

/** A broken rule, thrown by a check; fast-check shrinks the run that threw it. */
export class Violation extends Error {
  readonly rule: RuleName;
  constructor(rule: RuleName, message: string) {
    super(`${rule}: ${message}`);
    this.name = 'Violation';
    this.rule = rule;
  }
}

/** A failure of the tool itself (unreachable server, refused credentials): not shrunk. */
export class VerifyError extends Error {
  readonly code: 'VERIFY_UNREACHABLE' | 'VERIFY_SETUP' | 'VERIFY_FLAGS';
  constructor(code: VerifyError['code'], message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'VerifyError';
    this.code = code;
  }
}

/** Counts of checks and failures per rule. */
export class RuleTally {
  readonly #checked = new Map<RuleName, number>();
  readonly #failed = new Map<RuleName, number>();

  /** Records that `rule` was checked (and held, unless it throws after). */
  check(rule: RuleName): void {
    this.#checked.set(rule, (this.#checked.get(rule) ?? 0) + 1);
  }

  /** Records a failure of `rule`. */
  fail(rule: RuleName): void {
    this.#failed.set(rule, (this.#failed.get(rule) ?? 0) + 1);
  }

  /** Rows for the summary: every rule, checked and failed counts. */
  rows(): { rule: RuleName; section: string; checked: number; failed: number }[] {
    return (Object.keys(RULES) as RuleName[]).map((rule) => ({
      rule,
      section: RULES[rule][0],
      checked: this.#checked.get(rule) ?? 0,
      failed: this.#failed.get(rule) ?? 0,
    }));
  }
}
