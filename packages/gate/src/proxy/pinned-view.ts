/**
 * The pinned view of the downstream's tools: every definition the downstream shows, digested and
 * recorded for a person to review, and the pins (tool name → the digest a person approved) for
 * this server identity. Only a tool whose current definition is pinned is listed or called
 * (docs/gateway.md, "Tool pinning").
 */
import { sha256Base64url } from '@vrpkit/core';
import { GateError } from '../errors.js';
import { asGateError } from '../gate-context.js';
import type { Downstream, RequestExtra } from './downstream-link.js';
import type { ProxyLog } from './log.js';
import { isMcpToolName, type PinnedToolDefinition, pinnedDefinition } from './pins.js';
import { gateRefusal } from './results.js';
import type { ProxyMode } from './schema.js';
import type { ProxyTables } from './tables.js';

export interface ToolView {
  definition: PinnedToolDefinition;
  digest: string;
}

/**
 * How old the proxy's view of the downstream's tools may be when a call uses it (issue 36 defect 7):
 * a downstream can change a definition without `notifications/tools/list_changed`, so a call
 * re-lists once the view is older than this, and one whose tool's current definition is not the
 * pinned one is refused. Bounds how long a silently changed definition can still be called.
 */
export const DEFAULT_TOOLS_RELIST_MS = 1000;

export interface PinnedViewOptions {
  tables: ProxyTables;
  serverId: string;
  mode: ProxyMode;
  /** Development only: pin every tool the first time it is seen. */
  pinOnFirstUse: boolean;
  log: ProxyLog;
  clock: { now(): number };
  /** Re-list before a call once the view is older than this (default `DEFAULT_TOOLS_RELIST_MS`; 0: before every call). */
  toolsRelistMs?: number;
}

export class PinnedView {
  private view: Map<string, ToolView> | undefined;
  /** Until when the view may be used without listing again (monotonic ms). */
  private freshUntil = 0;
  /** A listing in flight, shared by the calls that need it. */
  private listing: Promise<Map<string, ToolView>> | undefined;
  /** The definitions last recorded as seen (tool name → digest): an unchanged listing writes nothing. */
  private recorded: Map<string, string> | undefined;
  /** This server's pins (tool name → pinned digest) as last read, and the pin version read before them. */
  private pins: { version: number; digests: Map<string, string | null> } | undefined;

  /** Whether the zero-pinned-tools line was logged since a tool was last listed. */
  private hintedNonePinned = false;

  constructor(
    private readonly link: Downstream,
    private readonly o: PinnedViewOptions,
  ) {}

  /** The downstream said its list changed, or a new process replaced it: the next use lists again. */
  invalidate(): void {
    this.view = undefined;
    // A new process: record what it shows even when it matches what the old one showed.
    this.recorded = undefined;
  }

  /**
   * The view a call is checked against: as last listed while younger than the re-list interval,
   * else listed again now (concurrent calls share one listing). Throws when the downstream cannot
   * list: the current definitions are unknown, so the caller refuses the call.
   */
  async current(extra?: RequestExtra): Promise<Map<string, ToolView>> {
    if (this.view && performance.now() < this.freshUntil) return this.view;
    this.listing ??= this.refresh(extra).finally(() => {
      this.listing = undefined;
    });
    return this.listing;
  }

  /**
   * The downstream's tools whose current definition is pinned (observe mode: all of them). While
   * the store cannot answer, the listing is refused with the gate's own code (`gateRefusal`).
   */
  async listTools(extra?: RequestExtra): Promise<PinnedToolDefinition[]> {
    try {
      return await this.pinnedTools(extra);
    } catch (e) {
      throw e instanceof GateError ? gateRefusal(e.code) : e;
    }
  }

  private async pinnedTools(extra?: RequestExtra): Promise<PinnedToolDefinition[]> {
    const view = await this.refresh(extra);
    const pins = await this.readPins();
    const listed: PinnedToolDefinition[] = [];
    for (const [name, t] of view) {
      const pinned = pins.get(name) ?? null;
      if (pinned === t.digest || this.o.mode === 'observe') listed.push(t.definition);
      if (pinned !== t.digest)
        this.o.log('tool_not_pinned', {
          server_id: this.o.serverId,
          tool: name,
          digest: t.digest,
          pinned_digest: pinned,
          reason: pinned === null ? 'never_pinned' : 'definition_changed',
          listed: this.o.mode === 'observe',
        });
    }
    this.hintWhenNonePinned(view.size, listed.length);
    return listed;
  }

  /**
   * One line (not one per listing) when the agent is listed none of the downstream's tools because
   * none is pinned (issue 32 item 7): a client that lists zero tools says nothing about why, so the
   * log names the review and the command that pins. Said again only after some tool was listed.
   */
  private hintWhenNonePinned(seen: number, listed: number): void {
    if (listed > 0 || seen === 0) {
      this.hintedNonePinned = false;
      return;
    }
    if (this.hintedNonePinned) return;
    this.hintedNonePinned = true;
    this.o.log(
      'tools_held_until_pinned',
      {
        server_id: this.o.serverId,
        tools_seen: seen,
        message: `none of the ${seen} tools this server shows is pinned, so the agent is listed none: review them with \`vrp gate tools list\`, then pin with \`vrp gate tools pin TOOL…\``,
      },
      'warn',
    );
  }

