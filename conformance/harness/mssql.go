package harness

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// mssqlServer is a SQL Server reached through github.com/microsoft/go-mssqldb
// (driver name "sqlserver"), from the environment or from Docker.
type mssqlServer struct {
	adminDSN string
	source   string
	admin    *sql.DB
	cleanup  func()
	owned    bool // the harness started it, so created databases die with it

	mu      sync.Mutex
	created []string
}

func (s *mssqlServer) connect(ctx context.Context) error {
	db, err := sql.Open("sqlserver", s.adminDSN)
	if err != nil {
		return err
	}
	db.SetMaxOpenConns(2)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return err
	}
	s.admin = db
	return nil
}

func (s *mssqlServer) create(ctx context.Context, driverName string) (*Database, error) {
	name := newDBName()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE ["+name+"]"); err != nil {
		return nil, fmt.Errorf("create database on %s: %w", s.source, err)
	}
	s.mu.Lock()
	s.created = append(s.created, name)
	s.mu.Unlock()
	dsn, err := withMSSQLDatabase(s.adminDSN, name)
	if err != nil {
		return nil, err
	}
	return &Database{Engine: EngineSQLServer, DriverName: driverName, DSN: dsn, Source: s.source}, nil
}

func (s *mssqlServer) close() error {
	var errs []error
	if s.admin != nil {
		if !s.owned {
			s.mu.Lock()
			for _, name := range s.created {
				ctx, cancel := testtime.Context(context.Background(), 10*time.Second)
				q := "ALTER DATABASE [" + name + "] SET SINGLE_USER WITH ROLLBACK IMMEDIATE; DROP DATABASE [" + name + "]"
				if _, err := s.admin.ExecContext(ctx, q); err != nil && !strings.Contains(err.Error(), "does not exist") {
					errs = append(errs, err)
				}
				cancel()
			}
			s.mu.Unlock()
		}
		s.admin.Close()
	}
	if s.cleanup != nil {
		s.cleanup()
	}
	return joinErrs(errs)
}
