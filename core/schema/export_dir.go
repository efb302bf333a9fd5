package schema

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// ExportDir exports the schema in a versioned format into dir, which may
// hold earlier exports (and the user's own migrations): it writes only the
// files ExportVersioned returns, after every check passed, and never
// overwrites a migration file. It returns the names written.
func ExportDir(dir string, cat *dialect.Catalogue, names *Names, queries []QueryTable, cqrsPrefix, format string) ([]string, error) {
	existing, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files, err := ExportVersioned(cat, names, queries, cqrsPrefix, format, existing)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, f := range files {
		flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
		if f.Name == LiquibaseChangelog {
			flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC // appended to, see liquibaseChangelog
		}
		if err := writeFile(filepath.Join(dir, f.Name), flag, f.Content); err != nil {
			return written, err
		}
		written = append(written, f.Name)
	}
	return written, nil
}

func writeFile(path string, flag int, content string) error {
	fh, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return err
	}
	if _, err := fh.WriteString(content); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// ReadDir reads the regular files at the top of dir; a missing directory
// holds nothing.
func ReadDir(dir string) ([]File, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading export directory: %w", err)
	}
	var out []File
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, File{Name: e.Name(), Content: string(b)})
	}
	return out, nil
}
