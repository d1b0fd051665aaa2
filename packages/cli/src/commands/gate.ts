import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { type Clock, generateEd25519Jwk, jwkThumbprint, publicJwkOf, systemClock, VrpError } from '@vrpkit/core';
import {
  type AuthorityStore,
  decideEscalation,
  type JournalState,
  journalEntryView,
  loadPolicy,
  openPostgresStore,
  openSqliteStore,
  type PolicyState,
} from '@vrpkit/gate';
import { Argument, type Command, InvalidArgumentError, Option } from 'commander';
import { EXIT_USAGE, printJson, reportError, run, terminalSafe, usage } from '../io.js';
import { registerGateAuditCommands } from './gate-audit.js';
import { openStore, registerGateProxyCommands } from './gate-proxy.js';
import { registerGateUiCommand } from './gate-ui.js';

/**
 * `vrp gate …`: operate the Tool-Use Binding gate's authority store, policy and keys (docs/gate.md §CLI).
 * Every command reads the time from the one `clock` (decisions, revocations, epochs, expiry filters).
 */
export function registerGateCommands(program: Command, clock: Clock = systemClock): void {
  const gate = program.command('gate').description('the Tool-Use Binding gate: approvals, journal, policy checks, signing keys');
  registerGateProxyCommands(gate, clock);
  registerGateUiCommand(gate, clock);
  registerGateAuditCommands(gate, clock);

  storeOptions(
    gate
      .command('approve')
      .description(
        'approve (or with --reject refuse) an escalated candidate act; the gate issues its authority when the host dispatches it again',
      )
      .argument('<act-id>', 'candidate_act_id of the pending escalation')
      .option(
        '--digest <binding-digest>',
        'the binding digest you reviewed (`vrp gate pending` shows it); the decision is refused unless the escalation is bound to exactly it',
      )
      .option('--approver <name>', 'who decides (recorded with the decision)', process.env.USER ?? 'cli')
      .option('--reject', 'refuse the act instead of approving it'),
  ).action((actId: string, o: StoreOpts & { approver: string; reject?: boolean; digest?: string }) =>
    withStore(o, async (store) => {
      // The gate's one approval binding: the decision binds to the digest the person reviewed
      // (without --digest, to the row's immutable binding); another binding is EF_SCOPE_MISMATCH.
      const d = await decideEscalation(store, {
        candidateActId: actId,
        status: o.reject ? 'REJECTED' : 'APPROVED',
        approver: o.approver,
        now: clock.now(),
        ...(o.digest !== undefined ? { reviewedDigest: o.digest } : {}),
      });
      if (!d.ok && d.code === 'EF_002') throw new VrpError('not_pending', `no escalation for act ${actId}`);
      if (!d.ok)
        throw new VrpError(
          d.code,
          `act ${actId} is bound to digest ${d.escalation?.binding_digest}, not the reviewed ${o.digest}; nothing was decided`,
        );
      const row = d.escalation;
      if (!d.decided)
        throw new VrpError('not_pending', `act ${actId} is ${row.status.toLowerCase()}${row.status === 'PENDING' ? ' but expired' : ''}`);
      const out = {
        candidate_act_id: row.candidate_act_id,
        binding_digest: row.binding_digest,
        status: row.status,
        approver: row.approver,
        decided_at: iso(row.decided_at),
      };
      if (o.json) printJson(out);
      else process.stdout.write(`${row.status.toLowerCase()} ${row.candidate_act_id} (digest ${row.binding_digest}) by ${row.approver}\n`);
    }),
  );

  storeOptions(gate.command('pending').description('list escalated acts waiting for a person (digests only)')).action((o: StoreOpts) =>
    withStore(o, async (store) => {
      const now = clock.now();
      const rows = (await store.listEscalations('PENDING')).filter((r) => r.expires_at > now);
      const out = rows.map((r) => {
        const act = JSON.parse(r.act_json);
        return {
          candidate_act_id: r.candidate_act_id,
          tool_id: act.tool?.tool_id,
          consequence_class: act.consequence_class,
          destination_id: act.destination?.destination_id ?? null,
          provenance: act.instruction_provenance?.source_type ?? 'unknown',
          arguments_digest: act.arguments_digest?.value,
          binding_digest: r.binding_digest,
          requested_at: iso(r.requested_at),
          expires_at: iso(r.expires_at),
        };
      });
      if (o.json) return printJson(out);
      if (!out.length) return void process.stdout.write('no pending escalations\n');
      for (const e of out)
        process.stdout.write(
          `${e.candidate_act_id}  ${terminalSafe(`${e.tool_id}`)}  ${e.consequence_class}  dest=${terminalSafe(`${e.destination_id ?? '-'}`)}  provenance=${terminalSafe(`${e.provenance}`)}  args=${e.arguments_digest}  digest=${e.binding_digest}  expires ${e.expires_at}\n`,
        );
    }),
  );

  storeOptions(
    gate
      .command('journal')
      .description('show the dispatch journal (consumed → invoked → result), newest first; digests only, never arguments')
      .addOption(
        new Option('--state <state>', 'only rows in this state').choices([
          'CONSUMED',
          'INVOKED',
          'EFFECTUATED',
          'FAILED',
          'EFFECT_RESULT_UNKNOWN',
          'REFUSED',
        ]),
      )
      .option('--limit <n>', 'at most this many rows', positiveInt, 100),
  ).action((o: StoreOpts & { state?: JournalState; limit: number }) =>
    withStore(o, async (store) => {
      const rows = (await store.listJournal({ limit: o.limit, ...(o.state ? { state: o.state } : {}) })).map(journalEntryView);
      if (o.json) return printJson(rows);
      if (!rows.length) return void process.stdout.write('journal is empty\n');
      for (const r of rows)
        process.stdout.write(
          `${r.consumed_at}  ${r.state.padEnd(21)}  ${r.candidate_act_id}  ${terminalSafe(r.tool_id)}  ${r.authority_id}${r.error_code ? `  error=${r.error_code}` : ''}\n`,
        );
    }),
  );

  storeOptions(
    gate
      .command('revoke')
      .description('revoke one outstanding authority (enforce then refuses it with EF_REVOKED)')
      .argument('<authority-id>'),
  ).action((authorityId: string, o: StoreOpts) =>
    withStore(o, async (store) => {
      if (!(await store.revokeAuthority(authorityId, clock.now())))
        throw new VrpError('not_revocable', `authority ${authorityId} does not exist or is no longer outstanding`);
      if (o.json) printJson({ authority_id: authorityId, state: 'REVOKED' });
      else process.stdout.write(`revoked ${authorityId}\n`);
    }),
  );

  storeOptions(
    gate
      .command('bump-epoch')
      .description('bump an epoch: every authority issued before it is refused at enforce')
      .addArgument(new Argument('<epoch>', 'which epoch').choices(['policy', 'authority', 'revocation'])),
  ).action((epoch: 'policy' | 'authority' | 'revocation', o: StoreOpts) =>
    withStore(o, async (store) => {
      const state = await store.bumpEpoch(`${epoch}_epoch` as keyof PolicyState, clock.now());
      if (o.json) printJson(state);
      else
        process.stdout.write(
          `policy_epoch=${state.policy_epoch} authority_epoch=${state.authority_epoch} revocation_epoch=${state.revocation_epoch}\n`,
        );
    }),
  );

  const policy = gate.command('policy').description('gate policies');
  policy
    .command('check')
    .description('validate a policy file (JSON or YAML) and show what it decides; exit 1 with every problem when invalid')
    .argument('<file>')
    .option('--classify <tool...>', 'also print the consequence class the policy assigns to these tool ids')
    .option('--json', 'machine-readable output')
    .action((file: string, o: { classify?: string[]; json?: boolean }) =>
      run(o.json, async () => {
        const p = loadPolicy(file);
        const d = p.document;
        const out = {
          policy_id: p.policyId,
          digest: p.digest,
          hot_envelopes: d.hot_envelopes.map((e) => ({
            name: e.name,
            consequence_classes: e.consequence_classes,
            tools: e.tools ?? ['*'],
          })),
          provenance_rules: d.provenance_rules.map(
            (r) => `${r.name}: ${r.sources.join('|')} + ${r.consequence_classes.join('|')} → ${r.action}`,
          ),
          deny_classes: d.deny_classes,
          otherwise: d.otherwise,
          authority_ttl_seconds: d.authority_ttl_seconds,
          classify: Object.fromEntries((o.classify ?? []).map((t) => [t, p.classify({ tool_id: t })])),
        };
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

  gate
    .command('keys')
    .description(
      'generate the Ed25519 key the gate signs authority with: the private JWK goes to --out (mode 0600), the public JWKS to stdout',
    )
    .requiredOption('--out <file>', 'where to write the private JWK (never printed)')
    .option('--kid <kid>', 'key id (default: the RFC 7638 thumbprint)')
    .option('--json', 'machine-readable output (the public JWKS)')
    .action((o: { out: string; kid?: string; json?: boolean }) =>
      run(o.json, async () => {
        const { privateJwk, publicJwk } = await generateEd25519Jwk();
        const kid = o.kid ?? (await jwkThumbprint(publicJwk));
        writeFileSync(o.out, `${JSON.stringify({ ...privateJwk, kid }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
        chmodSync(o.out, 0o600);
        const jwks = { keys: [publicJwkOf(privateJwk, kid)] };
        if (o.json) printJson(jwks);
        else process.stdout.write(`wrote private key ${o.out} (kid ${kid}); public JWKS:\n${JSON.stringify(jwks, null, 2)}\n`);
      }),
    );
}

interface StoreOpts {
  db?: string;
  databaseUrl?: string;
  store?: string;
  schema?: string;
  json?: boolean;
}

function storeOptions(c: Command): Command {
  return c
    .option('--db <file>', 'SQLite authority store file')
    .option('--database-url <url>', 'PostgreSQL authority store URL')
    .option('--store <sqlite-file|postgres-url>', 'the gate store, as `vrp gate proxy|ui|tools|report|audit` name it')
    .option('--schema <name>', 'PostgreSQL schema of the gate tables', 'vrpkit_gate')
    .option('--json', 'machine-readable output');
}

/** Open the store named by exactly one of --db / --database-url / --store, run, close; usage errors exit 64. */
async function withStore(o: StoreOpts, fn: (store: AuthorityStore) => Promise<void>): Promise<void> {
  if ([o.db, o.databaseUrl, o.store].filter((v) => v !== undefined).length !== 1) {
    process.exitCode = reportError(usage('give exactly one of --db FILE, --database-url URL or --store FILE|URL'), !!o.json, EXIT_USAGE);
    return;
  }
  await run(o.json, async () => {
    // Operating on a store means an existing one: never create an empty database by a typo.
    if (o.db && !existsSync(o.db)) throw new VrpError('no_store', `no authority store at ${o.db}`);
    const store =
      o.store !== undefined
        ? await openStore({ store: o.store, schema: o.schema! }, false)
        : o.db
          ? await openSqliteStore(o.db)
          : await openPostgresStore(o.databaseUrl!, { schema: o.schema! });
    try {
      await fn(store);
    } finally {
      await store.close();
    }
  });
}

function positiveInt(v: string): number {
  if (!/^[1-9]\d{0,5}$/.test(v)) throw new InvalidArgumentError('must be a positive integer');
  return Number(v);
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
