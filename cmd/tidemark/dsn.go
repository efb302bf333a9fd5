package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
)

// errNoDatabaseFile is wrapped when a SQLite database file does not exist:
// a command that must not create refuses before the driver would create it.
var errNoDatabaseFile = errors.New("database file does not exist")

// sqliteFileExists refuses a SQLite DSN naming a file that does not exist
// (opening it would create an empty one); other drivers and in-memory
// databases pass.
func sqliteFileExists(driver, dsn string) error {
	if driver != "sqlite" && driver != "sqlite3" {
		return nil
	}
	path := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		if strings.Contains(path[i:], "mode=memory") {
			return nil
		}
		path = path[:i]
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, ":memory:") {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s", errNoDatabaseFile, path)
	} else if err != nil {
		return err
	}
	return nil
}

// secretParam matches a password-like key=value pair of a keyword DSN or a
// URL query.
var secretParam = regexp.MustCompile(`(?i)\b(password|passwd|pwd|secret)=([^&;\s]*)`)

// mysqlUserinfo matches the user:password@ of a go-sql-driver/mysql DSN.
var mysqlUserinfo = regexp.MustCompile(`^([^:@/]*):[^@]*@`)

// redactDSN is dsn with its passwords replaced by "xxxxx", fit for an
// error message.
func redactDSN(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" && u.Host != "" {
		dsn = u.Redacted()
	} else {
		dsn = mysqlUserinfo.ReplaceAllString(dsn, "${1}:xxxxx@")
	}
	return secretParam.ReplaceAllString(dsn, "${1}=xxxxx")
}
