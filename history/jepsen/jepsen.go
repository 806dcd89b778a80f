package jepsen

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockcheck/lockcheck/history"
)

// Jepsen's lock and mutex workloads record what lockcheck records: each
// client operation is an :invoke and then an :ok, a :fail (certainly not
// done) or an :info (indeterminate: the process is retired, as lockcheck's
// client goes on under a new id after an unknown outcome). Import maps
// such a history.edn onto a History, so that the same checks read it.

// Options say what a Jepsen history does not.
type Options struct {
	// TTL is the lease every acquire is taken to have asked for. Jepsen's
	// mutex workloads record none, and the checker reads a TTL of 0 as an
	// acquire that set no expiry (a no_expiry finding), so it is required.
	// A lock without leases is checked as one whose leases outlast the
	// test by giving a TTL longer than the test.
	TTL time.Duration
	// Key names the lock of operations whose :value names none; default
	// "lock".
	Key string
}

// ErrNoTTL is Import's error when Options.TTL is not set.
var ErrNoTTL = errors.New("a Jepsen history records no lease: give the lock's lease, or for a lock without leases one longer than the test")

// jepsenProc is one Jepsen process: its client id and open operation.
type jepsenProc struct {
	client int
	open   *history.Op
	at     *ednValue // the open operation's map, for errors
}

// jepsenImport is the state of one import.
type jepsenImport struct {
	o       Options
	h       *history.History
	procs   map[int64]*jepsenProc
	clients int
	end     int64
	nem     nemesisState
}

