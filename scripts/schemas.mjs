/**
 * The TypeScript the frontend takes from the project's JSON Schemas, so that
 * nothing they declare is written twice:
 *
 * - `src/restapi/<group>.ts`: the types of the REST payloads, from
 *   `jupyter_server_ext/jupyterlab_gpu_monitor/api_schema/<group>.json`, with
 *   json-schema-to-typescript. Each definition of a schema's `$defs` becomes
 *   one exported type named after it, `I` + its name for an object
 *   (`GpuSnapshot` -> `IGpuSnapshot`), as the frontend names its interfaces.
 *   A `$ref` becomes the referenced type's name, so that a property keeps its
 *   own description and a type is declared once.
 *   A schema with `"x-constant": "NAME"` also gives `export const NAME`: its
 *   `const` (a rule both halves apply), or an array's `maxItems` (a limit the
 *   frontend keeps to).
 * - `src/settingsDefaults.ts`: the default of every setting of `schema/*.json`.
 *
 *     node scripts/schemas.mjs           write them
 *     node scripts/schemas.mjs --check   fail when one is not what the
 *                                        schemas give (CI's lint)
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'fs';
import { join } from 'path';
import { fileURLToPath } from 'url';

import { compile } from 'json-schema-to-typescript';
import * as prettier from 'prettier';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const SCHEMAS = join(
  REPO,
  'jupyter_server_ext/jupyterlab_gpu_monitor/api_schema'
);
const OUTPUT = join(REPO, 'src/restapi');
const SETTINGS = join(REPO, 'schema');
const DEFAULTS = join(REPO, 'src/settingsDefaults.ts');

/**
 * The TypeScript name of a definition.
 */
function typeName(name, schema) {
  return schema.type === 'object' ? `I${name}` : name;
}

/**
 * The schema with every local `$ref` replaced by the name of its type.
 */
function withTypeNames(schema, definitions) {
  if (Array.isArray(schema)) {
    return schema.map(item => withTypeNames(item, definitions));
  }
  if (schema === null || typeof schema !== 'object') {
    return schema;
  }
  const copy = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref') {
      const name = value.replace('#/$defs/', '');
      copy.tsType = typeName(name, definitions[name]);
    } else if (key === 'properties' || key === 'additionalProperties') {
      copy[key] =
        key === 'properties'
          ? Object.fromEntries(
              Object.entries(value).map(([property, subschema]) => [
                property,
                withTypeNames(subschema, definitions)
              ])
            )
          : withTypeNames(value, definitions);
    } else if (['items', 'anyOf', 'oneOf', 'allOf'].includes(key)) {
      copy[key] = withTypeNames(value, definitions);
    } else {
      copy[key] = value;
    }
  }
  return copy;
}

/**
 * `export const NAME = <const or maxItems>;` for each schema marked
 * `"x-constant": "NAME"`.
 */
function constantsOf(schema) {
  if (Array.isArray(schema)) {
    return schema.flatMap(constantsOf);
  }
  if (schema === null || typeof schema !== 'object') {
    return [];
  }
  const own = schema['x-constant']
    ? [
        `/**\n * ${schema.description}\n */\n` +
          `export const ${schema['x-constant']} = ${JSON.stringify(
            schema.const ?? schema.maxItems
          )};\n`
      ]
    : [];
  return [...own, ...Object.values(schema).flatMap(constantsOf)];
}

/**
 * The generated module of one schema file.
 */
async function moduleOf(file) {
  const document = JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8'));
  const definitions = document.$defs;
  const parts = [
    `/**\n * ${document.title}: ${document.description}\n *\n` +
      ` * Generated from api_schema/${file} by \`jlpm build:schemas\`;` +
      ' do not edit.\n */\n'
  ];
  parts.push(...constantsOf(definitions));
  for (const [name, definition] of Object.entries(definitions)) {
    if (definition.const !== undefined && definition['x-constant']) {
      continue; // a shared value: its constant says it all
    }
    const schema = withTypeNames(definition, definitions);
    const type = typeName(name, definition);
    parts.push(
      await compile({ ...schema, title: type }, type, {
        bannerComment: '',
        additionalProperties: false,
        declareExternallyReferenced: false,
        format: false
      })
    );
  }
  return formatted(
    join(OUTPUT, file.replace(/\.json$/, '.ts')),
    parts.join('\n')
  );
}

/**
 * The module of the settings' defaults: one object per plugin, keyed by the
 * schema's file name (the plugin id's suffix).
 */
async function settingsDefaults() {
  const plugins = readdirSync(SETTINGS)
    .filter(file => file.endsWith('.json'))
    .sort()
    .map(file => {
      const schema = JSON.parse(readFileSync(join(SETTINGS, file), 'utf8'));
      const defaults = Object.fromEntries(
        Object.entries(schema.properties).map(([name, property]) => [
          name,
          property.default
        ])
      );
      return `  ${JSON.stringify(file.replace(/\.json$/, ''))}: ${JSON.stringify(defaults)}`;
    });
  const text =
    '/**\n * The default of every setting, as the settings schemas (`schema/*.json`)\n' +
    " * declare them, by plugin (the plugin id's suffix).\n *\n" +
    ' * Generated by `jlpm build:schemas`; do not edit.\n */\n' +
    `export const SETTINGS_DEFAULTS = {\n${plugins.join(',\n')}\n} as const;\n`;
  return formatted(DEFAULTS, text);
}

/**
 * The file's text as the project's prettier writes it.
 */
async function formatted(target, text) {
  const options = await prettier.resolveConfig(target);
  return {
    target,
    text: await prettier.format(text, { ...options, filepath: target })
  };
}

const check = process.argv.includes('--check');
const files = readdirSync(SCHEMAS).filter(file => file.endsWith('.json'));
const modules = [
  ...(await Promise.all(files.sort().map(moduleOf))),
  await settingsDefaults()
];
const stale = [];
for (const { target, text } of modules) {
  const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
  if (current === text) {
    continue;
  }
  if (check) {
    stale.push(target);
  } else {
    writeFileSync(target, text);
  }
}
if (stale.length > 0) {
  console.error(
    `Not what the schemas give: ${stale.join(', ')}.\n` +
      'Run `jlpm build:schemas` and commit the result.'
  );
  process.exit(1);
}
