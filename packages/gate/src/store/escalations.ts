/** The escalations port on the store engine: acts a person decides, bound to the digest reviewed ([I-D.das-agentic] EF-070). */
import type { StoreEngine } from './engine.js';
import type { EscalationRow, Escalations } from './ports.js';

export class SqlEscalations implements Escalations {
  constructor(private readonly engine: StoreEngine) {}

  async get(candidateActId: string): Promise<EscalationRow | undefined> {
    return await this.engine.db.selectFrom('gate_escalation').selectAll().where('candidate_act_id', '=', candidateActId).executeTakeFirst();
  }

  async list(status?: EscalationRow['status']): Promise<EscalationRow[]> {
    let q = this.engine.db.selectFrom('gate_escalation').selectAll();
    if (status) q = q.where('status', '=', status);
    return q.orderBy('requested_at').execute();
  }

  async decide(
    candidateActId: string,
    bindingDigest: string,
    status: 'APPROVED' | 'REJECTED',
    approver: string,
    now: number,
  ): Promise<EscalationRow | undefined> {
    return this.engine.write(async (db) => {
      const r = await db
        .updateTable('gate_escalation')
        .set({ status, approver, decided_at: now })
        .where('candidate_act_id', '=', candidateActId)
        // The decision binds to the act the person reviewed, never to whatever the row holds now.
        .where('binding_digest', '=', bindingDigest)
        .where('status', '=', 'PENDING')
        .where('expires_at', '>', now)
        .returningAll()
        .executeTakeFirst();
      if (r) {
        const tool = actTool(r.act_json);
        await this.engine.appendAuditIn(
          db,
          [{ kind: status === 'APPROVED' ? 'approve' : 'reject', act_id: candidateActId, ...tool, digest: bindingDigest, actor: approver }],
          now,
        );
      }
      return r;
    });
  }

  async recentlyDecided(limit: number): Promise<EscalationRow[]> {
    return await this.engine.db
      .selectFrom('gate_escalation')
      .selectAll()
      .where('status', '!=', 'PENDING')
      .orderBy('decided_at', 'desc')
      .limit(limit)
      .execute();
  }
}

/** The tool and server of an escalated act (its stored JSON), for the audit entry of a decision on it. */
function actTool(actJson: string): { tool: string | null; server: string | null } {
  try {
    const t = (JSON.parse(actJson) as { tool?: { tool_id?: unknown; tool_endpoint?: unknown } }).tool;
    return {
      tool: typeof t?.tool_id === 'string' ? t.tool_id : null,
      server: typeof t?.tool_endpoint === 'string' ? t.tool_endpoint : null,
    };
  } catch {
    return { tool: null, server: null };
  }
}
