package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tidemarkdb/tidemark/core/consumer"
)

// ErrConfirmation: a rebuild whose confirmation does not name the
// consumer.
var ErrConfirmation = errors.New("confirmation required")

// ErrUnknownAction: an action the console does not have.
var ErrUnknownAction = errors.New("unknown action")

// result is what the result page shows: what an action changed, or why it
// was refused.
type result struct {
	Action   string
	Consumer string
	Changes  string
	Next     string
	Error    string
	Back     string
}

// actionFunc runs one action: the text of what changed and, for a rebuild,
// what to do next.
type actionFunc func(ctx context.Context, s *Server, ref consumer.Ref, r *http.Request) (changes, next string, err error)

var actions = map[string]actionFunc{
	"pause": changesOf(func(ctx context.Context, o *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
		return o.Pause(ctx, ref)
	}),
	"resume": changesOf(func(ctx context.Context, o *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
		return o.Resume(ctx, ref)
	}),
	"resume-past": changesOf(func(ctx context.Context, o *consumer.Operator, ref consumer.Ref) (consumer.Changes, error) {
		return o.ResumePast(ctx, ref)
	}),
	"retry":            selectorAction((*consumer.Operator).RetryDeadLetters),
	"delete":           selectorAction((*consumer.Operator).DeleteDeadLetters),
	"skip":             skipAction,
	"rebuild-begin":    rebuildAction(true),
	"rebuild-complete": rebuildAction(false),
}

func changesOf(do func(context.Context, *consumer.Operator, consumer.Ref) (consumer.Changes, error)) actionFunc {
	return func(ctx context.Context, s *Server, ref consumer.Ref, _ *http.Request) (string, string, error) {
		ch, err := do(ctx, s.op, ref)
		return ch.String(), "", err
	}
}

// selectorAction is retry or delete of dead letters picked by id, by
// source and key, or all, as the CLI's --id, --source --key and --all.
func selectorAction(do func(*consumer.Operator, context.Context, consumer.Ref, consumer.Selector) (consumer.Changes, error)) actionFunc {
	return func(ctx context.Context, s *Server, ref consumer.Ref, r *http.Request) (string, string, error) {
		var sel consumer.Selector
		switch r.PostFormValue("select") {
		case "id":
			sel = consumer.ByID(r.PostFormValue("id"))
		case "key":
			sel = consumer.ByKey(r.PostFormValue("source"), r.PostFormValue("key"))
		case "all":
			sel = consumer.AllDeadLetters()
		default:
			return "", "", &consumer.SelectorError{Reason: "choose one dead letter, a key or all"}
		}
		ch, err := do(s.op, ctx, ref, sel)
		return ch.String(), "", err
	}
}

// skipAction records a skip of the message at a source's position, checked
// against the source as `tidemark consumers skip` does (never ahead of the
// mark from the console).
func skipAction(ctx context.Context, s *Server, ref consumer.Ref, r *http.Request) (string, string, error) {
	sk := consumer.Skip{Source: r.PostFormValue("source"), Key: r.PostFormValue("key"), EveryKey: r.PostFormValue("every_key") == "on"}
	var err error
	if sk.Partition, err = strconv.Atoi(r.PostFormValue("partition")); err != nil {
		return "", "", &consumer.InvalidSkipError{Skip: sk, Reason: "the partition is not a number"}
	}
	if sk.Position, err = strconv.ParseInt(r.PostFormValue("position"), 10, 64); err != nil {
		return "", "", &consumer.InvalidSkipError{Skip: sk, Reason: "the position is not a number"}
	}
	if s.opts.Sources == nil {
		return "", "", fmt.Errorf("%w: no sources to check the message against", consumer.ErrInvalidSkip)
	}
	src, err := s.opts.Sources(ctx, sk.Source)
	if err != nil {
		return "", "", err
	}
	ch, err := s.op.SkipMessage(ctx, ref, src, sk, false)
	return ch.String(), "", err
}

