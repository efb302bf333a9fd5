// Package stmtgen writes the typed statement calls of core/stmt from the
// statement specs of core/dialect: per statement a params struct, a row
// struct where it returns columns, and functions over the engine's Exec,
// Query and QueryRow. One file per area of the contract.
package stmtgen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// Generate returns the generated files of core/stmt by file name. dialectDir
// is core/dialect's source directory, read for the Go names of the
// statement IDs. A bind or column without a Go type in the types table, or
// an ID without a constant, is an error.
func Generate(dialectDir string) (map[string][]byte, error) {
	names, err := constNames(dialectDir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	rowOf := map[string]string{}
	for _, a := range dialect.SpecAreas() {
		src, err := area(a, names, rowOf)
		if err != nil {
			return nil, fmt.Errorf("area %s: %w", a.Name, err)
		}
		file := strings.ReplaceAll(a.Name, " ", "_") + "_gen.go"
		if out[file], err = format.Source(src); err != nil {
			return nil, fmt.Errorf("area %s: formatting: %w\n%s", a.Name, err, src)
		}
	}
	return out, nil
}

// Write writes the generated files into dir.
func Write(dialectDir, dir string) error {
	files, err := Generate(dialectDir)
	if err != nil {
		return err
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// constNames maps each StatementID value to the name of its constant in
// core/dialect.
func constNames(dir string) (map[string]string, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "statements*.go"))
	if err != nil || len(matches) == 0 {
		return nil, fmt.Errorf("no statement files in %s: %v", dir, err)
	}
	names := map[string]string{}
	for _, m := range matches {
		f, err := parser.ParseFile(fset, m, nil, 0)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "StatementID" || len(vs.Values) != len(vs.Names) {
					continue
				}
				for i, n := range vs.Names {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						v, _ := strconv.Unquote(lit.Value)
						names[v] = n.Name
					}
				}
			}
		}
	}
	return names, nil
}

// field is one bind, table or column as a Go struct field.
type field struct {
	name, goName, typ string
}

// bindType and colType look a name up in the types table.
func bindType(id dialect.StatementID, name string) (string, error) {
	if t := types[string(id)+" "+name].bind; t != "" {
		return t, nil
	}
	if t := types[name].bind; t != "" {
		return t, nil
	}
	return "", fmt.Errorf("statement %s: bind #{%s} has no Go type in the generator's types table", id, name)
}

func colType(id dialect.StatementID, name string) (string, error) {
	if t := types[string(id)+" "+name].col; t != "" {
		return t, nil
	}
	if t := types[name].col; t != "" {
		return t, nil
	}
	return "", fmt.Errorf("statement %s: column %s has no Go type in the generator's types table", id, name)
}

// goName turns a snake_case name into an exported Go name, with the
// initialisms Go spells in capitals.
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		switch part {
		case "id", "xid":
			b.WriteString(strings.ToUpper(part))
		default:
			if part != "" {
				b.WriteString(strings.ToUpper(part[:1]) + part[1:])
			}
		}
	}
	return b.String()
}

// imports lists the packages a file's types need, sorted.
func imports(uses map[string]bool) []string {
	var out []string
	for p := range uses {
		out = append(out, p)
	}
	// The standard library first, as goimports groups them.
	sort.Slice(out, func(i, j int) bool {
		si, sj := strings.Contains(out[i], "."), strings.Contains(out[j], ".")
		if si != sj {
			return sj
		}
		return out[i] < out[j]
	})
	return out
}

// area renders the file of one area. rowOf maps the columns of a row
// (names and types) to the statement that declared its row struct first:
// statements returning the same columns share it, so one loop can read
// either (a range and its partition range).
func area(a dialect.SpecArea, names map[string]string, rowOf map[string]string) ([]byte, error) {
	var body bytes.Buffer
	uses := map[string]bool{"context": true, "database/sql": true,
		"github.com/tidemarkdb/tidemark/core/dialect": true, "github.com/tidemarkdb/tidemark/core/engine": true}
	for _, sp := range a.Specs {
		c, ok := names[string(sp.ID)]
		if !ok {
			return nil, fmt.Errorf("statement %s has no StatementID constant in core/dialect", sp.ID)
		}
		st := statement{spec: sp, name: c}
		for _, b := range sp.Binds {
			t, err := bindType(sp.ID, b)
			if err != nil {
				return nil, err
			}
			st.binds = append(st.binds, field{b, goName(b), t})
		}
		for _, t := range sp.Tables {
			if perCallTables[t] {
				st.tables = append(st.tables, field{t, goName(t), "string"})
			}
		}
		for _, col := range sp.Returns {
			t, err := colType(sp.ID, col)
			if err != nil {
				return nil, err
			}
			st.cols = append(st.cols, field{col, goName(col), t})
		}
		if len(st.cols) > 0 {
			var sig []string
			for _, c := range st.cols {
				sig = append(sig, c.name+" "+c.typ)
			}
			key := strings.Join(sig, ",")
			if first, ok := rowOf[key]; ok {
				st.sameRow = first
			} else {
				rowOf[key] = st.name
			}
		}
		for _, f := range append(append(append([]field{}, st.binds...), st.tables...), st.cols...) {
			if strings.Contains(f.typ, "time.") {
				uses["time"] = true
			}
		}
		st.render(&body)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by stmtgen from the specs of area %q in core/dialect. DO NOT EDIT.\n\npackage stmt\n\nimport (\n", a.Name)
	imps := imports(uses)
	for i, p := range imps {
		if i > 0 && strings.Contains(p, ".") && !strings.Contains(imps[i-1], ".") {
			out.WriteString("\n")
		}
		fmt.Fprintf(&out, "\t%q\n", p)
	}
	out.WriteString(")\n")
	out.Write(body.Bytes())
	return out.Bytes(), nil
}
