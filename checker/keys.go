package checker

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/lockcheck/lockcheck/history"
)

// keyOps is one key's share of a history, prepared for the checks. Every
// check works per key: keys are independent locks.
type keyOps struct {
	name string
	// ops are indices into History.Ops in call order.
	ops []int32
	// tok is the token id of each entry of ops (0: none). An extend or
	// release that names no token belongs to its worker's last acquire.
	tok    []int32
	tokens []string
	// lock and fence are the inputs of the two models, in call order.
	lock  []input
	fence []input
	// maxTTL is the longest lease asked for on the key, in ns; never if
	// some acquire or extend asked for no expiry.
	maxTTL int64
	// last is each worker's last acquire's token id, as the key's
	// operations leave it (the next chunk's carry).
	last map[int]int32
	// prior are earlier chunks' latest unknown lock operations (the
	// carry's), older how many earlier ones are left out.
	prior []input
	older int
}

// groupByKey splits the first own operations by key (those after are a
// chunk's anchors: see keyCarry), each key's in call order, keys sorted
// by name.
func groupByKey(h *history.History, own int) []*keyOps {
	byName := make(map[string]*keyOps)
	var keys []*keyOps
	for i := range h.Ops[:own] {
		name := h.Ops[i].Key
		k := byName[name]
		if k == nil {
			k = &keyOps{name: name}
			byName[name] = k
			keys = append(keys, k)
		}
		k.ops = append(k.ops, int32(i))
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].name < keys[j].name })
	for _, k := range keys {
		sortByCall(h, k.ops)
	}
	return keys
}

// sortByCall orders indices by call time, keeping history order on ties;
// recorded histories are sorted already, so this is usually one pass.
func sortByCall(h *history.History, idx []int32) {
	sorted := true
	for i := 1; i < len(idx); i++ {
		if h.Ops[idx[i]].Call < h.Ops[idx[i-1]].Call {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	slices.SortStableFunc(idx, func(a, b int32) int {
		ca, cb := h.Ops[a].Call, h.Ops[b].Call
		switch {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return 0
	})
}

// prepare resolves tokens and builds the model inputs; carry is what
// earlier chunks of the key left (nil: none). It does not change carry.
func (k *keyOps) prepare(h *history.History, carry *keyCarry) {
	ids := map[string]int32{"": 0}
	k.tokens = []string{""}
	intern := func(t string) int32 {
		if id, ok := ids[t]; ok {
			return id
		}
		id := int32(len(k.tokens))
		ids[t] = id
		k.tokens = append(k.tokens, t)
		return id
	}
	last := make(map[int]int32) // worker → token of its last acquire
	if carry != nil {
		for w, t := range carry.lastToken {
			last[w] = intern(t)
		}
		for _, a := range carry.unknown {
			if in, ok := lockInput(&a.op, int(a.local), intern(a.token)); ok {
				k.prior = append(k.prior, in)
			}
		}
		k.older = carry.older
	}
	k.last = last
	k.tok = make([]int32, len(k.ops))
	k.lock = make([]input, 0, len(k.ops))
	for j, i := range k.ops {
		op := &h.Ops[i]
		var t int32
		switch op.Kind {
		case history.Acquire:
			name := op.Token
			if name == "" { // one of its own: no two acquires share a client and a call
				name = "#" + strconv.Itoa(op.Client) + "@" + strconv.FormatInt(op.Call, 10)
			}
			t = intern(name)
			last[op.Worker] = t
		case history.Observe:
			if op.Token != "" {
				t = intern(op.Token)
			}
		default:
			if op.Token != "" {
				t = intern(op.Token)
			} else {
				t = last[op.Worker]
			}
		}
		k.tok[j] = t
		k.maxTTL = maxTTLOf(k.maxTTL, op)
		if in, ok := lockInput(op, int(i), t); ok {
			k.lock = append(k.lock, in)
		}
		if in, ok := fenceInput(op, int(i)); ok {
			k.fence = append(k.fence, in)
		}
	}
	if carry != nil && carry.hasMaxTTL {
		k.maxTTL = carry.maxTTL
	}
}

// maxTTLOf folds one operation into a key's longest lease (keyOps.maxTTL).
func maxTTLOf(cur int64, op *history.Op) int64 {
	if op.Kind != history.Acquire && op.Kind != history.Extend {
		return cur
	}
	switch {
	case op.TTLms <= 0 && op.Outcome != history.Fail:
		return never
	case cur != never:
		return max(cur, op.TTLms*1e6)
	}
	return cur
}

// validate reports the first operation the checker cannot interpret.
func validate(h *history.History) error {
	if len(h.Ops) == 0 {
		return fmt.Errorf("history has no operations: nothing was recorded")
	}
	for i := range h.Ops {
		if err := validateOp(i, &h.Ops[i]); err != nil {
			return err
		}
	}
	return nil
}

// validateOp says what is wrong with operation i, if anything.
func validateOp(i int, op *history.Op) error {
	switch op.Kind {
	case history.Acquire, history.Extend, history.Release, history.Write, history.Observe:
	default:
		return fmt.Errorf("op %d: unknown kind %q (want acquire, extend, release, write or observe)", i, op.Kind)
	}
	switch op.Outcome {
	case history.OK, history.Fail, history.Unknown:
	default:
		return fmt.Errorf("op %d: unknown outcome %q (want ok, fail or unknown)", i, op.Outcome)
	}
	if op.Key == "" {
		return fmt.Errorf("op %d: %s without a key", i, op.Kind)
	}
	if op.Outcome != history.Unknown && op.Return < op.Call {
		return fmt.Errorf("op %d: returns at %d before its call at %d", i, op.Return, op.Call)
	}
	return nil
}
