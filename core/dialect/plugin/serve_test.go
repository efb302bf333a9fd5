package plugin_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/dialect/internal/fixture"
	"github.com/tidemarkdb/tidemark/core/dialect/plugin"
)

func TestInProcess(t *testing.T) {
	l, err := plugin.InProcess(context.Background(), fixture.New())
	if err != nil {
		t.Fatal(err)
	}
	checkFixture(t, l.Catalogue)
	if l.PID != 0 || l.Path != "" || l.Dialect == nil {
		t.Errorf("in-process Loaded = %+v", l)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// describeFunc adapts a function to Dialect.
type describeFunc func(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error)

func (f describeFunc) Describe(ctx context.Context, r dialect.DescribeRequest) (dialect.DescribeResponse, error) {
	return f(ctx, r)
}

func TestInProcessContractVersion(t *testing.T) {
	withVersion := func(v int) dialect.Dialect {
		return describeFunc(func(_ context.Context, r dialect.DescribeRequest) (dialect.DescribeResponse, error) {
			if r.HostContractVersion != dialect.ContractVersion {
				t.Errorf("HostContractVersion = %d", r.HostContractVersion)
			}
			c := fixture.Catalogue()
			c.Identity.ContractVersion = v
			return dialect.DescribeResponse{Catalogue: c}, nil
		})
	}
	// Zero is stamped with the version the plugin was built with.
	l, err := plugin.InProcess(context.Background(), withVersion(0))
	if err != nil {
		t.Fatal(err)
	}
	if l.Catalogue.Identity.ContractVersion != dialect.ContractVersion {
		t.Errorf("ContractVersion = %d, want %d", l.Catalogue.Identity.ContractVersion, dialect.ContractVersion)
	}
	// Another version is refused.
	_, err = plugin.InProcess(context.Background(), withVersion(dialect.ContractVersion+1))
	var cv *dialect.ContractVersionError
	if !errors.As(err, &cv) || cv.Plugin != dialect.ContractVersion+1 {
		t.Fatalf("err = %v, want *ContractVersionError", err)
	}
}

func TestInProcessDescribeError(t *testing.T) {
	d := describeFunc(func(context.Context, dialect.DescribeRequest) (dialect.DescribeResponse, error) {
		return dialect.DescribeResponse{}, errors.New("boom")
	})
	if _, err := plugin.InProcess(context.Background(), d); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
}
