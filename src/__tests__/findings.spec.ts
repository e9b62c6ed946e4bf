/**
 * @jest-environment node
 */
import { sortFindings } from '../env/findings';
import { IDriftFinding } from '../tokens';
import { diagnoses } from './envPayloads';

describe('sortFindings', () => {
  it('puts errors first, then warnings, then the rest, keeping their order', () => {
    const [cpuOnly, unknownGpu] = diagnoses.torchCpuVisibleDevices().findings;
    const drift: IDriftFinding = {
      id: 'drift-driver',
      severity: 'info',
      title: 'NVIDIA driver 535.54.03 (CUDA 12.2) → 590.44.01 (CUDA 13.1)',
      evidence: '',
      fix: '',
      restart: false
    };
    const numpy: IDriftFinding = {
      ...drift,
      id: 'drift-package-numpy',
      severity: 'warning'
    };

    expect(
      sortFindings([drift, unknownGpu, numpy, cpuOnly]).map(f => f.id)
    ).toEqual([cpuOnly.id, unknownGpu.id, numpy.id, drift.id]);
  });
});
