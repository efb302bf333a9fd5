package engine

import (
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/schema"
)

func TestLockRefused(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{nil, false}, {"", false}, {[]byte{}, false}, // PostgreSQL's void
		{int64(1), false}, {[]byte("1"), false}, {true, false},
		{int64(0), true}, {[]byte("0"), true}, {"0", true}, {false, true}, // GET_LOCK gave up
	} {
		if got := lockRefused(c.v); got != c.want {
			t.Errorf("lockRefused(%#v) = %v, want %v", c.v, got, c.want)
		}
	}
}

func TestCreatesAnything(t *testing.T) {
	if !createsAnything(nil) {
		t.Error("no modes means Always everywhere")
	}
	never := map[dialect.Area]schema.Mode{}
	for _, a := range []dialect.Area{dialect.AreaEventSourcing, dialect.AreaPartitioning, dialect.AreaMessaging, dialect.AreaCQRS, dialect.AreaSaga, dialect.AreaPublication} {
		never[a] = schema.Never
	}
	if createsAnything(never) {
		t.Error("every area Never creates nothing")
	}
	never[dialect.AreaSaga] = schema.Always
	if !createsAnything(never) {
		t.Error("one area Always creates")
	}
}

func TestValidateSchemaLockAndScope(t *testing.T) {
	cat := dialect.ANSI()
	cat.SchemaLock.Acquire = "SELECT 1"
	if err := Validate(&cat); err == nil {
		t.Error("an Acquire without Release must be refused")
	}
	cat = dialect.ANSI()
	cat.Naming.IndexScope = "database"
	if err := Validate(&cat); err == nil {
		t.Error("an unknown index scope must be refused")
	}
}
