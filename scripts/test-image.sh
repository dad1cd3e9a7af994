#!/usr/bin/env bash
# Proves the Dockerfile without a Docker engine (make test-image, part of make test):
#
#   1. a stand-in for the official golang base image: a `debootstrap --variant=minbase` Debian root
#      with the packages that image ships and the Go toolchain this machine runs (go.mod's release),
#      cached between runs;
#   2. the Dockerfile built unchanged by buildah (chroot isolation, overlay or else vfs storage), with the CA
#      certificates of $SSL_CERT_FILE that Debian does not ship passed as the EXTRA_CA_CERTS build
#      argument (a TLS-intercepting proxy);
#   3. the image run as `docker run` would (its entry point, command and user): `lab report` of a
#      notebook into a mounted folder created by root, the HTML checked offline in headless
#      Chromium on this machine (labkit/nbexport's check);
#   4. Jupyter started by the image's default command on a loopback port: it answers with the
#      printed token and refuses without it.
#
# Needs root (debootstrap, buildah's chroot isolation); installs buildah and debootstrap from Debian
# when missing. Caches (outside the repository): $SYNCLAB_IMAGE_CACHE, default /var/cache/synclab
# (the debootstrap root as a tarball, buildah's storage with the base and the build's layers).
# Without root it is skipped with a warning, except on CI (CI=true), where that is a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${SYNCLAB_IMAGE_CACHE:-/var/cache/synclab}"
SUITE=bookworm
MIRROR="${SYNCLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
# What golang:1.26-bookworm has that the lab's setup relies on.
BASE_PACKAGES=ca-certificates,curl,git,gcc,libc6-dev,make
IMAGE=localhost/synclab:test
REPORT_NOTEBOOK=notebooks/00-tour.ipynb
t0=$SECONDS

log() { printf 'test-image: %s\n' "$*"; }
die() {
	printf 'test-image: FAIL: %s\n' "$*" >&2
	exit 1
}

if [[ "$(id -u)" != 0 ]]; then
	[[ "${CI:-}" == true ]] && die "needs root (debootstrap, buildah --isolation chroot)"
	log "WARNING: skipped: needs root (debootstrap, buildah --isolation chroot)"
	exit 0
fi

