package labkit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"synclab/platforms"
)

// colors assigns each series name (a variant, usually) one colour of the
// palette, in the order names first appear, and keeps it for every later
// chart. In a GoNB notebook each cell is a new program, so the assignment
// is kept in a file of the kernel session (GONB_TMP_DIR): a variant keeps
// its colour across every chart of the notebook and of its report.
var colors struct {
	sync.Mutex
	loaded bool
	order  []string
}

// colorsFile is where a notebook's kernel session keeps the assignment; ""
// outside a notebook.
func colorsFile() string {
	if dir := os.Getenv("GONB_TMP_DIR"); dir != "" {
		return filepath.Join(dir, "synclab-colors.json")
	}
	return ""
}

// colorOf returns the colour of a series name, assigning the next one of
// the palette to a new name (after the palette's length, colours repeat).
func colorOf(name string) string {
	colors.Lock()
	defer colors.Unlock()
	return palette[colorIndex(name)%len(palette)]
}

// registerVariants assigns colours to an experiment's variants in their
// order, so that their colours follow the definition rather than the
// order charts happen to show them.
func registerVariants(e platforms.Experiment) {
	colors.Lock()
	defer colors.Unlock()
	for _, v := range e.Variants {
		colorIndex(v.Name)
	}
}

// colorIndex is the index of name in the assignment, adding it if new.
// The caller holds the lock.
func colorIndex(name string) int {
	path := colorsFile()
	if !colors.loaded {
		colors.loaded = true
		if b, err := os.ReadFile(path); err == nil {
			_ = json.Unmarshal(b, &colors.order) // a damaged file starts afresh
		}
	}
	if i := slices.Index(colors.order, name); i >= 0 {
		return i
	}
	colors.order = append(colors.order, name)
	if path != "" {
		if b, err := json.Marshal(colors.order); err == nil {
			_ = os.WriteFile(path, b, 0o644) // without it, colours hold within the cell
		}
	}
	return len(colors.order) - 1
}
