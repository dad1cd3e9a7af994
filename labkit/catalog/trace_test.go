package catalog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"testing"

	"synclab/labkit"
	"synclab/platforms"
)

// TestTracesSaysWhatRunDoes: an experiment marked Traces records a trace with
// spans when its run asks for one, an unmarked one records none (lab run
// -trace refuses it before any run on that word), and a trace only
// observes: the run's metrics and samples are the same, bit for bit,
// with and without it.
func TestTracesSaysWhatRunDoes(t *testing.T) {
	for _, e := range All() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			vals := e.Params.Values()
			for k, v := range runLength {
				if _, ok := vals[k]; ok {
					vals[k] = min(vals[k], v)
				}
			}
			spec := platforms.RunSpec{Experiment: e.Name, Variant: e.Variants[0].Name, Params: vals, Seed: e.Seed}
			plain, err := e.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			spec.Trace = true
			traced, err := e.Run(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			if recorded := traced.Trace != nil && len(traced.Trace.Spans) > 0; recorded != e.Traces {
				t.Errorf("Traces = %t, but a run asked for a trace recorded one: %t", e.Traces, recorded)
			}
			if plain.Trace != nil {
				t.Error("a run not asked for a trace recorded one")
			}
			same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
			if !maps.EqualFunc(plain.Metrics, traced.Metrics, same) || !reflect.DeepEqual(plain.Samples, traced.Samples) {
				t.Errorf("tracing changed the run:\nwithout: %v\nwith:    %v", plain.Metrics, traced.Metrics)
			}
		})
	}
}

// TestChromeTraceNests: the trace file of every experiment that traces, read
// as Perfetto reads it (each time rounded to the nanosecond on its own),
// holds one complete event per span, and on every thread (a core's lane)
// any two events are disjoint or one holds the other: the viewer shows
// overlapping events that do not nest wrongly.
func TestChromeTraceNests(t *testing.T) {
	for _, e := range All() {
		if !e.Traces {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			for k, v := range runLength {
				if _, ok := e.Params.Values()[k]; ok && e.Params.Values()[k] > v {
					var err error
					if e, err = e.With(k, v); err != nil {
						t.Fatal(err)
					}
				}
			}
			e.Repeats = 1
			res, err := labkit.RunExperiment(context.Background(), e, labkit.RunOptions{Trace: true, NoCache: true, Progress: labkit.NoProgress})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := labkit.WriteChromeTrace(&b, res); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				TraceEvents []struct {
					Ph       string
					Pid, Tid int
					Ts, Dur  float64
				} `json:"traceEvents"`
			}
			if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			type slice struct{ start, end int64 }
			threads := map[[2]int][]slice{}
			for _, ev := range doc.TraceEvents {
				if ev.Ph == "X" {
					start := int64(math.Round(ev.Ts * 1000)) // Perfetto: llround(ts * 1000.0)
					k := [2]int{ev.Pid, ev.Tid}
					threads[k] = append(threads[k], slice{start, start + int64(math.Round(ev.Dur*1000))})
				}
			}
			spans, events := 0, 0
			for _, r := range res.Runs {
				if r.Trace != nil {
					spans += len(r.Trace.Spans)
				}
			}
			for k, ss := range threads {
				events += len(ss)
				slices.SortStableFunc(ss, func(a, b slice) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end)) })
				var open []slice // the enclosing slices, innermost last
				for _, s := range ss {
					for len(open) > 0 && open[len(open)-1].end <= s.start {
						open = open[:len(open)-1]
					}
					if len(open) > 0 && s.end > open[len(open)-1].end {
						t.Fatalf("process %d thread %d: slice %d-%d ns overlaps %d-%d ns without nesting", k[0], k[1], s.start, s.end, open[len(open)-1].start, open[len(open)-1].end)
					}
					open = append(open, s)
				}
			}
			if spans == 0 || events != spans {
				t.Errorf("%d complete events for %d spans", events, spans)
			}
		})
	}
}