// Import reads a Jepsen history.edn (one operation map per line, or
// one vector of them) of a lock workload: :f :acquire or :lock, :release or
// :unlock, :process a number (the worker) or :nemesis (fault windows). An
// error names the line and column at fault (*EDNError).
func Import(r io.Reader, o Options) (*history.History, error) {
	if o.TTL <= 0 {
		return nil, ErrNoTTL
	}
	if o.Key == "" {
		o.Key = "lock"
	}
	im := &jepsenImport{o: o, procs: map[int64]*jepsenProc{},
		h: &history.History{Format: history.Format, Ops: []history.Op{}, Faults: []history.Fault{}}}
	im.nem.open = map[string]int{}
	d := newEDNReader(r)
	whole, err := d.openWhole()
	if err != nil {
		return nil, err
	}
	for {
		d.begin()
		var v ednValue
		var err error
		if whole != nil {
			v, err = whole.next()
		} else {
			v, err = d.next()
		}
		if err == io.EOF && whole != nil {
			whole = nil // the vector ended: lines may follow
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		// each operation as it is read: a file that is not a history is
		// refused at its first value that is not an operation
		if err := im.op(&v); err != nil {
			return nil, err
		}
	}
	return im.finish()
}

// op takes one operation map.
func (im *jepsenImport) op(v *ednValue) error {
	if v.kind == ednTagged && v.items[0].kind == ednMap { // #jepsen.history.Op{...}
		v = &v.items[0]
	}
	if v.kind != ednMap {
		return fieldErr(v, "want an operation map {:type ... :f ... :process ... :time ...}, got %s", short(v))
	}
	typ, err := keyword(v, "type", "invoke", "ok", "fail", "info")
	if err != nil {
		return err
	}
	f, err := keyword(v, "f")
	if err != nil {
		return err
	}
	t, err := integer(v, "time")
	if err != nil {
		return err
	}
	im.end = max(im.end, t)
	p := v.get("process")
	switch {
	case p != nil && p.kind == ednKeyword && p.s == "nemesis":
		im.nemesis(v, f, t)
		return nil
	case p == nil || p.kind != ednInt || p.i < 0:
		return fieldErr(orMap(p, v), "want :process to be a number from 0 or :nemesis, got %s", short(p))
	}
	return im.client(v, typ, f, p.i, t)
}

// client pairs a client's invocation with its completion.
func (im *jepsenImport) client(v *ednValue, typ, f string, proc, t int64) error {
	var kind history.Kind
	switch f {
	case "acquire", "lock":
		kind = history.Acquire
	case "release", "unlock":
		kind = history.Release
	default:
		return fieldErr(v.get("f"), "process %d's :f :%s is not a lock operation: want :acquire, :release, :lock or :unlock", proc, f)
	}
	p := im.procs[proc]
	if p == nil {
		p = &jepsenProc{client: im.clients}
		im.clients++
		im.procs[proc] = p
	}
	if typ == "invoke" {
		if p.open != nil {
			return fieldErr(v, "process %d invokes :%s while its :%s from line %d is open: a process has one operation open at a time", proc, f, p.open.Kind, p.at.line)
		}
		key, token, err := im.keyToken(v.get("value"))
		if err != nil {
			return err
		}
		p.open, p.at = &history.Op{Client: p.client, Worker: int(proc) + 1, Key: key, Kind: kind, Token: token, Call: t}, v
		if kind == history.Acquire {
			p.open.TTLms = im.o.TTL.Milliseconds()
		}
		return nil
	}
	op := p.open
	switch {
	case op == nil:
		return fieldErr(v, "process %d's :%s :%s has no :invoke before it: add the invocation or remove the line", proc, typ, f)
	case op.Kind != kind:
		return fieldErr(v, "process %d completes :%s but invoked :%s at line %d: a completion repeats its invocation's :f", proc, f, op.Kind, p.at.line)
	case t < op.Call:
		return fieldErr(v.get("time"), "process %d's :%s at %d ns precedes its invocation at %d ns (line %d)", proc, typ, t, op.Call, p.at.line)
	}
	if _, token, _ := im.keyToken(v.get("value")); op.Token == "" {
		op.Token = token
	}
	op.Return = t
	why := ""
	if e := v.get("error"); e != nil && e.kind != ednNil {
		why = ": " + short(e)
	}
	switch typ {
	case "ok":
		op.Outcome = history.OK
	case "fail": // certainly not done; Jepsen does not say the lock was held
		op.Outcome, op.Error = history.Fail, "jepsen :fail"+why
	case "info": // indeterminate: later operations are another client's
		op.Outcome, op.Error = history.Unknown, "jepsen :info"+why
		p.client = im.clients
		im.clients++
	}
	im.h.Ops = append(im.h.Ops, *op)
	p.open = nil
	return nil
}

// keyToken reads an operation's :value: nil (the default key), a lock name
// (string, keyword, symbol or number), a map with :key (or :lock, :name)
// and :token, or jepsen.independent's [key value] tuple.
func (im *jepsenImport) keyToken(v *ednValue) (key, token string, err error) {
	if v != nil && v.kind == ednTagged {
		v = &v.items[0]
	}
	switch {
	case v == nil || v.kind == ednNil:
		return im.o.Key, "", nil
	case v.kind == ednMap:
		key = im.o.Key
		for _, name := range []string{"key", "lock", "name"} {
			if k := v.get(name); k != nil && k.kind != ednNil {
				if key, err = scalar(k, name); err != nil {
					return "", "", err
				}
				break
			}
		}
		if t := v.get("token"); t != nil && t.kind != ednNil {
			token, err = scalar(t, "token")
		}
		return key, token, err
	case (v.kind == ednVector || v.kind == ednList) && len(v.items) == 2:
		key, err = scalar(&v.items[0], "value's key")
		return key, "", err
	}
	key, err = scalar(v, "value")
	return key, "", err
}

// finish closes what the history left open: an invocation with no
// completion is indeterminate until the history's end.
func (im *jepsenImport) finish() (*history.History, error) {
	h := im.h
	for _, p := range im.procs {
		if p.open != nil {
			p.open.Outcome, p.open.Return, p.open.Error = history.Unknown, im.end, "jepsen: no completion in the history"
			h.Ops = append(h.Ops, *p.open)
		}
	}
	if len(h.Ops) == 0 {
		return nil, &EDNError{Line: 1, Col: 1, Msg: "no client operations: want :acquire and :release operations of a lock workload"}
	}
	h.Sort()
	keys, names := map[string]bool{}, map[string]bool{}
	for i := range h.Ops {
		keys[h.Ops[i].Key] = true
	}
	for _, f := range h.Faults {
		if !names[f.Name] {
			names[f.Name] = true
			h.Meta.Faults = append(h.Meta.Faults, f.Name)
		}
	}
	h.Meta.Server, h.Meta.Client = "jepsen", "jepsen"
	h.Meta.TTLms, h.Meta.Clients, h.Meta.Keys, h.Meta.DurationNs = im.o.TTL.Milliseconds(), len(im.procs), len(keys), im.end
	return h, nil
}

// keyword is the keyword value of a map's field, one of allowed if any are
// given.
func keyword(v *ednValue, field string, allowed ...string) (string, error) {
	f := v.get(field)
	if f == nil || f.kind != ednKeyword {
		return "", fieldErr(orMap(f, v), "want :%s to be a keyword, got %s", field, short(f))
	}
	if len(allowed) > 0 && !strings.Contains(" "+strings.Join(allowed, " ")+" ", " "+f.s+" ") {
		return "", fieldErr(f, "unknown :%s :%s: want :%s", field, f.s, strings.Join(allowed, ", :"))
	}
	return f.s, nil
}

// integer is the integer value of a map's field.
func integer(v *ednValue, field string) (int64, error) {
	f := v.get(field)
	if f == nil || f.kind != ednInt {
		return 0, fieldErr(orMap(f, v), "want :%s to be an integer (nanoseconds since the test began), got %s", field, short(f))
	}
	return f.i, nil
}

// scalar is a lock name or token as text.
func scalar(v *ednValue, what string) (string, error) {
	switch v.kind {
	case ednString, ednKeyword, ednSymbol:
		return v.s, nil
	case ednInt:
		return strconv.FormatInt(v.i, 10), nil
	}
	return "", fieldErr(v, "want the %s to be a string, keyword or integer, got %s", what, short(v))
}

func fieldErr(v *ednValue, format string, args ...any) error {
	return &EDNError{Line: v.line, Col: v.col, Msg: fmt.Sprintf(format, args...)}
}

// orMap is f, or the map when the field is missing (the error points there).
func orMap(f, m *ednValue) *ednValue {
	if f == nil {
		return m
	}
	return f
}

// short prints a value for a message, cut to a readable length.
func short(v *ednValue) string {
	if v == nil {
		return "nothing"
	}
	s := v.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
