package ledger

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"synclab/labkit"
	"synclab/labkit/catalog"
	"synclab/platforms"
)

// The embedded ledger parses and every claim is judged by code or says why
// it cannot be: Load checks that each claim with runs has a judge and a
// how, each judge a claim, each run a known name; and every run builds from
// the catalog (experiment, variants, settings and sweep all valid).
func TestLedgerLoadsAndBuilds(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Claims) < 30 || len(l.Articles) != 2 {
		t.Fatalf("%d claims of %d articles; want every claim of both articles", len(l.Claims), len(l.Articles))
	}
	for _, r := range l.Runs {
		if _, err := r.Build(catalog.Lookup); err != nil {
			t.Error(err)
		}
	}
	per := map[string]int{}
	for _, c := range l.Claims {
		per[c.Article]++
	}
	if per["arm"] < 15 || per["esp32"] < 10 {
		t.Errorf("claims per article %v; want both articles covered", per)
	}
}

// Bad ledgers are refused, naming the claim and what is wrong.
func TestParseRefusesBadLedgers(t *testing.T) {
	good := `{"articles":[{"id":"arm"}],"runs":[{"name":"r","experiment":"e"}],"claims":[%s]}`
	for _, tc := range []struct{ claim, want string }{
		{`{"id":"x","article":"arm","quote":"q","claim":"c"}`, "needs exactly one of runs (and how), a not_simulable reason or a wrong reason"},
		{`{"id":"x","article":"arm","quote":"q","claim":"c","runs":["r"],"how":"h","not_simulable":"w"}`, "needs exactly one of"},
		{`{"id":"x","article":"arm","quote":"q","claim":"c","not_simulable":"w","wrong":"w"}`, "needs exactly one of"},
		{`{"id":"x","article":"arm","quote":"q","claim":"c","runs":["r"],"how":"h"}`, "no judge in labkit/ledger"},
		{`{"id":"x","article":"esp","quote":"q","claim":"c","not_simulable":"w"}`, `article "esp" unknown`},
		{`{"id":"arm-table-wait","article":"arm","quote":"q","claim":"c","runs":["nope"],"how":"h"}`, `run "nope" unknown`},
		{`{"id":"x","article":"arm","quote":"q","claim":"c","not_simulable":"w","extra":1}`, "unknown field"},
		{`{"id":"arm-table-wait","article":"arm","quote":"q","claim":"c","runs":["r"],"how":"h","handoffs":true}`, "does not list run c2c-pair"},
	} {
		_, err := Parse([]byte(fmt.Sprintf(good, tc.claim)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.claim, err, tc.want)
		}
	}
}

// resultsOf builds a result for every run of l without simulating: cell
// gives the metrics of each variant at each sweep point of run r's
// experiment e, or the error its runs failed with, for every repeat.
func resultsOf(t *testing.T, l Ledger, cell func(r Run, e platforms.Experiment, variant string, point int) (map[string]float64, string)) map[string]*labkit.Result {
	t.Helper()
	out := map[string]*labkit.Result{}
	for _, r := range l.Runs {
		e, err := r.Build(catalog.Lookup)
		if err != nil {
			t.Fatal(err)
		}
		res := &labkit.Result{Experiment: e}
		for _, v := range e.Variants {
			for p := range e.NumPoints() {
				m, fail := cell(r, e, v.Name, p)
				for rep := range e.Repeats {
					res.Runs = append(res.Runs, labkit.Run{Variant: v.Name, Point: p, Repeat: rep, Metrics: m, Err: fail})
				}
			}
		}
		out[r.Name] = res
	}
	return out
}

