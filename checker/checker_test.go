package checker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

type checkCase struct {
	name    string
	h       *history.History
	opts    Options
	verdict Verdict
	// want maps check names to the status they must have; checks not
	// named must pass, be skipped, or be allowed.
	want map[string]Status
}

func withFaults(h *history.History, fs ...history.Fault) *history.History {
	h.Faults = fs
	return h
}

func legalCases() []checkCase {
	return []checkCase{
		{name: "acquire release acquire", h: hist(
			acq(1, "a1", ok, 0, 1), rel(1, "a1", ok, 10, 11),
			acq(2, "b1", ok, 12, 13), rel(2, "b1", ok, 20, 21))},
		{name: "concurrent acquire loses while held", h: hist(
			acq(1, "a1", ok, 0, 1), acq(2, "b1", fail, 0.5, 2), acq(3, "c1", fail, 3, 4),
			rel(1, "a1", ok, 10, 12), acq(2, "b2", ok, 11, 13), acq(3, "c2", fail, 11.5, 14))},
		{name: "expiry then re-acquire by another client", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), acq(2, "b1", fail, 50, 51),
			acq(2, "b2", ok, 101, 102), ext(1, "a1", fail, 150, 151), rel(2, "b2", ok, 160, 161)),
			want: map[string]Status{LostLocks: Allowed}},
		{name: "re-acquire inside the clock tolerance", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), acq(2, "b1", ok, 95, 96)),
			// the server may end the lease up to 10 ms early; the holds
			// still overlap by the client's own clock
			want: map[string]Status{DoubleHolder: Fail}, verdict: Violated},
		{name: "extend just before expiry", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), ttl(ext(1, "a1", ok, 99, 100), 100),
			ttl(ext(1, "a1", ok, 195, 196), 100), acq(2, "b1", fail, 250, 251),
			rel(1, "a1", ok, 260, 261), acq(2, "b2", ok, 270, 271))},
		{name: "unknown acquire that took effect", h: hist(
			ttl(acq(1, "a1", unknown, 0, 50), 100), acq(2, "b1", fail, 10, 11),
			client(acq(1, "a2", fail, 60, 61), 11), acq(2, "b2", ok, 120, 121))},
		{name: "unknown acquire that did not", h: hist(
			acq(1, "a1", unknown, 0, 50), acq(2, "b1", ok, 10, 11), rel(2, "b1", ok, 20, 21))},
		{name: "unknown release", h: hist(
			acq(1, "a1", ok, 0, 1), rel(1, "a1", unknown, 5, 50), acq(2, "b1", ok, 10, 11))},
		{name: "unknown acquire delivered after the harness gave up", h: hist(
			ttl(acq(1, "a1", unknown, 0, 5), 100), acq(2, "b1", ok, 10, 11), rel(2, "b1", ok, 20, 21),
			acq(3, "c1", fail, 40, 41), acq(3, "c2", ok, 200, 201))},
		{name: "an unknown acquire's lease set after its client gave up", h: hist(
			ttl(acq(1, "a1", unknown, 0, 1), 100), observe(100, "a1", 50, 60), acq(2, "b1", fail, 150, 151))},
		{name: "error replies change nothing", h: hist(
			acq(1, "a1", ok, 0, 1), failErr(rel(1, "a1", fail, 5, 6), "READONLY You can't write against a read only replica."),
			failErr(acq(2, "b1", fail, 7, 8), "CROSSSLOT"), rel(1, "a1", ok, 9, 10)),
			want: map[string]Status{Rejected: Allowed, Linearizability: Pass}},
		{name: "many keys at once", h: hist(
			onKey(acq(1, "a1", ok, 0, 1), "k1"), onKey(acq(2, "b1", ok, 0, 1), "k2"), onKey(acq(3, "c1", ok, 0.5, 1), "k3"),
			onKey(acq(2, "b2", fail, 2, 3), "k1"), onKey(acq(1, "a2", fail, 2, 3), "k2"),
			onKey(rel(1, "a1", ok, 5, 6), "k1"), onKey(rel(2, "b1", ok, 5, 6), "k2"), onKey(rel(3, "c1", ok, 5, 6), "k3"),
			onKey(acq(2, "b3", ok, 7, 8), "k1"), onKey(acq(1, "a3", ok, 7, 8), "k2"))},
		{name: "fenced writes", h: hist(
			fenced(acq(1, "a1", ok, 0, 1), 1), write(1, "a1", 1, ok, 2, 3), rel(1, "a1", ok, 4, 5),
			fenced(acq(2, "b1", ok, 6, 7), 2), write(2, "b1", 2, ok, 8, 9),
			write(1, "a1", 1, fail, 10, 11), rel(2, "b1", ok, 12, 13))},
		{name: "unfenced counter", h: hist(
			acq(1, "a1", ok, 0, 1), incr(1, 0, ok, 2, 3), rel(1, "a1", ok, 4, 5),
			acq(2, "b1", ok, 6, 7), incr(2, 1, ok, 8, 9), rel(2, "b1", ok, 10, 11))},
		{name: "observations", h: hist(
			acq(1, "a1", ok, 0, 1), observe(998, "a1", 2, 3), rel(1, "a1", ok, 4, 5), observe(-2, "", 6, 7))},
		{name: "one worker twice is not two holders", h: withFaults(hist(
			ttl(acq(1, "a1", ok, 0, 1), 10000), client(ttl(acq(1, "a2", ok, 2100, 2101), 10000), 11)),
			fault("kill-primary", 5, 2500))},
		{name: "failover: fenced client sees a double holder, resource safe", opts: Options{AllowDoubleHolders: true},
			h: withFaults(hist(
				ttl(fenced(acq(1, "a1", ok, 0, 1), 5), 10000), write(1, "a1", 5, ok, 50, 51),
				ttl(fenced(acq(2, "b1", ok, 2100, 2101), 5), 10000), write(2, "b1", 5, fail, 2200, 2201),
				ext(1, "a1", fail, 3000, 3001)),
				fault("kill-primary", 5, 2500)),
			want: map[string]Status{DoubleHolder: Allowed, LostLocks: Allowed}},
	}
}

