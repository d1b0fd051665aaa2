import { loadPolicy } from '@vrpkit/gate';
import type { Command } from 'commander';
import { printJson, run } from '../../../io.js';
import { jsonOption } from '../../../options.js';

type Policy = ReturnType<typeof loadPolicy>;

/** What a policy decides, as `--json` prints it. */
function policyView(p: Policy, classify: readonly string[]) {
  const d = p.document;
  return {
    policy_id: p.policyId,
    digest: p.digest,
    hot_envelopes: d.hot_envelopes.map((e) => ({ name: e.name, consequence_classes: e.consequence_classes, tools: e.tools ?? ['*'] })),
    provenance_rules: d.provenance_rules.map((r) => `${r.name}: ${r.sources.join('|')} + ${r.consequence_classes.join('|')} → ${r.action}`),
    deny_classes: d.deny_classes,
    otherwise: d.otherwise,
    authority_ttl_seconds: d.authority_ttl_seconds,
    classify: Object.fromEntries(classify.map((t) => [t, p.classify({ tool_id: t })])),
  };
}

/** `vrp gate policy check FILE`: validate a policy and show what it decides; exit 1 with every problem when invalid. */
export function registerCheck(policy: Command): void {
  policy
    .command('check')
    .description('validate a policy file (JSON or YAML) and show what it decides; exit 1 with every problem when invalid')
    .argument('<file>')
    .option('--classify <tool...>', 'also print the consequence class the policy assigns to these tool ids')
    .addOption(jsonOption('machine-readable output'))
    .action((file: string, o: { classify?: string[]; json?: boolean }) =>
      run(o.json, async () => {
        const out = policyView(loadPolicy(file), o.classify ?? []);
        if (o.json) return printJson({ valid: true, ...out });
        const lines = [
          `policy ${out.policy_id} is valid (digest ${out.digest})`,
          ...out.hot_envelopes.map((e) => `  hot envelope ${e.name}: ${e.consequence_classes.join(', ')} for ${e.tools.join(', ')}`),
          ...out.provenance_rules.map((r) => `  provenance ${r}`),
          `  deny classes: ${out.deny_classes.join(', ') || 'none'}; otherwise: ${out.otherwise}; approval authority TTL ${out.authority_ttl_seconds}s`,
          ...Object.entries(out.classify).map(([t, c]) => `  ${t} → ${c}`),
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      }),
    );
}
