# syntax=docker/dockerfile:1
# The embedded SpacetimeDB 2.x engine with the graph module, as one image.
#   docker build -t stdb-graph .
#   docker run -p 3000:3000 -v stdb-graph-data:/data stdb-graph
#   docker stop -t 120 <container>   # a large graph's snapshot at stop takes seconds (10.7 s for
#                                     # the LJ-sized one); killed before it ends, the next start
#                                     # replays the commit log instead (slower, nothing lost)
# The build runs the same scripts/setup that CI exercises.

FROM debian:bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl fonts-dejavu-core gcc g++ libc6-dev make perl pkg-config \
 && rm -rf /var/lib/apt/lists/*
ENV RUSTUP_HOME=/opt/rustup CARGO_HOME=/opt/cargo PATH=/opt/cargo/bin:$PATH
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain none
WORKDIR /src
COPY . .
ENV CARGO_TARGET_DIR=/src/target
RUN scripts/setup \
 && mkdir -p /out \
 && cp target/release/graph-host target/release/graph /out/ \
 && cp target/wasm32-unknown-unknown/release/graph_module.wasm /out/

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl libstdc++6 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /home/graph graph \
 && mkdir -p /data && chown graph /data
COPY --from=build /out/graph-host /out/graph /usr/local/bin/
COPY --from=build /out/graph_module.wasm /opt/stdb-graph/graph_module.wasm
COPY docker/entrypoint.sh /usr/local/bin/entrypoint.sh
USER graph
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s CMD curl -fsS http://127.0.0.1:3000/v1/ping || exit 1
ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
