package checker

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/lockcheck/lockcheck/history"
)

// Time to notice: how long a holder went on believing it held a lock the
// server no longer kept for it. A correct lock loses leases (a holder
// slower than its TTL, a failover); what a client owes its caller is to
// say so soon. The figure is informational: no check fails on it.
//
// # Which holds count
//
// A tenure is followed per key and holder (worker, or client when the
// history names no workers) from its OK acquire's return until its
// holder lets go: its release returns, a nil or failed extend returns,
// or it calls acquire again. OK extends lengthen it, even one called
// after its lease seemed to end (the server still had the key: the
// lease ends no earlier than the call + TTL the checker assumes). An OK
// extend with no tenure open starts one, as it starts a belief (holdsOf).
//
// A tenure is lost at the earliest of:
//   - its lease end as the server saw it: the last OK acquire or extend
//     call + TTL (never, without a TTL);
//   - another holder's OK acquire's return (a takeover: a failover that
//     lost the key, a lock that let two in), no earlier than the tenure's
//     start;
//   - the return of the reply that told its holder, when that came first:
//     a nil extend before the lease end with nobody else in means a fault
//     lost the key at a moment the history does not record, so the loss
//     is placed as late as the history allows and the figure is 0, a
//     lower bound, never more than the history proves.
//
// An OK release called with no takeover before it is no loss, whenever
// the lease seemed to end: the server still held the key. A tenure whose
// holder moved on (acquired again) or whose run ended before its loss
// is no loss either: nobody believed in it any more. Every other tenure
// is a Loss, one per tenure.
//
// # What tells a holder
//
// The first reply to its own extend or release of the key, returned at
// or after the loss, that was not OK: a nil extend or a 0 release, an
// error reply (Fail with Error, certainly not done), or no answer
// (Unknown: a timeout or a broken connection its client surfaced). A Fail
// tells whenever it comes (the workload stops believing at it); an
// Unknown before the loss does not (the lease may still run; the holder's
// next call settles it, and an Unknown release ends the tenure without a
// loss, as it may have released). An OK reply never tells, even after a
// takeover: the holder was told it holds. A holder that moved on, was
// told OK by its release, or was still waiting at the run's end was never
// told; its Loss ends there (ToldAt) with Told false.
type Loss struct {
	Key    string `json:"key"`
	Worker int    `json:"worker"`
	Client int    `json:"client"`
	// Acquire is the index in History.Ops of the acquire, or the OK
	// extend, that began the tenure.
	Acquire int `json:"acquire"`
	// LostAt is when the lock was lost (ns); LostBy what placed it there:
	// "lease", "takeover" or "reply".
	LostAt int64  `json:"lost_at"`
	LostBy string `json:"lost_by"`
	// Told: the holder was told, at ToldAt (the reply's return) by the
	// operation at index Op, which said ToldBy. When it was never told,
	// ToldAt is when its tenure ended without it, ToldBy says how, and Op
	// is the operation that ended it (-1: the run's end).
	Told   bool   `json:"told"`
	ToldAt int64  `json:"told_at"`
	ToldBy string `json:"told_by"`
	Op     int    `json:"op"`
}

// NoticeMs is the time to notice in ms; ok is false when never told.
func (l Loss) NoticeMs() (ms float64, ok bool) {
	if !l.Told {
		return 0, false
	}
	return float64(l.ToldAt-l.LostAt) / 1e6, true
}

// NoticeSummary is a run's time to notice: how many losses, how many of
// their holders were told, and the median and worst time from loss to
// notice over the told ones (the never told have no figure: they are
// counted apart).
type NoticeSummary struct {
	Losses    int     `json:"losses"`
	Told      int     `json:"told"`
	NeverTold int     `json:"never_told"`
	MedianMs  float64 `json:"median_ms"`
	WorstMs   float64 `json:"worst_ms"`
	// Approximate: the median is read from a histogram (within 3 %),
	// kept once the run told more than noticeExact losses, so that a
	// long history's check stays in bounded memory.
	Approximate bool `json:"approximate,omitempty"`
}

// String is the summary as the terminal prints it after "time to notice: ".
func (s NoticeSummary) String() string {
	losses := fmt.Sprintf("%d losses", s.Losses)
	switch {
	case s.Losses == 0:
		return "no losses"
	case s.Losses == 1:
		losses = "1 loss"
	}
	if s.Told == 0 {
		return fmt.Sprintf("%s, none told, %d never told", losses, s.NeverTold)
	}
	approx := ""
	if s.Approximate {
		approx = "~"
	}
	return fmt.Sprintf("%s, median %s%.1f ms, worst %.1f ms, %d never told", losses, approx, s.MedianMs, s.WorstMs, s.NeverTold)
}

// Notice is what a Result says of the time to notice.
type Notice struct {
	// TimeToNotice summarizes every loss of the history (nil in a result
	// written before the figure existed).
	TimeToNotice *NoticeSummary `json:"time_to_notice,omitempty"`
	// Losses are those the timeline draws: each key's that overlap its
	// shown holds (Result.Holds), up to ShownHolds a key.
	Losses []Loss `json:"-"`
}

// Notices computes every loss of h, keys in name order and each key's in
// the order they were lost, and their summary: what Run reports.
func Notices(h *history.History) ([]Loss, NoticeSummary) {
	end, byClient := h.End(), !workersSet(h)
	var out []Loss
	var s noticeStats
	for _, k := range groupByKey(h, len(h.Ops)) {
		out = append(out, lossesOf(h, k, end, byClient, &chunkCtx{carry: &keyCarry{}, cut: never})...)
	}
	for i := range out {
		s.add(&out[i])
	}
	return out, s.summary()
}

