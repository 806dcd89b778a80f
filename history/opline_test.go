package history

import (
	"encoding/json"
	"testing"
)

// FuzzAppendOp: the hand encoder writes the bytes encoding/json writes,
// for every operation, escapes and all.
func FuzzAppendOp(f *testing.F) {
	f.Add(3, 1, "lock:{k1}", "acquire", "c3-17", int64(1000), int64(4), true, int64(0), int64(0), "ok", "", int64(10), int64(20))
	f.Add(0, 0, "k", "write", "", int64(0), int64(0), false, int64(-1), int64(7), "fail", `ERR "quoted" \ back <&>`, int64(1), int64(2))
	f.Add(-2, 9, "é\x00\xff", "release", "tok\n", int64(-5), int64(-1), false, int64(1), int64(0), "unknown", "i/o timeout\u2028", int64(-3), int64(1<<62))
	f.Fuzz(func(t *testing.T, client, worker int, key, kind, token string, ttl, fence int64, hasFence bool, read, wrote int64, outcome, errText string, call, ret int64) {
		op := Op{Client: client, Worker: worker, Key: key, Kind: Kind(kind), Token: token, TTLms: ttl, Fence: fence, HasFence: hasFence,
			Read: read, Wrote: wrote, Aside: read%2 != 0, Outcome: Outcome(outcome), Error: errText, Call: call, Return: ret}
		want, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendOp(nil, &op); string(got) != string(want) {
			t.Fatalf("appendOp:\n%s\nencoding/json:\n%s", got, want)
		}
	})
}
