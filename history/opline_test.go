package history

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeOp: the hand parser agrees with encoding/json on every input
// both accept, and never accepts what encoding/json refuses.
func FuzzDecodeOp(f *testing.F) {
	for _, op := range []Op{
		{Client: 3, Worker: 1, Key: "lock:{k1}", Kind: Acquire, Token: "c3-17", TTLms: 1000, Fence: 4, HasFence: true, Outcome: OK, Call: 10, Return: 20},
		{Key: "k", Kind: Write, Read: -1, Wrote: 7, Outcome: Fail, Error: `ERR "quoted" \ back`, Call: 1, Return: 2},
		{Key: "k", Kind: Release, Outcome: Unknown, Error: "i/o timeout", Call: 5, Return: 9},
	} {
		b, _ := json.Marshal(op)
		f.Add(b)
	}
	f.Add([]byte(`{"key": "k", "call": 1}`))
	f.Add([]byte(`{"Key":"k","call":1e3}`))
	f.Add([]byte(`{"key":"k","call":1,}`))
	f.Add([]byte(`{"has_fence":true,"call":-0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want Op
		werr := json.Unmarshal(b, &want)
		var got Op
		gerr := decodeOp(b, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: encoding/json says %v, decodeOp %v", b, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%s:\nencoding/json %+v\ndecodeOp      %+v", b, want, got)
		}
	})
}

// FuzzAppendOp: the hand encoder writes the bytes encoding/json writes,
// for every operation, escapes and all.
func FuzzAppendOp(f *testing.F) {
	f.Add(3, 1, "lock:{k1}", "acquire", "c3-17", int64(1000), int64(4), true, int64(0), int64(0), "ok", "", int64(10), int64(20))
	f.Add(0, 0, "k", "write", "", int64(0), int64(0), false, int64(-1), int64(7), "fail", `ERR "quoted" \ back <&>`, int64(1), int64(2))
	f.Add(-2, 9, "é\x00\xff", "release", "tok\n", int64(-5), int64(-1), false, int64(1), int64(0), "unknown", "i/o timeout\u2028", int64(-3), int64(1<<62))
	f.Fuzz(func(t *testing.T, client, worker int, key, kind, token string, ttl, fence int64, hasFence bool, read, wrote int64, outcome, errText string, call, ret int64) {
		op := Op{Client: client, Worker: worker, Key: key, Kind: Kind(kind), Token: token, TTLms: ttl, Fence: fence, HasFence: hasFence,
			Read: read, Wrote: wrote, Outcome: Outcome(outcome), Error: errText, Call: call, Return: ret}
		want, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendOp(nil, &op); string(got) != string(want) {
			t.Fatalf("appendOp:\n%s\nencoding/json:\n%s", got, want)
		}
	})
}
