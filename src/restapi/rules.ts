/**
 * Shared rules: Values both halves decide by, each with its `const`: the server's diagnoses and the frontend's notifications and cell hints read the same one.
 *
 * Generated from api_schema/rules.json by `jlpm build:schemas`; do not edit.
 */

/**
 * A GPU, or a kernel on it, holds memory from this much on, in MiB: more than a desktop's display server (a few hundred MiB) or a bare CUDA context with its libraries (500 to 900), as a loaded model or its data does. An idle GPU that holds this much is waiting on something.
 */
export const HELD_MEMORY_MIB = 1000;

/**
 * A GPU's utilization, in percent, under which it counts as barely used: the inspector's finding on a GPU held by an idle kernel, and where the alerts' and the cell hints' settings start (each user may move theirs).
 */
export const LOW_UTILIZATION_PERCENT = 30;

/**
 * A kernel's mean CPU, in percent of one core, from which it was busy while its GPU waited: preparing data on the CPU (a DataLoader without workers keeps one core at about 100 %).
 */
export const KERNEL_CPU_BUSY_PERCENT = 50;

/**
 * A kernel's mean CPU, in percent of one core, under which it idled too while its GPU waited: on files, the network, another process, or nothing (work done, memory still held).
 */
export const KERNEL_CPU_IDLE_PERCENT = 10;
