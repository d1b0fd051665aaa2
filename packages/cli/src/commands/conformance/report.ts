/** How `vrp conformance` reads its `--surfaces` and shows a node report: one line per rule, grouped by surface. */

import { type NodeConformanceReport, type SurfaceSelection, TOOL_SURFACES, type ToolSurface } from '@vrpkit/conformance';
import { visibleEscapes } from '@vrpkit/core';
import { InvalidArgumentError } from 'commander';

/** 0 the node conforms; 1 a rule failed; 2 a rule could not be evaluated (fail closed: unknown is not a pass). */
export function conformanceExitCode(r: NodeConformanceReport): number {
  if (r.conforms) return 0;
  return r.results.some((x) => x.status === 'fail') ? 1 : 2;
}

export function parseSurfaces(value: string): SurfaceSelection {
  if (value === 'auto') return 'auto';
  const list = value.split(',').map((s) => s.trim());
  const bad = list.filter((s) => !(TOOL_SURFACES as readonly string[]).includes(s));
  if (bad.length > 0 || list.length === 0) throw new InvalidArgumentError(`expected auto or a list of ${TOOL_SURFACES.join(',')}`);
  return [...new Set(list)] as ToolSurface[];
}

export function renderNodeReport(r: NodeConformanceReport): string {
  const lines = [
    `vrp conformance — ${r.domain} (${r.checked_at}), ${r.arguments.check_in} → ${r.arguments.check_out}, ${r.arguments.guests} guests`,
  ];
  const row = (x: NodeConformanceReport['results'][number]) => `  ${x.status.padEnd(7)} ${x.rule.padEnd(24)} ${visibleEscapes(x.detail)}`;
  lines.push('core');
  for (const x of r.results.filter((x) => x.surface === null)) lines.push(row(x));
  for (const s of r.surfaces) {
    const state = s.exposed === true ? 'exposed' : s.exposed === false ? 'not exposed' : 'unknown';
    lines.push(`${s.surface} ${state} (${s.selected}) ${visibleEscapes(s.url ?? '')} — ${visibleEscapes(s.detail)}`);
    for (const x of r.results.filter((x) => x.surface === s.surface)) lines.push(row(x));
  }
  lines.push(r.conforms ? 'CONFORMS' : 'DOES NOT CONFORM');
  return `${lines.join('\n')}\n`;
}
