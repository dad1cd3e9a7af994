package labkit

import (
	"strings"
	"testing"

	"synclab/platforms"
)

// A key defined alike by several experiments of a platform is one row, as
// defined; a key they define differently is one row that names each
// experiment with its value and description (and its source, where the
// sources differ), so the platform table never shows one experiment's
// definition as every experiment's.
func TestPlatformParamsSharedKeys(t *testing.T) {
	p := func(key string, v float64, unit, doc, src string) platforms.Param {
		return platforms.Param{Key: key, Value: v, Unit: unit, Doc: doc, Source: src, Prov: platforms.CODE, Max: 1e6}
	}
	exps := []platforms.Experiment{
		{Name: "a", Platform: "soc", Params: platforms.Params{p("mhz", 240, "MHz", "clock", "datasheet"), p("rounds", 1000, "rounds", "pairs averaged", "scenario")}},
		{Name: "b", Platform: "soc", Params: platforms.Params{p("mhz", 240, "MHz", "clock", "datasheet"), p("rounds", 1000, "rounds", "pairs averaged", "scenario")}},
		{Name: "c", Platform: "soc", Params: platforms.Params{p("rounds", 2000, "round trips", "timed round trips", "the benchmark's")}},
		{Name: "d", Platform: "other", Params: platforms.Params{p("rounds", 5, "rounds", "elsewhere", "x")}},
	}
	groups := PlatformParams(exps)
	if len(groups) != 2 || groups[1].Platform != "soc" || strings.Join(groups[1].Experiments, ",") != "a,b,c" {
		t.Fatalf("groups %+v, want other and soc (a, b, c)", groups)
	}
	soc := groups[1].Params
	if mhz, _ := soc.Lookup("mhz"); mhz.Doc != "clock" || mhz.Source != "datasheet" {
		t.Errorf("mhz, alike in a and b: %+v, want it as defined", mhz)
	}
	r, _ := soc.Lookup("rounds")
	for _, want := range []string{"differs by experiment", "a, b: 1,000 rounds, pairs averaged", "c: 2,000 round trips, timed round trips"} {
		if !strings.Contains(r.Doc, want) {
			t.Errorf("rounds doc %q, want it to contain %q", r.Doc, want)
		}
	}
	if r.Source != "a, b: scenario; c: the benchmark's" || r.Value != 1000 {
		t.Errorf("rounds: value %g, source %q, want a's value and each definition's source", r.Value, r.Source)
	}
	if d, _ := groups[0].Params.Lookup("rounds"); d.Doc != "elsewhere" {
		t.Errorf("another platform's rounds: %q, want its own, untouched", d.Doc)
	}
}
