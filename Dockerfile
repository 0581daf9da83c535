# zstore container: build with the project's own tools/, run zstored as a
# non-root user on a volume. See docs/operations.md.
#   docker build -t zstore .
#   docker run -p 5556-5558:5556-5558 -p 8080:8080 \
#              -v zstore-data:/var/lib/zstore -v zstore-keys:/etc/zstore zstore
# Secure by default: CURVE and an HTTP token, keys in /etc/zstore
# (tools/docker-entrypoint); `docker run zstore --insecure` runs plain.
# tools/docker-check verifies this file against a local build without Docker.

FROM debian:trixie AS build
WORKDIR /src
COPY . .
# Only what the runtime stage copies is built (not the tests). The ccache
# cache mount keeps compiler output between builds (BuildKit, podman, buildah).
RUN --mount=type=cache,target=/root/.cache/ccache \
    bash -c 'source tools/setup.sh && zstore_install_packages "${ZSTORE_PACKAGES[@]}" \
             && zstore_build --target zstored --target zstore-cli' \
 && strip build/bin/zstored build/bin/zstore-cli

FROM debian:trixie-slim AS runtime
# The shared libraries zstored and zstore-cli link, named for this release
# by tools/setup.sh (ZSTORE_RUNTIME_PACKAGES, the list tools/docker-check checks).
COPY tools/setup.sh /tmp/zstore-setup.sh
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN source /tmp/zstore-setup.sh \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${ZSTORE_RUNTIME_PACKAGES[@]}" \
 && rm -rf /var/lib/apt/lists/* /tmp/zstore-setup.sh \
 && useradd --system --home-dir /var/lib/zstore --shell /usr/sbin/nologin zstore \
 && mkdir -p /var/lib/zstore /etc/zstore /backups \
 && chown zstore:zstore /var/lib/zstore /etc/zstore /backups && chmod 0700 /etc/zstore
COPY --from=build /src/build/bin/zstored /src/build/bin/zstore-cli /usr/local/bin/
COPY tools/docker-entrypoint /usr/local/bin/zstore-entrypoint
USER zstore
VOLUME ["/var/lib/zstore", "/etc/zstore"]
# CHP 5556-5558, Dafka tower 5580-5581, Dafka store 5582, HTTP (health, metrics, admin) 8080.
EXPOSE 5556 5557 5558 5580 5581 5582 8080
STOPSIGNAL SIGTERM
# The settings the image gives zstored, as ZSTORE_<FLAG> variables so that
# `-e ZSTORE_HTTP_PORT=9090` moves the HTTP port and the HEALTHCHECK with it
# (flags after the image name win over these, see README.md).
ENV ZSTORE_BIND=0.0.0.0 ZSTORE_DATA_DIR=/var/lib/zstore ZSTORE_HTTP_PORT=8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=10s --retries=3 \
  CMD /usr/local/bin/zstore-cli admin --server "http://127.0.0.1:${ZSTORE_HTTP_PORT}" --timeout-ms 4000 health
# Every flag can be added after the image name (docker run zstore --ha primary ...)
# or set as ZSTORE_<FLAG> in the environment. The entry point makes the
# server's keys and HTTP token on first start and runs
# zstored --bind 0.0.0.0 --data-dir /var/lib/zstore --http-port 8080 with
# CURVE (--curve-cert, --curve-allow /etc/zstore/allow), --http-token-file
# and --backup-dir /backups; it logs the server's public key.
ENTRYPOINT ["/usr/local/bin/zstore-entrypoint"]
