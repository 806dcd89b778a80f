package topology

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// slotsInFlight is how many per-slot commands eachSlot has in flight on
// one node at once.
const slotsInFlight = 32

// slotReply is one slot's reply to a command sent for every slot of a
// range (eachSlot): the text, or the error it got.
type slotReply struct {
	Slot int
	Text string
	Err  error
}

// eachSlot sends CLUSTER sub <slot> args... to n for every slot of
// first..last, slotsInFlight at a time on connections of their own, and
// returns the replies in slot order. Since Valkey 8.0 a primary answers
// CLUSTER SETSLOT only once its replicas have it, some milliseconds
// later: one slot at a time, emptying a primary (some 5,000 slots, five
// SETSLOTs each) takes minutes, and a pipeline on one connection waits
// the same (the server serves a connection's commands in turn), while
// commands on many connections wait together. Per slot the order of the
// commands to different nodes stays the caller's: every slot's command
// to one node has its reply before the next node's are sent.
func (n *Node) eachSlot(ctx context.Context, first, last int, sub string, args ...string) ([]slotReply, error) {
	c, err := n.Client()
	if err != nil {
		return nil, err
	}
	out := make([]slotReply, last-first+1)
	slots := make(chan int)
	var wg sync.WaitGroup
	for range min(slotsInFlight, len(out)) {
		wg.Go(func() {
			for slot := range slots {
				// Blocking: valkey-go gives each its own connection
				cmd := c.B().Arbitrary(append([]string{"CLUSTER", sub, itoa(slot)}, args...)...).Blocking()
				s, err := ReplyText(c.Do(ctx, cmd))
				if err != nil {
					err = fmt.Errorf("CLUSTER %s %d %s on %s: %w", sub, slot, strings.Join(args, " "), n.Name, err)
				}
				out[slot-first] = slotReply{Slot: slot, Text: s, Err: err}
			}
		})
	}
	for slot := first; slot <= last; slot++ {
		slots <- slot
	}
	close(slots)
	wg.Wait()
	return out, nil
}

// eachSlotOK is eachSlot for commands that must succeed for every slot:
// the first failure in slot order, else nil.
func (n *Node) eachSlotOK(ctx context.Context, first, last int, sub string, args ...string) error {
	reps, err := n.eachSlot(ctx, first, last, sub, args...)
	if err != nil {
		return err
	}
	for _, r := range reps {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
