/** What every surface folder (`surfaces/<name>/`) shares: how it is mounted on the node's app. */
import type { Context, Hono } from 'hono';
import type { OfferService } from '../service/index.js';

/** The offer service a request is answered by (a node has one; platform mode passes the tenant its router chose). */
export type ServiceOf = (c: Context) => OfferService;

/** A surface's one entry: its routes on the node's one app, every answer from the one offer service. */
export type SurfaceMount = (app: Hono, serviceOf: ServiceOf) => void;
