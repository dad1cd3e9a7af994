package labkit

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"synclab/platforms"
)

// CalibrateOptions tune a calibration.
type CalibrateOptions struct {
	// Fit names the ASSUME parameters to fit.
	Fit []string
	// Settings (key=value) apply to every run before a row's own settings
	// (a shorter run length, say).
	Settings []string
	// Repeats per run; 0 keeps each experiment's.
	Repeats int
	// MaxEvals bounds the model evaluations of the search (default 200);
	// the report at the fit takes 1 + 2 per fitted parameter more.
	MaxEvals int
	// Workers runs an evaluation's simulations in parallel (0: GOMAXPROCS).
	Workers int
}

// FitParam is one fitted parameter: the value, its 95% interval (from the
// linearized model at the optimum), the start and the ranges it was cited
// with.
type FitParam struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
	Start float64 `json:"start"`
	Unit  string  `json:"unit"`
	// Min..Max is the range the model accepts (the search's bounds),
	// PlausibleLow..PlausibleHigh the ASSUME range cited with the value.
	Min           float64 `json:"min"`
	Max           float64 `json:"max"`
	PlausibleLow  float64 `json:"plausible_low"`
	PlausibleHigh float64 `json:"plausible_high"`
	// Identifiable is false when the measurements do not pin the value
	// (see Fit.Unidentifiable): Value is then wherever the search left it,
	// Low and High are Min and Max (the data rule out nothing the model
	// accepts), and a profile does not apply it. Without degrees of freedom
	// an identifiable parameter's interval is Min..Max too (Fit.Note).
	Identifiable bool `json:"identifiable"`
	// Outside says where an identifiable value left its cited ranges: ""
	// (inside Low..High), "plausible" (outside the ASSUME range) or
	// "accepted" (at the model's Min or Max, within 1% of the plausible
	// width: the data wanted further). An unidentifiable value is wherever
	// the search left it, so it has none.
	Outside string `json:"outside,omitempty"`
	// Clipped is true when the linearized interval reached past Min..Max,
	// which bound Low and High instead: the data hardly pin the value.
	Clipped bool `json:"clipped,omitempty"`
	// Alternatives, for a parameter that takes only some values (a
	// mechanism on or off), are the fits at each of its values: Value is
	// the best one's, Low..High spans the values not rejected.
	Alternatives []Alternative `json:"alternatives,omitempty"`
}

// Alternative is one value of a choice parameter with the best fit the
// other parameters reach at it.
type Alternative struct {
	Value float64 `json:"value"`
	SSR   float64 `json:"ssr"`
	// Rejected is true when SSR exceeds the best value's by more than the
	// residuals' noise explains: an F test at 95% (the extra sum of
	// squares over one parameter against SSR/DOF at the best value).
	Rejected bool `json:"rejected,omitempty"`
}

// Residual is one measurement with the model's value at the fit.
type Residual struct {
	Measurement
	Model float64 `json:"model"`
	// Rel is (model - measured) / |measured| (model - measured for a
	// measured zero): the quantity the fit minimises the squares of.
	Rel float64 `json:"rel"`
}

// Fit is a calibration's outcome.
type Fit struct {
	Keys      []string            `json:"keys"`
	Params    map[string]FitParam `json:"params"`
	Residuals []Residual          `json:"residuals"`
	// SSR is the sum of squared relative residuals; DOF the measurements
	// minus the identifiable parameters.
	SSR         float64 `json:"ssr"`
	DOF         int     `json:"dof"`
	Evaluations int     `json:"evaluations"`
	// Unidentifiable names the parameters the data cannot pin, with why.
	Unidentifiable map[string]string `json:"unidentifiable,omitempty"`
	Settings       []string          `json:"settings,omitempty"`
	Method         string            `json:"method"`
	Note           string            `json:"note,omitempty"`
}

// calib is one calibration problem: the measurements grouped by the runs
// that produce them, the parameters with their scales, and a memo of
// evaluations (the simulations are deterministic).
type calib struct {
	ctx    context.Context
	ms     []Measurement
	groups []calibGroup
	params []platforms.Param
	opt    CalibrateOptions
	memo   map[string][]float64
	evals  int
	last   []*Result // each group's result in the last model evaluation
	err    error
}

