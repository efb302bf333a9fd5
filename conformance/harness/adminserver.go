package harness

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// adminServer is what a database server the harness creates databases on
// keeps: its admin connection, the databases it created and, on a server
// it started, the process, its directory and any cleanup (a container's
// purge).
type adminServer struct {
	admin   *sql.DB
	proc    *proc
	dir     string
	cleanup func()

	mu      sync.Mutex
	created []string
}

// remember records a database the harness created.
func (s *adminServer) remember(name string) {
	s.mu.Lock()
	s.created = append(s.created, name)
	s.mu.Unlock()
}

// closeServer drops the created databases (dropFmt, with %s for the name)
// on a server the harness neither started nor will purge, closes the admin
// connection, kills a started server, runs the cleanup and removes the
// directory with remove.
func (s *adminServer) closeServer(dropFmt string, remove func(string) error) error {
	var errs []error
	if s.admin != nil {
		if s.proc == nil && s.cleanup == nil {
			s.mu.Lock()
			for _, name := range s.created {
				ctx, cancel := testtime.Context(context.Background(), 10*time.Second)
				if _, err := s.admin.ExecContext(ctx, fmt.Sprintf(dropFmt, name)); err != nil {
					errs = append(errs, err)
				}
				cancel()
			}
			s.mu.Unlock()
		}
		s.admin.Close()
	}
	if s.proc != nil {
		// Killed, not asked: the directory is deleted next, and a graceful
		// stop writes out every database of the run first (a shutdown
		// checkpoint, InnoDB's buffer pool), which only costs time.
		errs = append(errs, s.proc.kill())
	}
	if s.cleanup != nil {
		s.cleanup()
	}
	if s.dir != "" {
		errs = append(errs, remove(s.dir))
	}
	return joinErrs(errs)
}
