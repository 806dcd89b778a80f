//go:build cgo

package lockclient

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	glide "github.com/valkey-io/valkey-glide/go/v2"
)

// serverCode is how GLIDE's core writes a server's error reply that it
// has no kind for: the reply's code, a colon, the text ("WRONGTYPE: ...").
var serverCode = regexp.MustCompile(`^[A-Z][A-Z0-9_-]+: `)

// result reads an error of GLIDE's as the other clients' errors are
// read (classify): only a reply from the server proves the command did not
// run. GLIDE types its client-side failures (timeout, disconnect, closing,
// connection, circuit breaker) but returns a server's error reply as a
// plain error, "An error was signalled by the server: - Kind: text" or
// "CODE: text"; any other plain error is taken as unknown.
func (c *glideClient) result(ctx context.Context, err error) Result {
	var (
		timeout *glide.TimeoutError
		disc    *glide.DisconnectError
		closing *glide.ClosingError
		conn    *glide.ConnectionError
		breaker *glide.CircuitBreakerError
	)
	switch {
	case errors.As(err, &timeout):
		return unknownResult(fmt.Sprintf("GLIDE: %v (its request timeout: %v)", err, c.cfg.Timeout))
	case errors.As(err, &disc), errors.As(err, &closing), errors.As(err, &conn), errors.As(err, &breaker):
		return unknownResult("GLIDE: " + err.Error())
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return unknownResult(reason(ctx, err))
	}
	msg := err.Error()
	if strings.HasPrefix(msg, "An error was signalled by the server") || serverCode.MatchString(msg) {
		return failed(msg)
	}
	return unknownResult("GLIDE: " + msg)
}
