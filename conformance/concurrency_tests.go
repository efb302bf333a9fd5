package conformance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// concurrencyTests start separate OS processes (see RunWorkers) on one
// empty database at once.
func concurrencyTests() []Test {
	return []Test{
		{"schema/concurrent_first_start", testConcurrentFirstStart},
		{"schema/partition_mismatch_before_ddl", testPartitionMismatchBeforeDDL},
		{"schema/partition_count_race", testPartitionCountRace},
	}
}

// raceRounds is how many empty databases each race test starts on: the
// old code failed every round on PostgreSQL and MariaDB but one round in
// two to five on H2 and HSQLDB, so one round alone would prove little there.
const raceRounds = 4

// freshDatabase returns the DSN of an empty database: env's for round 0,
// a new one from the target afterwards.
func freshDatabase(t T, env *Env, round int) string {
	t.Helper()
	if round == 0 {
		return env.DSN
	}
	dsn, cleanup, err := env.Target.Fresh(context.Background())
	if err != nil {
		t.Fatalf("fresh database: %v", err)
	}
	if cleanup != nil {
		t.Cleanup(cleanup)
	}
	return dsn
}

func runWorkers(t T, jobs []WorkerJob) []WorkerResult {
	t.Helper()
	res, err := RunWorkers(context.Background(), jobs)
	if errors.Is(err, errNoWorkers) {
		skipf(t, "%v", err)
	}
	if err != nil {
		t.Fatalf("workers: %v", err)
	}
	return res
}

// verifyCreated opens the database with creation switched off: every table,
// sequence and query table must exist and match, and the partition count be
// the one given.
func verifyCreated(t T, env *Env, dsn string, partitions int) {
	t.Helper()
	db, err := sql.Open(env.Driver, dsn)
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer db.Close()
	cfg := defaultConfig(env)
	cfg.Modes, cfg.Partitions = allNever(), partitions
	e, err := engine.Open(context.Background(), db, env.Catalogue, cfg)
	if err != nil {
		t.Fatalf("verifying the schema the workers created: %v", err)
	}
	e.Close()
}

// testConcurrentFirstStart: four processes create the schema on one empty
// database at once; all succeed and the schema is whole.
func testConcurrentFirstStart(t T, env *Env) {
	for round := 0; round < raceRounds; round++ {
		dsn := freshDatabase(t, env, round)
		job := WorkerJob{Action: "open", Catalogue: env.Catalogue, Driver: env.Driver, DSN: dsn, Config: defaultConfig(env)}
		res := runWorkers(t, []WorkerJob{job, job, job, job})
		for i, r := range res {
			if !r.OK {
				t.Errorf("round %d, process %d of 4: %s %s", round, i+1, r.ErrorKind, r.Error)
			}
		}
		if t.Failed() {
			return
		}
		verifyCreated(t, env, dsn, defaultConfig(env).Partitions)
	}
}

// testPartitionMismatchBeforeDDL: a start with a new aggregate and another
// partition count is refused before it creates the aggregate's tables.
func testPartitionMismatchBeforeDDL(t T, env *Env) {
	openEngine(t, env, defaultConfig(env))
	cfg := defaultConfig(env)
	cfg.Partitions = 16
	cfg.Names.Aggregates = append(append([]schema.Aggregate{}, testAggregates...), schema.Aggregate{Namespace: "late", Name: "Late", OwnTable: true})
	cfg.QueryTables = append(cfg.QueryTables, schema.QueryTable{Projection: "late-view", Fields: []schema.QueryField{{Column: "k", Kind: dialect.KindText}}})
	_, err := engine.Open(context.Background(), env.DB, env.Catalogue, cfg)
	pm := expectErr[*engine.PartitionMismatchError](t, err, "a new aggregate with another partition count")
	if pm.Persisted != 8 || pm.Configured != 16 {
		t.Errorf("mismatch reports %d persisted, %d configured; want 8, 16", pm.Persisted, pm.Configured)
	}
	for _, o := range []schema.Object{
		{Name: "LATE_EVENTS", Kind: dialect.ObjectTable, Area: dialect.AreaEventSourcing},
		{Name: "LATE_SNAPSHOTS", Kind: dialect.ObjectTable, Area: dialect.AreaEventSourcing},
		{Name: "late_view", Kind: dialect.ObjectTable, Area: dialect.AreaCQRS},
	} {
		err := schema.Verify(context.Background(), env.DB, &env.Catalogue, []schema.Object{o}, map[dialect.Area]bool{o.Area: true})
		if !errors.Is(err, schema.ErrMissingTable) {
			t.Errorf("%s was created before the mismatch was found (%v)", o.Name, err)
		}
	}
}

// testPartitionCountRace: two first starts with different partition counts
// at once; exactly one wins, the other gets *engine.PartitionMismatchError.
func testPartitionCountRace(t T, env *Env) {
	for round := 0; round < raceRounds; round++ {
		dsn := freshDatabase(t, env, round)
		var jobs []WorkerJob
		for _, n := range []int{8, 16} {
			cfg := defaultConfig(env)
			cfg.Partitions = n
			jobs = append(jobs, WorkerJob{Action: "open", Catalogue: env.Catalogue, Driver: env.Driver, DSN: dsn, Config: cfg})
		}
		res := runWorkers(t, jobs)
		winners := 0
		winner := 0
		for i, r := range res {
			switch {
			case r.OK:
				winners++
				winner = jobs[i].Config.Partitions
			case r.ErrorKind != fmt.Sprintf("%T", &engine.PartitionMismatchError{}):
				t.Errorf("round %d, partitions %d: want the start to succeed or fail with *engine.PartitionMismatchError, got %s %s",
					round, jobs[i].Config.Partitions, r.ErrorKind, r.Error)
			}
		}
		if winners != 1 {
			t.Errorf("round %d: %d of 2 starts succeeded, want exactly 1", round, winners)
		}
		if t.Failed() {
			return
		}
		verifyCreated(t, env, dsn, winner)
	}
}
