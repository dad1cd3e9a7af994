package main

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"synclab/labkit"
)

// sameRuns compares metrics and samples bit for bit: a last-bit difference
// is one (the detailed run must equal the fast-forwarded one exactly), a NaN
// equals the same NaN, and a metric or sample missing on one side counts.
func TestSameRunsBitForBit(t *testing.T) {
	base := func() []labkit.Run {
		return []labkit.Run{{Metrics: map[string]float64{"total_ms": 1.5, "p99": math.NaN()},
			Samples: map[string][]float64{"lat": {1, 2, 3}}}}
	}
	if err := sameRuns(base(), base()); err != nil {
		t.Errorf("equal runs: %v", err)
	}
	for _, tc := range []struct {
		name  string
		tweak func(r []labkit.Run) []labkit.Run
		want  string
	}{
		{"last bit", func(r []labkit.Run) []labkit.Run {
			r[0].Metrics["total_ms"] = math.Nextafter(1.5, 2)
			return r
		}, "metric total_ms"},
		{"missing metric", func(r []labkit.Run) []labkit.Run {
			delete(r[0].Metrics, "p99")
			r[0].Metrics["other"] = 0
			return r
		}, "metric p99"},
		{"sample", func(r []labkit.Run) []labkit.Run { r[0].Samples["lat"][2] = 4; return r }, "sample lat[2]"},
		{"sample count", func(r []labkit.Run) []labkit.Run { r[0].Samples["lat"] = r[0].Samples["lat"][:2]; return r }, "3 and 2 samples lat"},
		{"runs", func(r []labkit.Run) []labkit.Run { return append(r, r[0]) }, "1 runs and 2"},
	} {
		if err := sameRuns(base(), tc.tweak(base())); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
}

// lab bench checks all of its input before the first timing: bad input is
// exit status 2 at once, naming the flag and the value, not a note printed
// after minutes of benchmarks.
func TestBenchRefusesBadInputFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-events", "0"}, "-events 0: want at least 1"},
		{[]string{"-events", "-5"}, "-events -5"},
		{[]string{"-peer-trials", "0"}, "-peer-trials 0: want at least 1"},
		{[]string{"-sweep", "nosuch"}, `-sweep nosuch: unknown experiment "nosuch"`},
		{[]string{"-sweep-set", "hz=7"}, "-sweep-set hz=7: experiment rk3399-spinlock-wait: parameter hz: value 7 not allowed"},
		{[]string{"-sweep-set", "nokey=1"}, `"nokey"`},
		{[]string{"-notebooks", "nomatch*.ipynb"}, `-notebooks "nomatch*.ipynb": no notebook matches`},
		{[]string{"-against", "no-such-revision"}, `-against: revision "no-such-revision"`},
		{[]string{"-against", "HEAD", "-against-runs", "nosuch"}, `-against-runs: unknown experiment "nosuch"`},
	} {
		code, out, stderr := runCLI(t, append([]string{"bench", "-peer=false"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || out != "" {
			t.Errorf("lab bench %s: exit %d, stdout %q, stderr %q; want exit %d naming %q and no figures",
				strings.Join(tc.args, " "), code, out, stderr, exitUsage, tc.want)
		}
	}
}

// bestOf times every side in turn, round after round, and keeps each
// side's best time; a side that fails is noted once, not timed again, and
// gives no figure.
func TestBestOfAlternatesAndKeepsTheBest(t *testing.T) {
	var calls []string
	scripted := func(key string, walls ...float64) timing {
		i := 0
		return timing{key, func() (float64, error) {
			calls = append(calls, key)
			w := walls[i]
			i++
			if w < 0 {
				return 0, errors.New("crashed")
			}
			return w, nil
		}}
	}
	var notes []string
	note := func(format string, a ...any) { notes = append(notes, fmt.Sprintf(format, a...)) }
	best := bestOf(3, []timing{scripted("synclab", 6, 5, 7), scripted("peer", 8, 4, 9), scripted("flaky", 1, -1, 1)}, note)
	if want := map[string]float64{"synclab": 5, "peer": 4}; !maps.Equal(best, want) {
		t.Errorf("best %v, want %v (the least of each side, none for the side that failed)", best, want)
	}
	if want := "synclab peer flaky synclab peer flaky synclab peer"; strings.Join(calls, " ") != want {
		t.Errorf("timed in the order %q, want %q (in turn, the failed side dropped)", strings.Join(calls, " "), want)
	}
	if len(notes) != 1 || notes[0] != "flaky: crashed" {
		t.Errorf("notes %q, want one naming the failed side", notes)
	}
}

// The detailed run's figures derived from its wall time follow the best
// wall time: the time per event and the real-time factor (the modelled
// chip's seconds simulated per wall second), and neither is made up when
// what it divides is unknown.
func TestSetDetailedWallDerivesPerEventAndRealTime(t *testing.T) {
	fig := benchFigures{"esp32_mutex_2m_events": uint64(25_000_000), "esp32_mutex_2m_simulated_s": 9.5}
	fig.setDetailedWall(5)
	fig.setDetailedWall(4) // a better trial replaces the first
	for key, want := range map[string]float64{"esp32_mutex_2m_detailed_wall_s": 4,
		"esp32_mutex_2m_detailed_ns_per_event": 160, "esp32_mutex_2m_detailed_real_time_factor": 2.375} {
		if got, _ := fig[key].(float64); got != want {
			t.Errorf("%s = %v, want %v", key, fig[key], want)
		}
	}
	bare := benchFigures{}
	bare.setDetailedWall(4)
	if len(bare) != 1 {
		t.Errorf("without events or simulated time: %v, want the wall time alone", bare)
	}
}
