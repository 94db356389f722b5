/**
 * Custom resources in the Swagger 2.0 document (`/openapi/v2`), as kube-apiserver merges them
 * into its static document: every served CRD version adds its paths, its kind's definition
 * (`com.example.stable.v1.CronTab`, the schema in v2 form, see `custom-schema.ts`) and its
 * list's. The built-in document wins where a path or definition name clashes, and the meta types
 * the custom paths reference are added when the built-in document lacks them.
 */
import type { DefinitionBuilder } from './definitions.js';
import { customDefinitions, customRefs, type CustomKindDoc } from './custom.js';
import { definitionName } from './names.js';
import { collectPaths } from './paths.js';
import { isJsonObject, sortKeys, type JsonObject } from './types.js';
import { renderV2Path } from './v2.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1.';

/**
 * Returns `base` (a v2 document as built by `buildV2Document`; not modified) with `kinds` merged
 * in: paths and definitions added where `base` has none of that name, both kept sorted.
 */
export function mergeCustomV2(
  base: JsonObject,
  kinds: readonly CustomKindDoc[],
  defs: DefinitionBuilder,
): JsonObject {
  const { definitions: own, specs } = customDefinitions(kinds, 'v2');
  const refs = customRefs(defs);
  const { paths, types } = collectPaths(specs, (p) => renderV2Path(p, refs));
  const basePaths = isJsonObject(base['paths']) ? base['paths'] : {};
  const baseDefs = isJsonObject(base['definitions']) ? base['definitions'] : {};
  const definitions: JsonObject = { ...own };
  const builtIn = [...types].filter((t) => t.startsWith('k8s.io.'));
  for (const type of defs.closure([...builtIn, `${META}ObjectMeta`, `${META}ListMeta`])) {
    const name = definitionName(type);
    if (!(name in baseDefs)) definitions[name] = defs.definition(type, 'v2');
  }
  return {
    ...base,
    paths: sortKeys({ ...paths, ...basePaths }),
    definitions: sortKeys({ ...definitions, ...baseDefs }),
  };
}
