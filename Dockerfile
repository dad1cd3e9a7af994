# SyncLab lab image: the same setup as `make lab` (scripts/setup.sh), run as a non-root user.
#
#   docker build -t synclab .
#   docker run --rm -p 127.0.0.1:8888:8888 synclab        # Jupyter on this host's 127.0.0.1:8888, URL with token printed
#   docker run --rm -v "$PWD/reports:/reports" synclab lab report notebooks/00-tour.ipynb -o /reports
FROM golang:1.26-bookworm

ENV DEBIAN_FRONTEND=noninteractive
WORKDIR /lab

# System packages, Go tools, offline web assets and the GoNB kernel: only go.mod/go.sum and the
# script are needed, so this layer is rebuilt only when they change.
COPY go.mod go.sum ./
COPY scripts/ scripts/
RUN scripts/setup.sh && rm -rf /var/lib/apt/lists/*

COPY . .
RUN useradd --create-home --uid 1000 lab && chown -R lab:lab /lab /go
USER lab
# Second run as the user: everything is in place, so it only trusts the notebooks for this user;
# then build the CLI and warm the build cache so the first notebook cell compiles fast.
RUN scripts/setup.sh && go build -o bin/lab ./labkit/cmd/lab && go build ./...

ENV PATH=/lab/bin:/lab/.tools/bin:$PATH \
    JUPYTER_PATH=/lab/.tools/jupyter \
    LAB_HOST=0.0.0.0 \
    LAB_PORT=8888
EXPOSE 8888
CMD ["scripts/lab.sh"]
