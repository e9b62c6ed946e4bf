import { FindingSeverity } from '../restapi/inspector';
import { InspectorFinding } from '../tokens';

/**
 * The order findings are shown in: errors first.
 */
const SEVERITY_RANK: { [S in FindingSeverity]: number } = {
  error: 0,
  warning: 1,
  info: 2
};

/**
 * The findings, errors first, then warnings, then the rest; in their order
 * otherwise.
 */
export function sortFindings<F extends InspectorFinding>(
  findings: readonly F[]
): F[] {
  return findings
    .map((finding, position) => ({ finding, position }))
    .sort(
      (a, b) =>
        SEVERITY_RANK[a.finding.severity] - SEVERITY_RANK[b.finding.severity] ||
        a.position - b.position
    )
    .map(({ finding }) => finding);
}
