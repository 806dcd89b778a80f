package checker

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// lossWant is what a test expects of one loss: times in ms, told < 0 for
// never told (then at is when the tenure ended without it).
type lossWant struct {
	worker   int
	lostAt   float64
	lostBy   string
	toldAt   float64
	told     bool
	toldBy   string
	noticeMs float64
}

// noticeCase is a hand-built history and the losses it must give.
type noticeCase struct {
	name string
	h    *history.History
	want []lossWant
}

func noticeCases() []noticeCase {
	timeout := func(op history.Op) history.Op { op.Outcome, op.Error = unknown, "i/o timeout"; return op }
	return []noticeCase{
		{"a clean release is no loss", hist(acq(1, "a", ok, 0, 1), ext(1, "a", ok, 300, 301), rel(1, "a", ok, 500, 501)), nil},
		{"frozen past its lease, then its extend returns nil: from the lease end to the extend's return",
			hist(acq(1, "a", ok, 0, 1), ext(1, "a", fail, 300, 1500)),
			[]lossWant{{1, 1000, "lease", 1500, true, "extend returned nil", 500}}},
		{"stalled after an OK extend: its lease ends at that extend's call + TTL",
			hist(acq(1, "a", ok, 0, 1), ext(1, "a", ok, 300, 301), ext(1, "a", fail, 2000, 2002)),
			[]lossWant{{1, 1300, "lease", 2002, true, "extend returned nil", 702}}},
		{"taken over before its lease end (a failover lost the key): from the other's OK acquire",
			hist(acq(1, "a", ok, 0, 1), acq(2, "b", ok, 400, 410), ext(1, "a", fail, 600, 602), rel(2, "b", ok, 700, 701)),
			[]lossWant{{1, 410, "takeover", 602, true, "extend returned nil", 192}}},
		{"taken over after its lease end: the lease end came first",
			hist(acq(1, "a", ok, 0, 1), acq(2, "b", ok, 1500, 1501), ext(1, "a", fail, 1700, 1701)),
			[]lossWant{{1, 1000, "lease", 1701, true, "extend returned nil", 701}}},
		{"never told: the run ended",
			hist(acq(1, "a", ok, 0, 1), acq(2, "b", ok, 1500, 1501), rel(2, "b", ok, 2000, 2001)),
			[]lossWant{{1, 1000, "lease", 2001, false, "the run ended", 0}}},
		{"never told: it moved on", hist(acq(1, "a", ok, 0, 1), acq(1, "c", ok, 1500, 1501), rel(1, "c", ok, 1600, 1601)),
			[]lossWant{{1, 1000, "lease", 1500, false, "it moved on (acquired again)", 0}}},
		{"moved on before its lease ended: no loss", hist(acq(1, "a", ok, 0, 1), acq(1, "c", fail, 500, 501)), nil},
		{"a release after the loss returns 0: told at its return",
			hist(acq(1, "a", ok, 0, 1), rel(1, "a", fail, 1200, 1201)),
			[]lossWant{{1, 1000, "lease", 1201, true, "release returned 0", 201}}},
		{"an OK release just past call + TTL: the server still had it", hist(acq(1, "a", ok, 0, 1), rel(1, "a", ok, 1005, 1006)), nil},
		{"an OK extend just past call + TTL lengthens the lease",
			hist(acq(1, "a", ok, 0, 1), ext(1, "a", ok, 1010, 1011), rel(1, "a", ok, 1500, 1501)), nil},
		{"a nil extend before the lease end, nobody else in: placed at the reply, 0 ms",
			hist(acq(1, "a", ok, 0, 1), ext(1, "a", fail, 300, 302)),
			[]lossWant{{1, 302, "reply", 302, true, "extend returned nil", 0}}},
		{"an error reply tells", hist(acq(1, "a", ok, 0, 1), failErr(ext(1, "a", fail, 1100, 1102), "READONLY")),
			[]lossWant{{1, 1000, "lease", 1102, true, "extend failed: READONLY", 102}}},
		{"no answer before the loss does not tell; the OK release after it settles it",
			hist(acq(1, "a", ok, 0, 1), timeout(ext(1, "a", ok, 300, 800)), rel(1, "a", ok, 900, 901)), nil},
		{"no answer after the loss tells",
			hist(acq(1, "a", ok, 0, 1), timeout(ext(1, "a", ok, 1100, 1600))),
			[]lossWant{{1, 1000, "lease", 1600, true, "extend gave no answer: i/o timeout", 600}}},
		{"no answer before the loss, then a release that fails after it",
			hist(acq(1, "a", ok, 0, 1), timeout(ext(1, "a", ok, 300, 800)), rel(1, "a", fail, 1200, 1201)),
			[]lossWant{{1, 1000, "lease", 1201, true, "release returned 0", 201}}},
		{"a release with no answer before the loss may have released: no loss",
			hist(acq(1, "a", ok, 0, 1), timeout(rel(1, "a", ok, 500, 600))), nil},
		{"released OK after a takeover: never told",
			hist(acq(1, "a", ok, 0, 1), acq(2, "b", ok, 400, 410), rel(1, "a", ok, 500, 501), rel(2, "b", ok, 600, 601)),
			[]lossWant{{1, 410, "takeover", 501, false, "its release returned OK", 0}}},
		{"an OK extend after a takeover does not tell",
			hist(acq(1, "a", ok, 0, 1), acq(2, "b", ok, 400, 410), ext(1, "a", ok, 500, 501), ext(1, "a", fail, 800, 801), rel(2, "b", ok, 900, 901)),
			[]lossWant{{1, 410, "takeover", 801, true, "extend returned nil", 391}}},
		{"no expiry, nobody else in: no loss", hist(ttl(acq(1, "a", ok, 0, 1), 0), observe(-1, "a", 5000, 5001)), nil},
		{"an OK extend with no tenure open begins one",
			hist(acq(1, "a", ok, 0, 1), ext(1, "a", fail, 300, 301), ext(1, "a", ok, 400, 401), ext(1, "a", fail, 1600, 1601)),
			[]lossWant{{1, 301, "reply", 301, true, "extend returned nil", 0}, {1, 1400, "lease", 1601, true, "extend returned nil", 201}}},
		{"holders told apart by client when no worker is named",
			hist(client(acq(0, "a", ok, 0, 1), 7), client(acq(0, "b", ok, 1200, 1201), 8), client(ext(0, "a", fail, 1300, 1301), 7)),
			[]lossWant{{0, 1000, "lease", 1301, true, "extend returned nil", 301}}}, // client 8's lease ends after the run
	}
}

