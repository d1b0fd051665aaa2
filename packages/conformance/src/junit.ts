/**
 * A node conformance report as JUnit XML, the format CI systems read: one test suite per node,
 * one test case per rule verdict (`rule [surface]`, class name = the section). A failed rule is a
 * `<failure>`; an unknown one is an `<error>` (fail closed: a check that could not be evaluated
 * must not read as green in CI).
 */
import type { NodeConformanceReport } from './node-check.js';

const escapeXml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] as string);

export function toJUnit(report: NodeConformanceReport): string {
  const failures = report.results.filter((r) => r.status === 'fail').length;
  const errors = report.results.filter((r) => r.status === 'unknown').length;
  const cases = report.results.map((r) => {
    const name = escapeXml(`${r.rule}${r.surface ? ` [${r.surface}]` : ''}`);
    const open = `    <testcase classname="${escapeXml(r.section)}" name="${name}">`;
    const evidence = r.evidence.map((e) => `${e.method} ${e.url} → ${e.status ?? 'no answer'} sha256:${e.sha256 ?? '-'}`).join('\n');
    const body =
      r.status === 'pass'
        ? ''
        : `\n      <${r.status === 'fail' ? 'failure' : 'error'} type="${r.status}" message="${escapeXml(r.detail)}">${escapeXml(evidence)}</${r.status === 'fail' ? 'failure' : 'error'}>\n    `;
    return `${open}${body}</testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="vrp conformance" tests="${report.results.length}" failures="${failures}" errors="${errors}">`,
    `  <testsuite name="${escapeXml(report.domain)}" tests="${report.results.length}" failures="${failures}" errors="${errors}" timestamp="${report.checked_at.replace(/Z$/, '')}">`,
    ...cases,
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