// synthetic returns results for every run of l with every metric drawn
// from rng: a base per run and metric over a wide range, times a factor per
// variant and point that is 1 half the time (so equal values, and the
// verdicts that need them, occur), some metrics zero, some runs failed with
// a deadlock; judges are exercised without simulating.
func synthetic(t *testing.T, l Ledger, rng *rand.Rand) map[string]*labkit.Result {
	t.Helper()
	bases := map[string]map[string]float64{}
	return resultsOf(t, l, func(r Run, e platforms.Experiment, _ string, _ int) (map[string]float64, string) {
		base := bases[r.Name]
		if base == nil { // drawn at the run's first cell
			base = map[string]float64{}
			for _, m := range e.Metrics {
				base[m.Name] = math.Exp(rng.NormFloat64() * 4)
			}
			bases[r.Name] = base
		}
		if rng.Float64() < 0.2 {
			return nil, fmt.Sprintf("worker/0 on core 0 at 1ms: deadlock at %dus: worker/1 (core 1) waits on x", rng.IntN(1000))
		}
		m := map[string]float64{}
		for _, mt := range e.Metrics { // in order: the draws are the same every run
			k, b := mt.Name, base[mt.Name]
			switch x := rng.Float64(); {
			case x < 0.1:
				m[k] = 0
			case x < 0.55:
				m[k] = b
			default:
				m[k] = b * math.Exp(rng.NormFloat64()*2)
			}
		}
		return m, ""
	})
}

// perturbed returns l with the article's numbers of every claim scaled by
// random factors between 0.1 and 10.
func perturbed(l Ledger, rng *rand.Rand) Ledger {
	l.Claims = slices.Clone(l.Claims)
	for i := range l.Claims {
		vs := maps.Clone(l.Claims[i].Values)
		for _, k := range slices.Sorted(maps.Keys(vs)) { // in order: the same draws every run
			vs[k] *= math.Pow(10, 2*rng.Float64()-1)
		}
		l.Claims[i].Values = vs
	}
	return l
}

// Verdicts are computed from results, not typed in: over random results
// (and random article numbers) every claim judged by runs gets a verdict, a magnitude and a why, the
// text changes with the results, and each claim reaches at least two of
// holds, partly and contradicted; a claim whose runs all failed is not
// simulated, naming the failure. Not-simulable claims keep their reason.
// Kills: a judge returning a constant, or ignoring its runs.
func TestVerdictsAreComputed(t *testing.T) {
	l, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]map[Verdict]bool{}
	texts := map[string]map[string]bool{}
	for range 300 {
		for _, j := range perturbed(l, rng).JudgeResults(synthetic(t, l, rng)) {
			if seen[j.ID] == nil {
				seen[j.ID], texts[j.ID] = map[Verdict]bool{}, map[string]bool{}
			}
			seen[j.ID][j.Verdict] = true
			texts[j.ID][j.Magnitude+j.Why] = true
			switch {
			case j.Verdict == "" || j.Why == "":
				t.Fatalf("%s: verdict %q, why %q; want both", j.ID, j.Verdict, j.Why)
			case j.NotSimulable != "" && (j.Verdict != NotSimulable || j.Why != j.NotSimulable):
				t.Fatalf("%s: not simulable claim judged %q (%s)", j.ID, j.Verdict, j.Why)
			case j.Wrong != "" && (j.Verdict != Wrong || j.Why != j.Wrong):
				t.Fatalf("%s: claim wrong by its sources judged %q (%s)", j.ID, j.Verdict, j.Why)
			case len(j.Runs) == 0:
			case j.Verdict == NotSimulated && !strings.Contains(j.Why, "no result for"):
				t.Fatalf("%s: not simulated without naming the missing result: %s", j.ID, j.Why)
			case j.Verdict != NotSimulated && j.Magnitude == "":
				t.Fatalf("%s: %s without a magnitude", j.ID, j.Verdict)
			}
		}
	}
	for _, c := range l.Claims {
		if len(c.Runs) == 0 {
			continue
		}
		n := 0
		for _, v := range []Verdict{Holds, Partly, Contradicted} {
			if seen[c.ID][v] {
				n++
			}
		}
		if n < 2 || len(texts[c.ID]) < 10 {
			t.Errorf("%s: verdicts %v and %d different texts over 300 random results; want two or more verdicts, texts that follow the results", c.ID, seen[c.ID], len(texts[c.ID]))
		}
	}
}

// Citations name the title and say when site and date are unknown.
func TestArticleCite(t *testing.T) {
	a := Article{Title: "T", English: "E"}
	if got := a.Cite(); got != `"T" (E; site and date not recorded with the lab's copy)` {
		t.Errorf("Cite() = %s", got)
	}
	a.Site, a.Date = "example.org", "2024-05-01"
	if got := a.Cite(); got != `"T" (E; example.org, 2024-05-01)` {
		t.Errorf("Cite() = %s", got)
	}
}
