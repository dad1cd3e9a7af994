package labkit

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"synclab/platforms"
)

// Profile is a board's calibration: the measurements taken on it, the fit
// of the model's ASSUME parameters to them, and the code version that fitted
// them. lab run -profile and notebooks apply it to experiments.
type Profile struct {
	// Name says which board (the measurement file's name by default).
	Name         string        `json:"name"`
	Code         string        `json:"code"`
	Measurements []Measurement `json:"measurements"`
	Fit          *Fit          `json:"fit"`
}

// NewProfile records a fit of measurements ms.
func NewProfile(name string, ms []Measurement, f *Fit) *Profile {
	return &Profile{Name: name, Code: CurrentCode().String(), Measurements: ms, Fit: f}
}

// Save writes the profile as indented JSON, atomically.
func (p *Profile) Save(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("profile %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// LoadProfile reads a profile written by Save (lab calibrate -o). A file
// without a fit, or a fitted parameter without a value, is an error naming
// the file.
func LoadProfile(path string) (*Profile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	var p Profile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("profile %s: %w", path, err)
	}
	if p.Fit == nil || len(p.Fit.Keys) == 0 {
		return nil, fmt.Errorf("profile %s: no fitted parameters", path)
	}
	for _, k := range p.Fit.Keys {
		if _, ok := p.Fit.Params[k]; !ok {
			return nil, fmt.Errorf("profile %s: parameter %s listed but not given", path, k)
		}
	}
	return &p, nil
}

// Values returns the fitted values of the identifiable parameters by key:
// what Apply sets. A parameter the measurements could not pin keeps its
// cited value.
func (p *Profile) Values() map[string]float64 {
	m := make(map[string]float64, len(p.Fit.Keys))
	for _, k := range p.Fit.Keys {
		if fp := p.Fit.Params[k]; fp.Identifiable {
			m[k] = fp.Value
		}
	}
	return m
}

// Apply returns e with every identifiable fitted parameter that e has set
// to its fitted value (parameters e lacks are left out: one profile serves
// all of a platform's experiments). A value e does not accept is an error
// naming it, and so is a profile that sets nothing of e: applied to the
// wrong platform, it would change nothing, silently.
func (p *Profile) Apply(e platforms.Experiment) (platforms.Experiment, error) {
	applied := 0
	for _, k := range p.Fit.Keys {
		fp := p.Fit.Params[k]
		if _, ok := e.Params.Lookup(k); !ok || !fp.Identifiable {
			continue
		}
		var err error
		if e, err = e.With(k, fp.Value); err != nil {
			return e, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		applied++
	}
	if applied == 0 {
		return e, fmt.Errorf("profile %s sets nothing of experiment %s: of its fitted parameters (%s), none that its measurements pin is a parameter of %s",
			p.Name, e.Name, strings.Join(p.Fit.Keys, ", "), e.Name)
	}
	return e, nil
}

// Unpinned returns the fitted parameters of e that Apply leaves at their
// cited values because the measurements do not pin them, in fit order: a
// run with the profile reproduces the fit only in the parameters it sets.
func (p *Profile) Unpinned(e platforms.Experiment) []string {
	var keys []string
	for _, k := range p.Fit.Keys {
		if _, ok := e.Params.Lookup(k); ok && !p.Fit.Params[k].Identifiable {
			keys = append(keys, k)
		}
	}
	return keys
}
