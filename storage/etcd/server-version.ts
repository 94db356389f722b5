/**
 * What the etcd server version tells the watch about progress notifications.
 *
 * A requested progress notification (`WatchRequest.progress_request`) is answered with a
 * response whose header revision says "every event up to here was sent". Before etcd 3.4.31 /
 * 3.5.13, that answer was sent on a control channel that races with the event channel, and was
 * sent even for watchers still replaying history (etcd-io/etcd#15220, fixed by #15237 and, for
 * watchers that receive no event, #17557). Debian's etcd 3.4.23 has the bug, so the watch checks
 * such answers itself (see `watch-progress.ts`); on fixed servers it trusts them.
 */

/** True when the server orders requested progress notifications with the event stream. */
export function progressIsOrdered(version: string | undefined): boolean {
  if (version === undefined) return false;
  const match = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (match === null) return false;
  const [major, minor, patch] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (major !== 3) return major > 3;
  if (minor >= 6) return true;
  if (minor === 5) return patch >= 13;
  if (minor === 4) return patch >= 31;
  return false;
}
