package conformance

import (
	"fmt"
	"testing"

	"github.com/tidemarkdb/tidemark/core/schema"
)

// declaredKeys reads the keys of every DDL shape the built-ins write.
func TestDeclaredKeys(t *testing.T) {
	steps := []schema.Step{
		{SQL: `CREATE TABLE IF NOT EXISTS T1 (
    id CHAR(36) NOT NULL PRIMARY KEY, -- the id
    a  VARCHAR(10) NOT NULL UNIQUE,
    b  BIGINT REFERENCES T0 (id),
    CONSTRAINT uq_T1_ab UNIQUE (a, b),
    UNIQUE KEY uq_T1_ba (b, a),
    INDEX idx_T1_b (b),
    CONSTRAINT fk_T1 FOREIGN KEY (a) REFERENCES T0 (x)
)`},
		{SQL: `CREATE TABLE T2 (x INT NOT NULL, y INT NOT NULL, CONSTRAINT pk_T2 PRIMARY KEY CLUSTERED (x, y DESC))`},
		{SQL: `CREATE UNIQUE INDEX IF NOT EXISTS idx_T2_y ON T2 (y)`},
		{SQL: `IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = 'idx_T1_a') CREATE INDEX idx_T1_a ON dbo.T1 (a)`},
	}
	keys, fks := declaredKeys(steps)
	got := fmt.Sprint(keys["t1"], " ", keys["t2"], " ", fks["t1"])
	want := "[primary key (engine-named) (id) unique (engine-named) (a) unique constraint uq_T1_ab (a, b) unique uq_T1_ba (b, a) index idx_T1_b (b) index idx_T1_a (a)] " +
		"[primary key constraint pk_T2 (x, y) unique idx_T2_y (y)] [[b] [a]]"
	if got != want {
		t.Errorf("declaredKeys:\n got  %s\n want %s", got, want)
	}
}

// The partition vectors agree with themselves: each partition is its
// FNV-1a value modulo 8.
func TestPartitionVectors(t *testing.T) {
	for _, v := range partitionVectors {
		if int(v.fnv1a%8) != v.partition {
			t.Errorf("%q: 0x%08x %% 8 = %d, vector says %d", v.id, v.fnv1a, v.fnv1a%8, v.partition)
		}
	}
}
