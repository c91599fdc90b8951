# syntax=docker/dockerfile:1
# One image for every runhook process (api, worker, cli, the example app); the command picks which.

# --- build: all dependencies, the prebuilt workflow bundle and the dashboard's static files ---
FROM node:20.20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# Workers load this bundle instead of running webpack at every start (WORKFLOW_BUNDLE_PATH).
RUN npm run build
# Only runtime dependencies go on (tsx is one: the services run the TypeScript sources directly).
RUN npm prune --omit=dev

# --- runtime: slim, non-root ---
FROM node:20.20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
WORKDIR /app
# ca-certificates: webhooks and apps over https; tini: signals reach node, zombies are reaped.
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 8080 9464
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "api/server.ts"]
