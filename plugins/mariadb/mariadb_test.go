package mariadb

import (
	"context"
	"reflect"
	"testing"

	"github.com/tidemarkdb/tidemark/core/dialect"
	"github.com/tidemarkdb/tidemark/core/engine"
	"github.com/tidemarkdb/tidemark/plugins/mysql"
)

// TestSharedImplementation checks that the MariaDB dialect is package
// mysql's catalogue under its own name.
func TestSharedImplementation(t *testing.T) {
	r, err := New().Describe(context.Background(), dialect.DescribeRequest{HostContractVersion: dialect.ContractVersion})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Catalogue
	if err := engine.Validate(&c); err != nil {
		t.Fatal(err)
	}
	if c.Identity.Name != "mariadb" {
		t.Errorf("name %q, want mariadb", c.Identity.Name)
	}
	my := mysql.Catalogue(mysql.FlavorMySQL)
	if !reflect.DeepEqual(c.Statements, my.Statements) || !reflect.DeepEqual(c.Scripts, my.Scripts) || !reflect.DeepEqual(c.Errors, my.Errors) {
		t.Error("the MariaDB catalogue differs from the MySQL one beyond its identity")
	}
}
