#!/usr/bin/env bash
# Functional smoke test of the board benchmarks (no timing is checked):
#   1. cross-compiles bench/board/linux/boardbench.c with Debian's aarch64-linux-gnu-gcc and runs it under
#      qemu-user on a few pairs with short runs; its output must be SyncLab measurement rows that
#      `lab calibrate` reads (header experiment,variant,settings,metric,value; known experiments), and its
#      monitor probe's rows must be ones `lab calibrate -fit monitor_loss` decides from, and its prefetch
#      probe's rows ones `lab calibrate -fit a72_prfm_upgrade` reads;
#   2. syntax-checks the ESP-IDF app bench/board/esp32/main/main.c with the host gcc against declarations of
#      the IDF API it uses (ESP-IDF itself is not needed; the app is built with idf.py on a machine that has it).
# Missing Debian packages (gcc-aarch64-linux-gnu, qemu-user-static) are installed with apt-get when run as
# root; otherwise the script says what to install and exits 1.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

log() { printf 'bench/board: %s\n' "$*"; }
die() {
	printf 'bench/board: %s\n' "$*" >&2
	exit 1
}

need=()
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
QEMU="$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)"
[[ -n "$QEMU" ]] || need+=(qemu-user-static)
command -v gcc >/dev/null || need+=(gcc)
if ((${#need[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		die "missing Debian packages; install them with: sudo apt-get install -y ${need[*]}"
	fi
	log "installing ${need[*]}"
	apt-get -o DPkg::Lock::Timeout=600 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
	QEMU="$(command -v qemu-aarch64-static || command -v qemu-aarch64)"
fi

log "cross-compiling boardbench"
make -s -C "$HERE/linux" boardbench
file_out="$(file -b "$HERE/linux/boardbench" 2>/dev/null || true)"
[[ -z "$file_out" || "$file_out" == *aarch64* || "$file_out" == *"ARM aarch64"* ]] || die "boardbench is not an arm64 binary: $file_out"

log "running boardbench under $(basename "$QEMU")"
# Short runs: this checks that the program works and writes what lab calibrate reads, not the timings.
"$QEMU" "$HERE/linux/boardbench" -rounds 200 -handoffs 3 -hold 100 -probe-ms 5 -lines 8 -prfm-rounds 5 -pairs 0:1 >"$OUT/rows.csv" 2>"$OUT/err" ||
	die "boardbench failed: $(cat "$OUT/err")"
head -1 "$OUT/rows.csv" | grep -qx 'experiment,variant,settings,metric,value' || die "bad header: $(head -1 "$OUT/rows.csv")"
grep -q '^rk3399-pingpong,llsc,cpu_a=0;cpu_b=1,one_way_ns,[0-9.e+-]*$' "$OUT/rows.csv" || die "no llsc ping-pong row: $(cat "$OUT/rows.csv")"
grep -q '^rk3399-pingpong,ldst,cpu_a=0;cpu_b=1,one_way_ns,[0-9.e+-]*$' "$OUT/rows.csv" || die "no ldst ping-pong row: $(cat "$OUT/rows.csv")"
grep -q '^rk3399-wake,wfe,holder_cpu=0;waiter_cpu=1;hold_max_us=100,release_to_acquire_us,[0-9.e+-]*$' "$OUT/rows.csv" ||
	die "no wfe hand-off row: $(cat "$OUT/rows.csv")"
grep -q '^rk3399-wake,wfi,' "$OUT/rows.csv" && die "a wfi hand-off row (arm64 Linux skips a user-space WFI): $(cat "$OUT/rows.csv")"
for v in load store prfm; do
	for m in wakes_per_ms pokes_per_ms; do
		grep -q "^rk3399-monitor-probe,$v,poker_cpu=0;waiter_cpu=1;poke_us=10;probe_ms=5,$m,[0-9.e+-]*\$" "$OUT/rows.csv" ||
			die "no $v $m probe row: $(cat "$OUT/rows.csv")"
	done
	grep -q "^rk3399-prfm-probe,$v,poker_cpu=0;reader_cpu=1;lines=8;probe_rounds=5,reread_ns,[0-9.e+-]*\$" "$OUT/rows.csv" ||
		die "no $v prefetch probe row: $(cat "$OUT/rows.csv")"
done
"$QEMU" "$HERE/linux/boardbench" -rounds 20 -handoffs 2 -hold 100 -probe-ms 2 -lines 4 -prfm-rounds 3 -pairs 0:1 -hz 1000 -s a72_mhz=1800 >"$OUT/hz.csv" 2>"$OUT/err" ||
	die "boardbench -hz failed: $(cat "$OUT/err")"
grep -q '^rk3399-wake,wfe,holder_cpu=0;waiter_cpu=1;hold_max_us=100;hz=1000;a72_mhz=1800,' "$OUT/hz.csv" ||
	die "-hz and -s do not reach the hand-off row: $(cat "$OUT/hz.csv")"
grep -q '^rk3399-monitor-probe,prfm,.*;hz=1000;a72_mhz=1800,wakes_per_ms,' "$OUT/hz.csv" || die "-hz and -s do not reach the probe rows: $(cat "$OUT/hz.csv")"
grep -q '^rk3399-prfm-probe,prfm,poker_cpu=0;reader_cpu=1;lines=4;probe_rounds=3;a72_mhz=1800,reread_ns,' "$OUT/hz.csv" ||
	die "-s does not reach the prefetch probe rows (or -hz does, whose ticks the probe's median leaves out): $(cat "$OUT/hz.csv")"
"$QEMU" "$HERE/linux/boardbench" -rounds 20 -pairs 0:1 -e generic-pingpong -s "soc_cores=4;per_cluster=4" >"$OUT/generic.csv" 2>/dev/null ||
	die "boardbench -e generic-pingpong failed"
grep -q '^rk3399-' "$OUT/generic.csv" && die "-e generic-pingpong still prints RK3399 rows: $(cat "$OUT/generic.csv")"
grep -q '^generic-pingpong,llsc,cpu_a=0;cpu_b=1;soc_cores=4;per_cluster=4,one_way_ns,' "$OUT/generic.csv" || die "no generic ping-pong row: $(cat "$OUT/generic.csv")"
"$QEMU" "$HERE/linux/boardbench" -pairs 0:0 >/dev/null 2>&1 && die "boardbench accepted the pair 0:0"
"$QEMU" "$HERE/linux/boardbench" -rounds x >/dev/null 2>&1 && die "boardbench accepted -rounds x"
"$QEMU" "$HERE/linux/boardbench" -lines 129 >/dev/null 2>&1 && die "boardbench accepted -lines 129"

log "checking that lab calibrate reads the rows"
(cd "$ROOT" && go run ./labkit/cmd/lab calibrate "$OUT/rows.csv" -metrics one_way_ns -fit same_cluster_ns -set rounds=50 -max-evals 20 >"$OUT/fit" 2>&1) ||
	die "lab calibrate rejected boardbench's rows: $(cat "$OUT/fit")"
(cd "$ROOT" && go run ./labkit/cmd/lab calibrate "$OUT/rows.csv" -metrics wakes_per_ms,pokes_per_ms -fit monitor_loss >"$OUT/fit" 2>&1) ||
	die "lab calibrate -fit monitor_loss rejected boardbench's probe rows: $(cat "$OUT/fit")"
grep -q '^monitor_loss .*one of 0, 1' "$OUT/fit" || die "no monitor_loss in the fit: $(cat "$OUT/fit")"
# On the A72 pair the rows decide the setting; these, from an A53 pair under qemu, need only be read.
(cd "$ROOT" && go run ./labkit/cmd/lab calibrate "$OUT/rows.csv" -metrics reread_ns -fit a72_prfm_upgrade,same_cluster_ns >"$OUT/fit" 2>&1) ||
	die "lab calibrate -fit a72_prfm_upgrade rejected boardbench's prefetch probe rows: $(cat "$OUT/fit")"
grep -q '^a72_prfm_upgrade .*one of 0, 1' "$OUT/fit" || die "no a72_prfm_upgrade in the fit: $(cat "$OUT/fit")"

log "syntax-checking the ESP-IDF app with the host gcc"
gcc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -DSYNCLAB_HOST_CHECK -I"$HERE/esp32/host" "$HERE/esp32/main/main.c"

log "ok ($(grep -c , "$OUT/rows.csv") rows)"
