package labkit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"synclab/labkit/internal/atomicfile"
	"synclab/platforms"
)

// colors assigns each series name one colour of the palette and keeps it
// for every later chart: variants take the palette from its start in the
// order they first appear, other series (stack components, analytic
// curves) from its end, so a plain chart drawn first does not take the
// variants' colours. In a GoNB notebook each cell is a new program, so the
// assignment is kept in a file of the kernel session (GONB_TMP_DIR): a
// variant keeps its colour across every chart of the notebook and of its
// report.
var colors struct {
	sync.Mutex
	loaded bool
	// Variants and Others list the names in the order they got colours.
	Variants, Others []string
}

// colorsFile is where a notebook's kernel session keeps the assignment; ""
// outside a notebook.
func colorsFile() string {
	if dir := os.Getenv("GONB_TMP_DIR"); dir != "" {
		return filepath.Join(dir, "synclab-colors.json")
	}
	return ""
}

// colorOf returns the colour of a series name, assigning a new name the
// next free colour from the end of the palette (after the palette's
// length, colours repeat).
func colorOf(name string) string {
	colors.Lock()
	defer colors.Unlock()
	loadColors()
	if i := slices.Index(colors.Variants, name); i >= 0 {
		return palette[i%len(palette)]
	}
	i := slices.Index(colors.Others, name)
	if i < 0 {
		colors.Others = append(colors.Others, name)
		saveColors()
		i = len(colors.Others) - 1
	}
	return palette[len(palette)-1-i%len(palette)]
}

// registerVariants gives an experiment's variants colours from the start of
// the palette, in their order, unless they have one.
func registerVariants(e platforms.Experiment) {
	colors.Lock()
	defer colors.Unlock()
	loadColors()
	changed := false
	for _, v := range e.Variants {
		if !slices.Contains(colors.Variants, v.Name) && !slices.Contains(colors.Others, v.Name) {
			colors.Variants = append(colors.Variants, v.Name)
			changed = true
		}
	}
	if changed {
		saveColors()
	}
}

// loadColors reads the session's assignment once; the caller holds the
// lock.
func loadColors() {
	if colors.loaded {
		return
	}
	colors.loaded = true
	if b, err := os.ReadFile(colorsFile()); err == nil {
		_ = json.Unmarshal(b, &colors) // a damaged file starts afresh
	}
}

// saveColors writes the assignment for the session's next cells; without
// a session directory, colours hold within the program.
func saveColors() {
	if path := colorsFile(); path != "" {
		if b, err := json.Marshal(&colors); err == nil {
			// Whole or not at all: a cell interrupted while writing must not
			// leave the next cells a torn file (and new colours).
			_ = atomicfile.Write(context.Background(), path, b, 0o644)
		}
	}
}
