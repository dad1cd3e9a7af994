package catalog

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/platforms"
)

func TestAllValidAndUnique(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("empty catalog")
	}
	for i, e := range all {
		if err := e.Validate(); err != nil {
			t.Error(err)
		}
		if e.Run == nil {
			t.Errorf("%s: no run function", e.Name)
		}
		if i > 0 && all[i-1].Name >= e.Name {
			t.Errorf("catalog not sorted by unique name: %s then %s", all[i-1].Name, e.Name)
		}
	}
}

// Every reference row names an experiment of the catalog, one of its
// variants and one of its metrics, and reaches that experiment's definition.
// TestCountsTakeWholeNumbers: a parameter that counts (CPUs, cores,
// cycles, rounds, hand-offs...) accepts whole numbers only, or the model
// would silently run a truncated value (cpu_b=1.7 ran CPU 1).
func TestCountsTakeWholeNumbers(t *testing.T) {
	counts := []string{"cpu", "cores", "cycles", "tasks", "entries", "rounds", "round trips", "hand-offs", "polls", "wakeups", "iterations", "per task", "bytes", "ops"}
	for _, e := range All() {
		for _, p := range e.Params {
			if slices.Contains(counts, p.Unit) && !p.Integer && len(p.Choices) == 0 {
				t.Errorf("%s: parameter %s (%s) accepts fractions", e.Name, p.Key, p.Unit)
			}
		}
	}
}

// TestTextsStandAlone: no parameter source, description or doc points at a
// file outside the repository (the team's notes: calibration.md,
// notebook-notes.md, the seeds and peers folders) or climbs out of it.
func TestTextsStandAlone(t *testing.T) {
	outside := []string{"../", "calibration.md", "notebook-notes.md", "seeds/", "shared/"}
	for _, e := range All() {
		texts := []string{e.Description}
		for _, p := range e.Params {
			texts = append(texts, p.Source, p.Doc)
		}
		for _, m := range e.Metrics {
			texts = append(texts, m.Doc)
		}
		for _, v := range e.Variants {
			texts = append(texts, v.Doc)
		}
		for _, text := range texts {
			for _, o := range outside {
				if strings.Contains(text, o) {
					t.Errorf("%s: %q points outside the repository: %s", e.Name, o, text)
				}
			}
		}
	}
}

func TestReferencesReachTheirExperiments(t *testing.T) {
	rows, err := labkit.AllReferences()
	if err != nil || len(rows) == 0 {
		t.Fatalf("reference data: %d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		e, err := Lookup(r.Experiment)
		if err != nil {
			t.Errorf("reference row for %s: %v", r.Experiment, err)
			continue
		}
		if !slices.Contains(e.VariantNames(), r.Variant) {
			t.Errorf("reference row %s/%s: no such variant", r.Experiment, r.Variant)
		}
		if _, ok := e.Metric(r.Metric); !ok {
			t.Errorf("reference row %s/%s: no such metric %s", r.Experiment, r.Variant, r.Metric)
		}
		if !slices.Contains(e.Reference, r.Reference) {
			t.Errorf("%s: reference %+v missing from its definition", r.Experiment, r.Reference)
		}
	}
}

func TestLookup(t *testing.T) {
	e, err := Lookup("rk3399-spinlock-wait")
	if err != nil || e.Name != "rk3399-spinlock-wait" || e.Run == nil {
		t.Fatalf("Lookup: %+v, %v", e.Name, err)
	}
	e.Params[0].Value = -5 // a copy: must not change the catalog
	if again, _ := Lookup("rk3399-spinlock-wait"); again.Params[0].Value == -5 {
		t.Fatal("Lookup returned a shared copy")
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "esp32-critical-section, esp32-notify-unblock") {
		t.Fatalf("Lookup(nope) should list the known names: %v", err)
	}
}

// Every parameter of every catalog experiment is shown in its platform's
// table (lab platforms, the README) as the experiment defines it, or in a
// row that names the experiment: a platform's experiments that share a key
// but define it differently (a copied description gone stale, a source
// that contradicts another's) cannot hide behind the first definition.
func TestPlatformTablesShowEveryDefinition(t *testing.T) {
	groups := map[string]platforms.Params{}
	for _, g := range labkit.PlatformParams(All()) {
		groups[g.Platform] = g.Params
	}
	differ := 0
	for _, e := range All() {
		for _, p := range e.Params {
			row, ok := groups[e.Platform].Lookup(p.Key)
			switch {
			case !ok:
				t.Errorf("%s: %s is not in platform %s's table", e.Name, p.Key, e.Platform)
			case reflect.DeepEqual(row, p):
			case strings.Contains(row.Doc, e.Name) && strings.Contains(row.Doc, p.Doc):
				differ++
			default:
				t.Errorf("%s: %s is shown as %+v, not as %s defines it: %+v", e.Platform, p.Key, row, e.Name, p)
			}
		}
	}
	if differ > 3 {
		t.Errorf("%d parameters defined differently by experiments of one platform; want only esp32's rounds, a count in each of its 3 experiments' own unit", differ)
	}
}
