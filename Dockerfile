# syntax=docker/dockerfile:1
# Node 24 (LTS), pinned to an exact release so a rebuild runs what was tested; both stages use it.
# Move it with `engines` in package.json and the Node 24 leg of .ci/run (docs/operations.md).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Build stage: compile TypeScript with the dev dependencies, then keep only the runtime ones.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json knexfile.ts ./
COPY src ./src
COPY migrations ./migrations
COPY seeds ./seeds
COPY web ./web
RUN npm run build && npm run build:web && npm prune --omit=dev

# Runtime stage: compiled code and production dependencies, run as the unprivileged node user.
FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# `npm run token` / `npm run migrate` run the built code (scripts/build-if-stale.mjs finds no sources here).
COPY --chown=node:node scripts ./scripts
RUN mkdir -p /data && chown node:node /data
USER node
# The embedded database lives here when DATABASE_URL is not set.
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# A young generation of 8 MB a semi-space (V8's default is 16): the embedded database's process
# stays under 300 MB through a webhook backlog (BENCHMARKS.md, "Webhooks"), at no cost measured.
CMD ["node", "--max-semi-space-size=8", "dist/src/server.js"]
