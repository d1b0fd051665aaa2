/**
 * `vrp node property update`: replace the property (facts, rate plan, fees, policies) with a
 * new description file, validated first and written in one transaction. The next offer is
 * priced from it; a running node needs no restart. The host console publishes through the same
 * `publishProperty` (issue 35: one code path for the CLI and the console).
 */
import { systemClock } from '@vrpkit/core';
import { type PropertyDescription, readPropertyFile } from '../property.js';
import { assertUrlOnDomain } from './init.js';
import { type NodeStoreOptions, withNodeStore } from './store.js';

export function updateProperty(o: NodeStoreOptions & { propertyFile: string }) {
  return publishProperty(o, readPropertyFile(o.propertyFile), o.propertyFile);
}

/** Publish a property already validated (`label` names its source in errors): the URL must be on the node's domain. */
export function publishProperty(o: NodeStoreOptions, property: PropertyDescription, label: string) {
  return withNodeStore(o, async (store) => {
    const info = await store.nodeInfo();
    assertUrlOnDomain(property, info.canonical_domain, label);
    await store.putProperty(property, (o.clock ?? systemClock).now());
    return { canonical_domain: info.canonical_domain, property_id: property.property_id };
  });
}
