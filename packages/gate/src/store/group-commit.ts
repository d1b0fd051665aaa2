/**
 * Group commit of concurrent consumes (issue 37 item 2): the consumes that arrive while the
 * store is busy, or in the same turn of the event loop, go to the database together — one
 * transaction, one durable commit (one WAL fsync), on PostgreSQL one round trip — and each is
 * still decided alone (Tool-Use Binding draft, enforce() contract MUST 4: every consume is its
 * own conditional UPDATE, checked against the rows as the members before it left them; one
 * member's refusal or error never fails or grants another: store/sqlite.ts `runGroup`, a
 * savepoint per member; store/postgres-consume.ts `gate_consume_group`, a subtransaction per
 * member). On SQLite dispatch's issue-and-consume joins the same groups (any step program run
 * `grouped`, store/engine.ts `DialectOps.run`).
 *
 * Crash semantics are a single consume's: a member's promise settles only after the commit of
 * its group returned, so nothing is acknowledged before it is durable, and a group whose commit
 * fails rejects every member (none was granted).
 *
 * When a group is sent: the first consume of a turn of the event loop leads, and its group leaves
 * once the caller's synchronous run ends (a microtask), so callers that started together — a host
 * running a turn's parallel tool calls with `Promise.all` — share it, and a host loop's lone consume
 * does not wait for the event loop to turn (there GC tasks, the checkpoint worker's replies and other
 * requests' I/O would run first: bench/gate found most of enforce's slow samples paused in that
 * wait). A consume that arrives later in the same turn (the concurrent requests of a proxy, whose I/O
 * callbacks run one after another) waits for the end of the turn (`setImmediate`) and leaves with the
 * others that arrive by then; while a group is in flight (PostgreSQL; SQLite's commit blocks the
 * thread), the arrivals wait and leave together as the next group the moment it is done.
 */

/** One member's result: its value, or the error that failed it alone. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Send one group: the members in arrival order, within the smallest of their bounds; one result per member, in order. */
export type SendGroup<Req, Res> = (members: readonly Req[], timeoutMs: number | undefined) => Promise<readonly Settled<Res>[]>;

/**
 * The most members in one group. Bounded because a group holds the write lock (SQLite) or the
 * audit head's row lock (PostgreSQL) for all of them, and on PostgreSQL each member runs in a
 * subtransaction: past 64 of them a backend's subtransaction cache overflows, which slows every
 * other session's snapshots.
 */
export const MAX_GROUP = 32;

interface Waiting<Req, Res> {
  req: Req;
  timeoutMs: number | undefined;
  resolve: (value: Res) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<Req, Res> {
  private waiting: Waiting<Req, Res>[] = [];
  /** A group is scheduled or in flight: a new arrival joins the next one. */
  private busy = false;
  /** A group was led in this turn of the event loop: the next one waits for the end of the turn. */
  private ledThisTurn = false;

  constructor(
    private readonly send: SendGroup<Req, Res>,
    /** Told the size of every group sent (operators' metrics; tests see the grouping through it). */
    private readonly observe?: (members: number) => void,
  ) {}

  submit(req: Req, timeoutMs: number | undefined): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      this.waiting.push({ req, timeoutMs, resolve, reject });
      if (this.busy) return;
      this.busy = true;
      if (this.ledThisTurn) return void setImmediate(() => this.next());
      this.ledThisTurn = true;
      setImmediate(() => {
        this.ledThisTurn = false;
      });
      queueMicrotask(() => this.next());
    });
  }

  /** Send the waiting members (up to MAX_GROUP), settle each, then the next group if more came. */
  private next(): void {
    const group = this.waiting.length <= MAX_GROUP ? this.waiting : this.waiting.slice(0, MAX_GROUP);
    this.waiting = this.waiting.length <= MAX_GROUP ? [] : this.waiting.slice(MAX_GROUP);
    const reqs = new Array<Req>(group.length);
    let timeoutMs: number | undefined;
    for (let i = 0; i < group.length; i++) {
      const m = group[i]!;
      reqs[i] = m.req;
      if (m.timeoutMs !== undefined && (timeoutMs === undefined || m.timeoutMs < timeoutMs)) timeoutMs = m.timeoutMs;
    }
    this.observe?.(group.length);
    let sent: Promise<readonly Settled<Res>[]>;
    try {
      sent = this.send(reqs, timeoutMs);
    } catch (e) {
      sent = Promise.reject(e);
    }
    sent.then(
      (results) => {
        for (let i = 0; i < group.length; i++) {
          const r = results[i];
          if (r === undefined) group[i]!.reject(new Error('group commit: no result for a member'));
          else if (r.ok) group[i]!.resolve(r.value);
          else group[i]!.reject(r.error);
        }
        this.done();
      },
      (e: unknown) => {
        // The group's commit failed: no member was committed, every member fails (fail closed).
        for (const m of group) m.reject(e);
        this.done();
      },
    );
  }

  private done(): void {
    if (this.waiting.length > 0) this.next();
    else this.busy = false;
  }
}
