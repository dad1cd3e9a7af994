#!/usr/bin/env bash
# One idempotent setup for SyncLab, used by `make lab`, `make test`, `make report` and the Dockerfile.
#
#   scripts/setup.sh [--test]
#   scripts/setup.sh --peers
#
# --test (or SYNCLAB_SETUP_TEST=1) also installs Debian's chromium and a CJK font for the headless report check,
#   and gcc for the race detector (go test -race needs cgo).
# --peers does only what `lab bench` needs for its peer simulators (bench/peers): Debian's
#   libsimgrid-dev, g++ and python3-simpy, and the SimGrid peer compiled into .tools/peers.
#
# Steps, each skipped when already done:
#   1. Debian packages jupyter-notebook, jupyter-nbconvert (+ chromium, fonts-wqy-microhei, gcc with --test): apt-get as root,
#      otherwise print exactly what to install and exit 1.
#   2. gonb and goimports built from go.mod's tool pins into .tools/bin, gopls into .tools/gopls.
#   3. Offline web assets from the npm registry, integrity-checked: echarts (.tools/echarts), require.js
#      (.tools/requirejs) and MathJax 3 (.tools/mathjax), each with its LICENSE/NOTICE.
#   4. The GoNB kernel installed repo-locally in .tools/jupyter/kernels/gonb with -go_work=<repo root>,
#      so every notebook's module sees the `synclab` module. Jupyter finds it through
#      JUPYTER_PATH=<repo>/.tools/jupyter (set by the Makefile, the Docker image and labkit/nbexport).
#   5. `jupyter trust` the notebooks (per user).
#
# Print the environment to use the lab with: scripts/setup.sh --print-env
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
STAMPS="$TOOLS/stamps"

ECHARTS_VERSION=5.4.3
ECHARTS_INTEGRITY='sha512-mYKxLxhzy6zyTi/FaEbJMOZU1ULGEQHaeIeuMR5L+JnJTpz+YR03mnnpBhbR4+UYJAgiXgpyTVLffPAjOTLkZA=='
REQUIREJS_VERSION=2.3.7
REQUIREJS_INTEGRITY='sha512-DouTG8T1WanGok6Qjg2SXuCMzszOo0eHeH9hDZ5Y4x8Je+9JB38HdTLT4/VA8OaUhBa0JPVHJ0pyBkM1z+pDsw=='
MATHJAX_VERSION=3.2.2
MATHJAX_INTEGRITY='sha512-Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=='
NPM_REGISTRY="${NPM_REGISTRY:-https://registry.npmjs.org}"

want_test="${SYNCLAB_SETUP_TEST:-0}"
want_peers=0
for arg in "$@"; do
	case "$arg" in
	--test) want_test=1 ;;
	--peers) want_peers=1 ;;
	--print-env)
		# shellcheck disable=SC2016 # $PATH is for the shell that evaluates this output.
		printf 'export PATH=%q:"$PATH"\n' "$TOOLS/bin:$TOOLS/gopls"
		printf 'export JUPYTER_PATH=%q\n' "$TOOLS/jupyter"
		exit 0
		;;
	-h | --help)
		sed -n '2,23p' "${BASH_SOURCE[0]}"
		exit 0
		;;
	*)
		echo "setup.sh: unknown argument $arg (try --help)" >&2
		exit 2
		;;
	esac
done

export PATH="$TOOLS/bin:$PATH"
mkdir -p "$TOOLS/bin" "$STAMPS"
t0=$SECONDS

log() { printf 'setup: %s\n' "$*"; }
die() {
	printf 'setup: ERROR: %s\n' "$*" >&2
	exit 1
}

# ---------------------------------------------------------------------------------------------
# 0. Go itself (cannot be installed here: it is the one prerequisite).
command -v go >/dev/null 2>&1 || die "Go is not on PATH. Install Go 1.26 or newer (https://go.dev/dl/) and retry."
go_minor="$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')"
if [[ ! "$go_minor" =~ ^[0-9]+$ ]] || ((go_minor < 26)); then
	die "Go $(go env GOVERSION) is too old: go.mod needs Go 1.26 or newer (https://go.dev/dl/)."
fi

pkg_installed() { [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]; }
have_cmd() { command -v "$1" >/dev/null 2>&1; }

