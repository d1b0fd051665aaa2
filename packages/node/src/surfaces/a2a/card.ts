/**
 * The A2A agent card (Node Tool Binding v0.1 §3, §6): exactly one skill, `get_verified_stay_offer`
 * (the skill `id` is the bound field), every interface URL on the canonical origin, in the A2A 1.0
 * shape and the 0.3 shape the SDK's legacy card router emits.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { A2A_LEGACY_PROTOCOL_VERSION } from '@a2a-js/sdk/compat/v0_3';
import { A2A_JSONRPC_PATH } from '@vrpkit/protocol';
import type { OfferService } from '../../service/index.js';
import { OFFER_TOOL_NAME, OFFER_TOOL_TITLE, offerToolDescription } from '../tool.js';

/** The A2A 1.0 agent card: one skill, interfaces on the canonical origin. */
export function buildAgentCard(service: OfferService): AgentCard {
  const property = service.property() as { name?: unknown };
  const name = typeof property.name === 'string' && property.name ? property.name : service.canonicalDomain;
  const url = `${service.origin}${A2A_JSONRPC_PATH}`;
  return {
    name,
    description: `VRP node of ${service.canonicalDomain}: returns its signed verified stay offer.`,
    version: '0.1.0',
    supportedInterfaces: [
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
      // The SDK's legacyCompat serves 0.3 `message/send` only to a card that lists a 0.3 interface.
      { url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_LEGACY_PROTOCOL_VERSION },
    ],
    provider: { organization: name, url: service.origin },
    capabilities: { streaming: false, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [
      {
        id: OFFER_TOOL_NAME,
        name: OFFER_TOOL_TITLE,
        description: offerToolDescription(service),
        tags: ['vacation-rental', 'verified-stay-offer', 'vrp'],
        examples: ['{"check_in":"YYYY-MM-DD","check_out":"YYYY-MM-DD","guests":2}'],
        inputModes: ['application/json'],
        outputModes: ['application/json'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

/**
 * The 0.3 shape of the same card, as the SDK's legacy card router emits it
 * (`toCompatAgentCard(card, { embedV1Interfaces: true })`, not exported by the SDK): served
 * to a client that sends no `A2A-Version` or `0.3`.
 */
export function toLegacyAgentCard(card: AgentCard): Record<string, unknown> {
  const legacy = card.supportedInterfaces.find((i) => i.protocolVersion === A2A_LEGACY_PROTOCOL_VERSION);
  if (!legacy) throw new Error('the agent card lists no 0.3 interface');
  return {
    name: card.name,
    description: card.description,
    version: card.version,
    url: legacy.url,
    preferredTransport: legacy.protocolBinding,
    protocolVersion: A2A_LEGACY_PROTOCOL_VERSION,
    capabilities: { streaming: card.capabilities?.streaming, pushNotifications: card.capabilities?.pushNotifications },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map((s) => ({
      id: s.id,
      name: s.name,
      description: s.description,
      tags: s.tags,
      examples: s.examples,
      inputModes: s.inputModes,
      outputModes: s.outputModes,
    })),
    provider: card.provider ? { url: card.provider.url, organization: card.provider.organization } : undefined,
    supportedInterfaces: structuredClone(card.supportedInterfaces),
  };
}
