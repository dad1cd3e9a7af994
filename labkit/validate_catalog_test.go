package labkit_test

import (
	"testing"

	"synclab/labkit"
	"synclab/labkit/catalog"
)

// TestChecksResolveInCatalog: every check names an experiment, variants,
// settings and a metric that exist, and the parameters it says were set
// from its source are parameters of that experiment.
func TestChecksResolveInCatalog(t *testing.T) {
	for _, c := range labkit.Checks() {
		e, err := catalog.Lookup(c.Experiment)
		if err != nil {
			t.Errorf("check %s: %v", c.ID, err)
			continue
		}
		vs := []string{c.Variant}
		if c.Baseline != "" {
			vs = append(vs, c.Baseline)
		}
		if _, err := e.WithVariants(vs...); err != nil {
			t.Errorf("check %s: %v", c.ID, err)
		}
		if _, err := e.WithSettings(c.Settings...); err != nil {
			t.Errorf("check %s: %v", c.ID, err)
		}
		if _, ok := e.Metric(c.Metric); !ok {
			t.Errorf("check %s: %s has no metric %s", c.ID, e.Name, c.Metric)
		}
		for _, k := range c.SetFrom {
			if _, ok := e.Params.Lookup(k); !ok {
				t.Errorf("check %s: parameter %s (set from its source) is not a parameter of %s", c.ID, k, e.Name)
			}
		}
	}
}
