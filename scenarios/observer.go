package scenarios

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/scenarios/internal/pace"
	"github.com/lockcheck/lockcheck/scenarios/lockclient"
)

// observer reads lock keys on a connection of its own, so that what the
// server holds goes into the history beside what the clients said: a key
// left without expiry (PTTL -1) or holding a value no live acquisition set
// is a finding of the ttl or linearizability check. PTTL and GET go in one
// MULTI, so both replies describe one instant.
type observer struct {
	c   valkey.Client
	rec *history.Recorder
	// timeout bounds one read; a read that fails is recorded with its
	// error, which the checker's models ignore.
	timeout time.Duration
}

func newObserver(cfg lockclient.Config, rec *history.Recorder) (*observer, error) {
	opt := cfg.Option
	opt.DisableRetry = true
	c, err := valkey.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("observer: connect: %w", err)
	}
	return &observer{c: c, rec: rec, timeout: cfg.Timeout}, nil
}

func (o *observer) Close() { o.c.Close() }

// read observes key once and records it under porcupine client cid.
func (o *observer) read(cid int, key string) {
	ctx, cancel := lockclient.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	call := o.rec.Now()
	pttl, token, err := o.pttlAndValue(ctx, key)
	o.rec.Add(observeOp(cid, key, call, o.rec.Now(), pttl, token, err))
}

func (o *observer) pttlAndValue(ctx context.Context, key string) (int64, string, error) {
	c := o.c
	resps := c.DoMulti(ctx,
		c.B().Multi().Build(),
		c.B().Pttl().Key(key).Build(),
		c.B().Get().Key(key).Build(),
		c.B().Exec().Build(),
	)
	exec, err := resps[3].ToArray()
	if err != nil {
		return 0, "", err
	}
	if len(exec) != 2 {
		return 0, "", fmt.Errorf("EXEC replied %s", resps[3].String())
	}
	pttl, err := exec[0].AsInt64()
	if err != nil {
		return 0, "", err
	}
	token, err := exec[1].ToString()
	if valkey.IsValkeyNil(err) {
		return pttl, "", nil
	}
	return pttl, token, err
}

// run reads a key drawn from keys at seeded intervals that average every,
// until ctx ends: between the reads that follow acquires and extends, it
// catches a key left in a state no client reports.
func (o *observer) run(ctx context.Context, keys []string, every time.Duration, seed int64, quiet *quietKeys) {
	r := rand.New(rand.NewPCG(uint64(seed), 0x0b5e_77e5))
	cid := o.rec.NewClient()
	for {
		gap := uniform(r, every/2, every*3/2)
		key := keys[r.IntN(len(keys))]
		// a quiet stall holds the reads of its key back too: the key is
		// the stalled holder's to find free
		if !pace.Sleep(ctx, gap) || !quiet.wait(ctx, key) {
			return
		}
		o.read(cid, key)
	}
}

// observeOp is the history's record of one read of key by the harness
// itself (Worker -1): PTTL in ms (-2: no key, -1: no expiry) and the value
// GET found, or the error that kept the read from an answer.
func observeOp(cid int, key string, call, ret, pttl int64, token string, err error) history.Op {
	op := history.Op{Client: cid, Worker: -1, Key: key, Kind: history.Observe, Outcome: history.OK, Read: pttl, Token: token, Call: call, Return: ret}
	if err != nil {
		op.Outcome, op.Error, op.Read, op.Token = history.Fail, err.Error(), 0, ""
	}
	return op
}
