package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// SourceFunc resolves a source by its name (the event store, the capture
// topic); an unknown name is an error.
type SourceFunc func(ctx context.Context, name string) (consumer.Source, error)

// maxRows caps the undelivered rows a page lists per consumer, and so the
// payload reads it makes.
const maxRows = 200

type rowView struct {
	consumer.UndeliveredRow
	Payload   string
	Truncated bool
	// PayloadNote says why no payload is shown.
	PayloadNote string
}

type consumerRows struct {
	Ref     consumer.Ref
	State   consumer.State
	Rows    []rowView
	More    int
	HasDead bool
}

type undeliveredData struct {
	Filter    string
	Consumers []consumerRows
}

func (s *Server) undelivered(r *http.Request) (any, error) {
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	d := undeliveredData{Filter: r.FormValue("consumer")}
	var refs []consumer.Ref
	states := map[consumer.Ref]consumer.State{}
	if d.Filter != "" {
		ref, err := consumer.ParseRef(d.Filter)
		if err != nil {
			return nil, err
		}
		st, err := s.op.Status(ctx, ref)
		if err != nil {
			return nil, err
		}
		refs, states[ref] = []consumer.Ref{ref}, st.State
	} else {
		list, err := s.op.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			if len(c.Undelivered) > 0 {
				refs = append(refs, c.Ref())
				states[c.Ref()] = c.State
			}
		}
	}
	for _, ref := range refs {
		rows, err := s.op.Undelivered(ctx, ref)
		if errors.Is(err, consumer.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		cr := consumerRows{Ref: ref, State: states[ref]}
		if len(rows) > maxRows {
			cr.More, rows = len(rows)-maxRows, rows[:maxRows]
		}
		for _, u := range rows {
			v := rowView{UndeliveredRow: u}
			v.Payload, v.Truncated, v.PayloadNote = s.payload(ctx, u)
			cr.HasDead = cr.HasDead || u.IsDeadLetter()
			cr.Rows = append(cr.Rows, v)
		}
		d.Consumers = append(d.Consumers, cr)
	}
	return d, nil
}

// payload reads u's message from its source and returns its payload,
// pretty-printed when it is JSON and cut to PayloadCap bytes (at a rune
// boundary), or a note saying why there is none.
func (s *Server) payload(ctx context.Context, u consumer.UndeliveredRow) (text string, truncated bool, note string) {
	if s.opts.Sources == nil {
		return "", false, "payloads not available"
	}
	src, err := s.opts.Sources(ctx, u.Source)
	if err != nil {
		return "", false, err.Error()
	}
	msgs, err := src.Read(ctx, u.Partition, u.Position-1, u.Position, 1)
	if err != nil {
		return "", false, fmt.Sprintf("reading the message: %v", err)
	}
	if len(msgs) == 0 || msgs[0].Position != u.Position {
		return "", false, "the source no longer holds the message"
	}
	raw, err := src.Payload(msgs[0])
	if err != nil {
		return "", false, err.Error()
	}
	return capText(prettyJSON(raw), s.opts.PayloadCap)
}

// prettyJSON indents raw when it is JSON; other bytes pass unchanged.
func prettyJSON(raw []byte) []byte {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return raw
	}
	return buf.Bytes()
}

// lastRuneStart is the index where b's last (maybe partial) rune starts.
func lastRuneStart(b []byte) int {
	i := len(b) - 1
	for i > 0 && len(b)-i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i--
	}
	return i
}

// capText cuts b to at most limit bytes without splitting a rune; invalid
// UTF-8 is shown with replacement characters.
func capText(b []byte, limit int) (string, bool, string) {
	truncated := false
	if len(b) > limit {
		b, truncated = b[:limit], true
		// Back off a rune cut in two.
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.FullRune(b[lastRuneStart(b):]); i++ {
			b = b[:len(b)-1]
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), truncated, ""
}