// rebuildAction is a rebuild step. Beginning one resets every checkpoint,
// so the form asks the operator to type the consumer's name, the console's
// form of the CLI's explicit --begin.
func rebuildAction(begin bool) actionFunc {
	return func(ctx context.Context, s *Server, ref consumer.Ref, r *http.Request) (string, string, error) {
		if begin {
			if r.PostFormValue("confirm") != ref.String() {
				return "", "", fmt.Errorf("%w: type %s to begin its rebuild (every checkpoint is reset)", ErrConfirmation, ref)
			}
			st, err := s.op.BeginRebuild(ctx, ref)
			return fmt.Sprintf("state %s, epoch %d", st.State, st.Epoch),
				"no poll begun before applies or saves any more; empty the read model, then complete the rebuild", err
		}
		st, err := s.op.CompleteRebuild(ctx, ref)
		return fmt.Sprintf("state %s, epoch %d", st.State, st.Epoch), "every instance replays it from the start at its next poll", err
	}
}

// action runs a POSTed action: CSRF and origin checked first, then the
// operator call, an audit line, and the result page saying what changed.
func (s *Server) action(w http.ResponseWriter, r *http.Request) {
	if s.opts.ReadOnly {
		http.Error(w, "console: read-only: actions are off", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "console: bad form", http.StatusBadRequest)
		return
	}
	if !s.sameOrigin(r) {
		s.opts.Logger.Warn("console: action refused: another origin", "remote", r.RemoteAddr, "origin", r.Header.Get("Origin"), "action", r.PostFormValue("action"))
		http.Error(w, "console: the form was sent from another origin than this console's", http.StatusForbidden)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.PostFormValue("csrf")), []byte(s.csrf)) != 1 {
		s.opts.Logger.Warn("console: action refused: CSRF token missing or wrong", "remote", r.RemoteAddr, "action", r.PostFormValue("action"))
		http.Error(w, "console: the form's CSRF token is missing or stale: reload the page and try again", http.StatusForbidden)
		return
	}
	name := r.PostFormValue("action")
	res := result{Action: name, Consumer: r.PostFormValue("consumer"), Back: backTo(r.PostFormValue("back"))}
	status := http.StatusOK
	err := s.run(r, name, &res)
	if err != nil {
		res.Error = err.Error()
		switch {
		case isInputError(err):
			status = http.StatusBadRequest
		case errors.Is(err, consumer.ErrNotFound) || errors.Is(err, consumer.ErrNoDeadLetter):
			status = http.StatusNotFound
		default:
			status = http.StatusConflict
		}
		s.opts.Logger.Warn("console action refused", "action", name, "consumer", res.Consumer, "remote", r.RemoteAddr, "error", err)
	} else {
		s.opts.Logger.Info("console action", "action", name, "consumer", res.Consumer, "remote", r.RemoteAddr,
			"form", auditForm(r.PostForm), "changes", res.Changes)
	}
	s.render(w, status, "result", name, res)
}

func (s *Server) run(r *http.Request, name string, res *result) error {
	do, ok := actions[name]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownAction, name)
	}
	ref, err := refOf(r)
	if err != nil {
		return err
	}
	ctx, cancel := withDeadline(r.Context())
	defer cancel()
	res.Changes, res.Next, err = do(ctx, s, ref, r)
	return err
}

// sameOrigin refuses a POST whose Origin (or, without one, Sec-Fetch-Site)
// says another site sent it.
func (s *Server) sameOrigin(r *http.Request) bool {
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		return err == nil && u.Host == r.Host
	}
	site := r.Header.Get("Sec-Fetch-Site")
	return site == "" || site == "same-origin" || site == "none"
}

// backTo keeps the return link on this console: a local path only.
func backTo(p string) string {
	if len(p) > 0 && p[0] == '/' && (len(p) == 1 || p[1] != '/' && p[1] != '\\') {
		return p
	}
	return "/consumers"
}

// isInputError tells the operator's bad input (400) from a consumer or
// dead letter that is not there (404) and a refusal by the consumer's
// state (409).
func isInputError(err error) bool {
	var inv *consumer.InvalidNameError
	return errors.As(err, &inv) || errors.Is(err, consumer.ErrInvalidSelector) || errors.Is(err, consumer.ErrInvalidSkip) ||
		errors.Is(err, ErrConfirmation) || errors.Is(err, ErrUnknownAction)
}

// auditForm is the action's form for the audit line, without the CSRF
// token.
func auditForm(f url.Values) map[string]string {
	out := map[string]string{}
	for k, v := range f {
		if k != "csrf" && k != "back" && len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}
