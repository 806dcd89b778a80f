package lockclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// Conformance checks an external adapter against the adapter protocol in
// a few seconds, on a standalone server: each step sends the adapter one
// request, judges the reply's form, and reads the key itself to compare
// the reply with what the server did. The first violation ends the check.
type Conformance struct {
	// Command is the adapter's command line (what follows "external:").
	Command string
	// Config connects the adapters; its Timeout is the adapters'
	// timeout_ms.
	Config Config
	// Server reads and controls the server the adapters talk to.
	Server valkey.Client
	// Step gets each step's name as it passes.
	Step func(name string)
}

// ConformanceError is the first protocol violation: the step, and what
// the adapter did wrong.
type ConformanceError struct {
	Step string
	Err  error
}

func (e *ConformanceError) Error() string { return e.Step + ": " + e.Err.Error() }
func (e *ConformanceError) Unwrap() error { return e.Err }

// adapterSession is one adapter process under check.
type adapterSession struct {
	p        *adapterProc
	deadline time.Duration
}

// conformanceKey is the key the steps lock; the server is the check's own.
const conformanceKey = "lock:{adapter-check}"

// Run runs every step in order.
func (c Conformance) Run(ctx context.Context) (err error) {
	cfg := c.Config.WithDefaults()
	stderr, err := os.CreateTemp("", "lockcheck-adapter-check-*.stderr")
	if err != nil {
		return err
	}
	defer stderr.Close()
	step := func(name string, f func() error) {
		if err != nil {
			return
		}
		if ferr := f(); ferr != nil {
			err = &ConformanceError{Step: name, Err: fmt.Errorf("%w (adapter stderr: %s)", ferr, stderr.Name())}
			return
		}
		if c.Step != nil {
			c.Step(name)
		}
	}
	argv := strings.Fields(c.Command)
	if len(argv) == 0 {
		return errors.New("no adapter command")
	}
	var a, b *adapterSession
	defer func() {
		for _, s := range []*adapterSession{a, b} {
			if s != nil {
				s.p.kill()
			}
		}
	}()
	start := func(id int) (*adapterSession, error) {
		p, err := startAdapter(argv, stderr)
		if err != nil {
			return nil, err
		}
		s := &adapterSession{p: p, deadline: cfg.Timeout + cfg.AdapterGrace}
		req := initRequest{Op: "init", V: 1, Topology: string(cfg.Topology), Addrs: cfg.Addrs, Client: id,
			AddrMap: cfg.AddrMap, TimeoutMS: cfg.Timeout.Milliseconds()}
		rep, err := p.roundTrip(ctx, req, initDeadline, nil, nil)
		if err != nil {
			p.kill()
			return nil, err
		}
		if rep.Status != "ok" {
			p.kill()
			return nil, fmt.Errorf("init replied status %q (%s), want ok", rep.Status, rep.Error)
		}
		return s, nil
	}
	key, ttl := conformanceKey, 5*time.Second
	srv := serverView{c.Server}
	var first adapterReply
	step("init two adapters", func() (err error) {
		if err := srv.do(ctx, "DEL", key, fenceKey(key)); err != nil {
			return err
		}
		if a, err = start(1); err != nil {
			return err
		}
		b, err = start(2)
		return err
	})
	step("acquire a free key", func() (err error) {
		if first, err = a.call(ctx, "acquire", key, "", ttl, "ok"); err != nil {
			return err
		}
		if first.Token == "" {
			return errors.New(`replied ok without a "token"`)
		}
		return srv.holds(ctx, key, first.Token, ttl)
	})
	step("acquire a held key", func() error {
		if _, err := b.call(ctx, "acquire", key, "", ttl, "fail"); err != nil {
			return err
		}
		return srv.holds(ctx, key, first.Token, ttl)
	})
	step("extend by the holder", func() error {
		if _, err := a.call(ctx, "extend", key, first.Token, 3*ttl, "ok"); err != nil {
			return err
		}
		pttl, err := srv.pttl(ctx, key)
		if err == nil && pttl <= ttl.Milliseconds() {
			err = fmt.Errorf("replied ok, but the key's PTTL is %d ms, not the %d ms asked for", pttl, (3 * ttl).Milliseconds())
		}
		return err
	})
	step("extend with another token", func() error {
		if _, err := b.call(ctx, "extend", key, "not-"+first.Token, 10*ttl, "fail"); err != nil {
			return err
		}
		pttl, err := srv.pttl(ctx, key)
		if err == nil && pttl > (3*ttl).Milliseconds() {
			err = fmt.Errorf("replied fail, but the key's PTTL grew to %d ms", pttl)
		}
		if err == nil {
			err = srv.holds(ctx, key, first.Token, 3*ttl)
		}
		return err
	})
	step("release with another token", func() error {
		if _, err := b.call(ctx, "release", key, "not-"+first.Token, 0, "fail"); err != nil {
			return err
		}
		return srv.holds(ctx, key, first.Token, 3*ttl)
	})
	step("release by the holder", func() error {
		if _, err := a.call(ctx, "release", key, first.Token, 0, "ok"); err != nil {
			return err
		}
		return srv.absent(ctx, key, "released")
	})
	step("release a released lock", func() error {
		_, err := a.call(ctx, "release", key, first.Token, 0, "fail")
		return err
	})
	step("extend a released lock", func() error {
		if _, err := a.call(ctx, "extend", key, first.Token, ttl, "fail"); err != nil {
			return err
		}
		return srv.absent(ctx, key, "extended after its release")
	})
	step("fences grow", func() error {
		rep, err := b.call(ctx, "acquire", key, "", ttl, "ok")
		if err != nil {
			return err
		}
		if (first.Fence == nil) != (rep.Fence == nil) {
			return errors.New(`one acquire replied with a "fence" and another without: an adapter draws fences always or never`)
		}
		if first.Fence != nil && *rep.Fence <= *first.Fence {
			return fmt.Errorf("fence %d after fence %d: fences must grow", *rep.Fence, *first.Fence)
		}
		_, err = b.call(ctx, "release", key, rep.Token, 0, "ok")
		return err
	})
	step("a broken connection", func() error {
		if err := srv.do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
			return err
		}
		rep, err := a.call(ctx, "acquire", key, "", ttl, "ok", "unknown")
		if err != nil {
			return err
		}
		if rep.Status == "ok" {
			if err := srv.holds(ctx, key, rep.Token, ttl); err != nil {
				return err
			}
			_, err = a.call(ctx, "release", key, rep.Token, 0, "ok")
		}
		return srv.do(ctx, "DEL", key)
	})
	step("a call past its timeout", func() error {
		pause := 2*cfg.Timeout + cfg.AdapterGrace + time.Second
		if err := srv.do(ctx, "CLIENT", "PAUSE", strconv.FormatInt(pause.Milliseconds(), 10), "WRITE"); err != nil {
			return err
		}
		defer srv.do(context.WithoutCancel(ctx), "CLIENT", "UNPAUSE")
		rep, err := a.call(ctx, "acquire", key, "", ttl, "unknown")
		if err != nil && rep.Status == "fail" {
			return fmt.Errorf("%w: a command still waiting for its reply may yet run; a timeout must be unknown", err)
		}
		return err
	})
	step("close", func() error {
		srv.do(ctx, "CLIENT", "UNPAUSE")
		for _, s := range []*adapterSession{a, b} {
			if _, err := s.p.roundTrip(ctx, opRequest{Op: "close"}, time.Second, nil, nil); err != nil {
				return err
			}
			s.p.in.Close()
			select {
			case <-s.p.exited:
			case <-time.After(2 * time.Second):
				return errors.New("the adapter did not exit within 2 s of close")
			}
		}
		a, b = nil, nil
		return nil
	})
	return err
}

