# zstore container: build with the project's own tools/, run zstored as a
# non-root user on a volume.
#   docker build -t zstore .
#   docker run -p 5556-5558:5556-5558 -v zstore-data:/var/lib/zstore zstore

FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN bash -c 'source tools/setup.sh && zstore_install_packages "${ZSTORE_PACKAGES[@]}" && zstore_build' \
 && strip build/bin/zstored build/bin/zstore-cli

FROM debian:bookworm-slim AS runtime
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      libzmq5 librocksdb7.8 libboost-program-options1.74.0 libuuid1 libspdlog1.10 libfmt9 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --home-dir /var/lib/zstore --shell /usr/sbin/nologin zstore \
 && mkdir -p /var/lib/zstore && chown zstore:zstore /var/lib/zstore
COPY --from=build /src/build/bin/zstored /src/build/bin/zstore-cli /usr/local/bin/
USER zstore
VOLUME /var/lib/zstore
EXPOSE 5556 5557 5558
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/zstored", "--bind", "0.0.0.0", "--data-dir", "/var/lib/zstore"]
