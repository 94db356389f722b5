/**
 * The static token file (`--token-auth-file`): CSV, one token a line,
 * `token,user name,user uid[,"group1,group2,..."]`. Read once at start; a malformed line stops
 * the start with an error naming the file and the line. Lookups compare in constant time per
 * candidate (the map is keyed by a hash of the token, never by the token).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { TokenAuthentication, TokenAuthenticator } from './token-authenticator.js';
import { userInfo } from './user.js';

/** A token file that cannot be used; the message names the file and line, never a token. */
export class TokenFileError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TokenFileError';
  }
}

/**
 * Splits one CSV record (RFC 4180 quoting, leading spaces of fields trimmed like Go's
 * `TrimLeadingSpace`).
 * @throws Error for an unterminated or misplaced quote.
 */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new Error('extraneous or missing " in quoted-field');
        const c = line[i] as string;
        if (c === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += c;
        i++;
      }
      if (i < line.length && line[i] !== ',') throw new Error('extraneous or missing " in quoted-field');
    } else {
      const end = line.indexOf(',', i);
      field = end < 0 ? line.slice(i) : line.slice(i, end);
      if (field.includes('"')) throw new Error('bare " in non-quoted-field');
      i = end < 0 ? line.length : end;
    }
    fields.push(field);
    if (i >= line.length) return fields;
    i++; // the comma
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** See the module comment. */
export class TokenFileAuthenticator implements TokenAuthenticator {
  readonly #byHash: ReadonlyMap<string, { digest: Buffer; result: TokenAuthentication }>;

  private constructor(byHash: ReadonlyMap<string, { digest: Buffer; result: TokenAuthentication }>) {
    this.#byHash = byHash;
  }

  /**
   * Parses token file content.
   * @throws TokenFileError naming `path` and the line of the first malformed record.
   */
  static parse(content: string, path: string): TokenFileAuthenticator {
    const byHash = new Map<string, { digest: Buffer; result: TokenAuthentication }>();
    const lines = content.split(/\r?\n/);
    lines.forEach((line, index) => {
      const at = `token file ${JSON.stringify(path)} line ${index + 1}`;
      if (line.trim() === '') return;
      let record: string[];
      try {
        record = parseCsvLine(line);
      } catch (err) {
        throw new TokenFileError(`${at}: ${(err as Error).message}`);
      }
      if (record.length < 3) {
        throw new TokenFileError(
          `${at}: must have at least 3 columns (token, user name, user uid), found ${record.length}`,
        );
      }
      const [token, name, uid, groupsField] = record as [string, string, string, string | undefined];
      if (token === '') throw new TokenFileError(`${at}: the token is empty`);
      if (/\s/.test(token)) throw new TokenFileError(`${at}: the token contains whitespace`);
      if (name === '') throw new TokenFileError(`${at}: the user name is empty`);
      const d = digest(token);
      const key = d.toString('base64');
      if (byHash.has(key)) throw new TokenFileError(`${at}: duplicate token`);
      const groups =
        groupsField === undefined || groupsField === ''
          ? []
          : groupsField
              .split(',')
              .map((g) => g.trim())
              .filter((g) => g !== '');
      byHash.set(key, {
        digest: d,
        result: { user: userInfo({ name, uid, groups }), audiences: [] },
      });
    });
    return new TokenFileAuthenticator(byHash);
  }

  /**
   * Reads `--token-auth-file`.
   * @throws TokenFileError when it is unreadable or malformed.
   */
  static read(path: string): TokenFileAuthenticator {
    let content: string;
    try {
      content = readFileSync(path, 'utf8');
    } catch (err) {
      throw new TokenFileError(`unable to read token file ${JSON.stringify(path)}`, { cause: err });
    }
    return TokenFileAuthenticator.parse(content, path);
  }

  /** Tokens held (tests). */
  get size(): number {
    return this.#byHash.size;
  }

  authenticateToken(token: string): Promise<TokenAuthentication | undefined> {
    const d = digest(token);
    const hit = this.#byHash.get(d.toString('base64'));
    return Promise.resolve(hit !== undefined && timingSafeEqual(hit.digest, d) ? hit.result : undefined);
  }
}
