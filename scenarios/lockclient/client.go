package lockclient

import (
	"context"
	"log/slog"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/lockcheck/lockcheck/history"
	"github.com/lockcheck/lockcheck/topology"
)

// Client is one logical lock client: one worker uses it at a time. Every
// call returns what the client learned, never an error: a definite refusal
// or error reply is Fail, a timeout or broken connection is Unknown
// because the command may have run.
type Client interface {
	// Name says which client this is, as the history's meta records it.
	Name() string
	// Acquire takes key for ttl with a new token.
	Acquire(ctx context.Context, key string, ttl time.Duration) Result
	// Extend moves the lease of the acquisition that returned token.
	Extend(ctx context.Context, key, token string, ttl time.Duration) Result
	// Release gives up the acquisition that returned token.
	Release(ctx context.Context, key, token string) Result
	// Close releases connections and processes; the client is unusable
	// afterwards.
	Close() error
}

// Result is what one lock call reported.
type Result struct {
	Outcome history.Outcome
	// Token identifies the acquisition: the value stored in the lock key
	// where the client exposes it, else a stable per-acquisition id.
	Token string
	// Fence is the fencing token drawn by an acquire; HasFence says there
	// is one (0 is a valid fence).
	Fence    int64
	HasFence bool
	// Err is the server's error text for Fail, or the reason for Unknown.
	Err string
	// Undo is set when an acquire took the lock and gave it back before it
	// returned (a WAIT that fell short under WaitRelease). The acquire then
	// reports Fail or Unknown, but it held the lock until Undo.Call: the
	// history records both operations so that no checker sees a refusal
	// where there was a short hold.
	Undo *Undo
}

// Undo is a release a client ran on its own inside another call, with call
// and return times from Config.Clock.
type Undo struct {
	Release      Result
	Call, Return int64
	// Unsure says the acquire itself may not have taken the lock: it gave
	// up waiting for a reply and ran the release in case it had. The
	// acquire is then recorded as unknown until Call.
	Unsure bool
}

// Aside is a lock command a client ran on its own, outside any call: an
// extend (with the lease TTL it set) or a release of the acquisition that
// returned Token on Key, what it did, and its call and return times from
// Config.Clock.
type Aside struct {
	Kind         history.Kind
	Key, Token   string
	TTL          time.Duration
	Result       Result
	Call, Return int64
}

func okResult() Result                { return Result{Outcome: history.OK} }
func failed(err string) Result        { return Result{Outcome: history.Fail, Err: err} }
func unknownResult(err string) Result { return Result{Outcome: history.Unknown, Err: err} }

// Config is what every client kind is built from.
type Config struct {
	// Option is the valkey-go option that follows the topology
	// (topology.Topology.ClientOption); its dialer maps the addresses nodes
	// announce to host ports. Go library adapters dial through it too.
	Option valkey.ClientOption
	// Nodes are the options of clients of each independent server of a
	// Redlock topology (topology.Topology.NodeOptions); empty elsewhere.
	Nodes []valkey.ClientOption
	// Topology is the topology's kind; external adapters and go-redis need it.
	Topology topology.Kind
	// Addrs are the host addresses a client starts from (Topology.Addrs).
	Addrs []string
	// AddrMap maps the addresses nodes announce (container address) to
	// host addresses, for external processes that cannot use Option.
	AddrMap map[string]string
	// MasterSet is Sentinel's master set name.
	MasterSet string
	// Server and Version name the build, for refusals and the history.
	Server, Version string
	// ID is the logical client's number (the adapter protocol's "client").
	ID int
	// Timeout bounds one lock call (default 1 s). An external adapter gets
	// Timeout plus AdapterGrace to answer before it is replaced.
	Timeout      time.Duration
	AdapterGrace time.Duration
	// Wait asks for WAIT or WAITAOF after every acquire.
	Wait WaitOptions
	// FenceGap is a pause between SET and INCR in mutant-fence-outside,
	// standing in for a GC pause or a slow network; 0 in ordinary runs.
	FenceGap time.Duration
	// FenceGapRandom makes half of those pauses FenceGap and half none.
	FenceGapRandom bool
	// MidOp, when set, runs between the two commands of a lock operation
	// that takes two (mutant-fence-outside's SET and INCR), after any
	// FenceGap: a script freezes the client there, for exactly as long as
	// its interleaving needs, where a gap could only guess.
	MidOp func(ctx context.Context, key string)
	// StderrDir keeps each external adapter's stderr (default: a new
	// temporary folder).
	StderrDir string
	// Clock gives the times of operations a client runs on its own (see
	// Undo); the workload sets it to its Recorder's clock.
	Clock func() int64
	// Aside is called as a lock command the client runs on its own goes
	// out, outside any call (valkeylock renews its key in the background,
	// and deletes it when a renewal fails or its lease lapses), and the
	// func it returns once the command has returned, with what to record
	// (nil: nothing, the command turned out not to be one to report).
	// The workload records it as its holder's, under a client id of its
	// own, and counts it in flight between the two
	// (history.Recorder.Settled), as it does a worker's call. Nil drops
	// it.
	Aside func() func(*Aside)
	// Late, when set, can hold back the reply to one of the client's
	// commands past its call timeout (LateReply.Arm): the client's
	// connections are dialled through it. GLIDE, whose core dials past
	// Go, goes through a tap instead and takes the call's Hold from its
	// context, as an external adapter does.
	Late *LateReply
	// Log receives what a client notices on the side (short WAITs, adapter
	// restarts). Nil discards.
	Log *slog.Logger
}

// ConfigFor fills a Config from a running topology.
func ConfigFor(t *topology.Topology) Config {
	cfg := Config{
		Option:   t.ClientOption(),
		Topology: t.Kind,
		Addrs:    t.Addrs(),
		AddrMap:  map[string]string{},
		Server:   t.Build.Name,
		Version:  t.Version,
	}
	for _, n := range t.Nodes {
		cfg.AddrMap[n.Internal()] = n.ClientAddr()
	}
	if t.Kind == topology.Sentinel {
		cfg.MasterSet = topology.MasterSet
	}
	if t.Kind == topology.Redlock {
		cfg.Nodes = t.NodeOptions()
	}
	return cfg
}

var processStart = time.Now()

func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = time.Second
	}
	if c.AdapterGrace <= 0 {
		c.AdapterGrace = 2 * time.Second
	}
	if c.Clock == nil {
		c.Clock = func() int64 { return int64(time.Since(processStart)) }
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Aside == nil {
		c.Aside = func() func(*Aside) { return func(*Aside) {} }
	}
	if c.Topology == "" {
		c.Topology = topology.Standalone
	}
	return c
}
