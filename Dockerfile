# SyncLab lab image: the same setup as `make lab` (scripts/setup.sh), run as the non-root user lab.
#
#   docker build -t synclab .
#   docker run --rm -p 127.0.0.1:8888:8888 synclab        # Jupyter on this host's 127.0.0.1:8888, URL with token printed
#   docker run --rm -v "$PWD/reports:/reports" synclab lab report notebooks/00-tour.ipynb -o /reports
#
# Build arguments:
#   BASE            the base image (default: the official Go image of go.mod's release on Debian 12,
#                   pinned to a patch release; add @sha256:... to pin it by digest).
#                   `make test-image` builds from a local stand-in made with debootstrap.
#   EXTRA_CA_CERTS  PEM certificates to trust besides Debian's, for builds behind a TLS-intercepting
#                   proxy (the Go module proxy, Debian and the npm registry are reached through it):
#                     docker build --build-arg EXTRA_CA_CERTS="$(cat corporate-ca.pem)" -t synclab .
#   JUPYTER_NOTEBOOK_VERSION, JUPYTER_NBCONVERT_VERSION
#                   the Debian 12 package versions installed (pinned; the ones the lab is tested with).
ARG BASE=golang:1.26.8-bookworm
FROM ${BASE}

ARG EXTRA_CA_CERTS=""
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
      printf '%s\n' "$EXTRA_CA_CERTS" >/usr/local/share/ca-certificates/synclab-extra.crt && \
      update-ca-certificates >/dev/null; \
    fi

# The Debian packages scripts/setup.sh would install, at pinned versions, as root: the setup below
# runs as lab and finds them in place.
ARG JUPYTER_NOTEBOOK_VERSION=6.4.12-2.2
ARG JUPYTER_NBCONVERT_VERSION=6.5.3-3
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update -qq && \
    apt-get install -y -qq --no-install-recommends \
      "jupyter-notebook=$JUPYTER_NOTEBOOK_VERSION" "jupyter-nbconvert=$JUPYTER_NBCONVERT_VERSION" >/dev/null && \
    rm -rf /var/lib/apt/lists/*

# Everything else is built by lab itself (the Go image's GOPATH, /go, is writable by every user),
# so no layer re-owns a copy of the module cache.
RUN useradd --create-home --uid 1000 lab && install -d -o lab -g lab /lab
WORKDIR /lab
USER lab

# Go tools, offline web assets and the GoNB kernel: only go.mod/go.sum and the setup script are
# needed, so this layer is rebuilt only when they change.
COPY --chown=lab:lab go.mod go.sum ./
COPY --chown=lab:lab scripts/setup.sh scripts/
RUN scripts/setup.sh

COPY --chown=lab:lab . .
# Second run: everything is in place, so it only trusts the notebooks for lab; then build the CLI
# and warm the build cache so the first notebook cell compiles fast.
RUN scripts/setup.sh && go build -o bin/lab ./labkit/cmd/lab && go build ./...

ENV PATH=/lab/bin:/lab/.tools/bin:$PATH \
    JUPYTER_PATH=/lab/.tools/jupyter \
    LAB_HOST=0.0.0.0 \
    LAB_PORT=8888
EXPOSE 8888
# The entry point starts as root only to hand lab a mounted /reports that Docker created (root-owned,
# empty), then runs the command as lab (scripts/docker-entrypoint.sh).
USER root
ENTRYPOINT ["/lab/scripts/docker-entrypoint.sh"]
CMD ["scripts/lab.sh"]
