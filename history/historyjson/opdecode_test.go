package historyjson

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lockcheck/lockcheck/history"
)

// FuzzDecodeOp: the hand parser agrees with encoding/json on every input
// both accept, and never accepts what encoding/json refuses.
func FuzzDecodeOp(f *testing.F) {
	for _, op := range []history.Op{
		{Client: 3, Worker: 1, Key: "lock:{k1}", Kind: history.Acquire, Token: "c3-17", TTLms: 1000, Fence: 4, HasFence: true, Outcome: history.OK, Call: 10, Return: 20},
		{Key: "k", Kind: history.Write, Read: -1, Wrote: 7, Outcome: history.Fail, Error: `ERR "quoted" \ back`, Call: 1, Return: 2},
		{Key: "k", Kind: history.Release, Outcome: history.Unknown, Error: "i/o timeout", Call: 5, Return: 9},
		{Client: 7, Worker: 2, Key: "k", Kind: history.Extend, Token: "v", TTLms: 500, Aside: true, Outcome: history.OK, Call: 5, Return: 9},
	} {
		b, _ := json.Marshal(op)
		f.Add(b)
	}
	f.Add([]byte(`{"key": "k", "call": 1}`))
	f.Add([]byte(`{"Key":"k","call":1e3}`))
	f.Add([]byte(`{"key":"k","call":1,}`))
	f.Add([]byte(`{"has_fence":true,"call":-0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want history.Op
		werr := json.Unmarshal(b, &want)
		var got history.Op
		gerr := decodeOp(b, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%s: encoding/json says %v, decodeOp %v", b, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%s:\nencoding/json %+v\ndecodeOp      %+v", b, want, got)
		}
	})
}
