package main

import (
	"fmt"
	"strings"
	"testing"
)

// The least-squares line through points on a line is that line.
func TestLinearFit(t *testing.T) {
	x := []float64{1, 2, 4, 8}
	fit := linearFit(x, []float64{5, 8, 14, 26}) // 2 + 3x
	for i, want := range []float64{5, 8, 14, 26} {
		if d := fit[i] - want; d > 1e-12 || d < -1e-12 {
			t.Fatalf("fit[%d] = %v, want %v", i, fit[i], want)
		}
	}
}

// lab bench -o draws wall time and peak RSS for each slope measured, and
// only for those.
func TestBenchReport(t *testing.T) {
	fig := benchFigures{"gomaxprocs": 2, "engine_events_per_s": 2.5e7, "iterations_wall_exponent": 1.01,
		"iterations_points": []scalingPoint{{Value: 1e5, WallS: 0.01, PeakRSSMB: 20}, {Value: 1e6, WallS: 0.1, PeakRSSMB: 21}, {Value: 1e7, WallS: 1, PeakRSSMB: 22}}}
	page := strings.ReplaceAll(benchReport(fig).HTML(), "<wbr>", "") // break opportunities in long names
	for _, want := range []string{"Wall time vs iterations (esp32-critical-section mutex): exponent 1.01",
		"Peak RSS vs iterations", "linear fit", "engine_events_per_s"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "vs cores") {
		t.Error("report draws the cores slope, which was not measured")
	}
}

// The table writes numbers for people, in the fixed order, and leaves out
// the figures not measured.
func TestBenchTable(t *testing.T) {
	fig := benchFigures{"gomaxprocs": 2, "engine_events_per_s": 2.0465752011959e7, "engine_ns_per_event": 48.8621185,
		"esp32_mutex_2m_events": uint64(39805746), "sweep_experiment": "rk3399-spinlock-wait variant wfe"}
	got := fig.table().Rows
	want := [][]string{{"engine_events_per_s", "20,465,752"}, {"engine_ns_per_event", "48.86"},
		{"esp32_mutex_2m_events", "39,805,746"}, {"sweep_experiment", "rk3399-spinlock-wait variant wfe"}, {"gomaxprocs", "2"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// A slope whose points count their work (cores: runs of fixed simulated
// time) also draws the wall time per op, from every point's count.
func TestBenchReportPerOp(t *testing.T) {
	pts := []scalingPoint{{2, 0.19, 13, 181659}, {4, 0.58, 13, 167918}, {8, 0.43, 13, 109370}}
	page := benchReport(benchFigures{"gomaxprocs": 2, "cores_points": pts}).HTML()
	for _, want := range []string{"Wall time per critical section vs cores (lock-scaling qspinlock)", "(181,659 at 2 cores, 167,918 at 4, 109,370 at 8)"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	pts[1].Ops = 0 // a run that counted nothing: no cost per op to draw
	if page := benchReport(benchFigures{"gomaxprocs": 2, "cores_points": pts}).HTML(); strings.Contains(page, "Wall time per critical section") {
		t.Error("report draws a cost per op from a point without a count")
	}
}
