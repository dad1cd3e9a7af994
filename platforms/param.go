package platforms

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Provenance says where a parameter's value comes from.
type Provenance string

// Provenance tags: a source measured it, bounds it, states it in code,
// yields it by arithmetic, or nobody published it.
const (
	MEAS    Provenance = "MEAS"    // a published measurement
	BOUND   Provenance = "BOUND"   // a pass/fail limit from a vendor test suite (an upper bound)
	CODE    Provenance = "CODE"    // behaviour or constant read in the source
	DERIVED Provenance = "DERIVED" // arithmetic on sourced inputs
	ASSUME  Provenance = "ASSUME"  // an estimate with no source; Low..High is its plausible range
)

// Param is one tunable number of a platform or workload, with its unit,
// provenance, source and the range of values the model accepts.
type Param struct {
	Key    string     `msgpack:"key" json:"key"`
	Value  float64    `msgpack:"value" json:"value"`
	Unit   string     `msgpack:"unit" json:"unit"`
	Prov   Provenance `msgpack:"prov" json:"prov"`
	Source string     `msgpack:"source" json:"source"`
	Doc    string     `msgpack:"doc" json:"doc"`
	// Min and Max bound the values the model accepts (inclusive).
	Min float64 `msgpack:"min" json:"min"`
	Max float64 `msgpack:"max" json:"max"`
	// Choices, when set, lists the only values accepted (HZ, clock settings).
	Choices []float64 `msgpack:"choices,omitempty" json:"choices,omitempty"`
	// Integer accepts whole numbers only (counts, cycles): the model would
	// otherwise silently run a truncated or rounded value.
	Integer bool `msgpack:"integer,omitempty" json:"integer,omitempty"`
	// Low and High give the plausible range of an ASSUME parameter, swept by
	// sensitivity runs. Zero for other provenances.
	Low  float64 `msgpack:"low,omitempty" json:"low,omitempty"`
	High float64 `msgpack:"high,omitempty" json:"high,omitempty"`
}

// define checks p's definition, not a value: a key that -set and a
// measurement's settings can name, a provenance among the five and a
// source (every number says where it comes from), an accepted range that
// is one, and for an ASSUME parameter a plausible range inside it.
func (p Param) define() error {
	if p.Key == "" || strings.IndexFunc(p.Key, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		return fmt.Errorf("parameter %q: a key is letters, digits and _ (lab run -set key=value names it)", p.Key)
	}
	switch p.Prov {
	case MEAS, BOUND, CODE, DERIVED, ASSUME:
	default:
		return fmt.Errorf("parameter %s: provenance %q, want one of MEAS, BOUND, CODE, DERIVED, ASSUME", p.Key, p.Prov)
	}
	if strings.TrimSpace(p.Source) == "" {
		return fmt.Errorf("parameter %s: no source (cite one, or for ASSUME say \"no source; \" and why the value)", p.Key)
	}
	if len(p.Choices) == 0 && !(p.Min <= p.Max) {
		return fmt.Errorf("parameter %s: accepted range [%s, %s] is empty", p.Key, FormatValue(p.Min), FormatValue(p.Max))
	}
	if p.Prov == ASSUME && len(p.Choices) == 0 && !(p.Min <= p.Low && p.Low < p.High && p.High <= p.Max) {
		return fmt.Errorf("parameter %s: plausible range %s..%s must be a range inside the accepted %s..%s",
			p.Key, FormatValue(p.Low), FormatValue(p.High), FormatValue(p.Min), FormatValue(p.Max))
	}
	return nil
}

