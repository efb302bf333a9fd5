package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemarkdb/tidemark/config"
	"github.com/tidemarkdb/tidemark/conformance/harness"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
	"github.com/tidemarkdb/tidemark/core/hwm"
	"github.com/tidemarkdb/tidemark/core/schema"
)

// sqliteDemoParams make concurrent writers queue (see plugins/sqlite).
const sqliteDemoParams = "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_txlock=immediate"

func demoCmd() *cobra.Command {
	var s settings
	var serve bool
	var listen string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Append events for two aggregates (one on its own table), read them back in global order, show the mark",
		Long: `Runs on the configured database (default: an embedded SQLite file in a
temporary directory, or a throw-away local server for other dialects), with
the configuration's names; the demo's two aggregates are added to them.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := s.resolve()
			if err != nil {
				return err
			}
			if !serve {
				return runDemo(cmd.Context(), cmd.OutOrStdout(), c)
			}
			f := serveFlags{listen: listen, refresh: 5 * time.Second}
			loopback, err := checkListen(f)
			if err != nil {
				return err
			}
			return runDemoThen(cmd.Context(), cmd.OutOrStdout(), c, func(ctx context.Context, op *consumer.Operator) error {
				fmt.Fprintln(cmd.OutOrStdout())
				return serveConsole(ctx, op, f, loopback, cmd.OutOrStdout(), cmd.ErrOrStderr())
			})
		},
	}
	s.register(cmd, withPlugin|withDB|withNames)
	cmd.Flags().BoolVar(&serve, "serve", false, "then serve the operator console on the demo's database until Ctrl-C (as tidemark serve)")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:7464", "with --serve: the console's address (loopback)")
	return cmd
}

// demoAggregates are appended to by the demo.
var demoAggregates = []config.Aggregate{{Type: "bank.Account"}, {Type: "bank.BankAccount", OwnTable: true}}

func runDemo(ctx context.Context, out io.Writer, c *config.Config) error {
	return runDemoThen(ctx, out, c, nil)
}

// runDemoThen runs the demo, then, when then is not nil, hands it an
// operator on an engine opened verify-only (as tidemark serve opens one)
// on the demo's database, before a throw-away database goes.
func runDemoThen(ctx context.Context, out io.Writer, c *config.Config, then func(context.Context, *consumer.Operator) error) error {
	p := pluginOf(c)
	target, err := demoDatabase(ctx, c, p.dialect)
	if err != nil {
		return err
	}
	defer target.close()
	start := time.Now()
	l, err := load(ctx, p)
	if err != nil {
		return err
	}
	id := l.Catalogue.Identity
	how := "plugin binary " + l.Path
	if l.BuiltIn {
		how = "built into tidemark, served by re-executing it"
	}
	fmt.Fprintf(out, "Tidemark demo on %s\n\n", target.where)
	fmt.Fprintf(out, "plugin  %s %s loaded out of process (pid %d, %s) in %s; catalogue cached, process stopped\n",
		id.Name, id.Version, l.PID, how, time.Since(start).Round(time.Millisecond))
	driver := target.driver
	if driver == "" {
		driver = id.DriverName
	}
	db, err := sql.Open(driver, id.ApplyDSNParams(driver, target.dsn))
	if err != nil {
		return err
	}
	defer db.Close()
	e, err := engine.Open(ctx, db, l.Catalogue, demoConfig(c))
	if err != nil {
		return err
	}
	defer e.Close()
	fmt.Fprintf(out, "schema  %d tables and position objects ready (%s positions, %d partitions)\n",
		len(schema.Objects(e.Cat, e.Names)), l.Catalogue.Positions, e.Partitions)

	adv := hwm.New(e, hwm.Options{})
	store := eventstore.New(e, adv)
	if err := runEventDemo(ctx, out, e, store, adv); err != nil {
		return err
	}
	if err := runConsumerDemo(ctx, out, e, store, adv); err != nil {
		return err
	}
	if err := runProjectionDemo(ctx, out, e, store); err != nil {
		return err
	}
	if err := runSagaDemo(ctx, out, e, store, adv); err != nil || then == nil {
		return err
	}
	cfg := demoConfig(c)
	cfg.Existing = true
	ve, err := engine.Open(ctx, db, l.Catalogue, cfg)
	if err != nil {
		return err
	}
	defer ve.Close()
	return then(ctx, consumer.NewRegistry(ve, nil).Operator())
}

// demoTarget is the database the demo runs on, and how to let it go.
type demoTarget struct {
	dsn, driver, where string
	close              func()
}

// demoDatabase is the configured database, or, without a DSN, a throw-away
// local server (PostgreSQL, MariaDB, H2/HSQLDB through the JDBC bridge) or an
// embedded SQLite file in a temporary directory.
func demoDatabase(ctx context.Context, c *config.Config, dialect string) (demoTarget, error) {
	dsn, err := dsnOf(c)
	if err != nil {
		return demoTarget{}, err
	}
	t := demoTarget{dsn: dsn, driver: c.Driver, where: "the configured database (DSN not shown)", close: func() {}}
	switch {
	case dsn != "":
	case dialect != "sqlite":
		prov := harness.NewProvider()
		t.close = func() { harness.CloseJavaEngines(); prov.Close() }
		d, err := prov.Open(ctx, dialect, c.Driver)
		if err != nil {
			t.close()
			return demoTarget{}, fmt.Errorf("no --dsn given and no local %s server could be started: %w", dialect, err)
		}
		t.dsn, t.driver, t.where = d.DSN, d.DriverName, d.Source
	default:
		dir, err := os.MkdirTemp("", "tidemark-demo-")
		if err != nil {
			return demoTarget{}, err
		}
		t.close = func() { os.RemoveAll(dir) }
		file := filepath.Join(dir, "demo.db")
		t.dsn, t.where = "file:"+file+sqliteDemoParams, "embedded SQLite file "+file
	}
	return t, nil
}

// runEventDemo appends to both aggregates, advances the mark and reads the
// events back in global order.
func runEventDemo(ctx context.Context, out io.Writer, e *engine.Engine, store *eventstore.Store, adv *hwm.Advancer) error {
	type step struct{ typ, id, event, payload string }
	steps := []step{
		{"bank.Account", "acc-1", "AccountOpened", `{"owner":"Ada","currency":"EUR"}`},
		{"bank.BankAccount", "BA-17", "BankAccountOpened", `{"iban":"DE89 3704 0044 0532 0130 00"}`},
		{"bank.Account", "acc-1", "MoneyDeposited", `{"amount": 120.50}`},
		{"bank.BankAccount", "BA-17", "MoneyWithdrawn", `{"amount": 20, "note":"café ☕"}`},
	}
	fmt.Fprintln(out)
	for _, s := range steps {
		res, err := store.Append(ctx, eventstore.Stream{AggregateType: s.typ, AggregateID: s.id,
			Events: []eventstore.Event{{Type: s.event, Payload: []byte(s.payload)}}})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "append  %-16s %-6s %-18s → position %d, version %d, table %s\n",
			s.typ, s.id, s.event, res.Positions[0], res.Versions[s.typ+"/"+s.id], e.Names.ByAggregate[s.typ].Events)
	}
	before, _ := store.Mark(ctx)
	for {
		moved, err := adv.Cycle(ctx)
		if err != nil {
			return err
		}
		if !moved {
			break
		}
	}
	mark, err := store.Mark(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmark    high-water mark %d → %d: every position up to %d is committed and readable\n\n", before, mark, mark)
	evs, err := store.ReadAll(ctx, 0, 100)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "read    %d events in global order, merged from %d event tables:\n", len(evs), len(e.Names.EventTables))
	for _, r := range evs {
		fmt.Fprintf(out, "  %3d  %-16s %-6s #%d  %-18s partition %-2d %s\n", r.GlobalPosition, r.AggregateType, r.AggregateID, r.SequenceNo, r.Type, r.PartitionKey, r.Payload)
	}
	return nil
}

// demoConfig is the configuration with the demo's aggregates declared
// (those it declares itself keep their tables).
func demoConfig(c *config.Config) engine.Config {
	dc := *c
	dc.Aggregates = append([]config.Aggregate{}, c.Aggregates...)
	for _, a := range demoAggregates {
		declared := false
		for _, b := range c.Aggregates {
			declared = declared || b.Type == a.Type
		}
		if !declared {
			dc.Aggregates = append(dc.Aggregates, a)
		}
	}
	ec := dc.EngineConfig()
	ec.QueryTables = append(ec.QueryTables, demoQueryTables()...)
	return ec
}
