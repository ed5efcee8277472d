import type { Knex } from 'knex';
import type { NextFunction, Request, Response } from 'express';
import { requireToken } from '../../src/http/auth';
import { createTokenCache } from '../../src/auth/token-cache';
import { hashSecret } from '../../src/auth/tokens.service';
import type { Actor } from '../../src/auth/roles';

/*
 * requireToken (src/http/auth.ts) with a cached token goes on within the call: the admission's turns
 * (src/http/admission.ts) only pace what a request's start runs synchronously, so a start that waited
 * a turn of the loop for its token would run the rest (the team's share, a 429 and its answer) outside
 * the budget, hundreds back to back after a flood.
 */
const actor = { teamId: '00000000-0000-4000-8000-000000000001', role: 'editor', tokenId: 't1' } as unknown as Actor;
const request = (secret: string) => ({ headers: { authorization: `Bearer ${secret}` } }) as unknown as Request;

it('calls next before returning when the token is cached, and after its lookup otherwise', async () => {
  const cache = createTokenCache(60_000);
  const cached = 'pft_cached-secret-0123456789';
  cache.set(hashSecret(cached).toString('hex'), actor);
  let lookups = 0;
  // The database is never asked for a cached token; for the other one the lookup is stubbed below.
  const db = {} as Knex;
  const middleware = requireToken(db, {
    ...cache,
    lookup: async (key, load) => {
      lookups++;
      return key === hashSecret('pft_other-secret-0123456789').toString('hex') ? actor : cache.lookup(key, load);
    },
  });

  const hit = request(cached);
  const next = jest.fn() as unknown as NextFunction & jest.Mock;
  const pending = middleware(hit, {} as Response, next);
  expect(next).toHaveBeenCalledTimes(1);
  expect(hit.actor).toBe(actor);
  await pending;
  expect(lookups).toBe(0);

  const miss = request('pft_other-secret-0123456789');
  const nextAfterLookup = jest.fn() as unknown as NextFunction & jest.Mock;
  const waited = middleware(miss, {} as Response, nextAfterLookup);
  expect(nextAfterLookup).not.toHaveBeenCalled();
  await waited;
  expect(nextAfterLookup).toHaveBeenCalledTimes(1);
  expect(miss.actor).toBe(actor);
  expect(lookups).toBe(1);
});
