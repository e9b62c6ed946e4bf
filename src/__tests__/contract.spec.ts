/**
 * @jest-environment node
 */
import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

/**
 * The REST contract (the server's JSON Schemas) and the payloads recorded from
 * the server that the other specs replay: each must be what the contract
 * declares, so that a recorded payload cannot drift from what the server
 * sends.
 */
const SCHEMAS = join(
  __dirname,
  '../../jupyter_server_ext/jupyterlab_gpu_monitor/api_schema'
);
const FIXTURES = join(__dirname, 'fixtures');

/**
 * The payload each recorded fixture is, by its file name.
 */
const PAYLOAD_OF: [RegExp, string][] = [
  [/-snapshot\.json$/, 'GpuSnapshot'],
  [/-history-.*\.json$/, 'GpuHistory'],
  [/-kernels\.json$/, 'KernelList'],
  [/-spans\.json$/, 'SpansAnswer'],
  [/^lab-ledger-.*\.json$/, 'LabLedger'],
  [/^lab-.*\.json$/, 'LabView'],
  [/^envs\.json$/, 'EnvironmentList'],
  [/^envs-.*\.json$/, 'EnvironmentPackages'],
  [/-diagnose-(server|probe)\.json$/, 'Diagnosis'],
  // The probe's answer, inside the kernel's execute reply.
  [/-probe-reply\.json$/, 'KernelProbe']
];

/**
 * Recordings that are no payload of the API: kernel messages, and the reply
 * of a probe that raised.
 */
const NOT_PAYLOADS = [
  'ipykernel-queued-interrupted-aborted.json',
  'probe-error-reply.json'
];

function validators(): Map<string, ValidateFunction> {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  const byName = new Map<string, ValidateFunction>();
  for (const file of readdirSync(SCHEMAS)) {
    const schema = JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8'));
    ajv.addSchema(schema);
    for (const name of Object.keys(schema.$defs)) {
      byName.set(name, ajv.getSchema(`${schema.$id}#/$defs/${name}`)!);
    }
  }
  return byName;
}

function payloadOf(file: string): unknown {
  const recorded = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
  if (file.endsWith('-probe-reply.json')) {
    return recorded.user_expressions.gpu_monitor_probe.data['application/json'];
  }
  return recorded;
}

describe('the recorded payloads', () => {
  const byName = validators();
  const files = readdirSync(FIXTURES).filter(
    file => file.endsWith('.json') && !NOT_PAYLOADS.includes(file)
  );

  it.each(files)('%s is what the contract declares', file => {
    const payload = PAYLOAD_OF.find(([pattern]) => pattern.test(file))?.[1];
    expect(payload).toBeDefined();
    const validate = byName.get(payload!)!;
    validate(payloadOf(file));
    expect(validate.errors ?? []).toEqual([]);
  });
});
