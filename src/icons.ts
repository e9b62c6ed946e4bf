import { LabIcon } from '@jupyterlab/ui-components';

import diceSvgText from '../style/icons/dice.svg';
import environmentSvgText from '../style/icons/environment.svg';
import gpuSvgText from '../style/icons/gpu.svg';

/**
 * The GPU monitor's icon: a graphics card.
 */
export const gpuIcon = new LabIcon({
  name: 'jupyterlab-gpu-monitor:gpu',
  svgstr: gpuSvgText
});

/**
 * The Environment panel's icon: a package.
 */
export const environmentIcon = new LabIcon({
  name: 'jupyterlab-gpu-monitor:environment',
  svgstr: environmentSvgText
});

/**
 * The reproducibility cell's icon: a die.
 */
export const diceIcon = new LabIcon({
  name: 'jupyterlab-gpu-monitor:dice',
  svgstr: diceSvgText
});
