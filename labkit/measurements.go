package labkit

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MeasurementHeader is the header of a measurement CSV: one measured (or
// simulated) value per row, settings as key=value;key=value with the keys
// of lab run -set, so that a measured row and a simulated row mean the same.
var MeasurementHeader = []string{"experiment", "variant", "settings", "metric", "value"}

// Measurement is one row of a measurement CSV.
type Measurement struct {
	Experiment string  `json:"experiment"`
	Variant    string  `json:"variant"`
	Settings   string  `json:"settings"`
	Metric     string  `json:"metric"`
	Value      float64 `json:"value"`
}

// SettingList splits Settings into key=value items (empty items dropped).
func (m Measurement) SettingList() []string {
	var out []string
	for _, s := range strings.Split(m.Settings, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ReadMeasurements parses a measurement CSV. The header must be exactly
// MeasurementHeader; a bad row is an error naming its line and field.
func ReadMeasurements(r io.Reader) ([]Measurement, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(MeasurementHeader)
	cr.Comment = '#'
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("measurements: header: %w", err)
	}
	if !slices.Equal(head, MeasurementHeader) {
		return nil, fmt.Errorf("measurements: header %q, want %q", strings.Join(head, ","), strings.Join(MeasurementHeader, ","))
	}
	var out []Measurement
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("measurements: %w", err)
		}
		line, _ := cr.FieldPos(0)
		v, err := strconv.ParseFloat(strings.TrimSpace(rec[4]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("measurements: line %d: value %q is not a finite number", line, rec[4])
		}
		m := Measurement{Experiment: strings.TrimSpace(rec[0]), Variant: strings.TrimSpace(rec[1]), Settings: strings.TrimSpace(rec[2]),
			Metric: strings.TrimSpace(rec[3]), Value: v}
		if m.Experiment == "" || m.Variant == "" || m.Metric == "" {
			return nil, fmt.Errorf("measurements: line %d: experiment, variant and metric must not be empty", line)
		}
		for _, s := range m.SettingList() {
			if !strings.Contains(s, "=") {
				return nil, fmt.Errorf("measurements: line %d: setting %q: want key=value", line, s)
			}
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("measurements: no rows after the header")
	}
	return out, nil
}

// WriteMeasurements writes ms as a measurement CSV.
func WriteMeasurements(w io.Writer, ms []Measurement) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(MeasurementHeader); err != nil {
		return err
	}
	for _, m := range ms {
		if err := cw.Write([]string{m.Experiment, m.Variant, m.Settings, m.Metric, strconv.FormatFloat(m.Value, 'g', -1, 64)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// MeasurementsFromReferences turns an article's table (data/reference) into
// measurements at the experiments' default settings.
func MeasurementsFromReferences(rows []ReferenceRow) []Measurement {
	out := make([]Measurement, len(rows))
	for i, r := range rows {
		out[i] = Measurement{Experiment: r.Experiment, Variant: r.Variant, Metric: r.Metric, Value: r.Value}
	}
	return out
}
