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
func (c Conformance) Run(ctx context.Context) error {
	stderr, err := os.CreateTemp("", "lockcheck-adapter-check-*.stderr")
	if err != nil {
		return err
	}
	defer stderr.Close()
	argv := strings.Fields(c.Command)
	if len(argv) == 0 {
		return errors.New("no adapter command")
	}
	r := &conformanceRun{cfg: c.Config.WithDefaults(), argv: argv, stderr: stderr, srv: serverView{c.Server},
		key: conformanceKey, ttl: 5 * time.Second}
	defer r.kill()
	for _, st := range r.steps() {
		if err := st.run(ctx); err != nil {
			return &ConformanceError{Step: st.name, Err: fmt.Errorf("%w (adapter stderr: %s)", err, stderr.Name())}
		}
		if c.Step != nil {
			c.Step(st.name)
		}
	}
	return nil
}

// conformanceRun is one check's state as its steps pass: the two
// adapters, and the first acquire's reply the later steps compare with.
type conformanceRun struct {
	cfg    Config
	argv   []string
	stderr *os.File
	srv    serverView
	key    string
	ttl    time.Duration
	a, b   *adapterSession
	first  adapterReply
}

type conformanceStep struct {
	name string
	run  func(context.Context) error
}

// steps are the check's steps in the order they run: each builds on what
// the ones before it left, so the first failure ends the check.
func (r *conformanceRun) steps() []conformanceStep {
	return []conformanceStep{
		{"init two adapters", r.initTwo},
		{"acquire a free key", r.acquireFree},
		{"acquire a held key", r.acquireHeld},
		{"extend by the holder", r.extendByHolder},
		{"extend with another token", r.extendOtherToken},
		{"release with another token", r.releaseOtherToken},
		{"release by the holder", r.releaseByHolder},
		{"release a released lock", r.releaseReleased},
		{"extend a released lock", r.extendReleased},
		{"fences grow", r.fencesGrow},
		{"a broken connection", r.brokenConnection},
		{"a call past its timeout", r.pastTimeout},
		{"close", r.close},
	}
}

// kill stops the adapters a failed step left running.
func (r *conformanceRun) kill() {
	for _, s := range []*adapterSession{r.a, r.b} {
		if s != nil {
			s.p.kill()
		}
	}
}

