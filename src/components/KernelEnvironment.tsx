import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { glanceAt } from '../env/glance';
import { formatList, formatSentences } from '../format/units';
import { IEnvironmentInspector } from '../tokens';
import { IGpuSnapshot } from '../restapi/gpus';

/**
 * The properties of {@link KernelEnvironment}.
 */
export namespace KernelEnvironment {
  /**
   * The properties of {@link KernelEnvironment}.
   */
  export interface IProps {
    /**
     * The inspector whose findings about the kernel are shown.
     */
    inspector: IEnvironmentInspector;
    /**
     * The GPUs now; null when unknown.
     */
    snapshot: IGpuSnapshot | null;
    /**
     * The translation bundle of the extension's domain.
     */
    trans: TranslationBundle;
  }
}

/**
 * Where the inspection stands, and the kernel's environment at a glance:
 * environment, Python, PyTorch and its CUDA build, whether CUDA is usable,
 * the GPUs the kernel can see, and which source answered.
 */
export function KernelEnvironment(
  props: KernelEnvironment.IProps
): React.ReactElement {
  const { inspector, snapshot, trans } = props;
  const { report, probe } = inspector;
  const glance = glanceAt(inspector, snapshot);
  const unknown = trans.__('unknown');
  return (
    <>
      <p className="jp-GpuMonitor-inspection" role="status">
        {Private.status(inspector, trans)}
      </p>
      {report?.remote && (
        <p className="jp-GpuMonitor-note">
          {trans.__(
            'Remote kernel: the server cannot see its process; only the probe answers.'
          )}
        </p>
      )}
      {report && (
        <dl
          className="jp-GpuMonitor-facts jp-GpuMonitor-envFacts"
          aria-label={trans.__('Kernel environment')}
        >
          <dt>{trans.__('Environment')}</dt>
          <dd>
            {glance.name ?? unknown}
            {glance.kind && (
              <span className="jp-GpuMonitor-dim"> ({glance.kind})</span>
            )}
          </dd>
          <dt>{trans.__('Folder')}</dt>
          <dd className="jp-GpuMonitor-path" title={glance.prefix ?? ''}>
            {glance.prefix ?? unknown}
          </dd>
          <dt>{trans.__('Python')}</dt>
          <dd>{glance.python ?? unknown}</dd>
          <dt>{trans.__('PyTorch')}</dt>
          <dd>{Private.torch(glance.torch, glance.torchCuda, trans)}</dd>
          <dt>{trans.__('CUDA usable')}</dt>
          <dd>
            {Private.cudaUsable(
              glance.cudaUsable,
              glance.torch,
              inspector.phase === 'no-probe',
              trans
            )}
          </dd>
          <dt>{trans.__('Visible GPUs')}</dt>
          <dd>{Private.visibleGpus(glance, snapshot, trans)}</dd>
          <dt>{trans.__('Source')}</dt>
          <dd>
            {probe
              ? trans.__('kernel probe and server')
              : trans.__("server (the kernel's process)")}
          </dd>
        </dl>
      )}
      {report && glance.visibleDevices !== undefined && (
        <p className="jp-GpuMonitor-note">
          {trans.__(
            'nvidia-smi ignores CUDA_VISIBLE_DEVICES and lists every GPU: only the kernel’s own environment tells which it can use.'
          )}
        </p>
      )}
    </>
  );
}

/**
 * File-local helpers.
 */
namespace Private {
  /**
   * Where the inspection stands, for a person.
   */
  export function status(
    inspector: IEnvironmentInspector,
    trans: TranslationBundle
  ): string {
    const target = inspector.target;
    if (!target) {
      return trans.__(
        "Open a notebook or a console to see its kernel's environment."
      );
    }
    switch (inspector.phase) {
      case 'no-kernel':
        return trans.__('%1 has no kernel.', target.label);
      case 'server':
        return trans.__(
          'Asking the server about the kernel of %1…',
          target.label
        );
      case 'waiting':
        return target.sessionContext.session?.kernel?.status === 'busy'
          ? trans.__(
              'Kernel busy — showing what the server sees. The kernel is probed once it is idle.'
            )
          : trans.__(
              'Kernel starting — showing what the server sees. The kernel is probed once it is idle.'
            );
      case 'probing':
        return inspector.deep
          ? trans.__('Deep check: importing torch in the kernel…')
          : trans.__('Probing the kernel…');
      case 'probed':
        return inspector.deep
          ? trans.__(
              'The kernel of %1 answered a deep check (torch is imported in it).',
              target.label
            )
          : trans.__('The kernel of %1 answered the probe.', target.label);
      case 'no-probe':
        return trans.__(
          "This kernel's language has no in-kernel probe; showing what the server sees."
        );
      case 'timeout':
        return formatSentences(
          inspector.error ?? '',
          trans.__('Showing what the server sees.'),
          trans
        );
      case 'failed':
        return inspector.error ?? '';
    }
  }

  /**
   * PyTorch's version and CUDA build, for a person.
   */
  export function torch(
    version: string | null | undefined,
    cuda: string | null,
    trans: TranslationBundle
  ): string {
    if (version === undefined) {
      return trans.__('unknown');
    }
    if (version === null) {
      return trans.__('not installed');
    }
    if (cuda === 'cpu') {
      return trans.__('%1, CPU-only build', version);
    }
    return cuda === null
      ? version
      : trans.__('%1, built for CUDA %2', version, cuda);
  }

  /**
   * Whether CUDA is usable, for a person.
   */
  export function cudaUsable(
    usable: boolean | null,
    torch: string | null | undefined,
    noProbe: boolean,
    trans: TranslationBundle
  ): string {
    if (noProbe) {
      // A kernel in another language: its environment's torch is not its.
      return trans.__('not asked: not a Python kernel');
    }
    if (usable !== null) {
      return usable ? trans.__('yes') : trans.__('no');
    }
    return torch === null
      ? trans.__('no PyTorch to ask')
      : trans.__('unknown until torch is imported (Deep check)');
  }

  /**
   * The GPUs the kernel can see, for a person.
   */
  export function visibleGpus(
    glance: ReturnType<typeof glanceAt>,
    snapshot: IGpuSnapshot | null,
    trans: TranslationBundle
  ): string {
    const devices = glance.visibleDevices;
    if (devices === undefined) {
      return trans.__('unknown');
    }
    const setting =
      devices === null
        ? trans.__('CUDA_VISIBLE_DEVICES not set')
        : `CUDA_VISIBLE_DEVICES="${devices}"`;
    if (glance.visibleGpus === null) {
      return setting;
    }
    if (glance.visibleGpus.length === 0) {
      return trans.__('none (%1)', setting);
    }
    const names = glance.visibleGpus.map(index => {
      const gpu = snapshot?.gpus.find(candidate => candidate.index === index);
      return trans.__('GPU %1 %2', index, gpu?.name ?? '').trim();
    });
    return trans.__('%1 (%2)', formatList(names, trans), setting);
  }
}
