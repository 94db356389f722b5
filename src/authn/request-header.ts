/**
 * The authenticating proxy (`--requestheader-*`): a front proxy that authenticated the user
 * passes the identity in headers. Only a connection whose client certificate chains to
 * `--requestheader-client-ca-file` (and whose common name is in `--requestheader-allowed-names`,
 * when that is set) may assert them; from anyone else the headers mean nothing.
 */
import type { UserInfo } from './user.js';
import { userInfo } from './user.js';

/** `--requestheader-*` header names (matched case-insensitively). */
export interface RequestHeaderNames {
  readonly usernameHeaders: readonly string[];
  readonly uidHeaders: readonly string[];
  readonly groupHeaders: readonly string[];
  readonly extraHeaderPrefixes: readonly string[];
}

function lower(list: readonly string[]): string[] {
  return list.map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** Reads identities from proxy headers. */
export class RequestHeaderIdentity {
  readonly #user: string[];
  readonly #uid: string[];
  readonly #group: string[];
  readonly #extra: string[];
  readonly #all: Set<string>;

  constructor(names: RequestHeaderNames) {
    this.#user = lower(names.usernameHeaders);
    this.#uid = lower(names.uidHeaders);
    this.#group = lower(names.groupHeaders);
    this.#extra = lower(names.extraHeaderPrefixes);
    this.#all = new Set([...this.#user, ...this.#uid, ...this.#group]);
  }

  /**
   * The user the headers name, or undefined when no username header has a value (kube: not
   * authenticated by this method). `rawHeaders` is Node's flat name/value list, which keeps
   * repeated headers apart.
   */
  identify(rawHeaders: readonly string[]): UserInfo | undefined {
    const values = new Map<string, string[]>();
    const extra: Record<string, string[]> = {};
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = (rawHeaders[i] as string).toLowerCase();
      const value = rawHeaders[i + 1] as string;
      if (this.#all.has(name)) {
        const list = values.get(name) ?? [];
        list.push(value);
        values.set(name, list);
        continue;
      }
      for (const prefix of this.#extra) {
        if (name.startsWith(prefix) && name.length > prefix.length) {
          const key = unescapeExtraKey(name.slice(prefix.length));
          (extra[key] ??= []).push(value);
          break;
        }
      }
    }
    let name: string | undefined;
    for (const h of this.#user) {
      const v = values.get(h)?.find((x) => x !== '');
      if (v !== undefined) {
        name = v;
        break;
      }
    }
    if (name === undefined) return undefined;
    let uid = '';
    for (const h of this.#uid) {
      const v = values.get(h)?.find((x) => x !== '');
      if (v !== undefined) {
        uid = v;
        break;
      }
    }
    const groups = this.#group.flatMap((h) => values.get(h) ?? []);
    return userInfo({ name, uid, groups, extra });
  }
}