// staleWriteCase: a holder whose lease ended writes before the newer
// holder did. A correct fenced resource accepts it (no write has shown it
// the newer fence), so it is listed, allowed, not a fence violation.
func staleWriteCase() checkCase {
	return checkCase{name: "stale holder's write accepted before the newer holder wrote", h: hist(
		ttl(fenced(acq(1, "a1", ok, 0, 1), 1), 100), fenced(acq(2, "b1", ok, 150, 151), 2),
		write(1, "a1", 1, ok, 160, 161)),
		want: map[string]Status{Fence: Pass, LostLocks: Allowed}}
}

func illegalCases() []checkCase {
	return []checkCase{
		// Legal as a history (the release did not run), but the lock can
		// only expire: the server does not know the release command.
		{name: "a release the server does not know", h: hist(
			acq(1, "a1", ok, 0, 1), failErr(rel(1, "a1", fail, 5, 6), "ERR unknown command 'DELIFEQ', with args beginning with: 'lock:{k1}'"),
			rel(1, "a1", ok, 9, 10)),
			want: map[string]Status{Rejected: Fail, Linearizability: Pass, DoubleHolder: Pass}},
		{name: "two OK acquires without expiry between", h: hist(
			acq(1, "a1", ok, 0, 1), acq(2, "b1", ok, 10, 11)),
			want: map[string]Status{Linearizability: Fail, DoubleHolder: Fail}},
		{name: "a release succeeded for a token that did not hold", h: hist(
			acq(1, "a1", ok, 0, 1), rel(2, "b1", ok, 10, 11)),
			want: map[string]Status{Linearizability: Fail}},
		{name: "an acquire failed on a free key", h: hist(
			acq(1, "a1", ok, 0, 1), rel(1, "a1", ok, 2, 3), acq(2, "b1", fail, 4, 5)),
			want: map[string]Status{Linearizability: Fail}},
		{name: "an extend succeeded after another client took the lock", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), acq(2, "b1", ok, 150, 151), ext(1, "a1", ok, 160, 161)),
			// the late extend tells a it holds again: two beliefs at once
			want: map[string]Status{Linearizability: Fail, DoubleHolder: Fail}},
		{name: "fences handed out going backwards", h: hist(
			fenced(acq(1, "a1", ok, 0, 1), 5), rel(1, "a1", ok, 2, 3), fenced(acq(2, "b1", ok, 4, 5), 4)),
			want: map[string]Status{Linearizability: Fail}},
		{name: "accepted fences going backwards", h: hist(
			fenced(acq(1, "a1", ok, 0, 1), 5), write(1, "a1", 5, ok, 2, 3), rel(1, "a1", ok, 4, 5),
			fenced(acq(2, "b1", ok, 6, 7), 6), write(2, "b1", 4, ok, 8, 9)),
			want: map[string]Status{Fence: Fail}},
		{name: "same fence handed twice", h: hist(
			fenced(acq(1, "a1", ok, 0, 1), 7), rel(1, "a1", ok, 2, 3), fenced(acq(2, "b1", ok, 4, 5), 7)),
			want: map[string]Status{Fence: Fail, Linearizability: Fail}},
		{name: "same fence accepted twice", h: hist(
			fenced(acq(1, "a1", ok, 0, 1), 7), write(1, "a1", 7, ok, 2, 3), write(1, "a1", 7, ok, 2.5, 4)),
			want: map[string]Status{Fence: Fail}},
		{name: "lost increment", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), incr(1, 0, ok, 80, 200),
			acq(2, "b1", ok, 150, 151), incr(2, 0, ok, 152, 153)),
			want: map[string]Status{Resource: Fail}},
		{name: "lock set without expiry", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 0), observe(-1, "a1", 2, 3), rel(1, "a1", ok, 4, 5)),
			want: map[string]Status{TTL: Fail}},
		{name: "extend dropped the TTL", h: hist(
			acq(1, "a1", ok, 0, 1), ttl(ext(1, "a1", ok, 2, 3), 0), observe(-1, "", 4, 5)),
			want: map[string]Status{TTL: Fail}},
		{name: "PTTL -1 on a key set with PX", h: hist(
			acq(1, "a1", ok, 0, 1), observe(-1, "a1", 2, 3)),
			want: map[string]Status{TTL: Fail, Linearizability: Fail}},
		{name: "key stuck past the lease a read dated", h: hist(
			ttl(acq(1, "a1", unknown, 0, 1), 100), observe(100, "a1", 50, 60), acq(2, "b1", fail, 300, 301), acq(2, "b2", fail, 400, 401)),
			want: map[string]Status{TTL: Fail}},
		{name: "key stuck long after its lease", h: hist(
			ttl(acq(1, "a1", ok, 0, 1), 100), acq(2, "b1", fail, 300, 301), acq(2, "b2", fail, 400, 401)),
			want: map[string]Status{TTL: Fail, Linearizability: Fail}},
		{name: "double holder under failover without allowance", h: withFaults(hist(
			ttl(acq(1, "a1", ok, 0, 1), 10000), ttl(acq(2, "b1", ok, 2100, 2101), 10000)),
			fault("kill-primary", 5, 2500)),
			want: map[string]Status{DoubleHolder: Fail}},
	}
}

