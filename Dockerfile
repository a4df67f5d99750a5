# wallet-conformance as a container: the package built from this repository and installed as a user
# would install it (the packed tarball), with `wallet-conformance` as the entry point.
#   docker build -t wallet-conformance .
#   docker run --rm -v "$PWD:/work" -e WALLET_API_KEY wallet-conformance verify service --base-url https://wallet.example/ --public-key keys/merchant-public.pem
# Build argument PEERS adds optional peer packages, e.g. --build-arg PEERS="@pact-foundation/pact@^16.5.0"
# for `pact verify`, or "@redocly/openapi-core@^2.64.0" for `spec lint`.

FROM node:20-slim AS build
WORKDIR /src
# better-sqlite3 compiles itself when no prebuilt binary can be downloaded.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY spec ./spec
COPY suites ./suites
COPY assets ./assets
COPY schemas ./schemas
# The manual and the examples it links ship in the package too (package.json "files").
COPY README.md LICENSE ./
COPY docs ./docs
COPY examples/decrypt ./examples/decrypt
COPY examples/python-receiver ./examples/python-receiver
COPY examples/go-receiver ./examples/go-receiver
RUN npm run build && npm pack --ignore-scripts && mv wallet-conformance-*.tgz /tmp/wallet-conformance.tgz

FROM node:20-slim
ARG PEERS=""
COPY --from=build /tmp/wallet-conformance.tgz /tmp/wallet-conformance.tgz
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
 && npm install --global --no-audit --no-fund /tmp/wallet-conformance.tgz $PEERS \
 && apt-get purge -y python3 make g++ && apt-get autoremove -y && rm -rf /var/lib/apt/lists/* /tmp/wallet-conformance.tgz /root/.npm
# Reports, keys and suites live in the mounted folder; run as the image's unprivileged user.
WORKDIR /work
USER node
ENTRYPOINT ["wallet-conformance"]
CMD ["--help"]
