package platforms

import (
	"strings"
	"testing"
)

// The hash changes with everything that determines the runs, and Diff names
// that one change. Kills mutants that leave seed, repeats, variants, the
// sweep or the metrics out of either.
func TestHashAndDiffCoverWhatDeterminesTheRuns(t *testing.T) {
	base := sweptFixture(t)
	tests := []struct {
		what, diff string // diff: the start of Diff's one entry
		change     func(e *Experiment)
	}{
		{"seed", "seed 42 vs 43", func(e *Experiment) { e.Seed++ }},
		{"repeats", "repeats ", func(e *Experiment) { e.Repeats++ }},
		{"variants", "variants [", func(e *Experiment) { e.Variants = e.Variants[:1] }},
		{"variant name", "variants [", func(e *Experiment) { e.Variants[0].Name = "faster" }},
		{"sweep values", "sweep [", func(e *Experiment) { e.Sweep[0].Values[0]++ }},
		{"sweep", "sweep [", func(e *Experiment) { e.Sweep = nil }},
		{"metrics", "metrics [", func(e *Experiment) { e.Metrics = e.Metrics[:1] }},
		{"name", "name ", func(e *Experiment) { e.Name += "-2" }},
		{"platform", "platform ", func(e *Experiment) { e.Platform += "-2" }},
		{"param value", "parameter " + base.Params[1].Key + " ", func(e *Experiment) { e.Params[1].Value += 0.01 }},
		{"param added", "parameter Extra (none) vs 3", func(e *Experiment) { e.Params = append(e.Params, Param{Key: "Extra", Value: 3}) }},
		{"param removed", "parameter " + base.Params[0].Key + " ", func(e *Experiment) { e.Params = e.Params[1:] }},
	}
	for _, tt := range tests {
		e := base.Clone()
		tt.change(&e)
		if e.Hash() == base.Hash() {
			t.Errorf("changing the %s leaves the hash unchanged", tt.what)
		}
		if d := base.Diff(e); len(d) != 1 || !strings.HasPrefix(d[0], tt.diff) {
			t.Errorf("changing the %s: Diff %q, want one entry starting %q", tt.what, d, tt.diff)
		}
	}
	prose := base.Clone()
	prose.Description += " (reworded)"
	if prose.Hash() != base.Hash() || len(base.Diff(prose)) != 0 {
		t.Errorf("rewording the description: hash %s vs %s, Diff %q; want the same hash and no difference", prose.Hash(), base.Hash(), base.Diff(prose))
	}
}
