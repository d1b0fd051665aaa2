/**
 * The offer request parser's accepted parses, remembered by a key naming the request exactly (the
 * offer endpoint's raw query string, a tool call's arguments as JSON text), so a stay asked again
 * skips decoding and parsing. The parse depends on the request alone (today and the horizon are
 * the service's to judge); refusals are not kept, so a client cannot fill a memo with them.
 */
import { type OfferRequestResult, type ParsedOfferRequest, parseOfferRequest } from '@vrpkit/protocol';
import type { OfferOutcome, OfferService } from '../service/index.js';

/** Most parses one memo keeps (it is emptied when full): one memo per surface for the process, every node service and platform tenant in it. */
const OFFER_PARSES_MAX = 4096;

/** A memo: `parse()`'s result for the request `key` names, remembered when it accepted the request. */
export function offerParses(): (key: string, parse: () => OfferRequestResult) => OfferRequestResult {
  const accepted = new Map<string, { ok: true; request: ParsedOfferRequest }>();
  return (key, parse) => {
    const known = accepted.get(key);
    if (known) return known;
    const parsed = parse();
    if (parsed.ok) {
      if (accepted.size >= OFFER_PARSES_MAX) accepted.clear();
      accepted.set(key, parsed);
    }
    return parsed;
  };
}

/**
 * `offerFor` (service/index.ts) for a tool call's arguments (parsed JSON), through a memo of its
 * own keyed by their JSON text (`argsText`, computed when not given): a surface's direct path
 * (MCP, A2A) makes one. Parsed JSON holds no undefined, function or toJSON member, so equal text
 * is equal arguments.
 */
export function argumentsOfferFor(): (
  service: OfferService,
  args: Record<string, unknown>,
  argsText?: string,
) => OfferOutcome | Promise<OfferOutcome> {
  const parsed = offerParses();
  return (service, args, argsText = JSON.stringify(args)) => {
    const p = parsed(argsText, () => parseOfferRequest(args));
    return p.ok ? service.offer(p.request) : p;
  };
}
