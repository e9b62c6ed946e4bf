import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { DisposableDelegate } from '@lumino/disposable';
import { MessageLoop } from '@lumino/messaging';
import { Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';
import {
  act,
  fireEvent,
  render,
  waitFor,
  within
} from '@testing-library/react';
import * as React from 'react';

import { EnvironmentPanel } from '../components/EnvironmentPanel';
import { EnvironmentTable } from '../components/EnvironmentTable';
import { EnvironmentView } from '../components/EnvironmentView';
import { FindingList } from '../components/FindingList';
import { environmentOfPrefix } from '../env/catalog';
import {
  CommandIDs,
  IDriftFinding,
  IEnvironmentCatalog,
  IEnvironmentInspector,
  InspectionPhase
} from '../tokens';
import {
  diagnoses,
  environmentList,
  probeOf,
  probeReplies,
  torchCpuPackages
} from './envPayloads';
import { a5000Snapshot } from './payloads';
import { trans } from './trans';

/**
 * A catalog holding the recorded listing and, once asked, torch-cpu's packages.
 */
function recordedCatalog(gone: string[] = []): IEnvironmentCatalog {
  const packages = torchCpuPackages();
  return {
    environments: environmentList().environments,
    unreadable: environmentList().unreadable,
    failure: null,
    changed: new Signal<IEnvironmentCatalog, void>({} as IEnvironmentCatalog),
    load: () => Promise.resolve(),
    packagesOf: id => (id === 'torch-cpu' ? packages : undefined),
    loadPackages: () => Promise.resolve(packages),
    exportFile: () => Promise.resolve(''),
    isGone: id => gone.includes(id)
  };
}

/**
 * An inspector in the state of a recorded torch-cpu kernel.
 */
function inspectorAt(
  phase: InspectionPhase,
  changes: Partial<IEnvironmentInspector> = {},
  kernelStatus = 'idle'
): IEnvironmentInspector {
  const report =
    phase === 'probed' ? diagnoses.torchCpuProbe() : diagnoses.torchCpuServer();
  const environments = recordedCatalog();
  return {
    target: {
      label: 'train.ipynb',
      sessionContext: {
        session: { kernel: { status: kernelStatus } }
      } as any,
      notebook: null
    },
    phase,
    deep: false,
    report,
    probe: phase === 'probed' ? probeOf(probeReplies.torchCpu()) : null,
    error: null,
    serverPackages: { torch: '2.13.0+cpu', numpy: '2.4.6' },
    environment: environmentOfPrefix(environments.environments!, report.prefix),
    fingerprint: null,
    drift: [],
    findings: report.findings,
    environments,
    changed: new Signal<IEnvironmentInspector, void>({} as any),
    watch: () => new DisposableDelegate(() => undefined),
    ...changes
  } as IEnvironmentInspector;
}

/**
 * The panel's content for an inspector.
 */
function renderView(
  inspector: IEnvironmentInspector,
  commands = new CommandRegistry()
) {
  const props = {
    inspector,
    snapshot: a5000Snapshot(),
    commands,
    onCopy: jest.fn(),
    onExpand: jest.fn(),
    onExport: jest.fn(),
    trans
  };
  return { ...render(<EnvironmentView {...props} />), props };
}

/**
 * The value shown for a fact of the kernel's environment.
 */
function fact(container: HTMLElement, name: string): string {
  const facts = container.querySelector('[aria-label="Kernel environment"]');
  const term = Array.from(facts?.querySelectorAll('dt') ?? []).find(
    element => element.textContent === name
  );
  return term?.nextElementSibling?.textContent ?? '';
}

describe('EnvironmentView', () => {
  it("shows the probed kernel's environment at a glance", () => {
    const { container, getByRole } = renderView(inspectorAt('probed'));
    expect(getByRole('status').textContent).toBe(
      'The kernel of train.ipynb answered the probe.'
    );
    expect(fact(container, 'Environment')).toBe('torch-cpu (venv)');
    expect(fact(container, 'Python')).toBe('3.11.7 (CPython)');
    expect(fact(container, 'PyTorch')).toBe('2.13.0+cpu, CPU-only build');
    expect(fact(container, 'CUDA usable')).toBe('no');
    expect(fact(container, 'Visible GPUs')).toBe(
      'GPU 0 NVIDIA RTX A5000, GPU 1 NVIDIA RTX A5000 (CUDA_VISIBLE_DEVICES not set)'
    );
    expect(fact(container, 'Source')).toBe('kernel probe and server');
    expect(container.textContent).toContain(
      'nvidia-smi ignores CUDA_VISIBLE_DEVICES'
    );
  });

  it('shows what the server sees while the kernel is busy', () => {
    const { container, getByRole } = renderView(
      inspectorAt('waiting', {}, 'busy')
    );
    expect(getByRole('status').textContent).toMatch(
      /^Kernel busy — showing what the server sees/
    );
    expect(fact(container, 'PyTorch')).toBe('2.13.0+cpu, CPU-only build');
    expect(fact(container, 'Python')).toBe('3.11.7');
    expect(fact(container, 'Source')).toBe("server (the kernel's process)");
  });

  it('says a kernel of another language has no probe, with no alert', () => {
    const { getByRole, queryByRole } = renderView(
      inspectorAt('no-probe', { serverPackages: null, environment: null })
    );
    expect(getByRole('status').textContent).toBe(
      "This kernel's language has no in-kernel probe; showing what the server sees."
    );
    expect(queryByRole('alert')).toBeNull();
  });

  it('offers no Deep Check for a kernel that cannot take one', () => {
    // A bash kernel: no Python environment the server knows.
    const { container } = renderView(
      inspectorAt('no-probe', { serverPackages: null, environment: null })
    );
    expect(fact(container, 'CUDA usable')).toBe(
      'not asked: not a Python kernel'
    );
    expect(container.textContent).not.toMatch(/Deep check/i);
  });

  it('says when the kernel did not answer in time', () => {
    const { getByRole } = renderView(
      inspectorAt('timeout', {
        error: 'The kernel did not answer the probe within 10 s.'
      })
    );
    expect(getByRole('status').textContent).toBe(
      'The kernel did not answer the probe within 10 s. Showing what the server sees.'
    );
  });

  it("resolves the kernel's CUDA_VISIBLE_DEVICES to the GPUs it can use", () => {
    const report = diagnoses.torchCpuVisibleDevices();
    const { container, getAllByRole } = renderView(
      inspectorAt('probed', {
        report,
        probe: probeOf(probeReplies.torchCpuVisibleDevices()),
        findings: report.findings
      })
    );
    expect(fact(container, 'Visible GPUs')).toBe(
      'GPU 1 NVIDIA RTX A5000 (CUDA_VISIBLE_DEVICES="1,7")'
    );
    const findings = within(
      getAllByRole('list', { name: 'Findings' })[0]
    ).getAllByRole('listitem');
    expect(findings.map(item => item.className)).toEqual([
      'jp-GpuMonitor-finding jp-mod-error',
      'jp-GpuMonitor-finding jp-mod-warning'
    ]);
  });

  it('tells a remote kernel that only the probe can answer', () => {
    const report = {
      ...diagnoses.torchCpuServer(),
      remote: true,
      process: null
    };
    const { container } = renderView(inspectorAt('waiting', { report }));
    expect(container.textContent).toContain(
      'Remote kernel: the server cannot see its process; only the probe answers.'
    );
    expect(fact(container, 'Visible GPUs')).toBe('unknown');
  });

  it('shows the commands of the panel that are registered, as they are', () => {
    const commands = new CommandRegistry();
    const deep = jest.fn();
    commands.addCommand(CommandIDs.deepCheck, {
      label: 'Deep Check',
      caption: 'Import torch in this kernel',
      execute: deep
    });
    commands.addCommand(CommandIDs.refreshEnvironment, {
      label: 'Refresh',
      isEnabled: () => false,
      execute: () => undefined
    });
    const { getByRole } = renderView(inspectorAt('probed'), commands);
    const button = getByRole('button', { name: 'Deep Check' });
    expect(button.title).toBe('Import torch in this kernel');
    fireEvent.click(button);
    expect(deep).toHaveBeenCalled();
    expect(
      (getByRole('button', { name: 'Refresh' }) as HTMLButtonElement).disabled
    ).toBe(true);
  });

  it('says beside a disabled command why it is disabled', () => {
    const commands = new CommandRegistry();
    for (const [id, label] of [
      [CommandIDs.refreshEnvironment, 'Refresh'],
      [CommandIDs.deepCheck, 'Deep Check']
    ]) {
      commands.addCommand(id, {
        label,
        isEnabled: () => false,
        execute: () => undefined
      });
    }
    const stopped = inspectorAt('server', {
      target: {
        label: 'train.ipynb',
        sessionContext: { session: null } as any,
        notebook: null
      }
    });
    /**
     * The text a button is described by (aria-describedby).
     */
    const description = (button: HTMLElement) =>
      document.getElementById(button.getAttribute('aria-describedby') ?? '')
        ?.textContent;
    const { getByRole, unmount } = renderView(stopped, commands);
    const refresh = getByRole('button', { name: 'Refresh' });
    expect(description(refresh)).toBe('(start its kernel first)');
    expect(refresh.nextSibling?.textContent).toBe('(start its kernel first)');
    unmount();

    // A kernel of another language: Deep Check says so.
    const other = renderView(inspectorAt('no-probe'), commands);
    expect(description(other.getByRole('button', { name: 'Deep Check' }))).toBe(
      '(not a Python kernel)'
    );
    other.unmount();

    const none = renderView(inspectorAt('server', { target: null }), commands);
    expect(description(none.getByRole('button', { name: 'Refresh' }))).toBe(
      '(open a notebook or console first)'
    );
  });
});

describe('FindingList', () => {
  const [cpuOnly, unknownGpu] = diagnoses.torchCpuVisibleDevices().findings;

  it('copies the fix of a finding', () => {
    const onCopy = jest.fn();
    const { getByRole } = render(
      <FindingList findings={[cpuOnly]} onCopy={onCopy} trans={trans} />
    );
    const item = getByRole('listitem');
    expect(item.textContent).toContain(cpuOnly.title);
    expect(item.textContent).toContain(cpuOnly.evidence);
    const copy = getByRole('button', {
      name: `Copy the fix of: ${cpuOnly.title}`
    });
    fireEvent.click(copy);
    expect(onCopy).toHaveBeenCalledWith(
      '"/work/main/.kernel-envs/torch-cpu/bin/python" -m pip install "torch==2.13.0+cu130" --index-url https://download.pytorch.org/whl/cu130'
    );
    expect(copy.title).toBe('Copied');
    // Each short word is kept whole (no "--index-/url" across lines); only
    // the long path and URL may break.
    const words = Array.from(
      item.querySelectorAll('code .jp-GpuMonitor-word')
    ).map(word => word.textContent);
    expect(words).toEqual([
      '-m',
      'pip',
      'install',
      '"torch==2.13.0+cu130"',
      '--index-url'
    ]);
    expect(item.querySelector('code')!.textContent).toBe(cpuOnly.fix);
  });

  it('says that a fix which changes packages takes a restart, with the button', () => {
    const commands = new CommandRegistry();
    const restart = jest.fn();
    commands.addCommand('kernelmenu:restart', {
      label: 'Restart Kernel…',
      execute: restart
    });
    const { getByRole } = render(
      <FindingList
        findings={[cpuOnly]}
        onCopy={jest.fn()}
        commands={commands}
        trans={trans}
      />
    );
    const item = getByRole('listitem');
    expect(item.textContent).toContain(
      'Then restart the kernel: it keeps what it loaded until it restarts.'
    );

    fireEvent.click(getByRole('button', { name: 'Restart Kernel' }));

    expect(restart).toHaveBeenCalledTimes(1);
  });

  it('asks for no restart where the fix changes nothing the kernel loaded', () => {
    const advice: IDriftFinding = {
      ...cpuOnly,
      id: 'drift-gpus',
      restart: false
    };
    const { getByRole, queryByRole } = render(
      <FindingList
        findings={[advice]}
        onCopy={jest.fn()}
        commands={new CommandRegistry()}
        trans={trans}
      />
    );
    expect(getByRole('listitem').textContent).not.toContain('restart');
    expect(queryByRole('button', { name: 'Restart Kernel' })).toBeNull();
  });

  it('has no copy button where there is nothing to run', () => {
    const drift: IDriftFinding = { ...unknownGpu, id: 'drift-gpus', fix: '' };
    const { queryByRole } = render(
      <FindingList findings={[drift]} onCopy={jest.fn()} trans={trans} />
    );
    expect(queryByRole('button')).toBeNull();
  });

  it('says when nothing is wrong', () => {
    const { container } = render(
      <FindingList findings={[]} onCopy={jest.fn()} trans={trans} />
    );
    expect(container.textContent).toBe('No problem found.');
  });
});

describe('EnvironmentTable', () => {
  const props = () => ({
    catalog: recordedCatalog(),
    kernelPrefix: torchCpuPackages().environment.prefix,
    onExpand: jest.fn(),
    onExport: jest.fn(),
    trans
  });

  /**
   * The names of the environments the table shows.
   */
  const names = (table: HTMLElement) =>
    within(table)
      .queryAllByRole('button', { expanded: false })
      .map(button => button.textContent);

  it('lists the environments and finds them by name, folder or kernelspec', () => {
    const { getByRole } = render(<EnvironmentTable {...props()} />);
    const table = getByRole('table', { name: 'Environments' });
    expect(names(table)).toEqual(['plain', 'torch-cpu', 'main']);

    const search = getByRole('searchbox', { name: 'Search environments' });
    fireEvent.change(search, { target: { value: 'python3' } });
    expect(names(table)).toEqual(['main']);
    fireEvent.change(search, { target: { value: 'nothing-like-it' } });
    expect(table.textContent).toContain('No environment matches.');
  });

  it('says in its row that an environment was deleted since it was listed', () => {
    const given = { ...props(), catalog: recordedCatalog(['torch-cpu']) };
    const { getByRole } = render(<EnvironmentTable {...given} />);

    fireEvent.click(getByRole('button', { name: 'torch-cpu' }));

    expect(getByRole('status').textContent).toBe(
      'torch-cpu was deleted since the list was read: it is read again.'
    );
  });

  it('lists the folders the server could not read, each with why', () => {
    // As the server lists a folder named in Latin-1 (test_conda_routes.py).
    const given = props();
    given.catalog = {
      ...given.catalog,
      unreadable: [
        {
          prefix: '/opt/conda/envs/caf\ufffd',
          origin: 'envs folder /opt/conda/envs',
          message:
            'its path is not UTF-8 text, which the server cannot send nor a command name: rename the folder (its name on disk shows here with replacement characters)'
        }
      ]
    };
    const { getByRole } = render(<EnvironmentTable {...given} />);
    const folders = getByRole('list', {
      name: 'Folders that could not be read'
    });
    expect(folders.textContent).toBe(
      '/opt/conda/envs/caf\ufffd could not be read: its path is not UTF-8 text, which the server cannot send nor a command name: rename the folder (its name on disk shows here with replacement characters)'
    );
  });

  it("marks the kernel's environment", () => {
    const { getByRole } = render(<EnvironmentTable {...props()} />);
    const row = getByRole('button', { name: 'torch-cpu' }).closest('tr')!;
    expect(row.className).toBe('jp-mod-current');
    expect(row.textContent).toContain('this kernel');
  });

  it('lists the packages of an environment on expand', () => {
    const given = props();
    const { getByRole } = render(<EnvironmentTable {...given} />);
    fireEvent.click(getByRole('button', { name: 'torch-cpu' }));
    expect(given.onExpand).toHaveBeenCalledWith(
      expect.objectContaining({ id: 'torch-cpu' })
    );
    const packages = getByRole('table', { name: 'Packages of torch-cpu' });
    const torch = within(packages)
      .getAllByRole('row')
      .find(row => row.textContent?.startsWith('torch2'));
    expect(torch?.textContent).toBe('torch2.13.0+cpupip');

    fireEvent.click(getByRole('button', { name: 'torch-cpu', expanded: true }));
    expect(packages.isConnected).toBe(false);
  });

  it('downloads environment.yml in the style chosen', () => {
    const given = props();
    const { getByRole } = render(<EnvironmentTable {...given} />);
    fireEvent.change(getByRole('combobox', { name: 'Export style' }), {
      target: { value: 'with-builds' }
    });
    fireEvent.click(
      getByRole('button', { name: 'Download environment.yml of plain' })
    );
    expect(given.onExport).toHaveBeenCalledWith(
      expect.objectContaining({ id: 'plain' }),
      'with-builds'
    );
  });

  it('offers requirements.txt and pylock.toml, named after the file', () => {
    const given = props();
    const { getByRole } = render(<EnvironmentTable {...given} />);
    const choice = getByRole('combobox', { name: 'Export style' });
    const offered = Array.from(
      choice.querySelectorAll('option'),
      option => option.value
    );
    expect(offered).toEqual([
      'no-builds',
      'from-history',
      'with-builds',
      'requirements',
      'pylock'
    ]);
    fireEvent.change(choice, { target: { value: 'pylock' } });
    fireEvent.click(
      getByRole('button', { name: 'Download pylock.toml of plain' })
    );
    expect(given.onExport).toHaveBeenCalledWith(
      expect.objectContaining({ id: 'plain' }),
      'pylock'
    );
  });
});

describe('EnvironmentPanel', () => {
  it('is a labelled region with a stable id and an icon', () => {
    const panel = new EnvironmentPanel({
      inspector: inspectorAt('probed'),
      commands: new CommandRegistry(),
      translator: nullTranslator
    });
    expect(panel.id).toBe('jp-GpuMonitor-environment');
    expect(panel.node.getAttribute('role')).toBe('region');
    expect(panel.node.getAttribute('aria-label')).toBe('Environment');
    expect(panel.title.caption).toBe('Environment');
    expect(panel.title.icon).toBeDefined();
    panel.dispose();
  });

  it('has the kernel inspected only while shown, its content loaded on first show', async () => {
    const inspector = inspectorAt('probed');
    let watching = 0;
    inspector.watch = () => {
      watching++;
      return new DisposableDelegate(() => watching--);
    };
    const panel = new EnvironmentPanel({
      inspector,
      commands: new CommandRegistry(),
      translator: nullTranslator
    });
    panel.hide();
    act(() => Widget.attach(panel, document.body));
    expect(watching).toBe(0);
    expect(panel.node.textContent).toBe('');

    act(() => {
      panel.show();
      MessageLoop.flush();
    });
    expect(watching).toBe(1);
    await waitFor(() =>
      expect(panel.node.textContent).toContain('Environment of train.ipynb')
    );

    act(() => panel.hide());
    expect(watching).toBe(0);
    act(() => {
      panel.show();
      panel.dispose();
    });
    expect(watching).toBe(0);
  });
});