  /**
   * Fetch every page of the downstream's tools, digest each definition, record what was seen. With
   * downstream OAuth per user, `extra`'s principal lists with their own credential; the view is
   * one for the server (pins are by definition digest, whoever listed it).
   */
  async refresh(extra?: RequestExtra): Promise<Map<string, ToolView>> {
    const listedAt = performance.now();
    const view = new Map<string, ToolView>();
    const listed = await this.link.listAllTools(extra);
    // A downstream's own `ttlMs` (2026-07-28) can only shorten the re-list interval: past it the
    // listing is stale by the server's word; within it a silent change is still bounded by ours.
    const freshUntil = listedAt + Math.min(this.o.toolsRelistMs ?? DEFAULT_TOOLS_RELIST_MS, listed.ttlMs ?? Number.POSITIVE_INFINITY);
    for (const t of listed.tools) {
      if (isMcpToolName(t.name)) view.set(t.name, pinnedDefinition(t));
      else this.o.log('tool_name_refused', { server_id: this.o.serverId, name_digest: sha256Base64url(t.name) }, 'warn');
    }
    if (!this.changedSinceRecorded(view)) {
      this.view = view;
      this.freshUntil = freshUntil;
      return view;
    }
    const info = this.link.client?.getServerVersion();
    await this.stored(() =>
      this.o.tables.recordSeen(
        [...view].map(([tool_name, t]) => ({
          server_id: this.o.serverId,
          tool_name,
          digest: t.digest,
          definition: JSON.stringify(t.definition),
          server_info: info ? JSON.stringify({ name: info.name, version: info.version }) : null,
        })),
        this.o.clock.now(),
      ),
    );
    if (this.o.pinOnFirstUse) await this.stored(() => this.pinFirstSeen(view));
    this.recorded = new Map([...view].map(([name, t]) => [name, t.digest]));
    this.view = view;
    this.freshUntil = freshUntil;
    return view;
  }

  /** Whether the listing shows a tool or a definition the store has not been told about by this proxy. */
  private changedSinceRecorded(view: Map<string, ToolView>): boolean {
    const recorded = this.recorded;
    if (!recorded || recorded.size !== view.size) return true;
    for (const [name, t] of view) if (recorded.get(name) !== t.digest) return true;
    return false;
  }

  /**
   * Whether a person pinned exactly this definition of the tool, as the store holds the pins now:
   * every pin and unpin (from any process) bumps the server's pin version, so the pins held are
   * used only while the version read for this call is the one they were read at.
   */
  async isPinned(name: string, digest: string): Promise<boolean> {
    const version = await this.stored(() => this.o.tables.pinVersion(this.o.serverId));
    const digests = this.pins?.version === version ? this.pins.digests : await this.readPins(version);
    return digests.get(name) === digest;
  }

  /** `--pin-on-first-use` (development only): a tool never pinned is pinned as seen now; a changed definition is not. */
  private async pinFirstSeen(view: Map<string, ToolView>): Promise<void> {
    const pins = await this.readPins();
    for (const [name, t] of view) {
      if (pins.get(name) !== null) continue; // pinned (to this or another definition), or not recorded
      const r = await this.o.tables.pin(this.o.serverId, name, { by: 'pin-on-first-use', now: this.o.clock.now(), digest: t.digest });
      if (r.pinned) this.o.log('tool_pinned_on_first_use', { server_id: this.o.serverId, tool: name, digest: t.digest }, 'warn');
    }
    this.pins = undefined;
  }

  /** This server's pins as the store holds them now (tool name → pinned digest, null when seen but not pinned). */
  private readPins(versionRead?: number): Promise<Map<string, string | null>> {
    return this.stored(async () => {
      // The version first: a pin changed between the two reads leaves the pins newer than their
      // version, so the next call reads them again (never the other way round).
      const version = versionRead ?? (await this.o.tables.pinVersion(this.o.serverId));
      const digests = new Map((await this.o.tables.listPins(this.o.serverId)).map((p) => [p.tool_name, p.pinned_digest]));
      this.pins = { version, digests };
      return digests;
    });
  }

  /**
   * A read or write of the store for the view. One the store cannot answer (PostgreSQL away, a
   * lock held past its bound) fails as the gate's code for it (`asGateError`); the store's own
   * message goes to the operator's log only, never to the agent (it names the database role).
   */
  private async stored<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      if (e instanceof GateError) throw e; // already refused (and logged) by a nested read
      const refused = asGateError(e);
      this.o.log(
        'store_unavailable',
        { server_id: this.o.serverId, code: refused.code, message: e instanceof Error ? e.message : String(e) },
        'warn',
      );
      throw refused;
    }
  }
}
