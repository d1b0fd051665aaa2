/**
 * The structure facts beside the dependency rule (issue: "a house a newcomer can extend"): no
 * import circle anywhere in the repository, no `instanceof` of a concrete store outside its own
 * file (a feature needs a port, not a downcast), no function over 150 lines in `packages/*\/src`
 * and at most 10 over 80. `npx tsx packages/testkit/src/structure.ts` prints what these count.
 */
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  functionLengths,
  importCircles,
  importGraph,
  REPOSITORY_ROOT,
  repositoryFiles,
  sourceFiles,
  storeDowncasts,
} from '../src/structure.js';

describe('structure of the repository', () => {
  const files = repositoryFiles();

  it('reads the whole repository', () => {
    expect(files.length).toBeGreaterThan(300);
  });

  it('has no import circle (type-only imports included)', () => {
    const circles = importCircles(importGraph(files)).map((c) => c.map((f) => relative(REPOSITORY_ROOT, f)).join(' ↔ '));
    expect(circles).toEqual([]);
  });

  it('has no instanceof of a concrete store outside the file that declares it', () => {
    expect(storeDowncasts(files).map((d) => `${d.file}:${d.line} instanceof ${d.className}`)).toEqual([]);
  });

  it('has no function over 150 lines in packages/*/src, and at most 10 over 80', () => {
    const lengths = functionLengths(sourceFiles());
    expect(lengths.filter((f) => f.lines > 150).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`)).toEqual([]);
    const over80 = lengths.filter((f) => f.lines > 80).map((f) => `${f.file}:${f.line} ${f.name} (${f.lines} lines)`);
    expect(over80.length, over80.join('\n')).toBeLessThanOrEqual(10);
  });

  describe('the rules catch what they claim to (synthetic input)', () => {
    it('a circle of three files and a self-standing file', () => {
      const g = new Map([
        ['a', new Set(['b'])],
        ['b', new Set(['c'])],
        ['c', new Set(['a'])],
        ['d', new Set(['a'])],
      ]);
      expect(importCircles(g)).toEqual([['a', 'b', 'c']]);
    });
    it('no circle in a chain', () => {
      expect(
        importCircles(
          new Map([
            ['a', new Set(['b'])],
            ['b', new Set<string>()],
          ]),
        ),
      ).toEqual([]);
    });
  });
});