# apt_install PKG...: installs Debian packages as root, or says how and exits 1.
apt_install() {
	if [[ "$(id -u)" == 0 ]] && have_cmd apt-get; then
		log "installing Debian packages: $*"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		# --no-install-recommends keeps pandoc, TeX and friends out; nothing here needs them.
		apt-get install -y -qq --no-install-recommends "$@" >/dev/null
		return
	fi
	{
		echo "setup: cannot install the missing prerequisites (need root and apt-get)."
		echo "setup: missing packages: $*"
		echo "setup: on Debian 12 / Ubuntu, run:"
		echo "    sudo apt-get update && sudo apt-get install --no-install-recommends $*"
	} >&2
	exit 1
}

# ---------------------------------------------------------------------------------------------
# Peers of lab bench (--peers): nothing else.
if ((want_peers)); then
	peers=()
	[[ -e /usr/include/simgrid/s4u.hpp ]] || peers+=(libsimgrid-dev)
	have_cmd g++ || peers+=(g++)
	[[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import SimPy.Simulation' 2>/dev/null || peers+=(python3-simpy)
	((${#peers[@]} == 0)) || apt_install "${peers[@]}"
	src="$ROOT/bench/peers/simgrid/mutex.cpp"
	bin="$TOOLS/peers/simgrid-mutex"
	key="$(cat "$src" /usr/include/simgrid/version.h | sha256sum | cut -c1-16)-$(g++ -dumpfullversion)"
	if [[ "$(cat "$STAMPS/simgrid-peer" 2>/dev/null || true)" != "$key" || ! -x "$bin" ]]; then
		log "compiling the SimGrid peer into $bin"
		mkdir -p "$TOOLS/peers"
		g++ -O2 -std=c++17 -o "$bin" "$src" -lsimgrid
		echo "$key" >"$STAMPS/simgrid-peer"
	fi
	exit 0
fi

# ---------------------------------------------------------------------------------------------
# 1. Debian packages.

missing=()
if ! have_cmd jupyter-notebook; then missing+=(jupyter-notebook); fi
if ! have_cmd jupyter-nbconvert; then missing+=(jupyter-nbconvert); fi
# make test-race: the race detector needs cgo, hence a C compiler.
if [[ "$want_test" == 1 ]] && ! have_cmd gcc; then missing+=(gcc libc6-dev); fi
need_fetch_tool=0
if ! have_cmd npm && ! have_cmd curl; then
	need_fetch_tool=1
	missing+=(curl ca-certificates)
fi
# Chromium prints the reports (the headless check, -pdf); the articles' Chinese titles and
# section names need a CJK font, which Debian's chromium does not pull in.
want_chromium=0
if [[ "$want_test" == 1 ]] && { ! have_cmd chromium || ! fc-list :lang=zh 2>/dev/null | grep -q .; }; then
	want_chromium=1
fi

if ((${#missing[@]} > 0)) || ((want_chromium)); then
	pkgs=("${missing[@]}")
	((want_chromium)) && pkgs+=(chromium fonts-wqy-microhei)
	if [[ "$(id -u)" == 0 ]] && have_cmd apt-get; then
		apt_install "${pkgs[@]}"
	else
		{
			echo "setup: cannot install the missing prerequisites (need root and apt-get)."
			echo "setup: missing commands/packages: ${pkgs[*]}"
			echo "setup: on Debian 12 / Ubuntu, run:"
			echo "    sudo apt-get update && sudo apt-get install --no-install-recommends ${pkgs[*]}"
			echo "setup: elsewhere, e.g.: python3 -m pip install --user 'notebook<7' nbconvert"
			((need_fetch_tool)) && echo "setup: plus curl (or npm) to fetch echarts/require.js/MathJax."
			echo "setup: then run this script again."
		} >&2
		exit 1
	fi
fi
for c in jupyter jupyter-notebook jupyter-nbconvert; do
	have_cmd "$c" || die "$c still missing after installing packages"
done

# ---------------------------------------------------------------------------------------------
# 2. Go tools from go.mod's tool pins.
gotools_key="$(cat "$ROOT/go.mod" "$ROOT/go.sum" | sha256sum | cut -c1-16)-$(go env GOVERSION GOOS GOARCH | tr '\n' '-')"
if [[ "$(cat "$STAMPS/gotools" 2>/dev/null || true)" != "$gotools_key" ]] ||
	[[ ! -x "$TOOLS/bin/gonb" || ! -x "$TOOLS/bin/goimports" || ! -x "$TOOLS/gopls/gopls" ]]; then
	log "building gonb, goimports, gopls from go.mod's tool pins (first time: ~1-2 min)"
	(
		cd "$ROOT"
		go mod download
		go build -o "$TOOLS/bin/gonb" github.com/janpfeifer/gonb
		go build -o "$TOOLS/bin/goimports" golang.org/x/tools/cmd/goimports
		# gopls v0.23.0 does not build against the main module's golang.org/x/tools (v0.52.0, pinned for
		# goimports): build it at go.mod's pinned version with gopls' own module graph instead. It
		# gets a folder of its own, on the PATH of the interactive kernel only (see 4).
		gopls_version="$(go list -m -f '{{.Version}}' golang.org/x/tools/gopls)"
		GOBIN="$TOOLS/gopls" go install "golang.org/x/tools/gopls@$gopls_version"
	)
	echo "$gotools_key" >"$STAMPS/gotools"
fi
rm -f "$TOOLS/bin/gopls" # where setups before the report kernel put it

# ---------------------------------------------------------------------------------------------
# 3. Offline web assets from the npm registry.

# integrity_ok FILE SRI: checks a file against an npm "sha512-<base64>" integrity string.
integrity_ok() {
	local want="${2#sha512-}" got
	got="$(openssl_free_sha512_b64 "$1")"
	[[ "$got" == "$want" ]]
}
openssl_free_sha512_b64() {
	sha512sum "$1" | cut -d' ' -f1 | sed 's/../\\x&/g' | { read -r esc; printf '%b' "$esc"; } | base64 -w0
}

# fetch_npm NAME VERSION INTEGRITY DEST_DIR MEMBER...: downloads NAME@VERSION's tarball, checks its
# integrity and extracts the listed members (paths inside the tarball, without "package/") flat into
# DEST_DIR.
fetch_npm() {
	local name="$1" version="$2" sri="$3" dest="$4"
	shift 4
	local stamp="$STAMPS/npm-$name" key="$name@$version $*"
	if [[ "$(cat "$stamp" 2>/dev/null || true)" == "$key" ]]; then
		local ok=1 m
		for m in "$@"; do [[ -s "$dest/$(basename "$m")" ]] || ok=0; done
		((ok)) && return 0
	fi
	log "fetching $name@$version from the npm registry"
	local tmp tgz
	tmp="$(mktemp -d)"
	# shellcheck disable=SC2064 # expand now: tmp is local.
	trap "rm -rf '$tmp'" RETURN
	if have_cmd npm; then
		(cd "$tmp" && npm pack --silent --registry "$NPM_REGISTRY" "$name@$version" >/dev/null)
		tgz="$(ls "$tmp"/*.tgz)"
	else
		tgz="$tmp/$name-$version.tgz"
		curl -fsSL --retry 3 -o "$tgz" "$NPM_REGISTRY/$name/-/$name-$version.tgz"
	fi
	integrity_ok "$tgz" "$sri" || die "$name@$version: tarball integrity mismatch (want $sri)"
	mkdir -p "$tmp/x" "$dest"
	tar -xzf "$tgz" -C "$tmp/x" "${@/#/package/}"
	local m
	for m in "$@"; do cp "$tmp/x/package/$m" "$dest/"; done
	echo "$key" >"$stamp"
}

fetch_npm echarts "$ECHARTS_VERSION" "$ECHARTS_INTEGRITY" "$TOOLS/echarts" dist/echarts.min.js LICENSE NOTICE
fetch_npm requirejs "$REQUIREJS_VERSION" "$REQUIREJS_INTEGRITY" "$TOOLS/requirejs" require.js package.json  # MIT: see the header of require.js and package.json
fetch_npm mathjax "$MATHJAX_VERSION" "$MATHJAX_INTEGRITY" "$TOOLS/mathjax" es5/tex-svg.js LICENSE

# ---------------------------------------------------------------------------------------------
# 4. GoNB kernel, repo-local, pointing at this checkout.
#    - -go_work=ROOT: every notebook's temporary module starts with a go.work using the repository,
#      so `import "synclab/..."` compiles.
#    - GoNB runs `go get` for imports its module does not require yet; that asks the proxy for
#      `latest` (refused here, unpinned elsewhere). GOPROXY puts the module cache (filled by
#      `go mod download` from go.mod's pins) first, so those imports resolve to the pinned versions,
#      offline.
#    - PATH is recorded so the kernel finds go, goimports and gopls from any Jupyter front end;
#      SYNCLAB_ROOT and SYNCLAB_ECHARTS let labkit find the repository and the local ECharts.
#    - A second copy in .tools/jupyter-report, which lab report puts first on JUPYTER_PATH, runs
#      notebooks headless without gopls on its PATH: GoNB starts gopls whenever it finds it, and
#      gopls re-checks the workspace after every cell (13% of a report's CPU) for completions that
#      nobody asks for there.
#    - GOFLAGS adds -ldflags=-s: GoNB links a program per cell, and leaving out its DWARF and
#      symbol table (which only a debugger reads; panics still name file and line) cuts each link
#      by ~25% (-w alone, DWARF only: ~20%).
#    - CGO_ENABLED=0: no notebook calls C, and with cgo on every cell's `go build` also starts
#      `cgo -V=full` and `gcc -###` to identify the C toolchain (0.96 s a build against 0.86 s).
jpy="$(sed -n '1s/^#!//p' "$(command -v jupyter)")"
jpy="${jpy:-python3}"
kdir="$TOOLS/jupyter/kernels/gonb"
kernel_goproxy="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)"
kernel_path() { printf '%s' "$1:$(dirname "$(command -v go)"):$PATH" | awk -v RS=: -v ORS=: '!seen[$0]++' | sed 's/:$//'; }
kernel_path="$(kernel_path "$TOOLS/bin:$TOOLS/gopls")"
report_path="$(kernel_path "$TOOLS/bin")"
kernel_goflags="$(go env GOFLAGS) -ldflags=-s"
kernel_goflags="${kernel_goflags# }"
rdir="$TOOLS/jupyter-report/kernels/gonb"
kernel_key="$(printf '%s\n' v5 "$TOOLS" "$ROOT" "$kernel_goproxy" "$kernel_path" "$report_path" "$kernel_goflags" | sha256sum | cut -c1-16)"
if [[ "$(cat "$STAMPS/kernel" 2>/dev/null || true)" != "$kernel_key" || ! -f "$kdir/kernel.json" || ! -f "$rdir/kernel.json" ]]; then
	log "installing the GoNB kernel in $kdir (go.work uses $ROOT)"
	rm -f "$kdir/kernel.json" # so that a failed install cannot leave an old one
	PATH="$TOOLS/gopls:$PATH" JUPYTER_DATA_DIR="$TOOLS/jupyter" "$TOOLS/bin/gonb" --install "-go_work=$ROOT" 2>&1 | grep -v '^I[0-9]' || true
	[[ -f "$kdir/kernel.json" ]] || die "GoNB kernel install failed: $kdir/kernel.json not written"
	KJSON="$kdir/kernel.json" KROOT="$ROOT" KGOPROXY="$kernel_goproxy" KPATH="$kernel_path" KGOFLAGS="$kernel_goflags" "$jpy" -c '
import json, os
p = os.environ["KJSON"]
k = json.load(open(p))
k.setdefault("env", {}).update({"GOPROXY": os.environ["KGOPROXY"], "PATH": os.environ["KPATH"], "GOFLAGS": os.environ["KGOFLAGS"], "CGO_ENABLED": "0",
    "SYNCLAB_ROOT": os.environ["KROOT"], "SYNCLAB_ECHARTS": os.environ["KROOT"] + "/.tools/echarts/echarts.min.js"})
json.dump(k, open(p, "w"), indent=1)
'
	rm -rf "$rdir" && mkdir -p "$rdir" && cp -R "$kdir/." "$rdir/"
	KJSON="$rdir/kernel.json" KPATH="$report_path" "$jpy" -c '
import json, os
p = os.environ["KJSON"]
k = json.load(open(p))
k["env"]["PATH"] = os.environ["KPATH"]
json.dump(k, open(p, "w"), indent=1)
'
	echo "$kernel_key" >"$STAMPS/kernel"
fi

# ---------------------------------------------------------------------------------------------
# 5. Trust the notebooks (HTML/JS outputs render only in trusted notebooks). Per user.
shopt -s nullglob
nbs=("$ROOT"/notebooks/*.ipynb)
if ((${#nbs[@]} > 0)); then
	trust_key="$(cat "${nbs[@]}" | sha256sum | cut -c1-16)"
	trust_stamp="$STAMPS/trust-$(id -u)"
	if [[ "$(cat "$trust_stamp" 2>/dev/null || true)" != "$trust_key" ]]; then
		log "trusting ${#nbs[@]} notebook(s)"
		if have_cmd jupyter-trust; then
			jupyter trust "${nbs[@]}" >/dev/null
		else
			# Debian's nbformat ships no jupyter-trust script; call its module with Jupyter's python.
			out="$("$jpy" -m nbformat.sign "${nbs[@]}" 2>&1)" || die "trusting the notebooks failed: $out"
		fi
		echo "$trust_key" >"$trust_stamp"
	fi
fi

log "ready in $((SECONDS - t0)) s (tools in .tools/bin, kernel gonb in .tools/jupyter)"
