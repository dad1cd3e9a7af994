package labkit

import (
	"bufio"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"synclab/data"
	"synclab/platforms"
)

// ReferenceRow is one line of data/reference/*.tsv.
type ReferenceRow struct {
	Experiment string
	platforms.Reference
}

// referenceColumns are the columns of a reference TSV file, in order; the
// last, scope (platforms.Reference.Scope), may be left out.
var referenceColumns = []string{"article", "experiment", "variant", "metric", "value", "unit", "quote", "scope"}

// ParseReferences parses reference TSV text (columns article, experiment,
// variant, metric, value, unit, quote and, optionally, scope; a header line
// starting with "article" and lines starting with # are skipped). Errors
// name the line.
func ParseReferences(name, text string) ([]ReferenceRow, error) {
	var rows []ReferenceRow
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "article\t") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != len(referenceColumns) && len(f) != len(referenceColumns)-1 {
			return nil, fmt.Errorf("%s:%d: %d columns, want %d or %d (%s)", name, n, len(f), len(referenceColumns)-1, len(referenceColumns), strings.Join(referenceColumns, ", "))
		}
		f = append(f, "")[:len(referenceColumns)] // no scope: ""
		for i, c := range f {
			// A control character in a field (a stray carriage return from
			// mixed line endings, say) is corruption, not data.
			if j := strings.IndexFunc(c, unicode.IsControl); j >= 0 {
				r, _ := utf8.DecodeRuneInString(c[j:])
				return nil, fmt.Errorf("%s:%d: %s %q holds the control character %q", name, n, referenceColumns[i], c, r)
			}
		}
		v, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: value %q is not a number", name, n, f[4])
		}
		rows = append(rows, ReferenceRow{Experiment: f[1], Reference: platforms.Reference{Article: f[0], Variant: f[2], Metric: f[3], Value: v, Unit: f[5], Quote: f[6], Scope: f[7]}})
	}
	return rows, sc.Err()
}

// AllReferences returns every embedded reference row (data/reference/*.tsv).
func AllReferences() ([]ReferenceRow, error) {
	rows, err := embeddedReferences()
	return slices.Clone(rows), err
}

