// Package ledger is the claims ledger: every claim of the two source
// articles (data/claims/claims.json), the runs that judge it, and the code
// that computes each verdict — holds, partly, contradicted, unresolved (the
// seeds cannot tell), wrong, or not simulable with why — and its magnitude
// from those runs' results. Nothing in a
// verdict is typed in: the article's numbers come from the data file, the
// rest from the results, so a verdict follows the model and its parameters.
//
// Judge runs every run the claims name (through labkit.RunExperiment, so
// results are cached) and calls each claim's judge; Table and Markdown show
// the judgements.
package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"synclab/data"
	"synclab/labkit"
	"synclab/platforms"
)

// Verdict is how a claim fares against the model.
type Verdict string

// Verdicts.
const (
	Holds        Verdict = "holds"
	Contradicted Verdict = "contradicted"
	Partly       Verdict = "partly"
	// Unresolved: the verdict turns on a metric that varies from seed to
	// seed, and the 95% interval of the ratio it compares holds the
	// threshold: more repeats would decide.
	Unresolved Verdict = "unresolved"
	// Wrong: a statement of fact (an instruction set, an API) that the
	// sources it is about show false; no run is needed, and none could show
	// otherwise.
	Wrong        Verdict = "wrong"
	NotSimulable Verdict = "not simulable"
	// NotSimulated: a run the verdict needs failed unexpectedly.
	NotSimulated Verdict = "not simulated"
)

// Article is one source article.
type Article struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	English string `json:"english"`
	Site    string `json:"site"`
	Date    string `json:"date"`
}

// Cite returns the article's citation: title, site and date as known.
func (a Article) Cite() string {
	where := "site and date not recorded with the lab's copy"
	if a.Site != "" || a.Date != "" {
		where = a.Site + ", " + a.Date
	}
	return fmt.Sprintf("%q (%s; %s)", a.Title, a.English, where)
}

// Run names an experiment as a claim's verdict needs it: some of its
// variants, parameter settings, a sweep and a repeat count (0: the
// experiment's own).
type Run struct {
	Name       string             `json:"name"`
	Experiment string             `json:"experiment"`
	Variants   []string           `json:"variants,omitempty"`
	Settings   map[string]float64 `json:"settings,omitempty"`
	Sweep      []platforms.Axis   `json:"sweep,omitempty"`
	Repeats    int                `json:"repeats,omitempty"`
}

// Claim is one claim of an article and how it is judged.
type Claim struct {
	ID      string `json:"id"`
	Article string `json:"article"`
	Section string `json:"section"`
	Quote   string `json:"quote"`
	Claim   string `json:"claim"`
	// Values are the article's numbers the verdict compares with.
	Values map[string]float64 `json:"values,omitempty"`
	// Runs name the runs the verdict is computed from; How says how.
	Runs []string `json:"runs,omitempty"`
	How  string   `json:"how,omitempty"`
	// NotSimulable says why no run can judge the claim (then Runs is
	// empty).
	NotSimulable string `json:"not_simulable,omitempty"`
	// Wrong says, citing them, how the sources the claim is about show it
	// false (then Runs is empty).
	Wrong string `json:"wrong,omitempty"`
	// HandOffs marks a verdict whose magnitude rests on the RK3399 model's
	// cache-line hand-offs, which notebook 05 finds too slow against the
	// published core-to-core figures; the claim then lists handOffRuns, and
	// its judgement carries the caveat computed from it.
	HandOffs bool `json:"handoffs,omitempty"`
}

// Ledger is the data file: articles, runs and claims.
type Ledger struct {
	About    string    `json:"about"`
	Articles []Article `json:"articles"`
	Runs     []Run     `json:"runs"`
	Claims   []Claim   `json:"claims"`
}

// Load parses the embedded ledger (data/claims/claims.json) and checks it.
func Load() (Ledger, error) { return Parse(data.Claims) }

// Parse parses a ledger from JSON and checks it: unique ids, known articles
// and runs, every claim judged by runs (with a judge in this package), not
// simulable with a reason, or wrong by its sources.
func Parse(b []byte) (Ledger, error) {
	var l Ledger
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Ledger{}, fmt.Errorf("ledger: %w", err)
	}
	return l, l.check()
}

