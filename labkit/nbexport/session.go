package nbexport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// SessionEnv names the file, set for the kernel of a headless run, where the
// notebook's programs note every experiment they run (labkit.RunWith), one
// JSON RunRecord per line: the report's title block and reproducibility
// stamp are written from it.
const SessionEnv = "SYNCLAB_SESSION_LOG"

// RunRecord is what the stamp says about one experiment a notebook ran.
type RunRecord struct {
	Experiment  string             `json:"experiment"`
	Platform    string             `json:"platform"`
	Description string             `json:"description"`
	Variants    []string           `json:"variants"`
	Sweep       []SweepAxis        `json:"sweep,omitempty"`
	Repeats     int                `json:"repeats"`
	Seed        uint64             `json:"seed"`
	Params      map[string]float64 `json:"params"`
	// Set holds the parameters the notebook set for this run.
	Set  map[string]float64 `json:"set,omitempty"`
	Hash string             `json:"hash"`
	// Code is the version of the code that ran it (labkit.CodeVersion),
	// Go the toolchain, GoNB the notebook kernel's module version.
	Code   string    `json:"code"`
	Go     string    `json:"go"`
	GoNB   string    `json:"gonb,omitempty"`
	Runs   int       `json:"runs"`
	Failed int       `json:"failed,omitempty"`
	Cached bool      `json:"cached"`
	Traced bool      `json:"traced,omitempty"`
	When   time.Time `json:"when"`
	// Note says more (e.g. a sensitivity run's cases).
	Note string `json:"note,omitempty"`
}

// SweepAxis is a swept parameter and its values.
type SweepAxis struct {
	Param  string    `json:"param"`
	Values []float64 `json:"values"`
}

// AppendSession adds a record to the session file named by SessionEnv; it
// does nothing when the variable is unset (an interactive notebook).
func AppendSession(rec RunRecord) error {
	path := os.Getenv(SessionEnv)
	if path == "" {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("session log: %w", err)
	}
	return f.Close()
}

// ReadSession reads a session file; a missing file is an empty session. The
// same experiment run twice with the same definition is listed once.
func ReadSession(path string) ([]RunRecord, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RunRecord
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		var r RunRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("session log %s:%d: %w", path, n, err)
		}
		key := r.Hash + fmt.Sprint(r.Traced, r.Note)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, r)
	}
	return out, sc.Err()
}
