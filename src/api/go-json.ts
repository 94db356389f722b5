/**
 * Go's `encoding/json` escaping of JSON text: `<`, `>` and `&` (HTML-safe) and U+2028/U+2029
 * as `\u` escapes, which JavaScript's `JSON.stringify` writes as they are. The characters occur
 * in JSON text only inside strings, so the whole text can be rewritten.
 */
const GO_ESCAPED = /[<>&\u2028\u2029]/g;

const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` (JSON) as Go's `json.Marshal` would have escaped it. */
export function goEscapedJson(text: string): string {
  return text.replace(GO_ESCAPED, escape);
}
