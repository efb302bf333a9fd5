package console

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tidemarkdb/tidemark/core/consumer"
	"github.com/tidemarkdb/tidemark/core/engine"
)

// TestPagesEscapeDatabaseValues: a payload and a failure reason holding
// <script> show escaped on the dead-letter page, never as markup.
func TestPagesEscapeDatabaseValues(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{})
	code, page := get(t, http.DefaultClient, ts.URL+"/undelivered")
	if code != http.StatusOK {
		t.Fatalf("GET /undelivered: %d\n%s", code, page)
	}
	if strings.Contains(page, "<script>alert") {
		t.Fatalf("the page holds the database's <script> unescaped:\n%s", page)
	}
	for _, want := range []string{
		`&lt;script&gt;alert(&#39;reason&#39;)&lt;/script&gt;`,                            // the failure reason
		`&#34;note&#34;: &#34;&lt;script&gt;alert(&#39;payload&#39;)&lt;/script&gt;&#34;`, // the payload, pretty-printed
		deadRef.String(), haltRef.String(),
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	// Every page renders with the fixture's hostile values.
	for _, p := range []string{"/", "/consumers", "/leases", "/sagas", "/undelivered?consumer=" + url.QueryEscape(deadRef.String())} {
		if code, body := get(t, http.DefaultClient, ts.URL+p); code != http.StatusOK || strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s: %d\n%s", p, code, body)
		}
	}
}

// TestActionNeedsCSRFToken: a POST without the page's token, with a wrong
// one, or from another origin changes nothing; with it, the action runs,
// answers with what changed and writes an audit line.
func TestActionNeedsCSRFToken(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{})
	_, page := get(t, http.DefaultClient, ts.URL+"/consumers")
	token := csrfOf(t, page)
	form := func(csrf string) url.Values {
		return url.Values{"csrf": {csrf}, "consumer": {deadRef.String()}, "action": {"pause"}}
	}
	for name, try := range map[string]func() (int, string){
		"no token":     func() (int, string) { return post(t, ts.URL, form("")) },
		"wrong token":  func() (int, string) { return post(t, ts.URL, form(strings.Repeat("0", len(token)))) },
		"cross origin": func() (int, string) { return post(t, ts.URL, form(token), "Origin", "http://evil.example") },
		"cross site":   func() (int, string) { return post(t, ts.URL, form(token), "Sec-Fetch-Site", "cross-site") },
	} {
		if code, body := try(); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403\n%s", name, code, body)
		}
		if st := f.state(t, deadRef); st != consumer.Running {
			t.Fatalf("%s: the consumer is %s after a refused action", name, st)
		}
	}
	code, body := post(t, ts.URL, form(token), "Origin", ts.URL)
	if code != http.StatusOK || !strings.Contains(body, "state PAUSED") {
		t.Fatalf("pause with the token: %d\n%s", code, body)
	}
	if st := f.state(t, deadRef); st != consumer.Paused {
		t.Fatalf("state %s after pause", st)
	}
	if !strings.Contains(f.logs.String(), `msg="console action" action=pause consumer=projection/dead-letters`) {
		t.Errorf("no audit line for the pause:\n%s", f.logs)
	}
}

// TestActionsAnswerWhatChanged: retry of one dead letter, resume of the
// halted consumer, and the refusals of bad input with typed errors.
func TestActionsAnswerWhatChanged(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{})
	_, page := get(t, http.DefaultClient, ts.URL+"/undelivered")
	token := csrfOf(t, page)
	dls, err := f.op.DeadLetters(t.Context(), deadRef)
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters %v, %v", dls, err)
	}
	for _, c := range []struct {
		form url.Values
		code int
		want string
	}{
		{url.Values{"action": {"retry"}, "consumer": {deadRef.String()}, "select": {"id"}, "id": {"not-a-uuid"}}, http.StatusBadRequest, "the row id is not a UUID"},
		{url.Values{"action": {"retry"}, "consumer": {"no-slash"}, "select": {"all"}}, http.StatusBadRequest, "want &lt;type&gt;/&lt;name&gt;"},
		{url.Values{"action": {"drop-tables"}, "consumer": {deadRef.String()}}, http.StatusBadRequest, "unknown action"},
		{url.Values{"action": {"rebuild-begin"}, "consumer": {deadRef.String()}, "confirm": {"yes"}}, http.StatusBadRequest, "type projection/dead-letters to begin"},
		{url.Values{"action": {"resume-past"}, "consumer": {deadRef.String()}}, http.StatusConflict, "not HALTED"},
		{url.Values{"action": {"pause"}, "consumer": {"projection/nobody"}}, http.StatusNotFound, "consumer not found"},
		{url.Values{"action": {"delete"}, "consumer": {deadRef.String()}, "select": {"key"}, "source": {engine.EventStoreTopic}, "key": {"no-such-key"}}, http.StatusNotFound, "no dead letter matching"},
		{url.Values{"action": {"retry"}, "consumer": {deadRef.String()}, "select": {"id"}, "id": {dls[0].ID}}, http.StatusOK, "1 released with a fresh budget"},
		{url.Values{"action": {"resume"}, "consumer": {haltRef.String()}}, http.StatusOK, "state RUNNING, 1 released with a fresh budget"},
	} {
		c.form.Set("csrf", token)
		code, body := post(t, ts.URL, c.form)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%v: %d, want %d with %q\n%s", c.form, code, c.code, c.want, body)
		}
	}
	if st := f.state(t, haltRef); st != consumer.Running {
		t.Errorf("halting consumer %s after resume", st)
	}
}

