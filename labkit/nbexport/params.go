package nbexport

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ParametersTag tags the cell that declares a notebook's parameters
// (papermill's convention); InjectedTag tags the cell lab report -p adds
// after it.
const (
	ParametersTag = "parameters"
	InjectedTag   = "injected-parameters"
)

// Param is a notebook parameter: a variable declared in the cell tagged
// parameters, which a report can run with another value.
type Param struct {
	Name string
	// Type is the Go type: declared, or that of the literal it starts
	// with (3 is an int, 3.0 a float64).
	Type string
	// Value is the Go source of its value in the notebook.
	Value string
	// Doc is the comment on its line, or else the comment just above
	// it (on one line).
	Doc string
}

// Parameters returns the index of the cell tagged parameters and the
// variables it declares (-1 and none when no cell is tagged).
func (nb *Notebook) Parameters() (int, []Param, error) {
	for i, c := range nb.Cells {
		if c.Type() != "code" || !c.HasTag(ParametersTag) {
			continue
		}
		ps, err := parseParams(c.Source())
		if err != nil {
			return i, nil, fmt.Errorf("the parameters cell (cell %d): %w", i+1, err)
		}
		return i, ps, nil
	}
	return -1, nil, nil
}

// parseParams reads the variables of Go declarations.
func parseParams(src string) ([]Param, error) {
	const head = "package p\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", head+src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("not Go declarations: %v", err)
	}
	text := func(n ast.Node) string {
		return (head + src)[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset]
	}
	var out []Param
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				p := Param{Name: name.Name}
				if vs.Type != nil {
					p.Type = text(vs.Type)
				}
				if i < len(vs.Values) {
					p.Value = text(vs.Values[i])
					if p.Type == "" {
						p.Type = literalType(vs.Values[i], text)
					}
				}
				switch {
				case vs.Comment != nil:
					p.Doc = strings.TrimSpace(vs.Comment.Text())
				case vs.Doc != nil:
					p.Doc = strings.Join(strings.Fields(vs.Doc.Text()), " ")
				}
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// literalType is the type of a variable initialised with e and no declared
// type: that of its literal, or "" when it is not one -p understands.
func literalType(e ast.Expr, text func(ast.Node) string) string {
	switch x := e.(type) {
	case *ast.BasicLit:
		return map[token.Token]string{token.INT: "int", token.FLOAT: "float64", token.STRING: "string"}[x.Kind]
	case *ast.UnaryExpr:
		if x.Op == token.SUB || x.Op == token.ADD {
			return literalType(x.X, text)
		}
	case *ast.Ident:
		if x.Name == "true" || x.Name == "false" {
			return "bool"
		}
	case *ast.CompositeLit:
		if x.Type != nil {
			return text(x.Type)
		}
	case *ast.CallExpr: // float64(3)
		if id, ok := x.Fun.(*ast.Ident); ok && len(x.Args) == 1 {
			return id.Name
		}
	}
	return ""
}

// goValue turns a -p value into Go source of the parameter's type; the
// error names the parameter, the value and what it takes.
func (p Param) goValue(raw string) (string, error) {
	bad := func(want string) error {
		return fmt.Errorf("-p %s=%s: %s is of type %s, want %s", p.Name, raw, p.Name, p.Type, want)
	}
	if elem, n, ok := listType(p.Type); ok {
		var items []string
		if strings.TrimSpace(raw) != "" {
			items = strings.Split(raw, ",")
		}
		if n >= 0 && len(items) != n {
			return "", bad(fmt.Sprintf("%d comma-separated values", n))
		}
		vals := make([]string, len(items))
		for i, it := range items {
			v, err := (Param{Name: p.Name, Type: elem}).goValue(strings.TrimSpace(it))
			if err != nil {
				return "", bad("comma-separated " + elem + " values")
			}
			vals[i] = v
		}
		return p.Type + "{" + strings.Join(vals, ", ") + "}", nil
	}
	switch p.Type {
	case "int", "int64", "int32":
		bits := map[string]int{"int": 64, "int64": 64, "int32": 32}[p.Type]
		if _, err := strconv.ParseInt(raw, 10, bits); err != nil {
			return "", bad(fmt.Sprintf("a whole number that fits in %d bits", bits))
		}
		return raw, nil
	case "uint", "uint64", "uint32":
		bits := map[string]int{"uint": 64, "uint64": 64, "uint32": 32}[p.Type]
		if _, err := strconv.ParseUint(raw, 10, bits); err != nil {
			return "", bad(fmt.Sprintf("a non-negative whole number that fits in %d bits", bits))
		}
		return raw, nil
	case "float64", "float32":
		// Go has no literal for an infinity or NaN: the cell would not compile.
		v, err := strconv.ParseFloat(raw, 64)
		switch {
		case err != nil:
			return "", bad("a number")
		case math.IsInf(v, 0) || math.IsNaN(v):
			return "", bad("a finite number")
		}
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case "string":
		return strconv.Quote(raw), nil
	case "bool":
		v, err := strconv.ParseBool(raw)
		if err != nil {
			return "", bad("true or false")
		}
		return strconv.FormatBool(v), nil
	}
	if p.Type == "" {
		return "", fmt.Errorf("-p %s=%s: %s is not a plain value (%s); set it in the notebook", p.Name, raw, p.Name, p.Value)
	}
	return "", fmt.Errorf("-p %s=%s: %s is of type %s, which -p cannot set; set it in the notebook", p.Name, raw, p.Name, p.Type)
}

// listType splits "[]float64" ([]T, n = -1) and "[2]float64" ([N]T).
func listType(t string) (elem string, n int, ok bool) {
	if e, ok := strings.CutPrefix(t, "[]"); ok {
		return e, -1, true
	}
	if !strings.HasPrefix(t, "[") {
		return "", 0, false
	}
	size, e, found := strings.Cut(t[1:], "]")
	if !found {
		return "", 0, false
	}
	n, err := strconv.Atoi(size)
	if err != nil {
		return "", 0, false
	}
	return e, n, true
}

// ParseSetting splits a -p argument "key=value".
func ParseSetting(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	if key = strings.TrimSpace(key); !ok || key == "" {
		return "", "", fmt.Errorf("-p %q: want name=value", s)
	}
	return key, value, nil
}

// SetParameters checks values against the notebook's parameters and adds,
// after the parameters cell, a cell that declares them again with the
// given values (GoNB keeps the last declaration of a name). The error names
// the parameter and lists the notebook's parameters.
func (nb *Notebook) SetParameters(values map[string]string) error {
	if len(values) == 0 {
		return nil
	}
	at, params, err := nb.Parameters()
	if err != nil {
		return err
	}
	if at < 0 {
		return fmt.Errorf("no cell is tagged %q: the notebook takes no -p", ParametersTag)
	}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var names []string
	for _, p := range params {
		names = append(names, p.Name)
	}
	var b strings.Builder
	b.WriteString("// Parameters set with lab report -p.\n")
	for _, k := range keys {
		i := slices.IndexFunc(params, func(p Param) bool { return p.Name == k })
		if i < 0 {
			return fmt.Errorf("-p %s: no such parameter; the notebook's parameters: %s", k, strings.Join(names, ", "))
		}
		v, err := params[i].goValue(values[k])
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "var %s %s = %s\n", k, params[i].Type, v)
	}
	cell := codeCell("synclab-injected-parameters", b.String(), []string{InjectedTag})
	nb.Cells = slices.Insert(nb.Cells, at+1, cell)
	return nil
}
