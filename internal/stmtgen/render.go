package stmtgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// statement is one spec with its Go names and fields.
type statement struct {
	spec                dialect.StatementSpec
	name                string
	binds, tables, cols []field
	// sameRow names the statement whose row struct this one's returns
	// share ("" when it declares its own).
	sameRow string
}

// hasParams tells whether the statement's functions take a params struct.
func (s statement) hasParams() bool { return len(s.binds)+len(s.tables) > 0 }

func (s statement) render(w *bytes.Buffer) {
	id := "dialect." + s.name
	params, pArg, tables, args := "", "", "nil", "nil"
	if s.hasParams() {
		params = s.name + "Params"
		pArg = ", p " + params
		s.renderParams(w, params)
		if len(s.binds) > 0 {
			args = "p.args()"
		}
		if len(s.tables) > 0 {
			tables = "p.tables()"
		}
	}
	fmt.Fprintf(w, "\n// Exec%s runs %s on q (see engine.Engine.Exec).\n", s.name, id)
	fmt.Fprintf(w, "func Exec%s(ctx context.Context, e *engine.Engine, q engine.Querier%s) (sql.Result, error) {\n", s.name, pArg)
	fmt.Fprintf(w, "\treturn e.Exec(ctx, q, %s, %s, %s)\n}\n", id, tables, args)
	if len(s.cols) == 0 {
		return
	}
	row, scan := s.name+"Row", "scan"+s.name
	if s.sameRow != "" {
		fmt.Fprintf(w, "\n// %s is a row of %s: the columns of dialect.%s.\ntype %s = %sRow\n", row, id, s.sameRow, row, s.sameRow)
		scan = "scan" + s.sameRow
	} else {
		fmt.Fprintf(w, "\n// %s is a row of %s.\ntype %s struct {\n", row, id, row)
		var dest []string
		for _, c := range s.cols {
			fmt.Fprintf(w, "\t// %s is column %s.\n\t%s %s\n", c.goName, c.name, c.goName, c.typ)
			dest = append(dest, "&r."+c.goName)
		}
		w.WriteString("}\n")
		fmt.Fprintf(w, "\nfunc %s(s scanner, r *%s) error {\n\treturn s.Scan(%s)\n}\n", scan, row, strings.Join(dest, ", "))
	}
	fmt.Fprintf(w, "\n// Query%s runs %s on q and returns its rows (see engine.Engine.Query).\n", s.name, id)
	fmt.Fprintf(w, "func Query%s(ctx context.Context, e *engine.Engine, q engine.Querier%s) (Rows[%s], error) {\n", s.name, pArg, row)
	fmt.Fprintf(w, "\trows, err := e.Query(ctx, q, %s, %s, %s)\n\treturn Rows[%s]{rows: rows, e: e, scan: %s}, err\n}\n", id, tables, args, row, scan)
	fmt.Fprintf(w, "\n// QueryRow%s runs %s on q and scans its one row; sql.ErrNoRows when\n// there is none (see engine.Engine.QueryRow).\n", s.name, id)
	fmt.Fprintf(w, "func QueryRow%s(ctx context.Context, e *engine.Engine, q engine.Querier%s) (%s, error) {\n", s.name, pArg, row)
	fmt.Fprintf(w, "\tvar r %s\n\terr := %s(e.QueryRow(ctx, q, %s, %s, %s), &r)\n\treturn r, err\n}\n", row, scan, id, tables, args)
}

func (s statement) renderParams(w *bytes.Buffer, params string) {
	fmt.Fprintf(w, "\n// %s are the binds of %s", params, "dialect."+s.name)
	if len(s.tables) > 0 {
		w.WriteString(" and the tables its caller names")
	}
	fmt.Fprintf(w, ".\ntype %s struct {\n", params)
	for _, b := range s.binds {
		null := ""
		if strings.HasPrefix(b.typ, "*") {
			null = " (nil: NULL)"
		}
		fmt.Fprintf(w, "\t// %s is #{%s}%s.\n\t%s %s\n", b.goName, b.name, null, b.goName, b.typ)
	}
	for _, t := range s.tables {
		fmt.Fprintf(w, "\t// %s fills ${%s}.\n\t%s string\n", t.goName, t.name, t.goName)
	}
	w.WriteString("}\n")
	if len(s.binds) > 0 {
		fmt.Fprintf(w, "\nfunc (p %s) args() map[string]any {\n\treturn map[string]any{\n", params)
		for _, b := range s.binds {
			v := "p." + b.goName
			if strings.HasPrefix(b.typ, "*") {
				v = "nullable(" + v + ")"
			}
			fmt.Fprintf(w, "\t\t%q: %s,\n", b.name, v)
		}
		w.WriteString("\t}\n}\n")
	}
	if len(s.tables) > 0 {
		fmt.Fprintf(w, "\nfunc (p %s) tables() map[string]string {\n\treturn map[string]string{", params)
		for i, t := range s.tables {
			if i > 0 {
				w.WriteString(", ")
			}
			fmt.Fprintf(w, "%q: p.%s", t.name, t.goName)
		}
		w.WriteString("}\n}\n")
	}
}