func TestNotices(t *testing.T) {
	for _, tc := range noticeCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, sum := Notices(tc.h)
			if len(got) != len(tc.want) {
				t.Fatalf("%d losses, want %d: %+v", len(got), len(tc.want), got)
			}
			told := 0
			for i, w := range tc.want {
				g := got[i]
				ms, isTold := g.NoticeMs()
				if g.Worker != w.worker || g.LostAt != int64(w.lostAt*1e6) || g.LostBy != w.lostBy || g.ToldAt != int64(w.toldAt*1e6) ||
					g.Told != w.told || isTold != w.told || g.ToldBy != w.toldBy || math.Abs(ms-w.noticeMs) > 1e-9 {
					t.Errorf("loss %d: %+v (%.3f ms), want %+v", i, g, ms, w)
				}
				if w.told {
					told++
					if op := tc.h.Ops[g.Op]; op.Return != g.ToldAt || op.Worker != g.Worker {
						t.Errorf("loss %d names op %d (%+v), which did not tell it", i, g.Op, op)
					}
				}
			}
			if sum.Losses != len(tc.want) || sum.Told != told || sum.NeverTold != len(tc.want)-told {
				t.Errorf("summary %+v, want %d losses, %d told", sum, len(tc.want), told)
			}
		})
	}
}