// tenure is one holder's hold followed until it lets go.
type tenure struct {
	worker, client int
	token          string
	acquire        int // global index of the operation that began it
	start          int64
	lease, taken   int64 // never: no lease end, no takeover
}

// lostAt is when the tenure was lost short of being told: its lease end
// or a takeover, whichever came first (never: neither).
func (t *tenure) lostAt() (int64, string) {
	if t.taken < t.lease {
		return t.taken, "takeover"
	}
	return t.lease, "lease"
}

// noticeWalk follows one key's tenures through its operations.
type noticeWalk struct {
	key  string
	cc   *chunkCtx
	open map[int]*tenure // by holder
	out  []Loss
}

// lossesOf computes the losses of one key's chunk (see Loss). Tenures
// still open at a chunk's cut are carried to the next chunk (a holder
// frozen past its lease may be told after the cut); at the last one they
// end with the run.
func lossesOf(h *history.History, k *keyOps, end int64, byClient bool, cc *chunkCtx) []Loss {
	w := &noticeWalk{key: k.name, cc: cc, open: cc.carry.notice}
	if w.open == nil {
		w.open = map[int]*tenure{}
	}
	for _, i := range k.ops {
		op := &h.Ops[i]
		who := holderOf(op, byClient)
		switch op.Kind {
		case history.Acquire:
			w.acquire(op, i, who)
		case history.Extend:
			w.extend(op, i, who)
		case history.Release:
			w.release(op, i, who)
		}
	}
	if cc.cut != never {
		cc.carry.notice = w.open
	} else {
		holders := make([]int, 0, len(w.open))
		for who := range w.open {
			holders = append(holders, who)
		}
		slices.Sort(holders)
		for _, who := range holders {
			w.untold(w.open[who], end, -1, "the run ended")
		}
		cc.carry.notice = nil
	}
	sortLosses(w.out)
	return w.out
}

func (w *noticeWalk) acquire(op *history.Op, i int32, who int) {
	if t := w.open[who]; t != nil {
		w.untold(t, op.Call, w.cc.global(i), "it moved on (acquired again)")
		delete(w.open, who)
	}
	if op.Outcome != history.OK {
		return
	}
	for _, t := range w.open {
		t.taken = min(t.taken, max(op.Return, t.start))
	}
	w.begin(op, i, who)
}

func (w *noticeWalk) begin(op *history.Op, i int32, who int) {
	w.open[who] = &tenure{worker: op.Worker, client: op.Client, token: op.Token, acquire: int(w.cc.global(i)), start: op.Return,
		lease: leaseEnd(op.Call, op.TTLms), taken: never}
}

func (w *noticeWalk) extend(op *history.Op, i int32, who int) {
	t := w.open[who]
	switch {
	case t == nil:
		if op.Outcome == history.OK && !op.Aside { // told it holds: a tenure begins
			w.begin(op, i, who)
		}
	case op.Outcome == history.OK:
		if t.taken > op.Call { // the server still had the key: the lease goes on
			t.lease = max(t.lease, leaseEnd(op.Call, op.TTLms))
		}
	case op.Outcome == history.Fail || w.lostBy(t, op.Return):
		w.told(t, op, i)
		delete(w.open, who)
	}
}

func (w *noticeWalk) release(op *history.Op, i int32, who int) {
	t := w.open[who]
	if t == nil || !sameToken(op.Token, t.token) {
		return
	}
	delete(w.open, who)
	switch {
	case op.Outcome == history.OK:
		if t.taken < op.Call { // released what another had taken: told it was fine
			w.untold(t, op.Return, w.cc.global(i), "its release returned OK")
		}
	case op.Outcome == history.Fail || w.lostBy(t, op.Return):
		w.told(t, op, i)
	}
}

// lostBy says whether the tenure was lost by at.
func (w *noticeWalk) lostBy(t *tenure, at int64) bool {
	lost, _ := t.lostAt()
	return lost <= at
}

// told records a loss its holder was told of by op's reply.
func (w *noticeWalk) told(t *tenure, op *history.Op, i int32) {
	lost, by := t.lostAt()
	if op.Return < lost {
		lost, by = op.Return, "reply"
	}
	w.out = append(w.out, Loss{Key: w.key, Worker: t.worker, Client: t.client, Acquire: t.acquire, LostAt: lost, LostBy: by,
		Told: true, ToldAt: op.Return, ToldBy: toldBy(op), Op: int(w.cc.global(i))})
}

// untold records a loss, if the tenure was lost before it ended at at
// without its holder being told; op is the operation that ended it.
func (w *noticeWalk) untold(t *tenure, at int64, op int32, why string) {
	lost, by := t.lostAt()
	if lost >= at {
		return
	}
	w.out = append(w.out, Loss{Key: w.key, Worker: t.worker, Client: t.client, Acquire: t.acquire, LostAt: lost, LostBy: by,
		ToldAt: at, ToldBy: why, Op: int(op)})
}

// toldBy says what a reply that was not OK told its holder.
func toldBy(op *history.Op) string {
	switch {
	case op.Outcome == history.Unknown:
		return fmt.Sprintf("%s gave no answer: %s", op.Kind, op.Error)
	case op.Error != "":
		return fmt.Sprintf("%s failed: %s", op.Kind, op.Error)
	case op.Kind == history.Extend:
		return "extend returned nil"
	}
	return "release returned 0"
}

// sortLosses orders losses by key, then when they were lost, then holder.
func sortLosses(ls []Loss) {
	slices.SortStableFunc(ls, func(a, b Loss) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.LostAt, b.LostAt), cmp.Compare(a.Worker, b.Worker), cmp.Compare(a.Client, b.Client))
	})
}
