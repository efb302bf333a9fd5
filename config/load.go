package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrInvalid is wrapped by every refused configuration (*Error).
var ErrInvalid = errors.New("invalid configuration")

// Error says where in which file a configuration is wrong, and why.
type Error struct {
	File   string // as given to Load ("" for Parse without a name)
	Line   int    // 1-based; 0 when the whole file is at fault
	Column int
	Key    string // the offending key's path, e.g. aggregates[1].event_table
	Reason string
	// Err is the underlying error, e.g. a *schema.InvalidNameError.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalid) hold, and reaches Err.
func (e *Error) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalid, e.Err}
	}
	return []error{ErrInvalid}
}

// Find returns the configuration file a command reads: explicit when given,
// else $TIDEMARK_CONFIG, else DefaultFile when it exists in the working
// directory, else "" (no file: defaults and flags only).
func Find(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if p := os.Getenv(EnvFile); p != "" {
		return p
	}
	if _, err := os.Stat(DefaultFile); err == nil {
		return DefaultFile
	}
	return ""
}

// Load reads, decodes and validates the configuration file at path.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return Parse(path, data)
}

// Parse decodes and validates a configuration; name is used in errors.
func Parse(name string, data []byte) (*Config, error) {
	c := &Config{File: name}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return c, nil // an empty file is the default configuration
		}
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Line: extra.Line, Column: extra.Column, Reason: "a second YAML document; the configuration is one document"}
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: root.Line, Column: root.Column, Reason: "the configuration must be a mapping of keys (dialect:, prefixes:, …)"}
	}
	if err := knownKeys(name, root, reflect.TypeOf(Config{}), ""); err != nil {
		return nil, err
	}
	if err := root.Decode(c); err != nil {
		return nil, yamlError(name, err)
	}
	c.File, c.loc = name, locator{file: name, root: root}
	if err := c.validate(c.loc); err != nil {
		return nil, err
	}
	return c, nil
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// yamlError turns a YAML syntax or type error into an *Error with its line.
func yamlError(name string, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: name, Line: line, Column: 1, Reason: m[2], Err: err}
	}
	return &Error{File: name, Reason: strings.TrimPrefix(msg, "yaml: "), Err: err}
}

// knownKeys refuses a mapping key no field of t declares, recursively, so a
// misspelt key (prefixs:, own_tables:) is an error, never silently ignored.
func knownKeys(file string, n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case n.Kind == yaml.SequenceNode && t.Kind() == reflect.Slice:
		for i, item := range n.Content {
			if err := knownKeys(file, item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := map[string]reflect.StructField{}
		var names []string
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			fields[tag] = f
			names = append(names, tag)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			f, ok := fields[k.Value]
			if !ok {
				return &Error{File: file, Line: k.Line, Column: k.Column, Key: join(path, k.Value),
					Reason: fmt.Sprintf("unknown key %q (known here: %s)", k.Value, strings.Join(names, ", "))}
			}
			if err := knownKeys(file, v, f.Type, join(path, k.Value)); err != nil {
				return err
			}
			if err := scalarFits(file, v, f.Type, join(path, k.Value)); err != nil {
				return err
			}
		}
	}
	return nil
}

// scalarFits refuses a scalar value that does not decode into its field
// (partitions: sixteen), naming the key: the decoder's own error names
// only the line and the Go type.
func scalarFits(file string, v *yaml.Node, t reflect.Type, key string) error {
	if v.Kind != yaml.ScalarNode {
		return nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want := map[reflect.Kind]string{reflect.Int: "an integer", reflect.Int64: "an integer", reflect.Bool: "true or false"}[t.Kind()]
	if want == "" {
		return nil
	}
	if err := v.Decode(reflect.New(t).Interface()); err != nil {
		return &Error{File: file, Line: v.Line, Column: v.Column, Key: key,
			Reason: fmt.Sprintf("want %s, got %q", want, v.Value), Err: err}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// locator finds the node of a key path in the parsed file.
type locator struct {
	file string
	root *yaml.Node
}

// at returns an *Error positioned at path's value (a key name for a
// mapping entry, an int for a sequence item); with keyOnly, at the key
// itself. A path not in the file (a default) falls back to its nearest
// ancestor that is.
func (l locator) at(reason string, err error, keyOnly bool, path ...any) *Error {
	n := l.root
	pos := n
	var key strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if key.Len() > 0 {
				key.WriteByte('.')
			}
			key.WriteString(p)
			if n == nil || n.Kind != yaml.MappingNode {
				n = nil
				continue
			}
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == p {
					next = n.Content[i+1]
					pos = n.Content[i+1]
					if keyOnly {
						pos = n.Content[i]
					}
				}
			}
			n = next
		case int:
			fmt.Fprintf(&key, "[%d]", p)
			if n == nil || n.Kind != yaml.SequenceNode || p >= len(n.Content) {
				n = nil
				continue
			}
			n = n.Content[p]
			pos = n
		}
	}
	e := &Error{File: l.file, Key: key.String(), Reason: reason, Err: err}
	if pos != nil { // nil for a Config built in code
		e.Line, e.Column = pos.Line, pos.Column
	}
	return e
}