func runCase(t *testing.T, c checkCase) *Result {
	t.Helper()
	res, err := Run(context.Background(), c.h, c.opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, chk := range res.Checks {
		want, named := c.want[chk.Name]
		switch {
		case named && chk.Status != want:
			t.Errorf("%s: status %s, want %s (%s)", chk.Name, chk.Status, want, chk.Summary)
		case !named && chk.Status != Pass && chk.Status != Skipped:
			t.Errorf("%s: status %s, want pass (%s)", chk.Name, chk.Status, chk.Summary)
		}
		if chk.Status == Fail && len(chk.Findings) == 0 {
			t.Errorf("%s failed without findings", chk.Name)
		}
	}
	if res.Verdict != c.verdict {
		t.Errorf("verdict %s, want %s (%s)", res.Verdict, c.verdict, res.Summary)
	}
	if res.ExitCode != c.verdict.ExitCode() {
		t.Errorf("exit code %d, want %d", res.ExitCode, c.verdict.ExitCode())
	}
	return res
}

func TestLegalHistories(t *testing.T) {
	for _, c := range append(legalCases(), staleWriteCase()) {
		if c.verdict == "" {
			c.verdict = Safe
		}
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

func TestIllegalHistories(t *testing.T) {
	for _, c := range illegalCases() {
		if c.verdict == "" {
			c.verdict = Violated
		}
		t.Run(c.name, func(t *testing.T) { runCase(t, c) })
	}
}

func TestTimeoutIsUnknownNotPass(t *testing.T) {
	h := hist(acq(1, "a1", ok, 0, 1), rel(2, "b1", ok, 10, 11))
	res := runCase(t, checkCase{h: h, opts: Options{Timeout: time.Nanosecond}, verdict: Undecided,
		want: map[string]Status{Linearizability: Unknown}})
	if res.ExitCode != 3 {
		t.Fatalf("exit code %d, want 3", res.ExitCode)
	}
}

func TestDoubleHolderFindingNamesBoth(t *testing.T) {
	h := withFaults(hist(
		fenced(acq(1, "a1", ok, 0, 1), 3), fenced(acq(2, "b1", ok, 500, 501), 4)),
		fault("pause-replica", 400, 600))
	res, err := Run(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := res.Check(DoubleHolder)
	if c.Count != 1 {
		t.Fatalf("count %d, want 1", c.Count)
	}
	f := c.Findings[0]
	if len(f.Holds) != 2 || f.Holds[0].Token != "a1" || f.Holds[1].Token != "b1" || f.Holds[0].Fence != 3 || f.Holds[1].Fence != 4 {
		t.Errorf("holds %+v", f.Holds)
	}
	if f.OverlapMs != 499 { // b holds from 501 ms, a until 1000 ms
		t.Errorf("overlap %v ms, want 499", f.OverlapMs)
	}
	if len(f.Faults) != 1 || f.Faults[0].Name != "pause-replica" {
		t.Errorf("faults %+v", f.Faults)
	}
}

func TestResultJSON(t *testing.T) {
	res, err := Run(context.Background(), hist(acq(1, "a1", ok, 0, 1), acq(2, "b1", ok, 10, 11)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Verdict  string `json:"verdict"`
		ExitCode int    `json:"exit_code"`
		Checks   map[string]struct {
			Status string `json:"status"`
			Count  int    `json:"count"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Verdict != "violated" || doc.ExitCode != 1 || doc.Checks["double_holder"].Status != "fail" || doc.Checks["double_holder"].Count != 1 {
		t.Errorf("unexpected JSON %s", b)
	}
	for _, name := range CheckNames {
		if _, ok := doc.Checks[name]; !ok {
			t.Errorf("check %s missing from JSON", name)
		}
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Checks) != len(CheckNames) || back.Checks[0].Name != CheckNames[0] {
		t.Errorf("round trip lost checks: %+v", back.Checks)
	}
}

func TestBadInput(t *testing.T) {
	for name, h := range map[string]*history.History{
		"empty":          {},
		"return before":  hist(acq(1, "a1", ok, 5, 1)),
		"unknown kind":   hist(o(1, "lock", "a1", ok, 0, 1)),
		"no key":         hist(onKey(acq(1, "a1", ok, 0, 1), "")),
		"unknown status": hist(o(1, history.Acquire, "a1", "maybe", 0, 1)),
	} {
		if _, err := Run(context.Background(), h, Options{}); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), "history") {
			t.Errorf("%s: error %q does not say what failed", name, err)
		}
	}
	if _, err := Run(context.Background(), hist(acq(1, "a1", ok, 0, 1)), Options{Loss: "sometimes"}); err == nil {
		t.Error("bad loss policy: no error")
	}
}

// TestParallelPanicReachesCaller: a panic in one of the checker's
// goroutines comes back in the calling goroutine, where a run's deferred
// teardown can still happen.
func TestParallelPanicReachesCaller(t *testing.T) {
	var got any
	func() {
		defer func() { got = recover() }()
		parallel(8, 4, func(i int) {
			if i == 5 {
				panic("key 5 broke")
			}
		})
	}()
	if s, ok := got.(string); !ok || !strings.Contains(s, "key 5 broke") {
		t.Fatalf("recovered %v in the caller, want the worker's panic", got)
	}
}
