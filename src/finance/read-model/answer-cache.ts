import { VersionedCache, createVersionedCache } from './versioned-cache';

/*
 * Breakdown answers, kept per instance and served again while the stored read finds the same answer
 * version (breakdown.sql.ts's ANSWER_VERSION: the versions of every row the answer is rendered from)
 * and the figures current. The check is in the read a breakdown makes anyway; only the stored parts
 * (a big task's 160 KB) are not read and not encoded again. Bounded by bytes (versioned-cache.ts). A row's
 * xmin (32 bits, no epoch) comes round again after about four billion transactions, or differs in
 * meaning on a database restored or failed over under a running instance: an entry is kept at most
 * an hour from when it was stored, however often it is served, so a version can never outlive what
 * it named. (Correctness never waits for that hour: the version check does.)
 */
export type AnswerCache = VersionedCache;

/**
 * Answers under `keptFromBytes` are not kept: reading and encoding a random task's 23 KB is cheap, and a
 * cache that holds a fraction of a big project's tasks mostly evicts (BENCHMARKS.md). Tests keep every
 * answer (test/support/harness.ts sets 0 before creating its app), so the whole suite runs through the cache.
 */
export const answerCacheSettings = { keptFromBytes: 32 * 1024 };

/** How long an answer is kept at most, from when it was stored. */
const KEPT_FOR_MS = 60 * 60 * 1000;

export const createAnswerCache = (maxBytes: number): AnswerCache =>
  createVersionedCache({ maxBytes, keptForMs: KEPT_FOR_MS, keptFromBytes: answerCacheSettings.keptFromBytes });
