package topology

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// MigrationMethod is how a range of slots moves from one primary to
// another. Which ones a build has is asked of its servers
// (MigrationSupport), never inferred from the build's name.
type MigrationMethod string

const (
	// MigrateLegacy is the key-by-key migration every cluster build has:
	// SETSLOT IMPORTING and MIGRATING, MIGRATE of each key, SETSLOT NODE.
	// Clients meet ASK and TRYAGAIN redirects while it runs.
	MigrateLegacy MigrationMethod = "legacy"
	// MigrateValkeyAtomic is Valkey's atomic slot migration (9.0 on):
	// CLUSTER MIGRATESLOTS on the source, which replicates the slots to
	// the target and hands them over at once.
	MigrateValkeyAtomic MigrationMethod = "valkey-atomic"
	// MigrateRedisAtomic is Redis's atomic slot migration (8.4 on):
	// CLUSTER MIGRATION IMPORT on the target.
	MigrateRedisAtomic MigrationMethod = "redis-atomic"
)

// MigrationMethods are the three methods, legacy first.
func MigrationMethods() []MigrationMethod {
	return []MigrationMethod{MigrateLegacy, MigrateValkeyAtomic, MigrateRedisAtomic}
}

// ErrUnsupported is wrapped by the error of a method a server lacks; the
// error's text says what the server answered.
var ErrUnsupported = errors.New("unsupported")

// MigrationSupport says whether node n's server has method: nil when it
// has, an error wrapping ErrUnsupported with the reason when it has not,
// another error when the server could not be asked. It asks COMMAND INFO
// for the commands the method sends.
func (n *Node) MigrationSupport(ctx context.Context, method MigrationMethod) error {
	var needs []string
	switch method {
	case MigrateLegacy:
		needs = []string{"cluster|setslot", "cluster|getkeysinslot", "migrate"}
	case MigrateValkeyAtomic:
		needs = []string{"cluster|migrateslots", "cluster|getslotmigrations", "cluster|cancelslotmigrations"}
	case MigrateRedisAtomic:
		needs = []string{"cluster|migration"}
	default:
		return fmt.Errorf("unknown migration method %q: choose one of %v", method, MigrationMethods())
	}
	for _, cmd := range needs {
		ok, err := n.hasCommand(ctx, cmd)
		if err != nil {
			return err
		}
		if !ok {
			v, _ := n.Version(ctx)
			return fmt.Errorf("%w: %s migration on %s (%s %s): COMMAND INFO %s answers nil, the server has no such command",
				ErrUnsupported, method, n.Name, n.topo.Build.Family, v, cmd)
		}
	}
	return nil
}

// MigrationState is where a migration stands, whatever the method.
type MigrationState string

const (
	MigrationRunning   MigrationState = "running"
	MigrationSucceeded MigrationState = "succeeded"
	MigrationFailed    MigrationState = "failed"
	MigrationCancelled MigrationState = "cancelled"
)

// MigrationStatus is a migration's progress as its servers report it.
type MigrationStatus struct {
	State MigrationState
	// Phase is the server's own word for the step it is at (Valkey's
	// "snapshotting", Redis's "send-bulk-and-stream", the legacy
	// migration's "moving-keys").
	Phase string
	// Message is the server's detail: Valkey's message, Redis's
	// last_error, the legacy migration's error.
	Message string
	// Keys is the number of keys the legacy migration has moved.
	Keys int
	// Fields is the server's record as it sent it (atomic methods).
	Fields map[string]string
	// ByTarget says the end was read on the target: the source still
	// listed the job as running (a Valkey atomic migration whose source
	// gave its last slots away), the target its import as succeeded.
	ByTarget bool
}

// Done says the migration has ended, one way or another.
func (s MigrationStatus) Done() bool { return s.State != MigrationRunning }

func (s MigrationStatus) String() string {
	out := string(s.State)
	if s.Phase != "" {
		out += " (" + s.Phase + ")"
	}
	if s.Message != "" {
		out += ": " + s.Message
	}
	return out
}

// Migration is one migration of the slots First to Last from one primary
// to another, started by MigrateSlots.
type Migration struct {
	Method      MigrationMethod
	From, To    *Node
	First, Last int
	impl        migrationImpl
}

