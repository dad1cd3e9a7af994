package labkit_test

import (
	"context"
	"fmt"
	"testing"

	"synclab/platforms"

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

// TestPlausibleRangesKeepVendorLimits: a vendor's pass limit bounds every
// parameter on the path its test times, so each ASSUME parameter at either
// end of its plausible range, the others at their defaults, keeps the
// model's path of every such check below the limit. A check whose model
// path is an upper estimate of the test's bounds nothing.
func TestPlausibleRangesKeepVendorLimits(t *testing.T) {
	var checks []labkit.Check
	for _, c := range labkit.Checks() {
		if c.Kind != labkit.Bound || c.UpperEstimate {
			continue
		}
		e, err := catalog.Lookup(c.Experiment)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range e.Params {
			if p.Prov != platforms.ASSUME || p.Low == p.High {
				continue
			}
			for _, v := range []float64{p.Low, p.High} {
				at := c
				at.ID = fmt.Sprintf("%s at %s=%g", c.ID, p.Key, v)
				at.Settings = append(append([]string{}, c.Settings...), fmt.Sprintf("%s=%g", p.Key, v))
				checks = append(checks, at)
			}
		}
	}
	if len(checks) == 0 {
		t.Fatal("no bound check with ranged parameters: the test proves nothing")
	}
	vs, err := labkit.Validate(context.Background(), checks, catalog.Lookup, labkit.RunOptions{NoCache: true, Progress: labkit.NoProgress})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if !v.Pass {
			t.Errorf("%s: model %g %s, limit %g %s%s", v.ID, v.Model, v.Unit, v.Published, v.Unit, v.Err)
		}
	}
}
