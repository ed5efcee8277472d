# syntax=docker/dockerfile:1
# Build stage: compile TypeScript with the dev dependencies, then keep only the runtime ones.
FROM node:20-bookworm-slim AS build
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
FROM node:20-bookworm-slim
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
CMD ["node", "dist/src/server.js"]
