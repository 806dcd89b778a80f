package topology

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNoImport is wrapped by TargetStatus's error when the target lists no
// import of the slots: it never began one (its source could not reach it),
// or a restart forgot it.
var ErrNoImport = errors.New("the target lists no import of the slots")

// TargetStatus is how the migration stands as its target says. Valkey's
// atomic migration is followed on its source (Status), and a source that
// was killed or restarted can no longer say: the target keeps its own
// record of the import, which says whether the import failed when the
// source went away. Redis's atomic migration is followed on its target
// already, and the legacy one in this process: for them TargetStatus is
// Status.
func (m *Migration) TargetStatus(ctx context.Context) (MigrationStatus, error) {
	if _, ok := m.impl.(*valkeyAtomic); !ok {
		return m.Status(ctx)
	}
	jobs, err := valkeyJobs(ctx, m.To)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("target status of %s: %w", m, err)
	}
	rng := fmt.Sprintf("%d-%d", m.First, m.Last)
	var found map[string]string
	for _, r := range jobs {
		// the newest import of the range is listed last
		if strings.EqualFold(r["operation"], "import") && r["slot_ranges"] == rng {
			found = r
		}
	}
	if found == nil {
		return MigrationStatus{}, fmt.Errorf("target status of %s: %w: %s lists none of %s (jobs %v)", m, ErrNoImport, m.To.Name, rng, jobs)
	}
	st := MigrationStatus{State: MigrationRunning, Phase: found["state"], Message: found["message"], Fields: found}
	switch found["state"] {
	case "success":
		st.State = MigrationSucceeded
	case "failed":
		st.State = MigrationFailed
	case "cancelled":
		st.State = MigrationCancelled
	}
	return st, nil
}
