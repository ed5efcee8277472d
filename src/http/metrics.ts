import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Knex } from 'knex';
import client from 'prom-client';
import { hashSecret } from '../auth/tokens.service';
import { bearerSecret } from './auth';
import { AppError } from './errors';
import { registerWebhookMetrics } from '../webhooks/webhook-metrics';

/*
 * Prometheus metrics: requests per route template and status with latency histograms, the database
 * pool's use, and the process's own metrics. One registry per app, so tests can build several apps.
 */
export type Metrics = { registry: client.Registry; observe: (req: Request, res: Response, next: NextFunction) => void };

type Pool = { numUsed(): number; numFree(): number; numPendingAcquires(): number; max: number };

export function createMetrics(db: Knex): Metrics {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const requests = new client.Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const pool = () => (db.client as { pool?: Pool }).pool;
  new client.Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (used, free, pending acquires) and the pool maximum',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const current = pool();
      this.set({ state: 'used' }, current?.numUsed() ?? 0);
      this.set({ state: 'free' }, current?.numFree() ?? 0);
      this.set({ state: 'pending' }, current?.numPendingAcquires() ?? 0);
      this.set({ state: 'max' }, current?.max ?? 0);
    },
  });

  registerWebhookMetrics(registry, db);

  const observe = (req: Request, res: Response, next: NextFunction) => {
    const end = duration.startTimer();
    res.once('finish', () => {
      // The route template (/api/tasks/:id), never the raw path: ids would make unbounded label sets.
      // baseUrl is already reset when an error left the router, so the mount point comes from the URL.
      const mount = req.originalUrl.startsWith('/api/') ? '/api' : '';
      const route = req.route ? `${mount}${String(req.route.path)}` : 'unmatched';
      const labels = { method: req.method, route, status: String(res.statusCode) };
      requests.inc(labels);
      end(labels);
    });
    next();
  };
  return { registry, observe };
}

/**
 * GET /metrics behind `Authorization: Bearer <METRICS_TOKEN>` when one is set (open otherwise). The
 * secrets' hashes are compared in constant time; a missing or wrong one is a 401, telling nothing more.
 */
export function requireMetricsToken(token: string | undefined) {
  const expected = token === undefined ? undefined : hashSecret(token);
  return (req: Request, res: Response, next: NextFunction) => {
    if (expected === undefined) return next();
    const given = bearerSecret(req);
    if (given !== undefined && crypto.timingSafeEqual(hashSecret(given), expected)) return next();
    res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
    throw new AppError(401, 'UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
  };
}
