package lockclient

import (
	"context"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
)

// classify maps an error from valkey-go or go-redis to an outcome. Only a
// reply from the server proves a command did not run (nil, or an error
// reply such as "unknown command"); a timeout, a closed connection or any
// other client-side failure leaves it unknown.
func classify(err error) (history.Outcome, string) {
	if err == nil {
		return history.OK, ""
	}
	if valkey.IsValkeyNil(err) || errors.Is(err, goredis.Nil) {
		return history.Fail, ""
	}
	var ve *valkey.ValkeyError
	if errors.As(err, &ve) {
		if ve.IsNil() {
			return history.Fail, ""
		}
		return history.Fail, ve.Error()
	}
	var re goredis.Error
	if errors.As(err, &re) && !isClientSide(err) {
		return history.Fail, re.Error()
	}
	return history.Unknown, err.Error()
}

// isClientSide catches go-redis errors that satisfy its Error interface
// without being a server's reply.
func isClientSide(err error) bool {
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.Is(err, goredis.ErrClosed)
}

// resultOf turns an error into a Result; a nil error is OK. ctx is the
// call's context, whose cause explains a deadline.
func resultOf(ctx context.Context, err error) Result {
	o, msg := classify(err)
	if o == history.Unknown {
		msg = reason(ctx, err)
	}
	return Result{Outcome: o, Err: msg}
}

// WithTimeout bounds one call; the deadline's cause names the bound so that
// an Unknown outcome says which limit ran out.
func WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d, noReply(d))
}

// noReply is the cause of a call's deadline: "no reply within d". Its
// text is made only when read, as few calls time out and every call
// makes one (formatting it up front cost 4.5 % of the op-bound
// workload's CPU).
type noReply time.Duration

func (d noReply) Error() string {
	return fmt.Sprintf("no reply within %v: %v", time.Duration(d), context.DeadlineExceeded)
}

func (noReply) Unwrap() error { return context.DeadlineExceeded }

// reason is err's text, with the deadline's cause when the context ran out.
func reason(ctx context.Context, err error) string {
	if c := context.Cause(ctx); c != nil && errors.Is(err, context.DeadlineExceeded) {
		return c.Error()
	}
	return err.Error()
}