// start starts one adapter as client id and initializes it.
func (r *conformanceRun) start(ctx context.Context, id int) (*adapterSession, error) {
	p, err := startAdapter(r.argv, r.stderr)
	if err != nil {
		return nil, err
	}
	s := &adapterSession{p: p, deadline: r.cfg.Timeout + r.cfg.AdapterGrace}
	req := initRequest{Op: "init", V: 1, Topology: string(r.cfg.Topology), Addrs: r.cfg.Addrs, Client: id,
		AddrMap: r.cfg.AddrMap, TimeoutMS: r.cfg.Timeout.Milliseconds()}
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

func (r *conformanceRun) initTwo(ctx context.Context) (err error) {
	if err := r.srv.do(ctx, "DEL", r.key, fenceKey(r.key)); err != nil {
		return err
	}
	if r.a, err = r.start(ctx, 1); err != nil {
		return err
	}
	r.b, err = r.start(ctx, 2)
	return err
}

func (r *conformanceRun) acquireFree(ctx context.Context) (err error) {
	if r.first, err = r.a.call(ctx, "acquire", r.key, "", r.ttl, "ok"); err != nil {
		return err
	}
	if r.first.Token == "" {
		return errors.New(`replied ok without a "token"`)
	}
	return r.srv.holds(ctx, r.key, r.first.Token, r.ttl)
}

func (r *conformanceRun) acquireHeld(ctx context.Context) error {
	if _, err := r.b.call(ctx, "acquire", r.key, "", r.ttl, "fail"); err != nil {
		return err
	}
	return r.srv.holds(ctx, r.key, r.first.Token, r.ttl)
}

func (r *conformanceRun) extendByHolder(ctx context.Context) error {
	if _, err := r.a.call(ctx, "extend", r.key, r.first.Token, 3*r.ttl, "ok"); err != nil {
		return err
	}
	pttl, err := r.srv.pttl(ctx, r.key)
	if err == nil && pttl <= r.ttl.Milliseconds() {
		err = fmt.Errorf("replied ok, but the key's PTTL is %d ms, not the %d ms asked for", pttl, (3 * r.ttl).Milliseconds())
	}
	return err
}

func (r *conformanceRun) extendOtherToken(ctx context.Context) error {
	if _, err := r.b.call(ctx, "extend", r.key, "not-"+r.first.Token, 10*r.ttl, "fail"); err != nil {
		return err
	}
	pttl, err := r.srv.pttl(ctx, r.key)
	if err == nil && pttl > (3*r.ttl).Milliseconds() {
		err = fmt.Errorf("replied fail, but the key's PTTL grew to %d ms", pttl)
	}
	if err == nil {
		err = r.srv.holds(ctx, r.key, r.first.Token, 3*r.ttl)
	}
	return err
}

func (r *conformanceRun) releaseOtherToken(ctx context.Context) error {
	if _, err := r.b.call(ctx, "release", r.key, "not-"+r.first.Token, 0, "fail"); err != nil {
		return err
	}
	return r.srv.holds(ctx, r.key, r.first.Token, 3*r.ttl)
}

func (r *conformanceRun) releaseByHolder(ctx context.Context) error {
	if _, err := r.a.call(ctx, "release", r.key, r.first.Token, 0, "ok"); err != nil {
		return err
	}
	return r.srv.absent(ctx, r.key, "released")
}

func (r *conformanceRun) releaseReleased(ctx context.Context) error {
	_, err := r.a.call(ctx, "release", r.key, r.first.Token, 0, "fail")
	return err
}

func (r *conformanceRun) extendReleased(ctx context.Context) error {
	if _, err := r.a.call(ctx, "extend", r.key, r.first.Token, r.ttl, "fail"); err != nil {
		return err
	}
	return r.srv.absent(ctx, r.key, "extended after its release")
}

func (r *conformanceRun) fencesGrow(ctx context.Context) error {
	rep, err := r.b.call(ctx, "acquire", r.key, "", r.ttl, "ok")
	if err != nil {
		return err
	}
	first := r.first
	if (first.Fence == nil) != (rep.Fence == nil) {
		return errors.New(`one acquire replied with a "fence" and another without: an adapter draws fences always or never`)
	}
	if first.Fence != nil && *rep.Fence <= *first.Fence {
		return fmt.Errorf("fence %d after fence %d: fences must grow", *rep.Fence, *first.Fence)
	}
	_, err = r.b.call(ctx, "release", r.key, rep.Token, 0, "ok")
	return err
}

// brokenConnection: after the server drops the adapter's connection, an
// acquire may reply ok (reconnected) or unknown, never fail.
func (r *conformanceRun) brokenConnection(ctx context.Context) error {
	if err := r.srv.do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"); err != nil {
		return err
	}
	rep, err := r.a.call(ctx, "acquire", r.key, "", r.ttl, "ok", "unknown")
	if err != nil {
		return err
	}
	if rep.Status == "ok" {
		if err := r.srv.holds(ctx, r.key, rep.Token, r.ttl); err != nil {
			return err
		}
		_, err = r.a.call(ctx, "release", r.key, rep.Token, 0, "ok")
	}
	return r.srv.do(ctx, "DEL", r.key)
}

// pastTimeout: with the server's writes paused past the adapter's
// timeout, an acquire must reply unknown, since the command may yet run.
func (r *conformanceRun) pastTimeout(ctx context.Context) error {
	pause := 2*r.cfg.Timeout + r.cfg.AdapterGrace + time.Second
	if err := r.srv.do(ctx, "CLIENT", "PAUSE", strconv.FormatInt(pause.Milliseconds(), 10), "WRITE"); err != nil {
		return err
	}
	defer r.srv.do(context.WithoutCancel(ctx), "CLIENT", "UNPAUSE")
	rep, err := r.a.call(ctx, "acquire", r.key, "", r.ttl, "unknown")
	if err != nil && rep.Status == "fail" {
		return fmt.Errorf("%w: a command still waiting for its reply may yet run; a timeout must be unknown", err)
	}
	return err
}

// close asks both adapters to close, and each must exit soon after.
func (r *conformanceRun) close(ctx context.Context) error {
	r.srv.do(ctx, "CLIENT", "UNPAUSE")
	for _, s := range []*adapterSession{r.a, r.b} {
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
	r.a, r.b = nil, nil
	return nil
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
