package conformance

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/internal/testtime"
)

// freshAreas are the tests (name prefixes) that keep a fresh database even
// where the target can copy a prepared one: they test the DDL itself
// (creating twice, a concurrent first start, naming, what a reading command
// leaves) or lay out other configurations than the default one.
var freshAreas = []string{
	"catalogue/", "schema/", "naming/", "concurrency/", "readonly/", "querytable/",
	"eventstore/follow_streams_rows", "eventstore/follow_buffered",
	"hwm/interleaved_commits_tail_reader_streamed", "hwm/interleaved_autocommit_tail_reader_streamed",
	"consumer/leases_spread_kill9_three_processes", "hwm/interleaved_group_commit_tail_reader_streamed",
	"consumer/rebalance_joins_no_duplicates_three_processes", "consumer/idle_caught_up_lag_zero_after_stop",
	"consumer/stop_during_read_saves_read_partitions", "projection/global_scope_one_read_model_every_worker",
	"projection/chained_downstream_converges_on_upstream", "projection/rebuild_",
	"projection/declaration_change_halts_accept_and_rebuild_clear", "projection/chunked_apply_equals_one_by_one",
	"projection/chunked_apply_first_events_of_shared_ids",
	"time/query_time_of_day_cut_as_declared",
	"projection/typed_finder", // their own query table beside the fixture's
}

// preparedSchema is a database laid out once per target by engine.Open
// with the default configuration; tests get copies of it.
type preparedSchema struct {
	dsn string
	cfg *engine.Config
}

// forTest is p when the test may start from a copy, else nil.
func (p *preparedSchema) forTest(name string) *preparedSchema {
	if p == nil {
		return nil
	}
	for _, a := range freshAreas {
		if strings.HasPrefix(name, a) {
			return nil
		}
	}
	return p
}

// prepareTemplate lays out the default schema in a fresh database and
// closes every connection to it (a copy needs it idle); nil when the
// target cannot copy databases or the layout fails (the tests then run on
// fresh databases as before, and the failure is logged).
func prepareTemplate(t *testing.T, target Target, cat dialect.Catalogue) *preparedSchema {
	t.Helper()
	if target.Clone == nil {
		return nil
	}
	ctx, cancel := testtime.Context(context.Background(), 2*time.Minute)
	defer cancel()
	dsn, cleanup, err := target.Fresh(ctx)
	if err != nil {
		t.Logf("prepared schema: fresh database: %v (tests run on fresh databases)", err)
		return nil
	}
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	driver := target.Driver
	if driver == "" {
		driver = cat.Identity.DriverName
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Logf("prepared schema: sql.Open(%s): %v (tests run on fresh databases)", driver, err)
		return nil
	}
	defer db.Close()
	cfg := DefaultConfig(cat)
	e, err := engine.Open(ctx, db, cat, cfg)
	if err != nil {
		t.Logf("prepared schema: engine.Open: %v (tests run on fresh databases)", err)
		return nil
	}
	e.Close()
	if err := db.Close(); err != nil {
		t.Logf("prepared schema: close: %v (tests run on fresh databases)", err)
		return nil
	}
	return &preparedSchema{dsn: dsn, cfg: &cfg}
}

// onPrepared says whether cfg lays out what env's database was laid out
// with when it is a copy (the same names, query tables and partitions;
// modes and read-only only change what Open may do); a test opening
// another layout on a copy is misfiled (it belongs in freshAreas).
func onPrepared(env *Env, cfg engine.Config) bool {
	p := env.prepared
	return p == nil || reflect.DeepEqual(p.Names, cfg.Names) && reflect.DeepEqual(p.QueryTables, cfg.QueryTables) && p.Partitions == cfg.Partitions
}

// DefaultConfig is the configuration the suite's tests open on catalogue
// cat's engine, which a target's prepared schema is laid out with.
func DefaultConfig(cat dialect.Catalogue) engine.Config {
	return defaultConfig(&Env{Features: FeaturesOf(cat)})
}
