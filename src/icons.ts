import { LabIcon } from '@jupyterlab/ui-components';

import gpuSvgText from '../style/icons/gpu.svg';

/**
 * The GPU monitor's icon: a graphics card.
 */
export const gpuIcon = new LabIcon({
  name: 'jupyterlab-gpu-monitor:gpu',
  svgstr: gpuSvgText
});
