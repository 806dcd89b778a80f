package jepsen

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

func importString(t *testing.T, edn string) *history.History {
	t.Helper()
	h, err := Import(strings.NewReader(edn), Options{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestImportJepsenPairs: each invocation and its completion are one
// operation; :info is unknown, after which the process is another client;
// :fail is certainly not done; an invocation never completed is unknown.
func TestImportJepsenPairs(t *testing.T) {
	h := importString(t, `
{:type :invoke, :f :acquire, :value nil, :process 0, :time 10, :index 0}
{:type :ok, :f :acquire, :value nil, :process 0, :time 20, :index 1}
{:type :invoke, :f :lock, :value "orders", :process 1, :time 25}
{:type :info, :f :lock, :value "orders", :process 1, :time 28, :error :timeout}
{:type :invoke, :f :release, :value nil, :process 0, :time 30}
{:type :ok, :f :release, :value nil, :process 0, :time 40}
{:type :invoke, :f :lock, :value "orders", :process 1, :time 45}
{:type :fail, :f :lock, :value "orders", :process 1, :time 48}
{:type :invoke, :f :acquire, :value {:key "k", :token "t1"}, :process 2, :time 50}
`)
	want := []history.Op{
		{Client: 0, Worker: 1, Key: "lock", Kind: history.Acquire, TTLms: 3600000, Outcome: history.OK, Call: 10, Return: 20},
		{Client: 1, Worker: 2, Key: "orders", Kind: history.Acquire, TTLms: 3600000, Outcome: history.Unknown, Error: "jepsen :info: :timeout", Call: 25, Return: 28},
		{Client: 0, Worker: 1, Key: "lock", Kind: history.Release, Outcome: history.OK, Call: 30, Return: 40},
		{Client: 2, Worker: 2, Key: "orders", Kind: history.Acquire, TTLms: 3600000, Outcome: history.Fail, Error: "jepsen :fail", Call: 45, Return: 48},
		{Client: 3, Worker: 3, Key: "k", Kind: history.Acquire, Token: "t1", TTLms: 3600000, Outcome: history.Unknown, Error: "jepsen: no completion in the history", Call: 50, Return: 50},
	}
	if len(h.Ops) != len(want) {
		t.Fatalf("got %d ops, want %d: %+v", len(h.Ops), len(want), h.Ops)
	}
	for i := range want {
		if h.Ops[i] != want[i] {
			t.Errorf("op %d:\n got %+v\nwant %+v", i, h.Ops[i], want[i])
		}
	}
	if m := h.Meta; m.Clients != 3 || m.Keys != 3 || m.TTLms != 3600000 || m.DurationNs != 50 || h.Format != history.Format {
		t.Errorf("meta %+v", m)
	}
}

// TestImportJepsenLayouts: a vector of records, Clojure record literals,
// jepsen.independent's [key value] tuples, comments and discarded forms.
func TestImportJepsenLayouts(t *testing.T) {
	h := importString(t, `[; the whole history as one vector
#jepsen.history.Op{:index 0, :time 1, :type :invoke, :process 0, :f :acquire, :value [7 nil]}
#jepsen.history.Op{:index 1, :time 2, :type :ok, :process 0, :f :acquire, :value [7 nil] #_ :ignored}
{:index 2, :time 3, :type :invoke, :process 0, :f :unlock, :value #jepsen.independent.Tuple{:key 7, :value nil}, :extra #inst "2024-01-01"}
{:index 3, :time 4, :type :ok, :process 0, :f :unlock, :value nil :note ("a" \b 1.5 true)}]`)
	if len(h.Ops) != 2 || h.Ops[0].Key != "7" || h.Ops[1].Key != "7" || h.Ops[1].Kind != history.Release {
		t.Fatalf("ops %+v", h.Ops)
	}
}

// TestImportJepsenNemesis: :start-X/:stop-X make a window X from the
// start's invocation to the stop's completion; another nemesis operation
// is a window of its own; a window never stopped runs to the end (End 0).
func TestImportJepsenNemesis(t *testing.T) {
	h := importString(t, `
{:type :invoke, :f :acquire, :process 0, :time 1}
{:type :info, :f :start-partition, :value nil, :process :nemesis, :time 100}
{:type :info, :f :start-partition, :value [:isolated {"n1" #{"n2"}}], :process :nemesis, :time 110}
{:type :info, :f :kill, :value nil, :process :nemesis, :time 150}
{:type :info, :f :kill, :value {"n1" :killed}, :process :nemesis, :time 160}
{:type :info, :f :stop-partition, :value nil, :process :nemesis, :time 200}
{:type :info, :f :stop-partition, :value :network-healed, :process :nemesis, :time 210}
{:type :info, :f :start, :value nil, :process :nemesis, :time 300}
{:type :info, :f :start, :value nil, :process :nemesis, :time 301}
{:type :ok, :f :acquire, :process 0, :time 400}
`)
	want := []history.Fault{
		{Name: "partition", Detail: `[:isolated {"n1" #{"n2"}}]`, Start: 100, End: 210},
		{Name: "kill", Detail: `{"n1" :killed}`, Start: 150, End: 160},
		{Name: "nemesis", Start: 300},
	}
	if len(h.Faults) != len(want) {
		t.Fatalf("faults %+v", h.Faults)
	}
	for i := range want {
		if f := h.Faults[i]; f.Name != want[i].Name || f.Detail != want[i].Detail || f.Start != want[i].Start || f.End != want[i].End {
			t.Errorf("fault %d: got %+v, want %+v", i, f, want[i])
		}
	}
	if strings.Join(h.Meta.Faults, ",") != "partition,kill,nemesis" {
		t.Errorf("meta faults %v", h.Meta.Faults)
	}
}

// TestImportJepsenErrors: bad input is refused with the line and column
// at fault and what to do.
func TestImportJepsenErrors(t *testing.T) {
	ok := "{:type :invoke, :f :acquire, :process 0, :time 1}\n"
	cases := []struct{ edn, want string }{
		{ok + `{:type :ok, :f :acquire, :process 0, :time "2"}`, `line 2, column 44: want :time to be an integer`},
		{ok + `{:type :ok, :f :acquire, :process 0, :time 2`, `line 2, column 1: map never closed: add '}'`},
		{ok + `{:type :done, :f :acquire, :process 0, :time 2}`, `line 2, column 8: unknown :type :done: want :invoke, :ok, :fail, :info`},
		{ok + `{:type :ok, :f :read, :process 0, :time 2}`, `line 2, column 16: process 0's :f :read is not a lock operation`},
		{ok + `{:type :ok, :f :acquire, :process "p", :time 2}`, `line 2, column 35: want :process to be a number from 0 or :nemesis`},
		{ok + `{:type :ok, :f :release, :process 0, :time 2}`, `line 2, column 1: process 0 completes :release but invoked :acquire at line 1`},
		{ok + ok, `line 2, column 1: process 0 invokes :acquire while its :acquire from line 1 is open`},
		{`{:type :ok, :f :acquire, :process 0, :time 2}`, `line 1, column 1: process 0's :ok :acquire has no :invoke before it`},
		{ok + `{:type :ok, :f :acquire, :process 0, :time 0}`, `line 2, column 44: process 0's :ok at 0 ns precedes its invocation at 1 ns`},
		{ok + `{:type :ok, :value "unterminated}`, `line 2, column 20: string never closed`},
		{ok + `{:type :ok :f}`, `line 2, column 12: map key :f has no value`},
		{ok + `{:type :ok, :f :acquire]`, `line 2, column 24: ']' closes a map opened at line 2, column 1: want '}'`},
		{ok + `:type`, `line 2, column 1: want an operation map`},
		{ok + `{:time 12ab}`, `line 2, column 8: "12ab" is not a number`},
		{ok + `{:type :ok, :f :acquire, :process 0, :time 99999999999999999999}`, `line 2, column 44: want :time to be an integer`},
		{ok + `{:value "\q"}`, `line 2, column 11: unknown escape \q`},
		{ok + `{:type :invoke, :f :acquire, :process 1, :time 2, :value [1 2 3]}`, `line 2, column 58: want the value to be a string, keyword or integer, got [1 2 3]`},
		{`{:type :info, :f :start, :process :nemesis, :time 1}`, `line 1, column 1: no client operations`},
		{ok + "}", `line 2, column 1: unexpected '}' with nothing open`},
	}
	for _, c := range cases {
		_, err := Import(strings.NewReader(c.edn), Options{TTL: time.Second})
		var bad *EDNError
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.edn, err, c.want)
		}
	}
	if _, err := Import(strings.NewReader(ok), Options{}); !errors.Is(err, ErrNoTTL) {
		t.Errorf("no TTL: got %v, want ErrNoTTL", err)
	}
}

// FuzzImportJepsen: any input is imported or refused with an EDNError,
// never a panic.
func FuzzImportJepsen(f *testing.F) {
	f.Add("{:type :invoke, :f :acquire, :process 0, :time 1}\n{:type :ok, :f :acquire, :process 0, :time 2}")
	f.Add(`[#jepsen.history.Op{:type :info, :f :start, :process :nemesis, :time 1, :value #{"a" \b}} #_ x]`)
	f.Add(`{:value "\u00e9" :type :invoke}`)
	f.Fuzz(func(t *testing.T, edn string) {
		_, err := Import(strings.NewReader(edn), Options{TTL: time.Second})
		var bad *EDNError
		if err != nil && !errors.As(err, &bad) {
			t.Fatalf("%q: %v is not an EDNError", edn, err)
		}
	})
}