// migrationImpl is what each method does for a Migration.
type migrationImpl interface {
	status(ctx context.Context) (MigrationStatus, error)
	cancel(ctx context.Context) error
}

// MigrateOptions tune a migration; the zero value gives the defaults.
// Every field but Timeout is the legacy method's alone.
type MigrateOptions struct {
	// KeyPause is a pause after each key moved, and SlotPause one after
	// each slot (none by default): they hold the window in which clients
	// meet ASK and TRYAGAIN open as long as a caller wants. With KeyPause
	// each key moves in a MIGRATE of its own.
	KeyPause, SlotPause time.Duration
	// Batch is the number of keys listed and moved at once without
	// KeyPause (default 100).
	Batch int
	// Timeout is MIGRATE's own timeout (default 5 s).
	Timeout time.Duration
	// Replace overwrites a key the target already has (MIGRATE REPLACE);
	// without it such a key stops the move with BUSYKEY.
	Replace bool
}

func (o MigrateOptions) withDefaults() MigrateOptions {
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Second
	}
	return o
}

// MigrateSlots starts moving slots first to last from primary from to
// primary to by method, and returns once the servers have accepted it;
// Wait follows it to its end. Both primaries must have the method
// (MigrationSupport) and from must own every slot of the range. The
// legacy method runs its phases (LegacyMigration) in the background: a
// caller that injects faults between them starts one with
// BeginLegacyMigration instead.
func (t *Topology) MigrateSlots(ctx context.Context, method MigrationMethod, from, to *Node, first, last int, opts MigrateOptions) (*Migration, error) {
	m := &Migration{Method: method, From: from, To: to, First: first, Last: last}
	what := fmt.Sprintf("migrate slots %d-%d from %s to %s (%s)", first, last, from.Name, to.Name, method)
	if err := t.requireCluster(what); err != nil {
		return nil, err
	}
	if err := checkSlots(first, last); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, n := range []*Node{from, to} {
		if err := n.MigrationSupport(ctx, method); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	var err error
	switch method {
	case MigrateLegacy:
		m.impl, err = t.startLegacy(ctx, from, to, first, last, opts)
	case MigrateValkeyAtomic:
		m.impl, err = startValkeyAtomic(ctx, from, to, first, last)
	case MigrateRedisAtomic:
		m.impl, err = startRedisAtomic(ctx, from, to, first, last)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return m, nil
}

// Status asks the servers once how the migration stands.
func (m *Migration) Status(ctx context.Context) (MigrationStatus, error) {
	st, err := m.impl.status(ctx)
	if err != nil {
		return st, fmt.Errorf("status of %s: %w", m, err)
	}
	return st, nil
}

// Wait polls Status until the migration ends and returns its last
// status: State says how it ended. ctx bounds the wait; its end is an
// error that carries the last status seen. A status the servers cannot
// give for a moment (a node restarting) is asked again.
func (m *Migration) Wait(ctx context.Context) (MigrationStatus, error) {
	var last MigrationStatus
	var lastErr error
	for {
		st, err := m.Status(ctx)
		if err == nil && st.Done() {
			return st, nil
		}
		if err == nil {
			last = st
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("wait for %s: %w (last status %s; last error %v)", m, ctx.Err(), last, lastErr)
		case <-time.After(migrationPoll):
		}
	}
}

// migrationPoll is how often Wait asks: a migration of a few keys ends in
// tens of milliseconds.
const migrationPoll = 50 * time.Millisecond

// Cancel stops the migration where it is. Valkey's atomic migration is
// cancelled with CLUSTER CANCELSLOTMIGRATIONS, which stops every
// migration the source is exporting (it has no cancel of one); Redis's
// with CLUSTER MIGRATION CANCEL ID on both primaries; the legacy one
// stops moving keys, moves back those already moved and makes both
// primaries' slots stable again (LegacyMigration.Rollback). A migration
// that has ended cannot be cancelled.
func (m *Migration) Cancel(ctx context.Context) error {
	if err := m.impl.cancel(ctx); err != nil {
		return fmt.Errorf("cancel %s: %w", m, err)
	}
	return nil
}

func (m *Migration) String() string {
	return fmt.Sprintf("%s migration of slots %d-%d from %s to %s", m.Method, m.First, m.Last, m.From.Name, m.To.Name)
}
