/**
 * The words of a marketing name that every board of its line repeats: the
 * vendor, and the product line of older drivers ("Tesla V100S-PCIE-32GB",
 * "NVIDIA GeForce RTX 4090").
 */
const REPEATED_WORDS = /^(?:NVIDIA\s+)?(?:Tesla\s+|GeForce\s+)?/i;

/**
 * A GPU's name as a dense list shows it: "V100S-PCIE-32GB", "RTX A5000",
 * "H100 80GB HBM3"; the full name is its tooltip. The name itself when
 * nothing would be left.
 */
export function shortGpuName(name: string): string {
  const short = name.replace(REPEATED_WORDS, '').trim();
  return short === '' ? name : short;
}
