import { writeFileSync } from 'node:fs';
import { type ConformanceReport, runVectorCorpus } from '@vrpkit/conformance';
import type { Command } from 'commander';
import { CliError, InputRefused } from '../../errors.js';
import { run } from '../../io.js';
import { jsonOption } from '../../options.js';

interface VectorsOptions {
  corpus: string;
  report?: string;
  json?: boolean;
  control?: string[];
  corpusPath?: string;
  corpusVersion?: string;
  corpusRepository?: string;
  corpusRevision?: string;
  sourceRepository?: string;
  sourceRevision?: string;
  reporter?: string;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];
const asExpected = (r: ConformanceReport['results'][number]) => r.outcome === 'pass' || r.outcome === 'reject-as-required';

/** Run the corpus; a corpus the runner cannot run is refused input (exit 64). */
function runCorpus(o: VectorsOptions): Promise<ConformanceReport> {
  return runVectorCorpus(o.corpus, {
    ...(o.corpusPath ? { path: o.corpusPath } : {}),
    ...(o.corpusVersion ? { version: o.corpusVersion } : {}),
    ...(o.corpusRepository ? { repository: o.corpusRepository } : {}),
    ...(o.corpusRevision ? { revision: o.corpusRevision } : {}),
    ...(o.control ? { controls: o.control } : {}),
    ...(o.sourceRepository && o.sourceRevision ? { source: { repository: o.sourceRepository, revision: o.sourceRevision } } : {}),
    ...(o.reporter ? { reporter: o.reporter } : {}),
  }).catch((e: unknown) => {
    throw new InputRefused(e);
  });
}

async function vectors(o: VectorsOptions): Promise<number> {
  if ((o.sourceRepository === undefined) !== (o.sourceRevision === undefined))
    throw new CliError('missing_option', { one: '--source-repository', other: '--source-revision' });
  const report = await runCorpus(o);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  if (o.report) {
    try {
      writeFileSync(o.report, text);
    } catch (e) {
      throw new CliError('file_unwritable', { file: o.report, reason: (e as Error).message });
    }
    const matched = report.results.filter(asExpected).length;
    process.stderr.write(`${o.report}: ${matched}/${report.results.length} vectors as expected; discriminates: ${report.discriminates}\n`);
  } else process.stdout.write(text);
  return report.discriminates && report.results.every(asExpected) ? 0 : 1;
}

/** `vrp conformance vectors --corpus DIR --report FILE`: a VRP conformance-report-v0.1 for vrpkit's verifier. */
export function registerVectors(conformance: Command): void {
  conformance
    .command('vectors')
    .description(
      "run vrpkit's verifier over one vector corpus (offer or receipt vectors, *.json in one directory) and write a VRP conformance-report-v0.1.\n" +
        'Exit 0 when every vector matched and every must-fail control was rejected, 1 otherwise, 64 usage error.',
    )
    .requiredOption('--corpus <dir>', 'the corpus directory')
    .option('--report <file>', 'write the report there (default: stdout)')
    .addOption(jsonOption('errors as JSON on stdout'))
    .option('--control <file>', 'a vector the verifier MUST reject (repeatable; default: the *tamper* vectors)', collect)
    .option('--corpus-path <path>', 'the corpus path as named in the report (default: --corpus as given)')
    .option('--corpus-version <v>', 'the corpus version (default 0.1)')
    .option('--corpus-repository <url>', 'the https repository the corpus was taken from')
    .option('--corpus-revision <rev>', 'the revision of that repository')
    .option('--source-repository <url>', "the https repository of the verifier's source (with --source-revision)")
    .option('--source-revision <rev>', 'the source revision that ran')
    .option('--reporter <text>', 'who ran it')
    .action((o: VectorsOptions) => run(o.json, () => vectors(o)));
}
