package catalog

import (
	"context"
	"maps"
	"math"
	"reflect"
	"testing"

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
