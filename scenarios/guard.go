package scenarios

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// PanicError is a panic in a goroutine the run started (a worker, a client
// library under it, a fault), turned into the run's error. A panic that
// escaped such a goroutine would end the process at once, before the
// deferred teardown that stops faults and removes the containers: guarded,
// the run ends, the caller tears down, and the panic is reported with its
// stack.
type PanicError struct {
	// Where names the goroutine: "worker 3", "fault schedule".
	Where string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic in %s: %v", e.Where, e.Value)
}

// guard runs f and, when it panics, ends the run with a *PanicError as the
// cause of ctx's cancellation.
func guard(cancel context.CancelCauseFunc, where string, f func()) {
	defer func() {
		if v := recover(); v != nil {
			cancel(&PanicError{Where: where, Value: v, Stack: debug.Stack()})
		}
	}()
	f()
}

// panicked returns the *PanicError that ended ctx, if one did.
func panicked(ctx context.Context) error {
	var pe *PanicError
	if errors.As(context.Cause(ctx), &pe) {
		return pe
	}
	return nil
}