// Check reports whether v is an accepted value for p, naming the key and
// what is allowed when it is not.
func (p Param) Check(v float64) error {
	if v != v { // NaN
		return fmt.Errorf("parameter %s: value NaN is not a number", p.Key)
	}
	if p.Integer && v != math.Trunc(v) {
		return fmt.Errorf("parameter %s: value %s is not a whole number", p.Key, FormatValue(v))
	}
	if len(p.Choices) > 0 {
		if slices.Contains(p.Choices, v) {
			return nil
		}
		if p.Unit == "code" { // the numbers mean nothing without their names
			return fmt.Errorf("parameter %s: value %s not allowed; choose one of %s (%s)", p.Key, FormatValue(v), FormatValues(p.Choices), p.Doc)
		}
		return fmt.Errorf("parameter %s: value %s not allowed; choose one of %s", p.Key, FormatValue(v), FormatValues(p.Choices))
	}
	if v < p.Min || v > p.Max {
		return fmt.Errorf("parameter %s: value %s out of range %s", p.Key, FormatValue(v), strings.TrimSpace(fmt.Sprintf("[%s, %s] %s", FormatValue(p.Min), FormatValue(p.Max), p.Unit)))
	}
	return nil
}

// FormatValues writes values as FormatValue does, separated by ", ".
func FormatValues(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = FormatValue(v)
	}
	return strings.Join(s, ", ")
}

// FormatValue writes a parameter value as a user types it after -set,
// without an exponent ("10000000", not 1e+07) unless it is too large or
// small to read so. It is exact: ParseFloat gives v back.
func FormatValue(v float64) string {
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e15) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Params is an ordered set of parameters, looked up by key.
type Params []Param

// Clone returns a deep copy that can be changed without touching p.
func (ps Params) Clone() Params {
	out := make(Params, len(ps))
	for i, p := range ps {
		p.Choices = slices.Clone(p.Choices)
		out[i] = p
	}
	return out
}

// Lookup returns the parameter with the given key.
func (ps Params) Lookup(key string) (Param, bool) {
	for _, p := range ps {
		if p.Key == key {
			return p, true
		}
	}
	return Param{}, false
}

// Get returns the value of key; it panics on an unknown key, which is a
// programming error in a model (user input goes through Set).
func (ps Params) Get(key string) float64 {
	p, ok := ps.Lookup(key)
	if !ok {
		panic("platforms: unknown parameter " + key)
	}
	return p.Value
}

// Set changes the value of key after checking it; an unknown key is an
// error listing the keys that exist.
func (ps Params) Set(key string, v float64) error {
	for i := range ps {
		if ps[i].Key == key {
			if err := ps[i].Check(v); err != nil {
				return err
			}
			ps[i].Value = unsignedZero(v)
			return nil
		}
	}
	return fmt.Errorf("unknown parameter %q; known: %s", key, strings.Join(ps.Keys(), ", "))
}

// unsignedZero returns v with -0 made 0: the two are one setting (one
// definition hash, one store entry), whichever a user typed.
func unsignedZero(v float64) float64 {
	if v == 0 {
		return 0
	}
	return v
}

// SetFrom sets each parameter of ps to its value in values, in ps's order,
// checking it as Set does: the first bad value is the error, naming the
// parameter and the value. Keys of values that ps lacks are ignored (one map
// often carries several parameter sets). A parameter that values lacks keeps
// its value, unless requireAll is set: then it is an error naming it. On an
// error the parameters before the failing one have been set.
func (ps Params) SetFrom(values map[string]float64, requireAll bool) error {
	for i := range ps {
		v, ok := values[ps[i].Key]
		if !ok {
			if requireAll {
				return fmt.Errorf("parameter %s missing", ps[i].Key)
			}
			continue
		}
		if err := ps[i].Check(v); err != nil {
			return err
		}
		ps[i].Value = v
	}
	return nil
}

// Keys returns the keys in sorted order.
func (ps Params) Keys() []string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
	}
	sort.Strings(keys)
	return keys
}

// Values returns the parameters as a key to value map.
func (ps Params) Values() map[string]float64 {
	m := make(map[string]float64, len(ps))
	for _, p := range ps {
		m[p.Key] = p.Value
	}
	return m
}
