package harness

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoClone is returned by Provider.Clone when the engine's server cannot
// copy a database; the caller makes a fresh one instead.
var ErrNoClone = errors.New("harness: this engine's server cannot copy a database")

// cloner is a server that can copy a database it made, schema and rows as
// they are.
type cloner interface {
	clone(ctx context.Context, from *Database) (*Database, error)
}

// dropper is a server that can drop a database it made before Close.
type dropper interface {
	drop(ctx context.Context, d *Database) error
}

// Clone returns a new database that is an exact copy of from (a database
// this Provider made for the same engine): tables, indexes, sequences and
// rows as they are now. No session may be connected to from while it is
// copied. It returns ErrNoClone when the engine's server cannot copy.
func (p *Provider) Clone(ctx context.Context, from *Database) (*Database, error) {
	c, ok := p.server(from.Engine).(cloner)
	if !ok {
		return nil, ErrNoClone
	}
	return c.clone(ctx, from)
}

// CanClone says whether Clone can copy databases of engine (its server is
// started: call after an Open of that engine).
func (p *Provider) CanClone(engine string) bool {
	_, ok := p.server(engine).(cloner)
	return ok
}

// Drop removes a database made by Open or Clone now rather than at Close
// (a no-op for engines whose databases Close removes anyway).
func (p *Provider) Drop(ctx context.Context, d *Database) error {
	if dr, ok := p.server(d.Engine).(dropper); ok {
		return dr.drop(ctx, d)
	}
	return nil
}

// server is the running server of engine, nil when none was started.
func (p *Provider) server(engine string) server {
	p.mu.Lock()
	s := p.slots[engine]
	p.mu.Unlock()
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

func (s *pgServer) clone(ctx context.Context, from *Database) (*Database, error) {
	src, err := pgDatabaseName(from.DSN)
	if err != nil {
		return nil, err
	}
	name := newDBName()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE "+name+" TEMPLATE "+src+" ENCODING 'UTF8'"); err != nil {
		return nil, fmt.Errorf("copy database %s on %s: %w", src, s.source, err)
	}
	s.mu.Lock()
	s.created = append(s.created, name)
	s.mu.Unlock()
	dsn, err := withPgDatabase(s.adminDSN, name)
	if err != nil {
		return nil, err
	}
	return &Database{Engine: from.Engine, DriverName: from.DriverName, DSN: dsn, Source: s.source, Note: from.Note}, nil
}

func (s *pgServer) drop(ctx context.Context, d *Database) error {
	name, err := pgDatabaseName(d.DSN)
	if err != nil {
		return err
	}
	if _, err := s.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s on %s: %w", name, s.source, err)
	}
	s.mu.Lock()
	for i, n := range s.created {
		if n == name {
			s.created = append(s.created[:i], s.created[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	return nil
}

// pgDatabaseName is the database a harness DSN names (tm_<hex>, checked,
// since it goes into SQL unquoted).
func pgDatabaseName(dsn string) (string, error) {
	i := strings.Index(dsn, "/tm_")
	if j := strings.Index(dsn, "dbname=tm_"); i < 0 && j >= 0 {
		i = j + len("dbname=") - 1
	}
	if i < 0 {
		return "", fmt.Errorf("harness: %q names no database made by the harness", dsn)
	}
	name := dsn[i+1:]
	if j := strings.IndexAny(name, "?/ "); j >= 0 {
		name = name[:j]
	}
	if len(name) != len("tm_")+16 || strings.Trim(name[3:], "0123456789abcdef") != "" {
		return "", fmt.Errorf("harness: %q names no database made by the harness", dsn)
	}
	return name, nil
}
