package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/tidemarkdb/tidemark/core/publication"
)

// testPublicationMetadata: metadata is stored, replaced and read back; a
// completion date round-trips with its instant; a purge removes only the
// rows completed longer ago than its age on the database clock; bad input
// is refused before any SQL.
func testPublicationMetadata(t T, env *Env) {
	e := openEngine(t, env, defaultConfig(env))
	ctx := context.Background()
	s := publication.New(e)
	const a, b, c = "0190a1b2-c3d4-7e5f-8a9b-000000000001", "0190a1b2-c3d4-7e5f-8a9b-000000000002", "0190a1b2-c3d4-7e5f-8a9b-000000000003"
	for _, id := range []string{a, b, c} {
		if err := s.Put(ctx, nil, id, []byte(`{"tenant":"t-1"}`)); err != nil {
			t.Fatalf("Put(%s): %v", id, err)
		}
	}
	if err := s.Put(ctx, nil, a, []byte(`{"tenant":"t-2","actor":"ann"}`)); err != nil {
		t.Fatalf("Put again: %v", err)
	}
	row, ok, err := s.Get(ctx, a)
	if err != nil || !ok || string(row.Metadata) != `{"tenant":"t-2","actor":"ann"}` || row.CompletionDate != nil {
		t.Errorf("Get(a) = %+v %s, %v, %v; want the replaced metadata, not completed", row, row.Metadata, ok, err)
	}
	if _, ok, err := s.Get(ctx, "0190a1b2-c3d4-7e5f-8a9b-00000000ffff"); ok || err != nil {
		t.Errorf("Get(unknown) = %v, %v; want none", ok, err)
	}
	now := time.Now()
	old := now.Add(-48 * time.Hour).In(time.FixedZone("UTC+5:45", 5*3600+45*60))
	for id, at := range map[string]time.Time{a: old, b: now} {
		if ok, err := s.MarkCompleted(ctx, id, at); !ok || err != nil {
			t.Fatalf("MarkCompleted(%s) = %v, %v", id, ok, err)
		}
	}
	row, _, err = s.Get(ctx, a)
	if err != nil || row.CompletionDate == nil || row.CompletionDate.Sub(old).Abs() > time.Millisecond {
		t.Errorf("completion date of a = %v (%v), want the instant %v", row.CompletionDate, err, old)
	}
	if ok, err := s.MarkCompleted(ctx, "0190a1b2-c3d4-7e5f-8a9b-00000000ffff", now); ok || err != nil {
		t.Errorf("MarkCompleted(unknown) = %v, %v; want false", ok, err)
	}
	n, err := s.PurgeCompleted(ctx, 24*time.Hour)
	if err != nil || n != 1 {
		t.Errorf("PurgeCompleted(24h) = %d, %v; want 1 (a, completed 48 h ago)", n, err)
	}
	for id, want := range map[string]bool{a: false, b: true, c: true} {
		if _, ok, _ := s.Get(ctx, id); ok != want {
			t.Errorf("after the purge, %s present = %v, want %v", id, ok, want)
		}
	}
	var inv *publication.InvalidError
	if err := s.Put(ctx, nil, "", []byte(`{}`)); !errors.As(err, &inv) {
		t.Errorf("Put with an empty id: %v, want *InvalidError", err)
	}
	if err := s.Put(ctx, nil, c, []byte(`not json`)); !errors.As(err, &inv) {
		t.Errorf("Put of metadata that is not JSON: %v, want *InvalidError", err)
	}
	if _, err := s.PurgeCompleted(ctx, -time.Hour); !errors.As(err, &inv) {
		t.Errorf("PurgeCompleted(-1h): %v, want *InvalidError", err)
	}
}
