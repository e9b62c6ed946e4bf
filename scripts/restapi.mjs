/**
 * The TypeScript types of the REST payloads, generated from the JSON Schemas of
 * `jupyter_server_ext/jupyterlab_gpu_monitor/api_schema/` into `src/restapi/`
 * (one file per group of endpoints), with json-schema-to-typescript.
 *
 *     node scripts/restapi.mjs           write src/restapi/
 *     node scripts/restapi.mjs --check   fail when src/restapi/ is not what
 *                                        the schemas give (CI's lint)
 *
 * Each definition of a schema's `$defs` becomes one exported type named after
 * it, `I` + its name for an object (`GpuSnapshot` -> `IGpuSnapshot`), as the
 * frontend names its interfaces. A `$ref` becomes the referenced type's name,
 * so that a property keeps its own description and a type is declared once.
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
 * The generated module of one schema file.
 */
async function moduleOf(file) {
  const document = JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8'));
  const definitions = document.$defs;
  const parts = [
    `/**\n * ${document.title}: ${document.description}\n *\n` +
      ` * Generated from api_schema/${file} by \`jlpm build:restapi\`;` +
      ' do not edit.\n */\n'
  ];
  for (const [name, definition] of Object.entries(definitions)) {
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
  const text = parts.join('\n');
  const target = join(OUTPUT, file.replace(/\.json$/, '.ts'));
  const options = await prettier.resolveConfig(target);
  return {
    target,
    text: await prettier.format(text, { ...options, filepath: target })
  };
}

const check = process.argv.includes('--check');
const files = readdirSync(SCHEMAS).filter(file => file.endsWith('.json'));
const stale = [];
for (const file of files.sort()) {
  const { target, text } = await moduleOf(file);
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
    `Not what the API schemas give: ${stale.join(', ')}.\n` +
      'Run `jlpm build:restapi` and commit the result.'
  );
  process.exit(1);
}
