package dialect

import (
	"net/url"
	"strings"
)

// DSNParam is one query parameter of a DSN that a guarantee relies on.
type DSNParam struct {
	Name  string `json:"name"`  // e.g. "_pragma" or "_txlock"
	Value string `json:"value"` // e.g. "busy_timeout(10000)" or "immediate"
	// Match, when set, is the value's prefix that names the setting, for
	// a parameter given several times with different settings
	// ("busy_timeout(" of _pragma); empty: any value of Name is the user's.
	Match string `json:"match,omitempty"`
	// Why says what fails without it, for the documentation and the CLI.
	Why string `json:"why,omitempty"`
}

// ApplyDSNParams returns dsn with every DSNParams entry it lacks appended,
// when driver is the catalogue's DriverName. A parameter the DSN sets,
// whatever its value, is the user's choice and is kept as it is.
func (id Identity) ApplyDSNParams(driver, dsn string) string {
	if driver != id.DriverName || len(id.DSNParams) == 0 {
		return dsn
	}
	_, query, _ := strings.Cut(dsn, "?")
	given, err := url.ParseQuery(query)
	if err != nil {
		return dsn // the driver reports a malformed DSN itself
	}
	var add []string
	for _, p := range id.DSNParams {
		if !hasParam(given[p.Name], p.Match) {
			add = append(add, url.QueryEscape(p.Name)+"="+p.Value)
		}
	}
	if len(add) == 0 {
		return dsn
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
		if strings.HasSuffix(dsn, "?") || strings.HasSuffix(dsn, "&") {
			sep = ""
		}
	}
	return dsn + sep + strings.Join(add, "&")
}

func hasParam(values []string, match string) bool {
	for _, v := range values {
		if match == "" || strings.HasPrefix(strings.ToLower(strings.TrimSpace(v)), match) {
			return true
		}
	}
	return false
}
