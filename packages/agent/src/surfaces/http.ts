/**
 * The plain Core VRP v0.1 §4 path, as the baseline next to the tool surfaces: the offer endpoint the
 * target domain's discovery document names, called with the three query parameters.
 */
import { fetchDiscovery } from '../discovery.js';
import { errorOf } from './shared.js';
import type { OfferArgs, SurfaceContext, SurfaceFetch } from './types.js';

export async function fetchViaHttp(target: string, args: OfferArgs, ctx: SurfaceContext): Promise<SurfaceFetch> {
  const discovery = await fetchDiscovery(target, { fetch: ctx.fetch });
  const base = { tools: [], tool_name: null };
  if (!discovery.ok) {
    return {
      ...base,
      surface_url: discovery.url,
      served_from: [],
      reached: false,
      envelope: null,
      error: { code: discovery.code, message: discovery.message },
    };
  }
  const url = new URL(discovery.discovery.verified_stay_offer_endpoint);
  url.searchParams.set('check_in', args.check_in);
  url.searchParams.set('check_out', args.check_out);
  url.searchParams.set('guests', String(args.guests));
  const at = { ...base, surface_url: url.href, served_from: [url.hostname] };
  let res: Response;
  let text: string;
  try {
    res = await ctx.fetch(url.href, { headers: { accept: 'application/json' } });
    text = await res.text();
  } catch (e) {
    return { ...at, reached: false, envelope: null, error: errorOf(e, 'offer_unreachable') };
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {
      ...at,
      reached: true,
      envelope: null,
      error: { code: 'offer_not_json', message: `the offer endpoint answered HTTP ${res.status} without JSON` },
    };
  }
  if (res.status !== 200) {
    const e = (body as { error?: { code?: unknown; message?: unknown } })?.error;
    return {
      ...at,
      reached: true,
      envelope: null,
      error: {
        code: 'offer_http_error',
        message: `HTTP ${res.status}${e ? `: ${String(e.code)}: ${String(e.message)}` : ''}`.slice(0, 500),
      },
    };
  }
  return { ...at, reached: true, envelope: body, error: null };
}