// TestTokenRequired: with a token, every page but /healthz refuses a
// request without it, and takes it as a bearer header, as ?token= (which
// sets a cookie and leaves the address) and as that cookie.
func TestTokenRequired(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{Token: "s3cret-token"})
	for _, p := range []string{"/", "/consumers", "/undelivered", "/leases", "/metrics", "/static/console.css"} {
		if code, _ := get(t, http.DefaultClient, ts.URL+p); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", p, code)
		}
		if code, _ := get(t, http.DefaultClient, ts.URL+p, "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
			t.Errorf("GET %s with a wrong token: %d, want 401", p, code)
		}
	}
	if code, _ := post(t, ts.URL, url.Values{"action": {"pause"}, "consumer": {deadRef.String()}}); code != http.StatusUnauthorized {
		t.Errorf("POST /action without a token: %d, want 401", code)
	}
	if code, _ := get(t, http.DefaultClient, ts.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz: %d, want 200 without a token", code)
	}
	if code, _ := get(t, http.DefaultClient, ts.URL+"/consumers", "Authorization", "Bearer s3cret-token"); code != http.StatusOK {
		t.Errorf("GET /consumers with the bearer token: %d", code)
	}
	jar := &cookieJar{}
	c := &http.Client{Jar: jar}
	code, body := get(t, c, ts.URL+"/consumers?token=s3cret-token")
	if code != http.StatusOK || !strings.Contains(body, deadRef.String()) {
		t.Fatalf("GET ?token=: %d\n%s", code, body)
	}
	if jar.last == nil || jar.last.String() != ts.URL+"/consumers" {
		t.Errorf("?token= did not redirect to the page without it: %v", jar.last)
	}
	if code, _ := get(t, c, ts.URL+"/leases"); code != http.StatusOK {
		t.Errorf("GET /leases with the cookie: %d", code)
	}
	if st := f.state(t, deadRef); st != consumer.Running {
		t.Errorf("state %s after refused requests", st)
	}
}

// TestLoopbackOnlyRefusesOtherHosts: a console on loopback answers
// loopback names only (a rebinding page's Host is refused).
func TestLoopbackOnlyRefusesOtherHosts(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{LoopbackOnly: true})
	if code, _ := get(t, http.DefaultClient, ts.URL+"/consumers"); code != http.StatusOK {
		t.Errorf("GET on 127.0.0.1: %d", code)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/consumers", nil)
	req.Host = "rebind.example:7464"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("Host rebind.example: %d, want 421", res.StatusCode)
	}
}

// TestReadOnlyHidesActions: no form on any page, and a POST is refused.
func TestReadOnlyHidesActions(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{ReadOnly: true})
	for _, p := range []string{"/", "/consumers", "/undelivered", "/leases"} {
		code, body := get(t, http.DefaultClient, ts.URL+p)
		if code != http.StatusOK || strings.Contains(body, "<form") || strings.Contains(body, "<button") {
			t.Errorf("GET %s read-only: %d, has a form or button:\n%s", p, code, body)
		}
	}
	if code, _ := post(t, ts.URL, url.Values{"action": {"pause"}, "consumer": {deadRef.String()}}); code != http.StatusForbidden {
		t.Errorf("POST read-only: %d, want 403", code)
	}
	// Not read-only: the same pages have the forms.
	ts = f.server(t, Options{})
	if _, body := get(t, http.DefaultClient, ts.URL+"/consumers"); !strings.Contains(body, `value="pause"`) {
		t.Errorf("the consumers page has no pause action:\n%s", body)
	}
}

