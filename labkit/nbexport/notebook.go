package nbexport

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Notebook is a Jupyter notebook (nbformat 4) kept as generic JSON, so that
// rewriting it (parameters, hidden code, report cells) keeps every field it
// does not touch.
type Notebook struct {
	// Top is the notebook object without its cells.
	Top   map[string]any
	Cells []Cell
}

// Cell is one cell of a notebook as generic JSON.
type Cell map[string]any

// maxNotebookBytes bounds what ParseNotebook reads (a notebook with the
// ECharts library in its outputs is a few MB).
const maxNotebookBytes = 256 << 20

// ParseNotebook parses and checks notebook JSON: an object with nbformat 4
// and a list of cells, each an object with a known cell_type and a source
// that is a string or a list of strings. Errors name the cell and field.
func ParseNotebook(b []byte) (*Notebook, error) {
	if len(b) > maxNotebookBytes {
		return nil, fmt.Errorf("notebook is %d bytes, more than the %d accepted", len(b), maxNotebookBytes)
	}
	var top map[string]any
	if err := json.Unmarshal(b, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + strings.Count(string(b[:min(int(se.Offset), len(b))]), "\n")
			return nil, fmt.Errorf("not a notebook: invalid JSON at line %d: %v", line, err)
		}
		return nil, fmt.Errorf("not a notebook: %v", err)
	}
	if top == nil {
		return nil, errors.New("not a notebook: the JSON is not an object")
	}
	if v, ok := top["nbformat"].(float64); !ok || v != 4 {
		return nil, fmt.Errorf("not a notebook: nbformat %v, want 4", top["nbformat"])
	}
	list, ok := top["cells"].([]any)
	if !ok {
		return nil, fmt.Errorf("not a notebook: cells is %T, want a list", top["cells"])
	}
	nb := &Notebook{Top: top}
	delete(top, "cells")
	for i, c := range list {
		cell, ok := c.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("cell %d: %T, want an object", i+1, c)
		}
		switch t := cell["cell_type"]; t {
		case "code", "markdown", "raw":
		default:
			return nil, fmt.Errorf("cell %d: cell_type %v, want code, markdown or raw", i+1, t)
		}
		if _, ok := sourceText(cell["source"]); !ok {
			return nil, fmt.Errorf("cell %d: source is %T, want a string or a list of strings", i+1, cell["source"])
		}
		if md, ok := cell["metadata"]; ok {
			if _, ok := md.(map[string]any); !ok {
				return nil, fmt.Errorf("cell %d: metadata is %T, want an object", i+1, md)
			}
		}
		if outs, ok := cell["outputs"]; ok {
			if _, ok := outs.([]any); !ok {
				return nil, fmt.Errorf("cell %d: outputs is %T, want a list", i+1, outs)
			}
		}
		nb.Cells = append(nb.Cells, Cell(cell))
	}
	return nb, nil
}

// Marshal writes the notebook as JSON.
func (nb *Notebook) Marshal() ([]byte, error) {
	top := make(map[string]any, len(nb.Top)+1)
	for k, v := range nb.Top {
		top[k] = v
	}
	cells := make([]any, len(nb.Cells))
	for i, c := range nb.Cells {
		cells[i] = map[string]any(c)
	}
	top["cells"] = cells
	return json.MarshalIndent(top, "", " ")
}

// sourceText joins nbformat's multiline strings (a string or a list of
// strings); ok is false for anything else.
func sourceText(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case nil:
		return "", true
	case []any:
		var b strings.Builder
		for _, x := range s {
			xs, ok := x.(string)
			if !ok {
				return "", false
			}
			b.WriteString(xs)
		}
		return b.String(), true
	}
	return "", false
}

// Type is the cell's cell_type.
func (c Cell) Type() string { t, _ := c["cell_type"].(string); return t }

// Source is the cell's source text.
func (c Cell) Source() string { s, _ := sourceText(c["source"]); return s }

// metadata returns the cell's metadata object, creating it if needed.
func (c Cell) metadata() map[string]any {
	md, ok := c["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		c["metadata"] = md
	}
	return md
}

// Tags returns the cell's tags (metadata.tags).
func (c Cell) Tags() []string {
	md, _ := c["metadata"].(map[string]any)
	list, _ := md["tags"].([]any)
	var out []string
	for _, t := range list {
		if s, ok := t.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// HasTag reports whether the cell has the tag.
func (c Cell) HasTag(tag string) bool { return slices.Contains(c.Tags(), tag) }

// AddTag adds a tag to the cell.
func (c Cell) AddTag(tag string) {
	if c.HasTag(tag) {
		return
	}
	md := c.metadata()
	list, _ := md["tags"].([]any)
	md["tags"] = append(list, tag)
}

// Outputs returns the outputs of a code cell.
func (c Cell) Outputs() []map[string]any {
	list, _ := c["outputs"].([]any)
	var out []map[string]any
	for _, o := range list {
		if m, ok := o.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// setOutputs replaces the outputs of a code cell.
func (c Cell) setOutputs(outs []map[string]any) {
	list := make([]any, len(outs))
	for i, o := range outs {
		list[i] = o
	}
	c["outputs"] = list
}

// codeCell returns a new code cell with the given id, source and outputs,
// already executed.
func codeCell(id, source string, tags []string, outputs ...map[string]any) Cell {
	t := make([]any, len(tags))
	for i, s := range tags {
		t[i] = s
	}
	c := Cell{"cell_type": "code", "id": id, "source": source, "execution_count": nil,
		"metadata": map[string]any{"tags": t}, "outputs": []any{}}
	c.setOutputs(outputs)
	return c
}

// htmlOutput is a display_data output holding HTML.
func htmlOutput(h string) map[string]any {
	return map[string]any{"output_type": "display_data", "metadata": map[string]any{}, "data": map[string]any{"text/html": h}}
}

// Title returns the notebook's title: the first level-1 heading of its
// first markdown cell, "" if there is none.
func (nb *Notebook) Title() string {
	for _, c := range nb.Cells {
		if c.Type() != "markdown" {
			continue
		}
		for _, line := range strings.Split(c.Source(), "\n") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(line), "# "); ok {
				return strings.TrimSpace(t)
			}
		}
		return ""
	}
	return ""
}

// setTitle sets the notebook's metadata title, which nbconvert's HTML
// template makes the page's <title> (else the file's name).
func (nb *Notebook) setTitle(t string) {
	meta, _ := nb.Top["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		nb.Top["metadata"] = meta
	}
	meta["title"] = t
}