missing=()
command -v buildah >/dev/null || missing+=(buildah)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if ((${#missing[@]})); then
	log "installing ${missing[*]} from Debian"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A private buildah storage under the cache, so the test neither sees nor touches other images.
# overlay where the kernel mounts it (vfs copies the whole root file system at every build step:
# minutes and gigabytes), else vfs.
mkdir -p "$CACHE"
driver=vfs
probe="$(mktemp -d "$CACHE/probe.XXXXXX")"
mkdir "$probe/l" "$probe/u" "$probe/w" "$probe/m"
if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" "$probe/m" 2>/dev/null; then
	umount "$probe/m"
	driver=overlay
fi
rm -rf "$probe"
bh_opts=(--root "$CACHE/storage-$driver" --runroot "$CACHE/run-$driver" --storage-driver "$driver")
bh() { buildah "${bh_opts[@]}" "$@"; }
export BUILDAH_ISOLATION=chroot

work="$(mktemp -d)"
ctrs=()
jupyter_pid=
server_pid=
cleanup() {
	local rc=$?
	((rc == 0)) || printf 'test-image: FAIL (exit status %d)\n' "$rc" >&2
	if [[ -n "$jupyter_pid" ]]; then
		kill -- "-$jupyter_pid" 2>/dev/null || true
		wait "$jupyter_pid" 2>/dev/null || true
	fi
	[[ -z "$server_pid" ]] || kill "$server_pid" 2>/dev/null || true
	local c
	for c in "${ctrs[@]}"; do bh rm "$c" >/dev/null 2>&1 || true; done
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------
# 1. The stand-in base: Debian minbase + the packages above + Go, tagged by what went into it.
go_version="$(go env GOVERSION)"
go_root="$(go env GOROOT)"
want_minor="$(sed -nE 's/^go 1\.([0-9]+).*/\1/p' "$ROOT/go.mod")"
have_minor="$(sed -nE 's/^go1\.([0-9]+).*/\1/p' <<<"$go_version")"
[[ "$want_minor" == "$have_minor" ]] || die "go.mod wants Go 1.$want_minor, this machine runs $go_version"
# Bump v1 when the recipe below changes.
recipe="$(printf '%s\n' v1 "$SUITE" "$MIRROR" "$BASE_PACKAGES" "$go_version")"
base_key="$(sha256sum <<<"$recipe" | cut -c1-12)"
base="localhost/synclab-base:$SUITE-$go_version-$base_key"
rootfs_tar="$CACHE/rootfs-$SUITE-$base_key.tar"

if ! bh inspect --type image "$base" >/dev/null 2>&1; then
	if [[ ! -s "$rootfs_tar" ]]; then
		log "debootstrap $SUITE ($BASE_PACKAGES) (first time: ~1-2 min)"
		rfs="$work/rootfs"
		debootstrap --variant=minbase --include="$BASE_PACKAGES" "$SUITE" "$rfs" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
			die "debootstrap failed: $(tail -5 "$work/debootstrap.log")"
		# The official image's apt sources: the release, its updates and security.
		rm -f "$rfs/etc/apt/sources.list"
		cat >"$rfs/etc/apt/sources.list.d/debian.sources" <<-SRC
			Types: deb
			URIs: ${MIRROR}
			Suites: $SUITE $SUITE-updates
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

			Types: deb
			URIs: ${MIRROR%/debian}/debian-security
			Suites: $SUITE-security
			Components: main
			Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
		SRC
		rm -rf "$rfs"/var/cache/apt/archives/*.deb "$rfs"/var/lib/apt/lists/*
		# As in the golang image: Go in /usr/local/go, a GOPATH that every user may write.
		cp -a "$go_root" "$rfs/usr/local/go"
		mkdir -p "$rfs/go/src" "$rfs/go/bin"
		chmod -R 1777 "$rfs/go"
		tar -C "$rfs" -cf "$rootfs_tar.tmp" . && mv "$rootfs_tar.tmp" "$rootfs_tar"
		rm -rf "$rfs"
	fi
	log "committing the base $base"
	mkdir -p "$work/base"
	ln "$rootfs_tar" "$work/base/rootfs.tar" 2>/dev/null || cp "$rootfs_tar" "$work/base/rootfs.tar"
	cat >"$work/base/Containerfile" <<-EOF
		FROM scratch
		ADD rootfs.tar /
		ENV GOLANG_VERSION=${go_version#go} GOTOOLCHAIN=local GOPATH=/go \
		    PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		WORKDIR /go
		CMD ["bash"]
	EOF
	bh bud --quiet -t "$base" "$work/base" >/dev/null
	# Older bases (another Go release or recipe) are not needed any more.
	for old in $(bh images --format '{{.Name}}:{{.Tag}}'); do
		if [[ "$old" == localhost/synclab-base:* && "$old" != "$base" ]]; then bh rmi "$old" >/dev/null; fi
	done
	find "$CACHE" -maxdepth 1 -name 'rootfs-*.tar' ! -path "$rootfs_tar" -delete
fi
log "base $base ready at $((SECONDS - t0)) s"

# ---------------------------------------------------------------------------------------------
# 2. The image, from the Dockerfile unchanged. Extra CA certificates: those of $SSL_CERT_FILE that
#    the base does not already trust.
extra_ca=""
if [[ -n "${SSL_CERT_FILE:-}" && -s "$SSL_CERT_FILE" ]]; then
	base_bundle="$work/base-bundle.pem"
	tar -xOf "$rootfs_tar" ./etc/ssl/certs/ca-certificates.crt >"$base_bundle" 2>/dev/null ||
		{ c="$(bh from "$base")" && ctrs+=("$c") && bh run "$c" -- cat /etc/ssl/certs/ca-certificates.crt >"$base_bundle"; }
	extra_ca="$(awk -v known="$base_bundle" '
		BEGIN { while ((getline l < known) > 0) { if (l ~ /BEGIN CERT/) b = ""; b = b l "\n"; if (l ~ /END CERT/) have[b] = 1 } }
		/BEGIN CERT/ { b = "" } { b = b $0 "\n" } /END CERT/ && !(b in have) { printf "%s", b }' "$SSL_CERT_FILE")"
	[[ -n "$extra_ca" ]] && log "passing $(grep -c 'BEGIN CERT' <<<"$extra_ca") extra CA certificate(s) from $SSL_CERT_FILE as EXTRA_CA_CERTS"
fi

log "building the Dockerfile with buildah (first time: ~5 min; warm: the source layers only)"
# Build layers are cached; keep only those of this build, so stale ones do not pile up.
# Each line of the build's output with the second it was printed at (the step timings).
stamp() { while IFS= read -r line; do printf '%4d %s\n' "$((SECONDS - t0))" "$line"; done; }
bh bud --layers --isolation chroot --build-arg "BASE=$base" --build-arg "EXTRA_CA_CERTS=$extra_ca" \
	-t "$IMAGE" "$ROOT" 2>&1 | stamp >"$work/build.log" || die "build failed: $(tail -30 "$work/build.log")"
grep -E '^ *[0-9]+ (STEP|--> Using cache)' "$work/build.log" | cut -c1-110 | sed 's/^/    /'
# The layer cache keeps this build's steps (the next run reuses them); older builds' go.
keep=" $(bh inspect --type image --format '{{.FromImageID}}' "$base" | cut -c1-11) "
keep+="$(sed -nE 's/^ *[0-9]+ --> (Using cache )?([0-9a-f]{11})[0-9a-f]*$/\2/p' "$work/build.log" | tr '\n' ' ')"
for _ in 1 2 3; do # a stale image goes once its stale children have gone
	stale=0
	for id in $(bh images -a --noheading --format '{{.ID}}'); do
		[[ "$keep" == *" ${id:0:11} "* ]] && continue
		bh rmi "$id" >/dev/null 2>&1 && stale=$((stale + 1))
	done
	((stale)) || break
done
log "image built at $((SECONDS - t0)) s"

# ---------------------------------------------------------------------------------------------
# 3. Run the image as `docker run IMAGE CMD...` does: entry point + command, as the image's user.
entrypoint=()
read -r -a entrypoint <<<"$(bh inspect --type image --format '{{range .OCIv1.Config.Entrypoint}}{{.}} {{end}}' "$IMAGE")"
read -r -a default_cmd <<<"$(bh inspect --type image --format '{{range .OCIv1.Config.Cmd}}{{.}} {{end}}' "$IMAGE")"
ctr="$(bh from "$IMAGE")"
ctrs+=("$ctr")

# A folder that `docker run -v` creates when it is missing: owned by root, mode 0755.
reports="$work/reports"
install -d -m 0755 -o 0 -g 0 "$reports"
log "lab report $REPORT_NOTEBOOK -o /reports, into a root-owned mounted folder"
bh run -v "$reports:/reports" "$ctr" -- "${entrypoint[@]}" lab report "$REPORT_NOTEBOOK" -o /reports \
	>"$work/report.log" 2>&1 || die "lab report in the image failed: $(tail -30 "$work/report.log")"
html="$reports/$(basename "$REPORT_NOTEBOOK" .ipynb).html"
[[ -s "$html" ]] || die "no $html: $(ls -la "$reports")"
owner="$(stat -c %u "$html")"
[[ "$owner" != 0 ]] || die "the report was written by root: the image must run as its non-root user"
log "report written by uid $owner ($(stat -c %s "$html") bytes); checking it offline in Chromium"
SYNCLAB_IMAGE_REPORT="$html" go test -C "$ROOT" -count=1 -run '^TestImageReport$' ./deploy/ ||
	die "the image's report failed the Chromium check"

# ---------------------------------------------------------------------------------------------
# 4. Jupyter by the image's default command, on a free loopback port (chroot isolation shares this
#    machine's network).
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
log "starting Jupyter (${default_cmd[*]}) in the image on 127.0.0.1:$port"
setsid buildah "${bh_opts[@]}" run -e LAB_HOST=127.0.0.1 -e "LAB_PORT=$port" "$ctr" -- "${entrypoint[@]}" "${default_cmd[@]}" \
	>"$work/jupyter.log" 2>&1 &
jupyter_pid=$!
token=""
for _ in $(seq 120); do
	token="$(sed -nE 's|.*http://127\.0\.0\.1:'"$port"'/\?token=([0-9a-f]+).*|\1|p' "$work/jupyter.log" | head -1)"
	if [[ -n "$token" ]] && curl -s -o /dev/null "http://127.0.0.1:$port/"; then break; fi
	kill -0 "$jupyter_pid" 2>/dev/null || die "Jupyter exited: $(tail -20 "$work/jupyter.log")"
	sleep 1
done
[[ -n "$token" ]] || die "no URL with a token printed: $(tail -20 "$work/jupyter.log")"
code() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
c="$(code "http://127.0.0.1:$port/api/kernelspecs?token=$token")"
[[ "$c" == 200 ]] && grep -q '"gonb"' "$work/body" || die "with the token: HTTP $c, $(head -c 300 "$work/body")"
c="$(code "http://127.0.0.1:$port/api/kernelspecs")"
[[ "$c" == 403 ]] || die "without a token: HTTP $c, want 403"
c="$(code "http://127.0.0.1:$port/api/kernelspecs?token=not-$token")"
[[ "$c" == 403 ]] || die "with a wrong token: HTTP $c, want 403"
c="$(code "http://127.0.0.1:$port/tree")"
[[ "$c" == 302 ]] && grep -q login <<<"$(curl -s -D - -o /dev/null "http://127.0.0.1:$port/tree")" ||
	die "the notebook page without a token: HTTP $c, want a redirect to the login page"
# The process that listens on the port (started by us, through buildah run).
server_pid="$(ss -Hltnp "sport = :$port" | sed -nE 's/.*pid=([0-9]+).*/\1/p' | head -1)"
jupyter_uid="$(stat -c %u "/proc/$server_pid" 2>/dev/null || true)"
[[ -n "$jupyter_uid" && "$jupyter_uid" != 0 ]] || die "Jupyter (pid '$server_pid') runs as uid '$jupyter_uid', want the image's non-root user"
log "Jupyter (uid $jupyter_uid) answers with the printed token (the GoNB kernel listed) and refuses without it"

kill -- "-$jupyter_pid"
wait "$jupyter_pid" 2>/dev/null || true
jupyter_pid=
for _ in $(seq 20); do curl -s -o /dev/null "http://127.0.0.1:$port/" || break; sleep 0.5; done
! curl -s -o /dev/null "http://127.0.0.1:$port/" || die "Jupyter still answers after it was stopped"
server_pid=
log "PASS in $((SECONDS - t0)) s"
