import type { Cell } from '@jupyterlab/cells';
import type { Notebook } from '@jupyterlab/notebook';
import { PanelLayout, Widget } from '@lumino/widgets';

import { NotebookGpuRuns } from '../cells/notebookRuns';
import { CellGpuLines } from '../components/CellGpuLines';
import { ISpanFigures } from '../restapi/kernels';
import { a5000KernelSpans } from './payloads';
import { trans } from './trans';

/**
 * A code cell as JupyterLab lays it out: header, input, output, footer.
 */
function codeCell(id: string, type = 'code'): Cell {
  const cell = new Widget();
  const layout = new PanelLayout();
  cell.layout = layout;
  for (const part of ['header', 'inputWrapper', 'outputWrapper', 'footer']) {
    const widget = new Widget();
    widget.addClass(`jp-Cell-${part}`);
    layout.addWidget(widget);
  }
  return Object.assign(cell, {
    model: { id, type },
    ready: Promise.resolve()
  }) as unknown as Cell;
}

/**
 * The classes of a cell's parts, in order.
 */
function parts(cell: Cell): string[] {
  return (cell.layout as PanelLayout).widgets.map(widget =>
    widget.node.className.split(' ').find(name => name.startsWith('jp-'))!
  );
}

/**
 * Let the lines render (they wait for their cell to be ready).
 */
function rendered(): Promise<void> {
  return new Promise(resolve => setTimeout(resolve, 0));
}

describe('CellGpuLines', () => {
  const [tooShort, measured] = a5000KernelSpans().spans;
  // The recorded run (its model loaded onto both A5000s) trained in bursts
  // instead: busy reads between idle ones, 12 % on the whole.
  const starving = {
    ...measured,
    gpus: measured.gpus.map(gpu => ({
      ...gpu,
      peak_utilization: 85,
      mean_utilization: 12
    }))
  };
  let runs: NotebookGpuRuns;
  let cells: Cell[];
  let lines: CellGpuLines;
  let showShortRuns: boolean;

  /**
   * A run of a cell that ended, with its figures.
   */
  function ran(cellId: string, figures: ISpanFigures): void {
    const run = runs.add({
      cellId,
      executionCount: 3,
      firstLine: 'train()',
      start: figures.start,
      end: figures.end
    });
    runs.setFigures(run, figures);
  }

  beforeEach(() => {
    runs = new NotebookGpuRuns({ path: 'train.ipynb' });
    cells = [
      codeCell('cell-a'),
      codeCell('cell-b'),
      codeCell('note', 'markdown')
    ];
    showShortRuns = true;
    lines = new CellGpuLines({
      notebook: { widgets: cells } as unknown as Notebook,
      runs,
      showShortRuns: () => showShortRuns,
      lowUtilizationPercent: 30,
      trans
    });
  });

  afterEach(() => {
    lines.dispose();
  });

  it("puts the figures of a cell's run between its input and its output, with the hint when the GPU starved", async () => {
    ran('cell-a', starving);
    await rendered();

    expect(parts(cells[0])).toEqual([
      'jp-Cell-header',
      'jp-Cell-inputWrapper',
      'jp-GpuMonitor-cellLine',
      'jp-Cell-outputWrapper',
      'jp-Cell-footer'
    ]);
    const line = (cells[0].layout as PanelLayout).widgets[2];
    expect(line.isHidden).toBe(false);
    expect(line.node.textContent).toBe(
      'GPU 0: peak 21.9 GiB (+21.9 GiB), 12 % avg · GPU 1: peak 16.8 GiB (+16.8 GiB), 12 % avg · 6.0 s' +
        "GPU under 30 % while the kernel's CPU idled too (0 %): the cell waited on something else, such as files, the network or another process."
    );
    expect(parts(cells[1])).not.toContain('jp-GpuMonitor-cellLine');
  });

  it('gives no data-loading hint to a cell that loaded a model: memory rose, the GPU computed nothing', async () => {
    ran('cell-a', measured);
    await rendered();
    const line = (cells[0].layout as PanelLayout).widgets[2];
    expect(line.node.textContent).toBe(
      'GPU 0: peak 21.9 GiB (+21.9 GiB), 0 % avg · GPU 1: peak 16.8 GiB (+16.8 GiB), 0 % avg · 6.0 s'
    );
  });

  it('shows only the last run of a cell, and follows the hint threshold', async () => {
    ran('cell-a', starving);
    ran('cell-a', tooShort);
    await rendered();
    const line = (cells[0].layout as PanelLayout).widgets[2];
    expect(line.node.textContent).toBe('GPU · too short to measure (0.8 s)');

    ran('cell-a', starving);
    lines.lowUtilizationPercent = 0;
    await rendered();
    expect(line.node.textContent).toBe(
      'GPU 0: peak 21.9 GiB (+21.9 GiB), 12 % avg · GPU 1: peak 16.8 GiB (+16.8 GiB), 12 % avg · 6.0 s'
    );
    expect(
      parts(cells[0]).filter(part => part === 'jp-GpuMonitor-cellLine')
    ).toHaveLength(1);
  });

  it('stays hidden for a run too short to measure unless such runs are shown (a setting, for a kernel on a GPU)', async () => {
    showShortRuns = false;
    ran('cell-b', tooShort);
    await rendered();

    expect((cells[1].layout as PanelLayout).widgets[2].isHidden).toBe(true);
  });

  it('takes its lines away when disposed (the setting is turned off)', async () => {
    ran('cell-a', measured);
    await rendered();

    lines.dispose();

    expect(parts(cells[0])).not.toContain('jp-GpuMonitor-cellLine');
  });
});
