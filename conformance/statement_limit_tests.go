package conformance

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/core/eventstore"
)

func statementLimitTests() []Test {
	return []Test{
		{"eventstore/append_over_statement_limit_refused", testAppendOverStatementLimit},
	}
}

// testAppendOverStatementLimit: on an engine whose dialect declares a limit
// on one statement (MariaDB's max_allowed_packet), the engine reads it at
// Open, and an append whose payload exceeds it is refused before any SQL
// with *engine.StatementTooLargeError naming the setting; nothing is
// stored, and an append that fits is stored.
func testAppendOverStatementLimit(t T, env *Env) {
	s, e := openStore(t, env)
	limit := e.MaxStatementBytes()
	setting := env.Catalogue.StatementLimit.Setting
	if env.Catalogue.StatementLimit.Query == "" {
		if limit != 0 {
			t.Fatalf("no statement limit declared, yet the engine read %d", limit)
		}
		skipf(t, "%s declares no limit on one statement's size", env.Catalogue.Identity.Name)
	}
	if limit <= 0 {
		t.Fatalf("the engine read %s as %d", setting, limit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	big := append(append([]byte(`{"blob":"`), bytes.Repeat([]byte("x"), int(limit))...), `"}`...)
	_, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "big-1",
		Events: []eventstore.Event{{Type: "Big", Payload: big}}})
	var tl *engine.StatementTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, engine.ErrStatementTooLarge) || !strings.Contains(err.Error(), setting) || tl.Limit != limit {
		t.Fatalf("append of a %d-byte payload with %s = %d: %T %v, want *engine.StatementTooLargeError naming %s", len(big), setting, limit, err, err, setting)
	}
	if evs, err := s.Load(ctx, "bank.Account", "big-1", -1); err != nil || len(evs) != 0 {
		t.Fatalf("after the refused append: %d events, %v", len(evs), err)
	}
	if _, err := s.Append(ctx, eventstore.Stream{AggregateType: "bank.Account", AggregateID: "big-1",
		Events: []eventstore.Event{{Type: "Small", Payload: []byte(`{"n":1}`)}}}); err != nil {
		t.Fatalf("append that fits: %v", err)
	}
}
