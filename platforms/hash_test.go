package platforms

import "testing"

// The hash changes with everything that determines the runs. Kills mutants
// that leave seed, repeats, variants, the sweep or the metrics out of it.
func TestHashCoversWhatDeterminesTheRuns(t *testing.T) {
	base := sweptFixture(t)
	changes := map[string]func(e *Experiment){
		"seed":         func(e *Experiment) { e.Seed++ },
		"repeats":      func(e *Experiment) { e.Repeats++ },
		"variants":     func(e *Experiment) { e.Variants = e.Variants[:1] },
		"variant name": func(e *Experiment) { e.Variants[0].Name = "faster" },
		"sweep values": func(e *Experiment) { e.Sweep[0].Values[0]++ },
		"sweep":        func(e *Experiment) { e.Sweep = nil },
		"metrics":      func(e *Experiment) { e.Metrics = e.Metrics[:1] },
		"name":         func(e *Experiment) { e.Name += "-2" },
		"platform":     func(e *Experiment) { e.Platform += "-2" },
		"param value":  func(e *Experiment) { e.Params[1].Value += 0.01 },
	}
	for what, change := range changes {
		e := base.Clone()
		change(&e)
		if e.Hash() == base.Hash() {
			t.Errorf("changing the %s leaves the hash unchanged", what)
		}
	}
}
