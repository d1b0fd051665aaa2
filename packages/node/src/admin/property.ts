/**
 * `vrp node property update`: replace the property (facts, rate plan, fees, policies) with a
 * new description file, validated first and written in one transaction. The next offer is
 * priced from it; a running node needs no restart.
 */
import { systemClock } from '@vrpkit/core';
import { readPropertyFile } from '../property.js';
import { assertUrlOnDomain } from './init.js';
import { type NodeStoreOptions, withNodeStore } from './store.js';

export function updateProperty(o: NodeStoreOptions & { propertyFile: string }) {
  const property = readPropertyFile(o.propertyFile);
  return withNodeStore(o, async (store) => {
    const info = await store.nodeInfo();
    assertUrlOnDomain(property, info.canonical_domain, o.propertyFile);
    await store.putProperty(property, (o.clock ?? systemClock).now());
    return { canonical_domain: info.canonical_domain, property_id: property.property_id };
  });
}
