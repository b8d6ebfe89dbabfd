# syntax=docker/dockerfile:1
#
# evald container image.
#
#   docker build -t evald:0.1.0 .
#   docker build --build-arg EVALD_EXTRAS=kafka,openai -t evald:0.1.0-full .   # with optional extras
#
#   docker run --rm -p 4317:4317 -p 4318:4318 -p 9464:9464 evald:0.1.0                 # embedded default config
#   docker run --rm -p 4317:4317 -p 4318:4318 -p 9464:9464 \
#     -v "$PWD/deploy/evald-config.yaml:/etc/evald/config.yaml:ro" \
#     evald:0.1.0 run --config /etc/evald/config.yaml                                  # a mounted config
#
#   docker run --rm -v "$PWD/my.yaml:/etc/evald/config.yaml:ro" evald:0.1.0 validate --config /etc/evald/config.yaml
#
# Multi-arch: nothing here is architecture-specific (python:3.11-slim, Debian's tini and gcc exist for amd64 and
# arm64), so `docker buildx build --platform linux/amd64,linux/arm64 -t REGISTRY/evald:0.1.0 --push .` works; under
# emulation the arm64 mypyc compile is slow. Released images (ghcr.io/<owner>/evald) are built per platform on native
# runners and joined into one tag by .github/workflows/release.yml, whose labels override the version LABEL below.
#
# Ports: 4317 OTLP gRPC, 4318 OTLP/HTTP, 9464 Prometheus /metrics + /healthz + /readyz.
# The HEALTHCHECK probes 127.0.0.1:9464/healthz: a mounted config that moves the prometheus exporter (or
# telemetry.endpoint) off port 9464 should override it (docker run --health-cmd ... / compose healthcheck).

ARG PYTHON_IMAGE=python:3.11-slim

# --- builder: the evald wheel plus wheels for every runtime dependency -------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ARG EVALD_EXTRAS=""
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

WORKDIR /src
# A C compiler for the mypyc-compiled hot modules (setup.py, evald/native.py); the runtime stage needs none.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
# Only what the wheel is built from (see .dockerignore): pyproject.toml, setup.py (the mypyc build), README.md (the
# package readme), evald/.
COPY pyproject.toml setup.py README.md ./
COPY evald ./evald
RUN pip wheel --wheel-dir /wheels ".${EVALD_EXTRAS:+[${EVALD_EXTRAS}]}"

# --- runtime: python:3.11-slim with tini, the installed wheels and nothing else ----------------------------
FROM ${PYTHON_IMAGE} AS runtime

ARG EVALD_EXTRAS=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

LABEL org.opencontainers.image.title="evald" \
      org.opencontainers.image.description="OpenTelemetry collector-side evaluation daemon for LLM and agent traces" \
      org.opencontainers.image.version="0.1.0" \
      org.opencontainers.image.licenses="Apache-2.0"

# tini as PID 1: forwards SIGTERM/SIGINT to evald (graceful drain on `docker stop` / pod termination) and
# reaps zombies. Debian's package installs /usr/bin/tini (the base image tag fixes the Debian release).
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/*

# Install from the builder's wheels only (no index): the wheels are bind-mounted, so they never become a layer.
# hadolint ignore=DL3013
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links=/wheels "evald${EVALD_EXTRAS:+[${EVALD_EXTRAS}]}" \
    && evald version

# Non-root user with a fixed numeric uid/gid (10001) so Kubernetes' runAsNonRoot can verify it.
RUN groupadd --system --gid 10001 evald \
    && useradd --system --no-log-init --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin evald \
    && mkdir -p /etc/evald

# Mount a config at /etc/evald/config.yaml and run `evald run --config /etc/evald/config.yaml`;
# without --config evald uses its embedded default (same ports as below).
USER 10001:10001

EXPOSE 4317 4318 9464

HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:9464/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["/usr/bin/tini", "--", "evald"]
CMD ["run"]
