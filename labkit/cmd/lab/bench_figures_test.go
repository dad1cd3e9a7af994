package main

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"
)

// lab bench, as the README runs it but small (a short engine benchmark, a
// short sweep, no peers, no detailed run), gives every figure it promises:
// the engine's rate, the catalog runs' wall times, the 64-run sweep on one
// and two workers, and the slopes of wall time and memory against
// iterations and cores from its child runs; a figure it could not measure
// would be a note. Speed itself is for the benchmarks, not for this test.
func TestBenchFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the lab command and runs about ten seconds of benchmarks")
	}
	t.Setenv("SYNCLAB_RESULTS", t.TempDir())
	cmd := exec.Command(buildLab(t), "bench", "-json", "-peer=false", "-detailed=false", "-events", "20000", "-sweep-set", "duration_ms=5")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lab bench: %v\n%s", err, stderr.String())
	}
	var fig map[string]any
	if err := json.Unmarshal(out, &fig); err != nil {
		t.Fatalf("lab bench -json: %v\n%s", err, out)
	}
	for _, key := range []string{"engine_events_per_s", "engine_ns_per_event", "coroutine_round_trip_ns", "esp32_mutex_2m_wall_s", "esp32_all_variants_1m_wall_s",
		"rk3399_default_wall_s", "sweep_wall_1_worker_s", "sweep_wall_2_workers_s", "sweep_speedup_2_cores",
		"iterations_wall_s_per_1e6", "iterations_rss_mb_per_1e6", "iterations_rss_mb_max", "cores_rss_mb_max"} {
		if v, ok := fig[key].(float64); !ok || !(v > 0) || math.IsInf(v, 0) {
			t.Errorf("%s = %v, want a positive number", key, fig[key])
		}
	}
	// At a fixed simulated time, wall time is nearly flat in cores: on a busy
	// host its slope may come out negative.
	for _, key := range []string{"iterations_wall_exponent", "cores_wall_exponent", "cores_wall_s_per_core"} {
		if v, ok := fig[key].(float64); !ok || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Errorf("%s = %v, want a fitted number", key, fig[key])
		}
	}
	if fig["sweep_runs"] != float64(64) || !strings.Contains(asString(fig["sweep_experiment"]), "duration_ms=5") {
		t.Errorf("sweep: %v runs of %v, want 64 runs with duration_ms=5", fig["sweep_runs"], fig["sweep_experiment"])
	}
	for key, n := range map[string]int{"iterations_points": 5, "cores_points": 6} {
		if pts, _ := fig[key].([]any); len(pts) != n {
			t.Errorf("%s: %d points, want %d", key, len(pts), n)
		}
	}
	notes, _ := fig["notes"].([]any)
	if len(notes) != 1 || !strings.Contains(asString(notes[0]), "skipped (-peer=false)") {
		t.Errorf("notes %q, want only the skipped peers", notes)
	}
}

// asString is v as a string ("" for another type).
func asString(v any) string {
	s, _ := v.(string)
	return s
}
