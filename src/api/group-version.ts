/** `apiVersion` of a group and version: the version alone for the core (legacy) group `''`. */
export function formatApiVersion(group: string, version: string): string {
  return group === '' ? version : `${group}/${version}`;
}
