package console

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticRoot embed.FS

// staticFS serves /static/… from the embedded static directory.
var staticFS fs.FS = staticRoot

// pageNames are the pages; each is layout.html with its own content block.
var pageNames = []string{"overview", "consumers", "undelivered", "leases", "sagas", "result"}

var funcs = template.FuncMap{
	"time": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	"opttime": func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	// nulltime is opttime for a time whose zero stands for NULL.
	"nulltime": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	"opt": func(v *int64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprint(*v)
	},
	"rate": func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.1f/s", *v)
	},
	"lower": func(s any) string { return strings.ToLower(fmt.Sprint(s)) },
	// handovers counts the claims of v's partitions beyond each one's
	// first (a generation is raised by every claim): how often a
	// rebalance moved or re-claimed a partition.
	"handovers": func(v *consumer.LeaseView) int64 {
		var n int64
		add := func(ps []consumer.LeasedPartition) {
			for _, p := range ps {
				n += max(0, p.Generation-1)
			}
		}
		for _, in := range v.Instances {
			add(in.Partitions)
		}
		add(v.Free)
		return n
	},
	"leased": func(ps []consumer.LeasedPartition) string {
		if len(ps) == 0 {
			return "-"
		}
		parts := make([]string, len(ps))
		for i, p := range ps {
			parts[i] = fmt.Sprintf("%d@%d", p.Partition, p.Generation)
		}
		return strings.Join(parts, " ")
	},
}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// frame is what layout.html reads besides the page's own data.
type frame struct {
	Title    string
	Page     string
	ReadOnly bool
	Insecure bool
	Refresh  int
	CSRF     string
	Data     any
}

// page serves a page whose data load reads; a failure of the read is the
// page's error text, escaped like everything else.
func (s *Server) page(name string, load func(*http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		data, err := load(r)
		if err != nil {
			s.opts.Logger.Warn("console: page failed", "page", name, "error", err)
			s.render(w, http.StatusInternalServerError, "result", "Error", result{Error: err.Error()})
			return
		}
		s.render(w, http.StatusOK, name, name, data)
	}
}

// render executes page into a buffer first, so a template failure is a
// clean 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, status int, page, title string, data any) {
	f := frame{Title: title, Page: page, ReadOnly: s.opts.ReadOnly, Insecure: s.opts.InsecureHTTP,
		Refresh: int(s.opts.Refresh / time.Second), CSRF: s.csrf, Data: data}
	if page == "result" {
		f.Refresh = 0
	}
	var buf bytes.Buffer
	if err := s.pages[page].Execute(&buf, f); err != nil {
		s.opts.Logger.Error("console: rendering", "page", page, "error", err)
		http.Error(w, "console: rendering failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// refOf reads the consumer parameter ("type/name").
func refOf(r *http.Request) (consumer.Ref, error) {
	return consumer.ParseRef(r.FormValue("consumer"))
}

// withDeadline bounds a page's reads so a stuck database cannot pile up
// requests.
func withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 30*time.Second)
}