func (l Ledger) check() error {
	articles := map[string]bool{}
	for _, a := range l.Articles {
		articles[a.ID] = true
	}
	runs := map[string]bool{}
	for _, r := range l.Runs {
		if runs[r.Name] || r.Name == "" || r.Experiment == "" {
			return fmt.Errorf("ledger: run %q: duplicate, or without a name or experiment", r.Name)
		}
		runs[r.Name] = true
	}
	ids := map[string]bool{}
	for _, c := range l.Claims {
		switch {
		case ids[c.ID] || c.ID == "":
			return fmt.Errorf("ledger: claim id %q empty or duplicate", c.ID)
		case !articles[c.Article]:
			return fmt.Errorf("ledger: claim %s: article %q unknown", c.ID, c.Article)
		case c.Quote == "" || c.Claim == "":
			return fmt.Errorf("ledger: claim %s: quote and claim must be set", c.ID)
		case btoi(len(c.Runs) > 0)+btoi(c.NotSimulable != "")+btoi(c.Wrong != "") != 1:
			return fmt.Errorf("ledger: claim %s: needs exactly one of runs (and how), a not_simulable reason or a wrong reason", c.ID)
		case len(c.Runs) > 0 && (c.How == "" || judges[c.ID] == nil):
			return fmt.Errorf("ledger: claim %s: judged by runs %v, but has no how or no judge in labkit/ledger", c.ID, c.Runs)
		}
		for _, h := range handOffRuns {
			if c.HandOffs && !slices.Contains(c.Runs, h.run) {
				return fmt.Errorf("ledger: claim %s: rests on hand-offs, but does not list run %s, which its caveat needs", c.ID, h.run)
			}
		}
		for _, r := range c.Runs {
			if !runs[r] {
				return fmt.Errorf("ledger: claim %s: run %q unknown", c.ID, r)
			}
		}
		ids[c.ID] = true
	}
	for id := range judges {
		if !ids[id] {
			return fmt.Errorf("ledger: judge %s has no claim in the data file", id)
		}
	}
	return nil
}

// Article returns the article with the given id.
func (l Ledger) Article(id string) (Article, bool) {
	i := slices.IndexFunc(l.Articles, func(a Article) bool { return a.ID == id })
	if i < 0 {
		return Article{}, false
	}
	return l.Articles[i], true
}

