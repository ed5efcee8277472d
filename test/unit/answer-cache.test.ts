import { answerCacheSettings, createAnswerCache } from '../../src/finance/read-model/answer-cache';

/*
 * The breakdown answers an instance keeps (src/finance/read-model/answer-cache.ts): those of
 * keptFromBytes and more, within its byte budget, the least recently used going first.
 */
const KB = 1024;
const answer = (kb: number) => Buffer.alloc(kb * KB, 'x');

afterEach(() => {
  answerCacheSettings.keptFromBytes = 32 * KB;
});

it('keeps answers of 32 KB and more, under their version, and not smaller ones', () => {
  const cache = createAnswerCache(1024 * KB);
  cache.keep('small', 'v1', answer(31));
  cache.keep('big', 'v1', answer(32));
  expect(cache.held('small')).toBeUndefined();
  expect(cache.held('big')?.version).toBe('v1');
  cache.keep('big', 'v2', answer(40));
  expect(cache.held('big')).toMatchObject({ version: 'v2', body: answer(40) });
  // Its answer shrank below 32 KB: the older, bigger one is not held on to either.
  cache.keep('big', 'v3', answer(31));
  expect(cache.held('big')).toBeUndefined();
});

it('drops the least recently used answers past its budget, and keeps none with no budget', () => {
  answerCacheSettings.keptFromBytes = 0;
  const cache = createAnswerCache(100 * KB);
  cache.keep('a', 'v', answer(21));
  cache.keep('b', 'v', answer(21));
  cache.held('a');
  cache.keep('c', 'v', answer(21));
  cache.keep('d', 'v', answer(21));
  cache.keep('e', 'v', answer(21));
  expect(['a', 'b', 'c', 'd', 'e'].filter((key) => cache.held(key))).toEqual(['a', 'c', 'd', 'e']);
  const none = createAnswerCache(0);
  none.keep('a', 'v', answer(21));
  expect(none.held('a')).toBeUndefined();
});
