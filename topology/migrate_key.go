package topology

import (
	"context"
	"fmt"
)

// MoveKey moves one named key of the migrating slots from the source to
// the target with MIGRATE and leaves the slot's other keys where they
// are. MoveKeys moves a slot's keys in batches, so which keys sit on
// which side between two batches is the batch size's doing: a caller
// that needs a slot split on purpose (a multi-key command whose keys are
// on both sides answers TRYAGAIN) makes the split with MoveKey. A key the
// source does not hold is an error, not a silent no-op.
func (l *LegacyMigration) MoveKey(ctx context.Context, key string) error {
	what := fmt.Sprintf("move key %s from %s to %s", key, l.From.Name, l.To.Name)
	if slot := KeySlot(key); slot < l.First || slot > l.Last {
		return fmt.Errorf("%s: its slot %d is not among the migrating slots %d-%d", what, slot, l.First, l.Last)
	}
	reply, err := l.From.Do(ctx, l.migrateArgs(l.To, []string{key})...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if reply != "OK" {
		return fmt.Errorf("%s: MIGRATE answered %s (NOKEY: the source has no such key)", what, reply)
	}
	l.setPhase(legacyMoving, 1, nil)
	return nil
}