// embeddedReferences parses the embedded reference files once (Register
// looks references up for every experiment that sets none).
var embeddedReferences = sync.OnceValues(func() ([]ReferenceRow, error) {
	files, err := fs.Glob(data.Reference, "reference/*.tsv")
	if err != nil {
		return nil, err
	}
	var all []ReferenceRow
	for _, f := range files {
		b, err := fs.ReadFile(data.Reference, f)
		if err != nil {
			return nil, err
		}
		rows, err := ParseReferences(f, string(b))
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
})

// ReferencesFor returns the embedded reference numbers of an experiment. The
// embedded files are checked by the tests, so a parse error panics.
func ReferencesFor(experiment string) []platforms.Reference {
	all, err := embeddedReferences()
	if err != nil {
		panic("labkit: embedded reference data: " + err.Error())
	}
	var out []platforms.Reference
	for _, r := range all {
		if r.Experiment == experiment {
			out = append(out, r.Reference)
		}
	}
	return out
}

// ClaimSide is one variant's article number next to the simulated one.
type ClaimSide struct {
	Variant string  `json:"variant"`
	Article float64 `json:"article"`
	Sim     Summary `json:"sim"`
	// DeviationPct is 100*(simulated mean - article)/article (NaN when
	// every run of the variant failed).
	DeviationPct float64 `json:"deviation_pct"`
	// Failed describes the variant's failed runs ("1 of 3 runs failed:
	// deadlock at ..."); "" when none failed. Sim covers the others.
	Failed string `json:"failed,omitempty"`
}

// Claim compares an article's numbers for one metric with the simulation.
type Claim struct {
	Article string `json:"article"`
	Metric  string `json:"metric"`
	Unit    string `json:"unit"`
	Quote   string `json:"quote"`
	// Scope is the references' platforms.Reference.Scope: when set, the
	// sizes are not comparable and the verdict judges the direction only.
	Scope string      `json:"scope,omitempty"`
	Sides []ClaimSide `json:"sides"`
	// Direction compares the sign of Sides[0]-Sides[1] in the article and
	// in the simulation: "agrees", "disagrees", "unresolved" (the simulated
	// ratio's 95% interval contains 1, or a side has one seed, whose noise
	// is unknown), "n/a" (one side only) or "failed"
	// (every run of a side failed).
	Direction string `json:"direction"`
	// SimRatio is Sides[0]/Sides[1] simulated, with Fieller's interval.
	SimRatio Ratio  `json:"sim_ratio"`
	Verdict  string `json:"verdict"`
	// At says where the simulated side was measured: "this run's
	// parameters", with the sweep point when there is a sweep.
	At string `json:"at"`
}

// Claims compares the experiment's reference numbers with the simulated
// means at the default sweep point, one Claim per metric, in the order the
// references list them.
func (r *Result) Claims() []Claim {
	point, own := r.defaultPoint()
	at := "this run's parameters"
	switch {
	case len(r.Experiment.Sweep) > 0 && own:
		at = pointLabel(r.Experiment.Points()[point]) + " (" + at + ")"
	case len(r.Experiment.Sweep) > 0:
		at = pointLabel(r.Experiment.Points()[point]) + ": the sweep's first point, since it leaves out the parameters' own values"
	}
	var claims []Claim
	index := map[string]int{}
	for _, ref := range r.Experiment.Reference {
		vals := r.Values(ref.Variant, point, ref.Metric)
		failed := r.failureNote(ref.Variant, point)
		if len(vals) == 0 && failed == "" {
			continue // not in this shard
		}
		i, ok := index[ref.Metric]
		if !ok {
			i = len(claims)
			index[ref.Metric] = i
			claims = append(claims, Claim{Article: ref.Article, Metric: ref.Metric, Unit: ref.Unit, Quote: ref.Quote, Scope: ref.Scope, At: at})
		}
		s := Summarize(vals)
		claims[i].Sides = append(claims[i].Sides, ClaimSide{Variant: ref.Variant, Article: ref.Value, Sim: s,
			DeviationPct: 100 * (s.Mean - ref.Value) / ref.Value, Failed: failed})
	}
	for i := range claims {
		claims[i].judge(r, point)
	}
	return claims
}

// judge sets the claim's direction and verdict; failed runs are named in
// the verdict.
func (c *Claim) judge(r *Result, point int) {
	var failed []string
	missing := false
	for _, s := range c.Sides {
		if s.Failed != "" {
			failed = append(failed, s.Variant+": "+s.Failed)
		}
		missing = missing || s.Sim.N == 0
	}
	if missing {
		c.Direction = "failed"
		c.Verdict = "not simulated: " + strings.Join(failed, "; ")
		return
	}
	c.verdict(r, point)
	if len(failed) > 0 {
		c.Verdict += " (" + strings.Join(failed, "; ") + ")"
	}
}

func (c *Claim) verdict(r *Result, point int) {
	worst, factor := 0.0, 1.0
	for _, s := range c.Sides {
		worst = math.Max(worst, math.Abs(s.DeviationPct))
		if r := s.Sim.Mean / s.Article; r > 0 && !math.IsInf(r, 0) {
			factor = math.Max(factor, math.Max(r, 1/r))
		}
	}
	mag := fmt.Sprintf("off by up to %.0f%%", worst)
	switch {
	case worst <= 10:
		mag = "within 10%"
	case factor >= 2: // a percentage stops at 100% below: 36x lower would read "97%"
		mag = "off by up to " + sigDigits(factor, 2) + "x"
	}
	if c.Scope != "" {
		mag = "not comparable in size (" + c.Scope + ")"
	}
	if len(c.Sides) < 2 {
		c.Direction = "n/a"
		c.Verdict = "one variant only: " + mag
		return
	}
	a, b := c.Sides[0], c.Sides[1]
	xa, xb := r.Values(a.Variant, point, c.Metric), r.Values(b.Variant, point, c.Metric)
	c.SimRatio = RatioCI(xa, xb)
	art := sign(a.Article - b.Article)
	sim := sign(a.Sim.Mean - b.Sim.Mean)
	rel := map[int]string{-1: "<", 0: "=", 1: ">"}
	switch {
	case min(len(xa), len(xb)) < 2 && art != 0:
		// One run has no spread to test a difference against (RatioCI's
		// interval has zero width): the direction could be the seed's.
		c.Direction = "unresolved"
		c.Verdict = fmt.Sprintf("article: %s %s %s; model: %s %s %s in one seed, which cannot tell a difference from noise (-repeats 3 tests it); values %s", a.Variant, rel[art], b.Variant, a.Variant, rel[sim], b.Variant, mag)
	case c.SimRatio.Lo <= 1 && c.SimRatio.Hi >= 1 && art != 0:
		c.Direction = "unresolved"
		c.Verdict = fmt.Sprintf("article: %s %s %s; model: difference not resolved by the seeds (ratio %.3g [%.3g, %.3g]); values %s", a.Variant, rel[art], b.Variant, c.SimRatio.Value, c.SimRatio.Lo, c.SimRatio.Hi, mag)
	case art == sim && c.Scope != "":
		c.Direction = "agrees"
		c.Verdict = fmt.Sprintf("same direction (%s %s %s); sizes not comparable: %s", a.Variant, rel[art], b.Variant, c.Scope)
	case art == sim && worst <= 10:
		c.Direction = "agrees"
		c.Verdict = "reproduced: same direction, " + mag
	case art == sim:
		// The gap can agree in sign and not in size: 48 against 47 is not
		// 100 against 56.
		c.Direction = "agrees"
		c.Verdict = fmt.Sprintf("same direction (%s %s %s), magnitudes %s; the model's gap is %sx, the article's %sx",
			a.Variant, rel[art], b.Variant, mag, sigDigits(gap(a.Sim.Mean, b.Sim.Mean), 3), sigDigits(gap(a.Article, b.Article), 3))
	default:
		c.Direction = "disagrees"
		c.Verdict = fmt.Sprintf("contradicted: article %s %s %s, model %s %s %s", a.Variant, rel[art], b.Variant, a.Variant, rel[sim], b.Variant)
		if c.Scope != "" {
			c.Verdict += "; sizes not comparable: " + c.Scope
		}
	}
}

// gap is the larger of a and b over the smaller.
func gap(a, b float64) float64 { return max(a, b) / min(a, b) }

func sign(x float64) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