// TestNoticeSummary: the median and worst are over the told losses only;
// the never told are counted apart; the terminal's line says so.
func TestNoticeSummary(t *testing.T) {
	h := hist(
		acq(1, "a", ok, 0, 1), ext(1, "a", fail, 300, 1100), // 100 ms
		onKey(acq(2, "b", ok, 0, 1), "lock:{b}"), onKey(rel(2, "b", fail, 1400, 1400), "lock:{b}"), // 400 ms
		onKey(acq(3, "c", ok, 0, 1), "lock:{c}"), onKey(ext(3, "c", fail, 1200, 1200), "lock:{c}"), // 200 ms
		onKey(acq(4, "d", ok, 0, 1), "lock:{d}"),                                             // never told
		onKey(acq(5, "e", ok, 0, 1), "lock:{e}"), onKey(rel(5, "e", ok, 10, 11), "lock:{e}"), // clean
	)
	_, s := Notices(h)
	want := NoticeSummary{Losses: 4, Told: 3, NeverTold: 1, MedianMs: 200, WorstMs: 400}
	if s != want {
		t.Fatalf("summary %+v, want %+v", s, want)
	}
	if got, line := s.String(), "4 losses, median 200.0 ms, worst 400.0 ms, 1 never told"; got != line {
		t.Errorf("line %q, want %q", got, line)
	}
	for _, tc := range []struct {
		s    NoticeSummary
		want string
	}{
		{NoticeSummary{}, "no losses"},
		{NoticeSummary{Losses: 2, NeverTold: 2}, "2 losses, none told, 2 never told"},
		{NoticeSummary{Losses: 1, Told: 1, MedianMs: 3.25, WorstMs: 3.25, Approximate: true}, "1 loss, median ~3.2 ms, worst 3.2 ms, 0 never told"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestNoticeStatsBounded: past noticeExact figures the median comes from
// the histogram, within 3 %, the worst stays exact, and merging parts
// gives what adding everything to one gives.
func TestNoticeStatsBounded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var whole, a, b noticeStats
	var all []int64
	for i := range 3 * noticeExact {
		d := int64(rng.ExpFloat64() * 50e6) // ns, median about 35 ms
		all = append(all, d)
		l := Loss{Told: true, LostAt: 1e9, ToldAt: 1e9 + d}
		whole.add(&l)
		if i%3 == 0 {
			a.add(&l)
		} else {
			b.add(&l)
		}
		if i%5 == 0 {
			untold := Loss{}
			whole.add(&untold)
			b.add(&untold)
		}
	}
	a.merge(&b)
	slices.Sort(all)
	exact := float64(all[(len(all)-1)/2]+all[len(all)/2]) / 2 / 1e6
	for name, s := range map[string]noticeStats{"whole": whole, "merged": a} {
		got := s.summary()
		if !got.Approximate || s.exact != nil || len(s.hist) != histBuckets {
			t.Fatalf("%s: %d figures kept exactly, histogram of %d: want the histogram alone", name, len(s.exact), len(s.hist))
		}
		if math.Abs(got.MedianMs-exact)/exact > 0.03 || got.WorstMs != float64(all[len(all)-1])/1e6 || got.Told != len(all) {
			t.Errorf("%s: %+v, want median %.3f ms (3 %%), worst %.3f ms", name, got, exact, float64(all[len(all)-1])/1e6)
		}
	}
	if w, m := whole.summary(), a.summary(); w != m {
		t.Errorf("merged %+v, whole %+v", m, w)
	}
	for _, d := range []int64{0, 999, 63_999, 64_000, 1e6, 1e9, 3600e9, math.MaxInt64} {
		b := bucketOf(d)
		if b < 0 || b >= histBuckets || (d < math.MaxInt64/2 && math.Abs(float64(bucketMiddle(b)-d)) > float64(d)/histSub+1000) {
			t.Errorf("%d ns in bucket %d (middle %d)", d, b, bucketMiddle(b))
		}
	}
}

// TestRunReportsTimeToNotice: Run's result carries the summary Notices
// gives, and the losses within its shown holds.
func TestRunReportsTimeToNotice(t *testing.T) {
	h := hist(acq(1, "a", ok, 0, 1), ext(1, "a", fail, 300, 1500), acq(2, "b", ok, 1600, 1601), rel(2, "b", ok, 1700, 1701))
	res, err := Run(context.Background(), h, Options{})
	if err != nil {
		t.Fatal(err)
	}
	losses, sum := Notices(h)
	if res.TimeToNotice == nil || *res.TimeToNotice != sum || !reflect.DeepEqual(res.Losses, losses) {
		t.Fatalf("Run gave %+v %+v, Notices %+v %+v", res.TimeToNotice, res.Losses, sum, losses)
	}
	if sum.Losses != 1 || sum.MedianMs != 500 {
		t.Fatalf("summary %+v, want one loss of 500 ms", sum)
	}
}

// sameNotice fails t unless got has want's time to notice and shows the
// same losses (RunFile against Run).
func sameNotice(t *testing.T, seed uint64, got, want *Result) {
	t.Helper()
	if got.TimeToNotice == nil || want.TimeToNotice == nil || *got.TimeToNotice != *want.TimeToNotice {
		t.Fatalf("seed %d: time to notice from the file %+v, whole %+v", seed, got.TimeToNotice, want.TimeToNotice)
	}
	if !reflect.DeepEqual(lossSet(got.Losses), lossSet(want.Losses)) {
		t.Fatalf("seed %d: losses shown differ:\n%v\n%v", seed, lossSet(got.Losses), lossSet(want.Losses))
	}
}

func lossSet(ls []Loss) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%+v", l))
	}
	slices.Sort(out)
	return out
}

// FuzzNotices: on any small history, every loss is lost no later than it
// was told, a told one names the holder's own extend or release that did
// not say OK, a tenure is lost at most once, and the summary counts them.
func FuzzNotices(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte{0, 0, 9, 1, 1, 1, 30, 2, 2, 0, 40, 2, 1, 1, 2, 200, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &byteReader{b: data}
		var ops []history.Op
		for range 1 + r.next(12) {
			w := 1 + int(r.next(3))
			c := float64(r.next(40)) * 100
			op := o(w, [...]history.Kind{history.Acquire, history.Extend, history.Release}[r.next(3)], fmt.Sprint("t", w),
				[...]history.Outcome{ok, fail, unknown}[r.next(3)], c, c+float64(r.next(20))*100)
			if r.next(4) == 0 {
				op.Error = "e"
			}
			ops = append(ops, op)
		}
		h := hist(ops...)
		losses, sum := Notices(h)
		seen, told := map[int]bool{}, 0
		for _, l := range losses {
			if l.LostAt > l.ToldAt || seen[l.Acquire] {
				t.Fatalf("loss %+v: lost after told, or its tenure lost twice\n%s", l, dumpHistory(h))
			}
			seen[l.Acquire] = true
			if !l.Told {
				continue
			}
			told++
			op := h.Ops[l.Op]
			if op.Worker != l.Worker || op.Return != l.ToldAt || op.Outcome == ok || op.Kind == history.Acquire {
				t.Fatalf("loss %+v told by %+v\n%s", l, op, dumpHistory(h))
			}
		}
		if sum.Losses != len(losses) || sum.Told != told || sum.NeverTold != len(losses)-told {
			t.Fatalf("summary %+v of %d losses, %d told", sum, len(losses), told)
		}
	})
}