// TestMetricsParse: /metrics is the Prometheus text format with the marks,
// each partition's lag and the undelivered counts.
func TestMetricsParse(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{})
	res, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %d", res.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	value := func(family string, labels map[string]string) (float64, bool) {
		for _, m := range families[family].GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					match++
				}
			}
			if match == len(labels) {
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	if v, ok := value("tidemark_hwm_mark", map[string]string{"tidemark_topic": engine.EventStoreTopic}); !ok || v != 2 {
		t.Errorf("tidemark_hwm_mark{events} = %v, %v; want 2", v, ok)
	}
	if v, ok := value("tidemark_hwm_lag", map[string]string{"tidemark_topic": engine.EventStoreTopic}); !ok || v != 0 {
		t.Errorf("tidemark_hwm_lag{event-store} = %v, %v; want 0 (every position handed out is below the mark)", v, ok)
	}
	if v, ok := value("tidemark_consumer_undelivered", map[string]string{"tidemark_consumer_name": "dead-letters", "tidemark_status": "DEAD_LETTER"}); !ok || v != 1 {
		t.Errorf("dead letters = %v, %v; want 1", v, ok)
	}
	if _, ok := value("tidemark_consumer_state", map[string]string{"tidemark_consumer_name": "halting", "tidemark_state": "HALTED"}); !ok {
		t.Errorf("no HALTED state series for the halting consumer")
	}
	if n := len(families["tidemark_consumer_lag"].GetMetric()); n == 0 {
		t.Errorf("no tidemark_consumer_lag series")
	}
	code, body := get(t, http.DefaultClient, ts.URL+"/healthz")
	if code != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Errorf("GET /healthz: %d %s", code, body)
	}
}

// cookieJar keeps cookies for one host and remembers the last URL asked
// for (to see the redirect).
type cookieJar struct {
	cookies []*http.Cookie
	last    *url.URL
}

func (j *cookieJar) SetCookies(_ *url.URL, cs []*http.Cookie) { j.cookies = append(j.cookies, cs...) }
func (j *cookieJar) Cookies(u *url.URL) []*http.Cookie {
	j.last = u
	return j.cookies
}

// TestHealthzReportsStalledMark: a mark that stands still below a recorded
// pending end for longer than StallAfter is a 503 naming the topic; once
// the pending end is gone it is healthy again.
func TestHealthzReportsStalledMark(t *testing.T) {
	f := newFixture(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ts := f.server(t, Options{StallAfter: time.Minute, Now: clock})
	setPending := func(v any) {
		if _, err := f.e.ExecText(t.Context(), f.e.DB, `UPDATE ${high_water_mark_store_table} SET pending_end = #{v} WHERE topic_name = #{topic}`,
			nil, map[string]any{"v": v, "topic": engine.EventStoreTopic}); err != nil {
			t.Fatal(err)
		}
	}
	setPending(int64(9))
	if code, body := get(t, http.DefaultClient, ts.URL+"/healthz"); code != http.StatusOK {
		t.Fatalf("first look: %d %s", code, body)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	code, body := get(t, http.DefaultClient, ts.URL+"/healthz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"ok":false`) || !strings.Contains(body, "has not moved since 2026-03-01T12:00:00Z") {
		t.Errorf("stalled mark: %d %s", code, body)
	}
	setPending(nil)
	if code, body := get(t, http.DefaultClient, ts.URL+"/healthz"); code != http.StatusOK {
		t.Errorf("no pending end: %d %s", code, body)
	}
}

// TestInsecureBannerAndLocalBackLinks: --insecure-http shows its warning on
// every page; a result page links back only to a path of this console.
func TestInsecureBannerAndLocalBackLinks(t *testing.T) {
	f := newFixture(t)
	ts := f.server(t, Options{InsecureHTTP: true})
	for _, p := range []string{"/", "/consumers", "/undelivered", "/leases"} {
		if _, body := get(t, http.DefaultClient, ts.URL+p); !strings.Contains(body, `id="insecure"`) {
			t.Errorf("GET %s: no insecure-http banner", p)
		}
	}
	if _, body := get(t, http.DefaultClient, f.server(t, Options{}).URL+"/"); strings.Contains(body, `id="insecure"`) {
		t.Errorf("a banner without --insecure-http")
	}
	for in, want := range map[string]string{"/undelivered?consumer=a/b": "/undelivered?consumer=a/b", "//evil.example/": "/consumers",
		`/\evil.example`: "/consumers", "https://evil.example/": "/consumers", "": "/consumers"} {
		if got := backTo(in); got != want {
			t.Errorf("backTo(%q) = %q, want %q", in, got, want)
		}
	}
}