// calibGroup is one run: an experiment with settings, and the rows it
// answers.
type calibGroup struct {
	e    platforms.Experiment
	rows []int
}

// Calibrate fits opt.Fit to the measurements ms: the parameters' values that
// minimise the sum of squared relative residuals, searched by Nelder-Mead
// within each parameter's accepted range, with 95% intervals from the
// Jacobian at the optimum, and which parameters the data cannot identify.
// An Integer parameter (a count of cycles, say) is fitted on whole numbers:
// every proposal is rounded before the model runs, the fit reports the
// rounded value with the residuals at it, and its interval is widened to
// whole numbers. A parameter that takes only some values (Choices: a
// mechanism on or off) is fitted by fitting the others at each of its
// values, every combination when there are several, and keeping the best
// (FitParam.Alternatives). find looks experiments up by name (the
// catalog's Lookup).
func Calibrate(ctx context.Context, ms []Measurement, find func(string) (platforms.Experiment, error), opt CalibrateOptions) (*Fit, error) {
	choice, err := checkFit(ms, find, opt)
	if err != nil {
		return nil, err
	}
	// Every combination of the choices' values, in the order they list them.
	combos := [][]float64{nil}
	for _, p := range choice {
		var next [][]float64
		for _, c := range combos {
			for _, v := range p.Choices {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	if len(combos) > maxChoiceFits {
		return nil, fmt.Errorf("calibrate: -fit %s: %d combinations of their values; fit at most %d at once", strings.Join(keysOf(choice), ","), len(combos), maxChoiceFits)
	}
	sub := opt
	sub.Fit = slices.DeleteFunc(slices.Clone(opt.Fit), func(k string) bool { return slices.Contains(keysOf(choice), k) })
	fits := make([]*calibRun, len(combos))
	best := 0
	for i, combo := range combos {
		sub.Settings = slices.Clone(opt.Settings)
		for j, p := range choice {
			sub.Settings = append(sub.Settings, p.Key+"="+platforms.FormatValue(combo[j]))
		}
		if fits[i], err = fitAt(ctx, ms, find, sub); err != nil {
			return nil, err
		}
		if fits[i].f.SSR < fits[best].f.SSR {
			best = i
		}
	}
	r := fits[best]
	f := r.f
	if len(choice) > 0 {
		f.Settings = opt.Settings
		f.Method += "; each choice parameter at each of its values"
		for j, p := range choice {
			f.Params[p.Key] = choose(f, p, combos[best][j], func(v float64) float64 {
				ssr := math.Inf(1)
				for i, combo := range combos {
					if combo[j] == v {
						ssr = min(ssr, fits[i].f.SSR)
					}
				}
				return ssr
			})
		}
		f.Keys = slices.Clone(opt.Fit)
		f.Evaluations = 0
		for _, fr := range fits {
			f.Evaluations += fr.f.Evaluations
		}
	}
	// A report's stamp lists the fit in one row: its first run at the
	// fitted values, and every run of its evaluations (none stored: NoCache).
	runs := 0
	for _, fr := range fits {
		runs += fr.runs
	}
	noteRun(r.fitted[0], nil, false, false, runs, fmt.Sprintf("fit of %s: the first of %d settings at the fitted values; %d evaluations, not stored",
		strings.Join(f.Keys, ", "), len(r.fitted), f.Evaluations))
	return f, nil
}

// maxChoiceFits bounds the combinations of choice values a calibration
// fits (each is a whole fit of the other parameters).
const maxChoiceFits = 64

func keysOf(ps []platforms.Param) []string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
	}
	return keys
}

// checkFit refuses what no fit can use: no key, a key named twice, a key
// no measured experiment has or that is not ASSUME, a setting given twice
// or of a fitted key. It returns the choice parameters among the keys.
func checkFit(ms []Measurement, find func(string) (platforms.Experiment, error), opt CalibrateOptions) ([]platforms.Param, error) {
	if len(opt.Fit) == 0 {
		return nil, fmt.Errorf("calibrate: no parameter to fit (-fit key,key,...)")
	}
	if err := checkSettings("settings", opt.Settings, opt.Fit); err != nil {
		return nil, fmt.Errorf("calibrate: %w", err)
	}
	var exps []platforms.Experiment
	for i, m := range ms {
		if err := checkSettings("settings "+m.Settings, m.SettingList(), opt.Fit); err != nil {
			return nil, fmt.Errorf("calibrate: row %d: %w", i+1, err)
		}
		e, err := find(m.Experiment)
		if err != nil {
			return nil, fmt.Errorf("calibrate: row %d: %w", i+1, err)
		}
		exps = append(exps, e)
	}
	var choice []platforms.Param
	for i, key := range opt.Fit {
		var found *platforms.Param
		for _, e := range exps {
			if p, ok := e.Params.Lookup(key); ok {
				found = &p
				break
			}
		}
		switch {
		case found == nil:
			return nil, fmt.Errorf("calibrate: -fit %s: no measured experiment has this parameter", key)
		case found.Prov != platforms.ASSUME:
			return nil, fmt.Errorf("calibrate: -fit %s: provenance %s; only ASSUME parameters are fitted (the others have a source)", key, found.Prov)
		case slices.Contains(opt.Fit[:i], key):
			return nil, fmt.Errorf("calibrate: -fit %s named twice", key)
		case len(found.Choices) > 0:
			choice = append(choice, *found)
		}
	}
	return choice, nil
}

// choose is the FitParam of choice parameter p, best at value v in fit f;
// ssr gives the best fit's SSR at each of p's values.
func choose(f *Fit, p platforms.Param, v float64, ssr func(float64) float64) FitParam {
	fp := FitParam{Key: p.Key, Value: v, Start: p.Value, Unit: p.Unit, Min: slices.Min(p.Choices), Max: slices.Max(p.Choices),
		PlausibleLow: p.Low, PlausibleHigh: p.High}
	// The F test's threshold on the extra sum of squares; without degrees
	// of freedom there is no noise to test against, and nothing is rejected.
	limit := math.Inf(1)
	if f.DOF > 0 {
		q := tQuantile(0.95, float64(f.DOF)) // F(1, DOF)'s quantile is t's squared
		limit = q * q * f.SSR / float64(f.DOF)
	}
	differ, kept := false, 0
	fp.Low, fp.High = math.Inf(1), math.Inf(-1)
	for _, c := range p.Choices {
		a := Alternative{Value: c, SSR: ssr(c)}
		a.Rejected = a.SSR-f.SSR > limit
		differ = differ || math.Abs(a.SSR-f.SSR) > 1e-12*max(1, f.SSR)
		if !a.Rejected {
			kept++
			fp.Low, fp.High = min(fp.Low, c), max(fp.High, c)
		}
		fp.Alternatives = append(fp.Alternatives, a)
	}
	switch {
	case !differ:
		f.Unidentifiable[p.Key] = "no measurement changes with its value"
	case f.DOF <= 0:
		fp.Identifiable = true // the smaller SSR, untested: Low..High span every value
	case kept > 1:
		f.Unidentifiable[p.Key] = "the fits at its values differ by less than the residuals' noise (F test, 95%)"
	default:
		fp.Identifiable = true
	}
	if !fp.Identifiable {
		fp.Low, fp.High = fp.Min, fp.Max
	}
	return fp
}

// calibRun is one fit of the continuous parameters: the Fit, each group's
// result at it, and the simulations its evaluations ran.
type calibRun struct {
	f      *Fit
	fitted []*Result
	runs   int
}

// fitAt fits opt.Fit, none of which is a choice parameter (checkFit has
// passed), by Nelder-Mead; with no key it evaluates the model once.
func fitAt(ctx context.Context, ms []Measurement, find func(string) (platforms.Experiment, error), opt CalibrateOptions) (*calibRun, error) {
	c, err := newCalib(ctx, ms, find, opt)
	if err != nil {
		return nil, err
	}
	p := len(c.params)
	var x []float64
	if p > 0 {
		// The search runs on x_j = (θ_j - start_j) / scale_j, so one unit
		// is the plausible width of every parameter.
		problem := optimize.Problem{Func: func(x []float64) float64 {
			r := c.residuals(c.theta(x))
			s := 0.0
			for _, v := range r {
				s += v * v
			}
			return s + c.penalty(x)
		}}
		maxEvals := opt.MaxEvals
		if maxEvals <= 0 {
			maxEvals = 200
		}
		res, err := optimize.Minimize(problem, make([]float64, p), &optimize.Settings{FuncEvaluations: maxEvals,
			Converger: &optimize.FunctionConverge{Absolute: 1e-12, Relative: 1e-9, Iterations: 4 * (p + 1)}},
			&optimize.NelderMead{SimplexSize: 0.5})
		if c.err != nil {
			return nil, c.err
		}
		if err != nil && res == nil {
			return nil, fmt.Errorf("calibrate: %w", err)
		}
		x = res.X
	}
	f, fitted, err := c.report(x)
	if err != nil {
		return nil, err
	}
	runs := 0
	for _, g := range c.groups {
		n, _ := RunCount(g.e) // bounded: the group ran
		runs += c.evals * n
	}
	return &calibRun{f: f, fitted: fitted, runs: runs}, nil
}

// checkSettings refuses, in a list of key=value settings (what names it),
// a key given twice, which would leave one value silently unused, and a
// key the fit sets, whose value the fit would replace while the residuals
// still showed it.
func checkSettings(what string, sets, fit []string) error {
	seen := map[string]bool{}
	for _, s := range sets {
		k, _, _ := strings.Cut(s, "=")
		k = strings.TrimSpace(k)
		switch {
		case seen[k]:
			return fmt.Errorf("%s: %s given twice", what, k)
		case slices.Contains(fit, k):
			return fmt.Errorf("%s: %s is fitted, so its value would be replaced by the fit's", what, k)
		}
		seen[k] = true
	}
	return nil
}

func newCalib(ctx context.Context, ms []Measurement, find func(string) (platforms.Experiment, error), opt CalibrateOptions) (*calib, error) {
	c := &calib{ctx: ctx, ms: ms, opt: opt, memo: map[string][]float64{}}
	byKey := map[string]int{}
	for i, m := range ms {
		k := m.Experiment + "\x00" + m.Settings
		gi, ok := byKey[k]
		if !ok {
			e, err := find(m.Experiment)
			if err != nil {
				return nil, fmt.Errorf("calibrate: row %d: %w", i+1, err)
			}
			if e, err = e.WithSettings(append(slices.Clone(opt.Settings), m.SettingList()...)...); err != nil {
				return nil, fmt.Errorf("calibrate: row %d: %w", i+1, err)
			}
			if opt.Repeats > 0 {
				e.Repeats = opt.Repeats
			}
			e.Variants = e.Variants[:0:0]
			gi = len(c.groups)
			byKey[k] = gi
			c.groups = append(c.groups, calibGroup{e: e})
		}
		g := &c.groups[gi]
		full, err := find(m.Experiment)
		if err != nil {
			return nil, err
		}
		metric, err := metricOf(full, m.Metric)
		if err != nil {
			return nil, fmt.Errorf("calibrate: row %d: %w", i+1, err)
		}
		if lo, hi := metric.Range(); m.Value < lo || m.Value > hi {
			return nil, fmt.Errorf("calibrate: row %d: %s = %g %s is outside the metric's physical range [%g, %g]", i+1, m.Metric, m.Value, metric.Unit, lo, hi)
		}
		if !slices.ContainsFunc(g.e.Variants, func(v platforms.Variant) bool { return v.Name == m.Variant }) {
			vi := slices.IndexFunc(full.Variants, func(v platforms.Variant) bool { return v.Name == m.Variant })
			if vi < 0 {
				return nil, fmt.Errorf("calibrate: row %d: experiment %s has no variant %q; known: %s", i+1, m.Experiment, m.Variant, strings.Join(full.VariantNames(), ", "))
			}
			g.e.Variants = append(g.e.Variants, full.Variants[vi])
		}
		g.rows = append(g.rows, i)
	}
	// The start is the value with the settings applied (checkFit found
	// every key).
	for _, key := range opt.Fit {
		for _, g := range c.groups {
			if p, ok := g.e.Params.Lookup(key); ok {
				c.params = append(c.params, p)
				break
			}
		}
	}
	return c, nil
}

// scale is the plausible width of p: one unit of the search.
func scale(p platforms.Param) float64 {
	if w := p.High - p.Low; w > 0 {
		return w
	}
	return math.Max(math.Abs(p.Value), 1)
}

// theta maps a search point to the parameter values the model runs with
// (see accepted); penalty grows with how far x strays outside the accepted
// ranges, so that the search returns inside.
func (c *calib) theta(x []float64) []float64 {
	th := make([]float64, len(x))
	for j, p := range c.params {
		th[j] = accepted(p, p.Value+x[j]*scale(p))
	}
	return th
}

// accepted is v clamped to p's accepted range, and rounded to the nearest
// whole number for an Integer parameter, which the model rejects fractions
// of: the search stays continuous and sees a step function there.
func accepted(p platforms.Param, v float64) float64 {
	lo, hi := p.Min, p.Max
	if p.Integer {
		v, lo, hi = math.Round(v), math.Ceil(lo), math.Floor(hi)
	}
	return math.Min(math.Max(v, lo), hi)
}

func (c *calib) penalty(x []float64) float64 {
	s := 0.0
	for j, p := range c.params {
		v := p.Value + x[j]*scale(p)
		d := math.Max(p.Min-v, v-p.Max)
		if d > 0 {
			s += 1e3 * (1 + d/scale(p))
		}
	}
	return s
}

// residuals runs the model at th and returns the relative residuals; a run
// that fails stops the calibration (c.err) and reads as a huge residual.
func (c *calib) residuals(th []float64) []float64 {
	key := fmt.Sprint(th)
	if r, ok := c.memo[key]; ok {
		return r
	}
	model, err := c.model(th)
	if err != nil {
		if c.err == nil {
			c.err = err
		}
		r := make([]float64, len(c.ms))
		for i := range r {
			r[i] = 1e6
		}
		return r
	}
	r := make([]float64, len(c.ms))
	for i, m := range c.ms {
		r[i] = relResidual(model[i], m.Value)
	}
	c.memo[key] = r
	return r
}

func relResidual(model, measured float64) float64 {
	if measured == 0 {
		return model
	}
	return (model - measured) / math.Abs(measured)
}

// model runs every group at parameter values th and returns the model's
// value for each measurement.
func (c *calib) model(th []float64) ([]float64, error) {
	c.evals++
	out := make([]float64, len(c.ms))
	c.last = c.last[:0]
	for _, g := range c.groups {
		e := g.e
		for j, p := range c.params {
			if _, ok := e.Params.Lookup(p.Key); !ok {
				continue
			}
			var err error
			if e, err = e.With(p.Key, th[j]); err != nil {
				return nil, err
			}
		}
		r, err := Execute(c.ctx, e, RunOptions{NoCache: true, Progress: NoProgress, Workers: c.opt.Workers})
		if err != nil {
			return nil, fmt.Errorf("calibrate: %s at %s: %w", e.Name, c.describe(th), err)
		}
		c.last = append(c.last, r)
		pt := r.DefaultPoint()
		for _, i := range g.rows {
			out[i] = r.Summary(c.ms[i].Variant, pt, c.ms[i].Metric).Mean
		}
	}
	return out, nil
}

func (c *calib) describe(th []float64) string {
	parts := make([]string, len(th))
	for j, p := range c.params {
		parts[j] = fmt.Sprintf("%s=%g", p.Key, th[j])
	}
	return strings.Join(parts, ",")
}

// report builds the Fit at search point x: residuals, the Jacobian by
// central differences (a tenth of each parameter's plausible width, at
// least one unit for an Integer parameter), the parameters the data cannot
// identify and 95% intervals for the others; and each group's result at x.
func (c *calib) report(x []float64) (*Fit, []*Result, error) {
	th := c.theta(x)
	r := c.residuals(th)
	if c.err != nil {
		return nil, nil, c.err
	}
	n, p := len(c.ms), len(c.params)
	f := &Fit{Params: map[string]FitParam{}, Method: "Nelder-Mead on relative residuals, bounded by the accepted ranges",
		Settings: c.opt.Settings, Unidentifiable: map[string]string{}}
	model, err := c.model(th)
	if err != nil {
		return nil, nil, err
	}
	fitted := slices.Clone(c.last) // the Jacobian's evaluations come next
	for i, m := range c.ms {
		f.Residuals = append(f.Residuals, Residual{Measurement: m, Model: model[i], Rel: r[i]})
		f.SSR += r[i] * r[i]
	}
	// J[i][j] = d r_i / d θ_j, by central differences inside the range.
	var J *mat.Dense
	if p > 0 {
		J = mat.NewDense(n, p, nil)
	}
	for j, pp := range c.params {
		h := 0.1 * scale(pp)
		if pp.Integer {
			h = math.Max(math.Round(h), 1)
		}
		up, dn := slices.Clone(th), slices.Clone(th)
		up[j], dn[j] = accepted(pp, th[j]+h), accepted(pp, th[j]-h)
		ru, rd := c.residuals(up), c.residuals(dn)
		if c.err != nil {
			return nil, nil, c.err
		}
		for i := range n {
			J.Set(i, j, (ru[i]-rd[i])/(up[j]-dn[j]))
		}
	}
	// A column that no measurement responds to, or a combination of
	// columns the data cannot tell apart (a tiny singular value of the
	// scaled Jacobian), is unidentifiable.
	var ident []int
	for j, pp := range c.params {
		col := mat.Col(nil, j, J)
		if mat.Norm(mat.NewVecDense(n, col), 2)*scale(pp) < 1e-9 {
			f.Unidentifiable[pp.Key] = "no measurement changes when it moves across its plausible range"
			continue
		}
		ident = append(ident, j)
	}
	if len(ident) > 0 {
		js := mat.NewDense(n, len(ident), nil)
		for k, j := range ident {
			for i := range n {
				js.Set(i, k, J.At(i, j)*scale(c.params[j]))
			}
		}
		// The full V: with fewer measurements than parameters, the
		// directions past the singular values are null ones too.
		var svd mat.SVD
		if svd.Factorize(js, mat.SVDFull) {
			sv := svd.Values(nil)
			var v mat.Dense
			svd.VTo(&v)
			for k := range len(ident) {
				if k < len(sv) && sv[k] > 1e-6*sv[0] {
					continue
				}
				// Parameters loading on this null direction trade off.
				for a, j := range ident {
					if math.Abs(v.At(a, k)) > 0.3 {
						f.Unidentifiable[c.params[j].Key] = "trades off with other fitted parameters: the data constrain only a combination"
					}
				}
			}
		}
	}
	var keep []int
	for _, j := range ident {
		if _, bad := f.Unidentifiable[c.params[j].Key]; !bad {
			keep = append(keep, j)
		}
	}
	f.DOF = n - len(keep)
	se := c.standardErrors(J, keep, f.SSR, f.DOF)
	if f.DOF <= 0 {
		f.Note = "as many identifiable parameters as measurements: no degree of freedom is left for intervals (shown as the accepted ranges)"
	}
	for j, pp := range c.params {
		_, bad := f.Unidentifiable[pp.Key]
		fp := FitParam{Key: pp.Key, Value: th[j], Start: pp.Value, Unit: pp.Unit, Min: pp.Min, Max: pp.Max,
			PlausibleLow: pp.Low, PlausibleHigh: pp.High, Low: pp.Min, High: pp.Max, Identifiable: !bad}
		if s, ok := se[j]; ok {
			t := tQuantile(0.95, float64(f.DOF))
			fp.Low, fp.High = th[j]-t*s, th[j]+t*s
			if pp.Integer {
				// Rounding moved the value up to half a unit off the
				// continuous optimum: widen to whole numbers, never narrow.
				fp.Low, fp.High = math.Floor(fp.Low), math.Ceil(fp.High)
			}
			if fp.Low < pp.Min || fp.High > pp.Max {
				// A cycle count of -16,510 to 17,050: the linearization
				// says only that the model's own range bounds it.
				fp.Low, fp.High, fp.Clipped = max(fp.Low, pp.Min), min(fp.High, pp.Max), true
			}
		}
		switch edge := 0.01 * scale(pp); {
		case bad:
		case th[j] <= pp.Min+edge || th[j] >= pp.Max-edge:
			fp.Outside = "accepted"
		case th[j] < pp.Low || th[j] > pp.High:
			fp.Outside = "plausible"
		}
		f.Keys = append(f.Keys, pp.Key)
		f.Params[pp.Key] = fp
	}
	f.Evaluations = c.evals
	return f, fitted, nil
}

// standardErrors returns the standard error of each parameter in keep from
// the covariance s² (JᵀJ)⁻¹ with s² = SSR/dof; none without degrees of
// freedom or when JᵀJ cannot be inverted.
func (c *calib) standardErrors(J *mat.Dense, keep []int, ssr float64, dof int) map[int]float64 {
	out := map[int]float64{}
	if len(keep) == 0 || dof <= 0 {
		return out
	}
	n, _ := J.Dims()
	jk := mat.NewDense(n, len(keep), nil)
	for k, j := range keep {
		for i := range n {
			jk.Set(i, k, J.At(i, j))
		}
	}
	var jtj, cov mat.Dense
	jtj.Mul(jk.T(), jk)
	if err := cov.Inverse(&jtj); err != nil {
		return out
	}
	s2 := ssr / float64(dof)
	for k, j := range keep {
		out[j] = math.Sqrt(math.Max(s2*cov.At(k, k), 0))
	}
	return out
}

// FitTable is the fitted parameters as a table.
func (f *Fit) FitTable() Table {
	t := Table{Title: "fitted parameters (95% interval; cited plausible and accepted ranges)",
		Header: []string{"parameter", "start", "fitted", "95% interval", "plausible", "accepted", "note"}}
	for _, k := range f.Keys {
		p := f.Params[k]
		iv := "not identifiable"
		switch {
		case p.Identifiable && f.DOF <= 0: // Low..High are the accepted range, not an interval
			iv = "none: no degree of freedom left"
		case p.Identifiable:
			iv = Num(p.Low) + " – " + Num(p.High)
		}
		note := f.Unidentifiable[k]
		switch p.Outside {
		case "plausible":
			note = strings.TrimPrefix(note+"; outside its plausible range", "; ")
		case "accepted":
			note = strings.TrimPrefix(note+"; at the end of its accepted range: the data want it further", "; ")
		}
		if p.Clipped {
			note = strings.TrimPrefix(note+"; the interval reaches past the accepted range, shown as its bound: the data hardly pin it", "; ")
		}
		accepted := Num(p.Min) + " – " + Num(p.Max)
		if len(p.Alternatives) > 0 {
			// A choice: the values the data leave, and each value's best fit.
			var left, vals, fits []string
			for _, a := range p.Alternatives {
				vals = append(vals, Num(a.Value))
				fit := Num(a.Value) + ": SSR " + Num(a.SSR)
				if a.Rejected {
					fit += " (rejected)"
				} else {
					left = append(left, Num(a.Value))
				}
				fits = append(fits, fit)
			}
			if p.Identifiable && f.DOF > 0 {
				iv = strings.Join(left, " or ")
			}
			accepted = "one of " + strings.Join(vals, ", ")
			note = strings.TrimPrefix(note+"; "+strings.Join(fits, "; "), "; ")
		}
		t.Rows = append(t.Rows, []string{k, Num(p.Start), Num(p.Value) + " " + ShowUnit(p.Unit), iv,
			Num(p.PlausibleLow) + " – " + Num(p.PlausibleHigh), accepted, note})
	}
	return t
}

// ResidualTable is the measurements against the model at the fit.
func (f *Fit) ResidualTable() Table {
	t := Table{Title: "residuals at the fit", Header: []string{"experiment", "variant", "settings", "metric", "measured", "model", "residual"}}
	rs := slices.Clone(f.Residuals)
	sort.SliceStable(rs, func(a, b int) bool { return math.Abs(rs[a].Rel) > math.Abs(rs[b].Rel) })
	for _, r := range rs {
		res := fmt.Sprintf("%+.1f%%", 100*r.Rel)
		if r.Value == 0 { // no relative residual: relResidual takes the difference itself
			res = strings.Replace("+"+Num(r.Rel), "+-", "-", 1) + " (measured 0)"
		}
		t.Rows = append(t.Rows, []string{r.Experiment, r.Variant, r.Settings, r.Metric, Num(r.Value), Num(r.Model), res})
	}
	return t
}
