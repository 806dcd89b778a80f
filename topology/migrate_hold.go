package topology

import (
	"context"
	"fmt"
)

// MigrationHold is a point at which a Valkey atomic migration can be held
// on purpose, by the test hooks Valkey's own tests use (DEBUG
// SLOTMIGRATION, with enable-debug-command, which every node here has):
// a migration otherwise ends in milliseconds, and a fault or a spec that
// must act in the middle of one would race it.
type MigrationHold string

const (
	// HoldBeforePause, set on the source, keeps the job at
	// waiting-to-pause: the slots copied and streaming, the source still
	// serving them, writes not yet paused.
	HoldBeforePause MigrationHold = "PREVENT-PAUSE"
	// HoldBeforeHandOver, set on the target, keeps the job at the
	// hand-over: the source's writes paused for the migration, the target
	// granted the slots but not yet taking them.
	HoldBeforeHandOver MigrationHold = "PREVENT-FAILOVER"
)

// WaitingToPause is the phase a job held by HoldBeforePause reports.
const WaitingToPause = "waiting-to-pause"

// HoldMigration sets (on) or clears the hold on n. A build without the
// hook answers an error, which names it.
func (n *Node) HoldMigration(ctx context.Context, at MigrationHold, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	if _, err := n.Do(ctx, "DEBUG", "SLOTMIGRATION", string(at), v); err != nil {
		return fmt.Errorf("hold a migration (%s) on %s: %w", at, n.Name, err)
	}
	return nil
}
