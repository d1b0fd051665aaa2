/**
 * The policy's `elicitation_url_origins` (issue 32 item 5): where a downstream server's URL-mode
 * elicitation may send the user. Origins only (scheme, host, port), https or loopback http;
 * absent, nothing is allowed, and a policy without the field keeps its digest.
 */
import { describe, expect, it } from 'vitest';
import { loadPolicy, type PolicyDocument, PolicyError } from '../src/policy.js';

const BASE: PolicyDocument = { version: 1, policy_id: 'origins' };

describe('elicitation_url_origins', () => {
  it('allows exactly the listed origins; absent, none', () => {
    const p = loadPolicy({ ...BASE, elicitation_url_origins: ['https://forms.example.com', 'http://127.0.0.1:8080'] });
    expect(p.allowsElicitationUrl('https://forms.example.com/a?b=c')).toEqual({ allowed: true, origin: 'https://forms.example.com' });
    expect(p.allowsElicitationUrl('http://127.0.0.1:8080/x')).toMatchObject({ allowed: true });
    for (const url of ['https://forms.example.com.evil.example/', 'http://forms.example.com/', 'https://forms.example.com:444/'])
      expect(p.allowsElicitationUrl(url).allowed).toBe(false);
    expect(p.allowsElicitationUrl('javascript:alert(1)')).toEqual({ allowed: false, origin: 'null' });
    expect(p.allowsElicitationUrl('not a url')).toEqual({ allowed: false, origin: null });
    expect(loadPolicy(BASE).allowsElicitationUrl('https://forms.example.com/').allowed).toBe(false);
  });

  it('refuses what is not an https origin (or http on a loopback host)', () => {
    for (const bad of ['https://forms.example.com/', 'http://forms.example.com', 'forms.example.com', 'https://a.example/path'])
      expect(() => loadPolicy({ ...BASE, elicitation_url_origins: [bad] })).toThrow(PolicyError);
  });

  it('a policy without the field keeps its digest (no default is written into it)', () => {
    expect(loadPolicy(BASE).document).not.toHaveProperty('elicitation_url_origins');
  });
});