// Build builds run r's experiment from the catalog lookup.
func (r Run) Build(lookup func(string) (platforms.Experiment, error)) (platforms.Experiment, error) {
	e, err := lookup(r.Experiment)
	if err != nil {
		return e, fmt.Errorf("ledger: run %s: %w", r.Name, err)
	}
	if len(r.Variants) > 0 {
		if e, err = e.WithVariants(r.Variants...); err != nil {
			return e, fmt.Errorf("ledger: run %s: %w", r.Name, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Settings)) {
		if e, err = e.With(k, r.Settings[k]); err != nil {
			return e, fmt.Errorf("ledger: run %s: %w", r.Name, err)
		}
	}
	for _, a := range r.Sweep {
		if e, err = e.WithSweep(a.Param, a.Values...); err != nil {
			return e, fmt.Errorf("ledger: run %s: %w", r.Name, err)
		}
	}
	if r.Repeats > 0 {
		e.Repeats = r.Repeats
	}
	return e, nil
}

// Judgement is a claim with its verdict, magnitude and why.
type Judgement struct {
	Claim
	Article   Article `json:"-"`
	Verdict   Verdict `json:"verdict"`
	Magnitude string  `json:"magnitude,omitempty"`
	Why       string  `json:"why"`
	// Caveat qualifies the magnitude (Claim.HandOffs).
	Caveat string `json:"caveat,omitempty"`
}

// Judge runs every run the claims need (Run) and judges every claim.
func (l Ledger) Judge(ctx context.Context, lookup func(string) (platforms.Experiment, error), opts labkit.RunOptions) ([]Judgement, error) {
	results, err := l.Run(ctx, lookup, opts)
	if err != nil {
		return nil, err
	}
	return l.JudgeResults(results), nil
}

// Run runs every run of the ledger (lookup finds experiments by name; opts
// as for labkit.RunExperiment, whose cache makes a second call cheap) and
// returns the results by run name. Runs that fail (a simulated deadlock)
// are kept: some verdicts rest on them. Any other error stops it.
func (l Ledger) Run(ctx context.Context, lookup func(string) (platforms.Experiment, error), opts labkit.RunOptions) (map[string]*labkit.Result, error) {
	results := map[string]*labkit.Result{}
	for _, r := range l.Runs {
		e, err := r.Build(lookup)
		if err != nil {
			return nil, err
		}
		res, err := labkit.RunExperiment(ctx, e, opts)
		var failed *labkit.RunsFailedError
		if err != nil && (!errors.As(err, &failed) || ctx.Err() != nil) { // an interrupted result is partial
			return nil, fmt.Errorf("ledger: run %s: %w", r.Name, err)
		}
		results[r.Name] = res
	}
	return results, nil
}

// JudgeResults judges every claim from results, keyed by run name.
func (l Ledger) JudgeResults(results map[string]*labkit.Result) []Judgement {
	out := make([]Judgement, 0, len(l.Claims))
	for _, c := range l.Claims {
		j := Judgement{Claim: c}
		j.Article, _ = l.Article(c.Article)
		switch {
		case c.NotSimulable != "":
			j.Verdict, j.Why = NotSimulable, c.NotSimulable
		case c.Wrong != "":
			j.Verdict, j.Why = Wrong, c.Wrong
		default:
			rr := &runs{c: c, res: results}
			j.Verdict, j.Magnitude, j.Why = judges[c.ID](rr)
			if c.HandOffs {
				j.Caveat = handOffCaveat(rr)
			}
			if len(rr.missing) > 0 {
				j.Verdict, j.Magnitude, j.Why, j.Caveat = NotSimulated, "", "no result for "+strings.Join(rr.missing, "; "), ""
			}
		}
		out = append(out, j)
	}
	return out
}

// WhyText is why the verdict is what it is, with the caveat if any.
func (j Judgement) WhyText() string {
	if j.Caveat == "" {
		return j.Why
	}
	return j.Why + ". Caveat: " + j.Caveat
}

// Verdicts lists the verdicts in the order counts and tables give them.
var Verdicts = []Verdict{Holds, Partly, Contradicted, Unresolved, Wrong, NotSimulable, NotSimulated}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Counts returns how many judgements have each verdict.
func Counts(js []Judgement) map[Verdict]int {
	n := map[Verdict]int{}
	for _, j := range js {
		n[j.Verdict]++
	}
	return n
}

// CountsText lists Counts as "12 holds, 3 partly, ...", in a fixed order.
func CountsText(js []Judgement) string {
	n := Counts(js)
	var parts []string
	for _, v := range Verdicts {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], v))
		}
	}
	return joinComma(parts)
}

// Table is the judgements as a labkit table, one row per claim. A claim
// with a caveat (the hand-off times') is marked in its why column; the
// caveat, the same for every such claim, is CaveatNote's, to be said once
// beside the table.
func Table(js []Judgement) labkit.Table {
	t := labkit.Table{Title: "Claims ledger: " + CountsText(js),
		Header: []string{"id", "article", "§", "claim", "verdict", "magnitude", "why"}}
	for _, j := range js {
		why := j.Why
		if j.Caveat != "" {
			why += " " + caveatMark
		}
		t.Rows = append(t.Rows, []string{j.ID, j.Article.ID, j.Section, j.Claim.Claim, string(j.Verdict), j.Magnitude, why})
	}
	return t
}

// caveatMark marks, in Table, a claim whose caveat CaveatNote gives.
const caveatMark = "(hand-off caveat: see the note on the table)"

// CaveatNote is the hand-off caveat of the judgements that carry it, said
// once for all of them with their ids ("" when none does).
func CaveatNote(js []Judgement) string {
	var ids []string
	caveat := ""
	for _, j := range js {
		if j.Caveat != "" {
			ids, caveat = append(ids, j.ID), j.Caveat
		}
	}
	if len(ids) == 0 {
		return ""
	}
	return fmt.Sprintf("Caveat on %s %s: %s.", map[bool]string{true: "claim", false: "claims"}[len(ids) == 1], joinComma(ids), caveat)
}
