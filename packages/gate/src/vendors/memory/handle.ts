/**
 * Memory writes that are not tool calls (Tool-Use Binding draft, pilot: "Memory writes go through
 * enforce() as MEMORY_WRITE"; "A host that writes extracted facts into a memory store MUST treat that
 * write as MEMORY_WRITE. Otherwise an injected turn stores a join that later turns treat as user
 * provenance"). The provenance of the turn the fact came from is required, so a fact extracted from
 * retrieved content meets the provenance rules like any other consequential act.
 */
import type { InstructionProvenance } from '../../act.js';
import type { MapContext } from '../../host/dispatch-mapped.js';
import { dispatchHostCall, resultOrThrow } from '../../host/host-call.js';

/** A memory store: anything with `write(key, value)` (an agent's long-term memory, a vector store's upsert …). */
export interface MemoryStoreLike<V, R> {
  write(key: string, value: V): R | Promise<R>;
}

export interface MemoryWrite<V> {
  /** The memory store's identity: destination of the act (`memory://user-profile`). */
  memory: string;
  key: string;
  value: V;
  /** Where the fact came from: the user's turn, or retrieved content / a tool's output. */
  provenance: InstructionProvenance;
  /** The caller's id for this write (default: a new one per call); the same id is the same act. */
  id?: string;
}

/**
 * Write one entry to a memory store through the gate: a MEMORY_WRITE act over `{ key, value }`
 * (tool `memory_write`, PERSISTENT_STATE_CHANGE under the default classes). The store is written
 * only after enforce allowed it, with the frozen value that was digested; a deny rejects with a
 * `GateError` carrying the EF code and the store is untouched. `write.provenance` is the act's
 * provenance even when the context has a `provenanceOf`.
 */
export async function gateMemoryWrite<V, R>(context: MapContext, store: MemoryStoreLike<V, R>, write: MemoryWrite<V>): Promise<R> {
  // The write's declared provenance is the one the act carries: the context's per-call
  // `provenanceOf` does not replace it (issue 36 defect 17: a host's guess of `user` must not
  // launder a fact the caller declared as retrieved).
  const { provenanceOf: _, ...rest } = context;
  const r = await dispatchHostCall(
    { ...rest, instruction_provenance: write.provenance },
    {
      source: 'memory',
      id: write.id ?? crypto.randomUUID(),
      name: 'memory_write',
      args: { memory: write.memory, key: write.key, value: write.value },
      act_type: 'MEMORY_WRITE',
      tool_protocol: 'LOCAL_FUNCTION',
      destination: { destination_id: write.memory },
    },
    async (live) => store.write(live.key, live.value),
  );
  return resultOrThrow(r);
}