// call sends one lock request and judges the reply's form and status:
// want lists the statuses the protocol allows here.
func (s *adapterSession) call(ctx context.Context, op, key, token string, ttl time.Duration, want ...string) (adapterReply, error) {
	req := opRequest{Op: op, Key: key, Token: token, TTLms: ttl.Milliseconds()}
	rep, err := s.p.roundTrip(ctx, req, s.deadline, nil, nil)
	if err != nil {
		return rep, fmt.Errorf("%s: %w (timeout_ms plus the grace)", op, err)
	}
	switch rep.Status {
	case "ok", "fail", "unknown":
	default:
		return rep, fmt.Errorf("%s replied status %q: a reply's status is ok, fail or unknown", op, rep.Status)
	}
	for _, w := range want {
		if rep.Status == w {
			return rep, nil
		}
	}
	why := rep.Error
	if why == "" {
		why = "no error given"
	}
	return rep, fmt.Errorf("%s replied %s (%s), want %s", op, rep.Status, why, strings.Join(want, " or "))
}

// serverView reads the key as the server has it.
type serverView struct{ c valkey.Client }

func (v serverView) do(ctx context.Context, args ...string) error {
	return v.c.Do(ctx, v.c.B().Arbitrary(args[0]).Args(args[1:]...).Build()).Error()
}

func (v serverView) pttl(ctx context.Context, key string) (int64, error) {
	return v.c.Do(ctx, v.c.B().Pttl().Key(key).Build()).AsInt64()
}

// holds checks that key holds token with a lease of at most ttl.
func (v serverView) holds(ctx context.Context, key, token string, ttl time.Duration) error {
	got, err := v.c.Do(ctx, v.c.B().Get().Key(key).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return fmt.Errorf("the server has no key %s: the lock is not held", key)
	}
	if err != nil {
		return err
	}
	if got != token {
		return fmt.Errorf("the key holds %q, not the token %q the adapter replied (the token is the value stored in the key)", got, token)
	}
	pttl, err := v.pttl(ctx, key)
	if err != nil {
		return err
	}
	if pttl <= 0 || pttl > ttl.Milliseconds() {
		return fmt.Errorf("the key's PTTL is %d ms, want a lease of at most %d ms", pttl, ttl.Milliseconds())
	}
	return nil
}

func (v serverView) absent(ctx context.Context, key, what string) error {
	n, err := v.c.Do(ctx, v.c.B().Exists().Key(key).Build()).AsInt64()
	if err == nil && n != 0 {
		err = fmt.Errorf("the key is still there after it was %s", what)
	}
	return err
}
