package conformance

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/tidemarkdb/tidemark/core/dialect"
)

// sqlReservedWords are the reserved words of SQL:2016 (identifier-shaped
// ones), plus words common engines reserve beyond the standard. The suite
// creates a table and a column named by each, and every one the engine
// refuses must be declared in Catalogue.Naming.ReservedWords.
var sqlReservedWords = append(dialect.SQLReservedWords(), strings.Fields(`
ADD ANALYZE ASC AUTOINCREMENT CHANGE COLLATION CONCURRENTLY DATABASE DATABASES DESC DIV DO DUAL
EXPLAIN FREEZE FULLTEXT GLOB ILIKE INDEX INTERSECTS ISNULL KEY KEYS KILL LIMIT LOCK MINUS NOTNULL
OPTIMIZE OPTION PLACING PRAGMA QUALIFY READ REGEXP RENAME REPLACE RLIKE ROWNUM SCHEMA SIGNAL
SPATIAL TOP USAGE VACUUM VERBOSE VIEW WRITE XOR _ROWID_ STATUS NAME TYPE LEVEL COMMENT DATA
`)...)

// probeWordsFile, when set, names a file of candidate words (one a line or
// blank-separated) probed instead of sqlReservedWords; the refused ones are
// logged in full. That is how the plugins' lists were made: the SQL list,
// plus the engine's own keyword list where it has one (PostgreSQL
// pg_get_keywords(), MariaDB INFORMATION_SCHEMA.KEYWORDS, SQLite's
// keyword list, H2's and HSQLDB's documented keywords), kept where the
// engine refuses the word.
const probeWordsFile = "TIDEMARK_PROBE_WORDS"

func probeCandidates() ([]string, bool, error) {
	f := os.Getenv(probeWordsFile)
	if f == "" {
		return sqlReservedWords, false, nil
	}
	r, err := os.Open(f)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	var words []string
	sc := bufio.NewScanner(r)
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		words = append(words, strings.ToUpper(sc.Text()))
	}
	return words, true, sc.Err()
}

// refusedWord creates a table named w and a table with a column named w,
// each in a transaction rolled back; it returns the first refusal.
func refusedWord(ctx context.Context, env *Env, w string, i int) error {
	for _, stmt := range []string{
		"CREATE TABLE " + w + " (x INT)",
		fmt.Sprintf("CREATE TABLE nm_word_%d (%s INT)", i, w),
	} {
		tx, err := env.DB.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		_, err = tx.ExecContext(ctx, stmt)
		_ = tx.Rollback()
		if err != nil {
			return err
		}
	}
	return nil
}

// engineKeywords lists the keywords the engine itself can list (PostgreSQL
// pg_get_keywords(), MariaDB and MySQL INFORMATION_SCHEMA.KEYWORDS); an
// engine without such a view gives none.
func engineKeywords(ctx context.Context, env *Env) []string {
	var out []string
	for _, q := range []string{"SELECT word FROM pg_get_keywords()", "SELECT WORD FROM INFORMATION_SCHEMA.KEYWORDS"} {
		rows, err := env.DB.QueryContext(ctx, q)
		if err != nil {
			continue
		}
		for rows.Next() {
			var w string
			if rows.Scan(&w) == nil && identifierShaped(w) {
				out = append(out, strings.ToUpper(w))
			}
		}
		rows.Close()
	}
	return out
}

func uniqueWords(words []string) []string {
	seen := map[string]bool{}
	out := words[:0:0]
	for _, w := range words {
		if w = strings.ToUpper(w); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

func identifierShaped(w string) bool {
	for i, r := range w {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return w != ""
}

// testReservedWordsDeclared: every word of the sample the engine refuses as
// a table or column name is declared reserved by the catalogue.
func testReservedWordsDeclared(t T, env *Env) {
	ctx := context.Background()
	words, all, err := probeCandidates()
	if err != nil {
		t.Fatalf("%v", err)
	}
	if all {
		words = append(words, engineKeywords(ctx, env)...)
	}
	words = uniqueWords(words)
	var missing, refused []string
	for i, w := range words {
		if err := refusedWord(ctx, env, w, i); err != nil {
			refused = append(refused, w)
			if !declared(env.Catalogue.Naming.ReservedWords, w) {
				missing = append(missing, w)
			}
		}
	}
	sort.Strings(refused)
	if all {
		t.Logf("refused %d of %d: %s", len(refused), len(words), strings.Join(refused, " "))
	}
	if len(missing) > 0 {
		t.Errorf("the engine refuses %d words as table or column names that the catalogue does not declare reserved: %s", len(missing), strings.Join(missing, " "))
	}
}
