package lockclient

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestTimeoutNamesItsBound: a call whose deadline passed reports the bound
// that ran out, and the cause is still a deadline to errors.Is.
func TestTimeoutNamesItsBound(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	cause := context.Cause(ctx)
	if !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("cause %v is not a deadline", cause)
	}
	if got, want := reason(ctx, ctx.Err()), "no reply within 1ms: context deadline exceeded"; got != want {
		t.Fatalf("reason %q, want %q", got, want)
	}
	if got := reason(ctx, errors.New("connection reset")); got != "connection reset" {
		t.Fatalf("another error's reason %q", got)
	}
}
